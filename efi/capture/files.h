/* A capture as files on the boot volume (docs/capture-files.md), the
 * directory `ptboot flow --capture DIR` reads:
 *
 *   \ptboot\capNNN\trace.pt      the trace, linear, from its first PSB
 *   \ptboot\capNNN\sideband.txt  format/sideband.h's text form
 *   \ptboot\capNNN\code.dump     code snapshot: 4 KiB pages
 *   \ptboot\capNNN\code.addr     one little-endian u64 address per page
 *   \ptboot\last.txt             "capNNN\n": the newest capture
 *
 * NNN counts up from 001 to the first unused number (to 999), so a lab
 * machine booting the stick again and again keeps every capture, and
 * last.txt finds the newest without listing the directory. */
#ifndef PTBOOT_EFI_CAPTURE_FILES_H
#define PTBOOT_EFI_CAPTURE_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <efi.h>

#include "format/sideband.h"
#include "efi/platform/volume.h"

#define CAPTURE_FILES_ROOT    "\\ptboot"
#define CAPTURE_FILES_MAX     999
#define CAPTURE_FILES_DIR_MAX 32 /* "\\ptboot\\cap999" and a NUL */

/* A file of the capture beyond the four (`trace --cpus`: trace-cpuN.pt,
 * cpus.txt). */
struct capture_files_extra {
    const char *name;
    const void *data;
    size_t len;
    bool is_trace; /* written right after trace.pt */
};

struct capture_files_in {
    const struct sideband *sb; /* required */
    const uint8_t *trace;      /* linear trace from a PSB (arch/x86/rtit_linear.h) */
    size_t trace_len;          /* 0: an empty trace.pt */
    /* the code snapshot as a page dump (format/code_image.h): 4 KiB pages and
     * one little-endian u64 address per page, e.g. efi_capture_page_dump's
     * or an image watcher's (its struct code_dump snap); NULL/0: none */
    const uint8_t *code_dump;
    size_t code_dump_len;
    const uint8_t *code_addr;
    size_t code_addr_len;
    const struct capture_files_extra *extra;
    size_t nextra;
};

/* Writes the capture into a new \ptboot\capNNN, updates last.txt, and
 * writes manifest.txt (format/manifest.h) last. Before writing it checks
 * the volume's free space against what the files take; what does not fit
 * is left out in this order of importance: the trace first, then the
 * sideband, then the code snapshot (code.dump and code.addr together).
 * Every file written is read back (size and CRC-32); a file that failed or
 * differs is deleted. Each file left out gets a `ptboot: error: WHO: ...`
 * line saying what and why ("volume full: 44 KiB free, 8.6 MiB needed")
 * and a `missing` line in the manifest. dir receives "\\ptboot\\capNNN"
 * ("" when no directory could be made). Returns 0 when the capture is
 * complete, -1 when not (said). */
int efi_capture_files_write(EFI_HANDLE image, const struct capture_files_in *in, const char *who,
                            char dir[CAPTURE_FILES_DIR_MAX]);

/* The blocks a capture needs beyond its files (the directory,
 * manifest.txt, last.txt), for free-space checks made before tracing
 * (efi/cmd/trace.c). */
unsigned long long efi_capture_files_overhead(const struct efi_volume_space *sp);

/* "44 KiB", "8.6 MiB": bytes as people read them; up rounds up (a need),
 * else down (what is free). Returns buf. */
const char *efi_capture_size_text(unsigned long long bytes, bool up, char *buf, size_t cap);

#endif
