/* manifest.txt: the last file of a capture directory, the mark that says
 * whether the capture was written whole (docs/capture-files.md):
 *
 *   ptboot-manifest 1
 *   file trace.pt bytes=417 crc32=1c291ca3
 *   file sideband.txt bytes=8662 crc32=0a1b2c3d
 *   missing code.dump bytes=8388608 why=volume full: 44 KiB free, 8.6 MiB needed
 *   complete 0
 *   end
 *
 * One `file` line per file written and read back (its size and CRC-32, the
 * IEEE one of decoder/ptd_frame.h), one `missing` line per file that should
 * be there and is not (its size, why: runs to the end of the line), then
 * `complete 1` exactly when nothing is missing, then `end` (a manifest cut
 * short is detected). The app writes it after every other file of the
 * capture, so a directory without it was never finished; `ptboot serial`
 * writes one for the capture it recovers (its CRCs prove the files). The
 * readers (`ptboot flow/summary --capture`, the app's `decode`) say when a
 * capture is incomplete or a file differs from its line. Freestanding, no
 * allocation. */
#ifndef PTBOOT_FORMAT_MANIFEST_H
#define PTBOOT_FORMAT_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MANIFEST_FILE_NAME "manifest.txt"
#define MANIFEST_VERSION   1
#define MANIFEST_MAX_FILES 80  /* a capture's 4 files, cpus.txt, a trace per CPU (64) */
#define MANIFEST_NAME_MAX  32  /* a name and its NUL: printable, no spaces */
#define MANIFEST_WHY_MAX   160 /* why a file is missing, and its NUL */

struct manifest_file {
    char name[MANIFEST_NAME_MAX];
    bool present;               /* a `file` line (else `missing`) */
    uint64_t bytes;             /* its size (missing: the size it should have had) */
    uint32_t crc32;             /* present only */
    char why[MANIFEST_WHY_MAX]; /* missing only */
};

struct manifest {
    uint32_t nfiles;
    struct manifest_file files[MANIFEST_MAX_FILES];
    bool complete; /* parsed: the `complete` line (it must agree) */
};

enum manifest_status {
    MANIFEST_OK = 0,
    MANIFEST_E_FULL = -1, /* more than MANIFEST_MAX_FILES */
    MANIFEST_E_NAME = -2, /* empty, too long, a space or unprintable */
    MANIFEST_E_SYNTAX = -3,
};

void manifest_init(struct manifest *m);
int manifest_add_file(struct manifest *m, const char *name, uint64_t bytes, uint32_t crc32);
/* why: printable text (anything else becomes '?'), cut to fit. */
int manifest_add_missing(struct manifest *m, const char *name, uint64_t bytes, const char *why);
/* True when no file is missing. */
bool manifest_is_complete(const struct manifest *m);
/* The entry named name, or NULL. */
const struct manifest_file *manifest_find(const struct manifest *m, const char *name);

/* The text into buf (snprintf-like: NUL-terminated when cap > 0); returns
 * its length, so a result >= cap means buf was too small. */
size_t manifest_write(const struct manifest *m, char *buf, size_t cap);

/* Parses text (len bytes; CR LF accepted). Returns MANIFEST_OK or
 * MANIFEST_E_SYNTAX with *line (1-based) and *msg saying what is wrong. */
int manifest_parse(struct manifest *m, const char *text, size_t len, unsigned *line,
                   const char **msg);

#endif
