/* `ptboot serial LOG [--out DIR] [--quiet] [--strict]`: recovers the files
 * of a serial dump (decoder/ptd_frame.h, docs/serial.md) from a captured
 * serial log, reports every lost or damaged line, writes what survives and
 * decodes it.
 *
 * What is written, per file of the dump (NAME is the name in the dump):
 *   - every line there and the whole-file CRC32 right: DIR/NAME, byte for
 *     byte the file the target sent;
 *   - lines lost, a "pt" file: DIR/NAME.seg-<from>-<to> (hex offsets) for
 *     each run of surviving bytes that starts at the file's start or at a
 *     PSB (a line flagged P), up to the next loss: each decodes on its own.
 *     Surviving bytes before the first PSB of a run are reported, not
 *     written (a decoder cannot sync there);
 *   - lines lost, a "raw" file: DIR/NAME.partial, the file's size (as far as
 *     known) with the lost ranges as zero bytes.
 * More than one dump of a name in the log: the k-th dump's files (k >= 2)
 * go into DIR/dump<k>/ (grouping: host/serial_recover.c new_file), each
 * dump's directory is reported and each capture among them decoded.
 * Then each written trace is decoded with the packet layer (the dump
 * machinery of `ptboot dump`) and a summary line is printed per trace; a
 * capture (trace.pt, sideband.txt, code.dump/.addr) is decoded with
 * `ptboot flow --capture`.
 *
 * Memory is proportional to the log, whatever the lines claim: data lines
 * are kept in arrival order with their payload in one pool, sorted by
 * sequence number at the end, and files are assembled per written part. The in-memory part is host/serial_recover.c. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "host/capture.h"
#include "host/cmd_dump.h"
#include "host/commands.h"
#include "host/serial_recover.h"
#include "format/manifest.h"

/* The file NAME of dump `dump` (0: any dump; the log's dumps share DIR). */
static const struct sfile *recovered(const struct serial_ctx *c, unsigned dump, const char *name)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct sfile *f = &c->files[i];
        if ((!dump || f->dump == dump) && !strcmp(f->out_name + f->sub_len, name))
            return f;
    }
    return NULL;
}

static int run_flow(const char *dir)
{
    char *argv[] = { "flow", "--capture", (char *)dir, "--quiet", "--stat", NULL };
    fflush(stdout);
    int rc = host_cmd_flow(5, argv);
    fflush(stdout);
    return rc;
}

/* The segment's flow with the capture's sideband and code: a scratch
 * capture directory of symbolic links (trace.pt -> the segment) and a
 * manifest naming the segment as its trace (so no warning says the scratch
 * directory is incomplete: the segment is all there is of its range). */
static void segment_flow(const struct serial_ctx *c, unsigned dump, const char *dir, const char *seg)
{
    static const char *const other[] = { HOST_CAPTURE_SIDEBAND, HOST_CAPTURE_CODE ".dump",
                                         HOST_CAPTURE_CODE ".addr" };
    static struct manifest m;
    static char text[1024];
    char tmpl[] = "/tmp/ptboot-serial-XXXXXX", link[4200], target[4200];
    char *abs_dir = realpath(dir, NULL), *abs_seg = realpath(seg, NULL);
    bool made = abs_dir && abs_seg && mkdtemp(tmpl), ok = made;
    manifest_init(&m);
    if (ok) {
        uint8_t *data = NULL;
        size_t len = 0;
        snprintf(link, sizeof link, "%s/%s", tmpl, HOST_CAPTURE_TRACE);
        ok = symlink(abs_seg, link) == 0 && host_load_file(c->prog, seg, &data, &len) == 0;
        if (ok)
            manifest_add_file(&m, HOST_CAPTURE_TRACE, len, ptd_crc32(0, data, len));
        free(data);
        for (size_t i = 0; ok && i < sizeof other / sizeof other[0]; i++) {
            const struct sfile *f = recovered(c, dump, other[i]);
            snprintf(link, sizeof link, "%s/%s", tmpl, other[i]);
            snprintf(target, sizeof target, "%s/%s", abs_dir, other[i]);
            ok = symlink(target, link) == 0;
            if (f)
                manifest_add_file(&m, other[i], f->size, f->crc);
        }
        size_t n = manifest_write(&m, text, sizeof text);
        snprintf(link, sizeof link, "%s/%s", tmpl, MANIFEST_FILE_NAME);
        FILE *o = ok && n < sizeof text ? fopen(link, "wb") : NULL;
        ok = o && fwrite(text, 1, n, o) == n;
        if (o && fclose(o) != 0)
            ok = false;
    }
    if (ok) {
        printf("serial: capture flow of %s (with the sideband and code in %s):\n", seg, dir);
        int rc = run_flow(tmpl);
        if (rc)
            printf("serial: the segment's flow failed (status %d)\n", rc);
    } else {
        printf("serial: cannot set up the flow of %s: %s\n", seg, strerror(errno));
    }
    if (made) {
        snprintf(link, sizeof link, "%s/%s", tmpl, HOST_CAPTURE_TRACE);
        unlink(link);
        snprintf(link, sizeof link, "%s/%s", tmpl, MANIFEST_FILE_NAME);
        unlink(link);
        for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
            snprintf(link, sizeof link, "%s/%s", tmpl, other[i]);
            unlink(link);
        }
        rmdir(tmpl);
    }
    free(abs_dir);
    free(abs_seg);
}

/* A capture among the files (docs/capture-files.md: trace.pt with its
 * sideband.txt and code snapshot code.dump/code.addr): its instruction
 * flow, as `ptboot flow --capture DIR --quiet --stat` prints it; for a
 * damaged trace, the flow of each segment. dump: the dump whose directory
 * it is (0: all files in DIR). */
static void decode_capture(struct serial_ctx *c, unsigned dump, const char *dir)
{
    static const char *const need[] = { HOST_CAPTURE_SIDEBAND, HOST_CAPTURE_CODE ".dump",
                                        HOST_CAPTURE_CODE ".addr" };
    const struct sfile *t = recovered(c, dump, HOST_CAPTURE_TRACE);
    if (c->quiet || !t)
        return;
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        const struct sfile *f = recovered(c, dump, need[i]);
        if (!f || !f->whole) {
            printf("serial: no whole capture (%s %s): packets only; give ptboot flow the code "
                   "for the instruction flow\n", need[i], f ? "incomplete" : "not in the log");
            return;
        }
    }
    if (t->whole) {
        printf("serial: capture in %s: ptboot flow --capture %s --quiet --stat\n", dir, dir);
        int rc = run_flow(dir);
        if (rc)
            printf("serial: the capture's flow failed (status %d)\n", rc);
        return;
    }
    for (size_t i = 0; i < t->nsegs; i++)
        segment_flow(c, dump, dir, t->segs[i]);
}

/* A manifest.txt (format/manifest.h) for a capture among the files of dump
 * `dump` (0: all) in dir: a `file` line for each file that came back whole
 * (its CRC-32 proved it), a `missing` line for each that did not, so the
 * readers of the directory (`flow --capture`, ...) say when it is
 * incomplete, as for a capture from the stick. */
static void write_manifest(struct serial_ctx *c, unsigned dump, const char *dir)
{
    static struct manifest m;
    static char text[MANIFEST_MAX_FILES * (MANIFEST_NAME_MAX + MANIFEST_WHY_MAX + 40) + 64];
    char path[4200];
    if (!recovered(c, dump, HOST_CAPTURE_TRACE) && !recovered(c, dump, HOST_CAPTURE_SIDEBAND))
        return;
    manifest_init(&m);
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct sfile *f = &c->files[i];
        const char *name = f->out_name + f->sub_len;
        if ((dump && f->dump != dump) || manifest_find(&m, name))
            continue;
        if (f->whole)
            manifest_add_file(&m, name, f->size, f->crc);
        else
            manifest_add_missing(&m, name, f->size, f->why);
    }
    size_t n = manifest_write(&m, text, sizeof text);
    snprintf(path, sizeof path, "%s/%s", dir, MANIFEST_FILE_NAME);
    FILE *o = n < sizeof text ? fopen(path, "wb") : NULL;
    if (!o || fwrite(text, 1, n, o) != n || fclose(o) != 0)
        fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
}

/* With more than one dump in the log: where each one's files are, and the
 * flow of every capture among them (one per dump directory). */
static void decode_dumps(struct serial_ctx *c)
{
    char dir[4200];
    if (c->ndumps > 1 && !c->quiet)
        for (unsigned k = 1; k <= c->ndumps; k++) {
            size_t n = 0;
            for (size_t i = 0; i < c->nfiles; i++)
                n += c->files[i].dump == k;
            if (c->split && k >= 2)
                snprintf(dir, sizeof dir, "%s/dump%u", c->dir, k);
            else
                snprintf(dir, sizeof dir, "%s", c->dir);
            printf("serial: dump %u of %u: %zu file(s) in %s\n", k, c->ndumps, n, dir);
        }
    if (!c->split) {
        write_manifest(c, 0, c->dir);
        decode_capture(c, 0, c->dir);
        return;
    }
    for (unsigned k = 1; k <= c->ndumps; k++) {
        if (k >= 2)
            snprintf(dir, sizeof dir, "%s/dump%u", c->dir, k);
        else
            snprintf(dir, sizeof dir, "%s", c->dir);
        write_manifest(c, k, dir);
        decode_capture(c, k, dir);
    }
}

static void serial_usage(FILE *out)
{
    fprintf(out,
        "usage: ptboot serial LOG [--out DIR] [--quiet] [--strict]\n"
        "\n"
        "Recovers the files of a serial dump (ptboot.efi serial-dump, docs/serial.md)\n"
        "from a captured serial log, reports every lost or damaged line, writes what\n"
        "survives and decodes the traces among it.\n"
        "\n"
        "  --out DIR   write the files into DIR, made if missing (default: the log's directory).\n"
        "  --quiet     print only damage reports and errors.\n"
        "  --strict    exit 3 when any file came back incomplete.\n"
        "\n"
        "Written: DIR/NAME for a file that came back whole (CRC32 checked);\n"
        "DIR/NAME.seg-FROM-TO for each PSB-aligned part of an incomplete trace;\n"
        "DIR/NAME.partial (lost bytes as zeros) for another incomplete file.\n"
        "More than one dump of a name in the log: the k-th dump's files (k >= 2)\n"
        "go into DIR/dump<k>/, each a capture directory of its own.\n"
        "Exit: 0 something recovered, 1 nothing recovered, 2 bad usage.\n");
}

int host_cmd_serial(int argc, char **argv)
{
    struct serial_ctx c = { .prog = "ptboot serial" };
    const char *log = NULL;
    char dirbuf[4096];
    bool strict = false;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            serial_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--out")) {
            if (i + 1 == argc || !argv[i + 1][0]) {
                fprintf(stderr, "%s: --out needs a directory\n", c.prog);
                return 2;
            }
            c.dir = argv[++i];
        } else if (!strcmp(a, "--quiet")) {
            c.quiet = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "%s: unknown option: %s\ntry 'ptboot serial --help'\n", c.prog, a);
            return 2;
        } else if (log) {
            fprintf(stderr, "%s: more than one log: %s and %s\n", c.prog, log, a);
            return 2;
        } else {
            log = a;
        }
    }
    if (!log) {
        fprintf(stderr, "%s: no serial log given\nusage: ptboot serial LOG [--out DIR] [--quiet] [--strict]\n",
                c.prog);
        return 2;
    }
    if (!c.dir) {
        const char *slash = strrchr(log, '/');
        if (slash)
            snprintf(dirbuf, sizeof dirbuf, "%.*s", (int)(slash - log) ? (int)(slash - log) : 1, log);
        else
            snprintf(dirbuf, sizeof dirbuf, ".");
        c.dir = dirbuf;
    }
    /* --out DIR is made when it does not exist yet (one level, as mkdir
     * does); an existing path that is not a directory is refused. */
    struct stat sb;
    if (stat(c.dir, &sb) != 0 && errno == ENOENT && mkdir(c.dir, 0777) != 0) {
        fprintf(stderr, "%s: %s: cannot create: %s\n", c.prog, c.dir, strerror(errno));
        return 1;
    }
    if (stat(c.dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s: not a directory\n", c.prog, c.dir);
        return 2;
    }

    uint8_t *text;
    size_t size;
    if (host_load_file(c.prog, log, &text, &size) < 0)
        return 1;

    host_serial_take_log(&c, text, size);
    free(text);

    if (!c.nfiles) {
        fprintf(stderr, "%s: %s: no serial dump found (no intact frame line)\n", c.prog, log);
        return 1;
    }
    size_t whole = host_serial_finish(&c), nfiles = c.nfiles;
    decode_dumps(&c);
    host_serial_free(&c);
    if (!c.quiet || whole < nfiles)
        printf("serial: %zu file(s) in the log, %zu complete, %zu written to %s\n", nfiles, whole,
               c.written, c.dir);
    if (!c.written) {
        fprintf(stderr, "%s: nothing could be recovered\n", c.prog);
        return 1;
    }
    return strict && whole < nfiles ? 3 : 0;
}
