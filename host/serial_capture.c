/* The captures among the files `ptboot serial` recovered (host/cmd_serial.c,
 * docs/serial.md): per dump directory holding a capture, its sideband and
 * code rebuilt when they came incomplete (host/serial_repair.h), its
 * manifest.txt written (format/manifest.h), and its flow decoded (`ptboot
 * flow --capture DIR --quiet --stat`, or per segment of a damaged trace). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoder/ptd_frame.h"
#include "format/code_image.h"
#include "format/manifest.h"
#include "host/capture.h"
#include "host/input_file.h"
#include "host/commands.h"
#include "host/serial_capture.h"
#include "host/serial_repair.h"

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
static void segment_flow(const struct serial_ctx *c, unsigned dump, const char *dir,
                         const char *seg)
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
        struct input_file in;
        char err[4400];
        snprintf(link, sizeof link, "%s/%s", tmpl, HOST_CAPTURE_TRACE);
        ok = symlink(abs_seg, link) == 0 &&
             input_file_open(&in, seg, input_file_how(), err, sizeof err) == 0;
        if (ok) {
            manifest_add_file(&m, HOST_CAPTURE_TRACE, in.size, ptd_crc32(0, in.data, in.size));
            input_file_close(&in);
        }
        for (size_t i = 0; ok && i < sizeof other / sizeof other[0]; i++) {
            const struct sfile *f = recovered(c, dump, other[i]);
            snprintf(link, sizeof link, "%s/%s", tmpl, other[i]);
            snprintf(target, sizeof target, "%s/%s", abs_dir, other[i]);
            ok = symlink(target, link) == 0;
            if (f && f->whole)
                manifest_add_file(&m, other[i], f->size, f->crc);
            else if (f)
                manifest_add_missing(&m, other[i], f->size, f->why);
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

/* Rebuilds are only tried for files whose claimed size the log could
 * plausibly have carried (a forged begin line may claim 4 GiB). */
#define REPAIR_MAX_BYTES (1ull << 30)

static bool repairable(const struct sfile *f)
{
    return f && f->ngood && f->size <= REPAIR_MAX_BYTES && f->size <= 2 * f->pool_len + (1u << 20);
}

/* Writes a rebuilt file as DIR/NAME: over the file this run wrote for a
 * whole one, else as any new file (host_serial_create's rules). */
static bool write_rebuilt(struct serial_ctx *c, const struct sfile *f, const char *dir,
                          const void *data, size_t len)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, f->out_name + f->sub_len);
    FILE *o = f->whole ? fopen(path, "wb") : host_serial_create(c, path);
    if (!o) {
        if (f->whole)
            fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
        return false;
    }
    bool ok = !len || fwrite(data, 1, len, o) == len;
    if (fclose(o) != 0 || !ok) {
        fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
        c->not_written++;
        unlink(path);
        return false;
    }
    return true;
}

static void append_why(struct sfile *f, const char *text)
{
    size_t n = strlen(f->why);
    snprintf(f->why + n, sizeof f->why - n, "%s%s", n ? "; " : "", text);
}

/* An incomplete capture's sideband and code rebuilt from what came
 * (host/serial_repair.h), so the images and pages that came still decode. */
static void repair_capture(struct serial_ctx *c, unsigned dump, const char *dir)
{
    struct sfile *sb = (struct sfile *)recovered(c, dump, HOST_CAPTURE_SIDEBAND);
    struct sfile *cd = (struct sfile *)recovered(c, dump, HOST_CAPTURE_CODE ".dump");
    struct sfile *ca = (struct sfile *)recovered(c, dump, HOST_CAPTURE_CODE ".addr");
    char text[160];
    if (sb && !sb->whole && repairable(sb)) {
        struct serial_range *r;
        size_t nr = host_serial_ranges(sb, &r), len = 0;
        uint8_t *data = host_serial_bytes(sb);
        struct serial_sideband_repair rep;
        char *t = serial_repair_sideband(data, sb->size, r, nr, &len, &rep);
        if (t && write_rebuilt(c, sb, dir, t, len)) {
            sb->rebuilt = true;
            printf("serial: %s: rebuilt from the text lines that came whole -> %s/%s: %zu line(s) "
                   "kept, %zu cut "
                   "by the loss and %zu refused dropped%s%s; it names %u image(s)\n",
                   sb->out_name, dir, HOST_CAPTURE_SIDEBAND, rep.lines_kept, rep.lines_cut,
                   rep.lines_refused, rep.version_added ? ", version line given back" : "",
                   rep.end_added ? ", end line given back" : "", rep.images);
            snprintf(text, sizeof text, "rebuilt: %zu whole text lines, %u images", rep.lines_kept,
                     rep.images);
            append_why(sb, text);
        } else if (!t) {
            printf("serial: %s: too little came to rebuild it\n", sb->out_name);
        }
        free(t);
        free(data);
        free(r);
    }
    if (cd && ca && (!cd->whole || !ca->whole) && repairable(cd) && repairable(ca)) {
        struct serial_range *dr, *ar;
        size_t ndr = host_serial_ranges(cd, &dr), nar = host_serial_ranges(ca, &ar), of = 0;
        uint8_t *dd = host_serial_bytes(cd), *ad = host_serial_bytes(ca), *od, *oa;
        size_t kept =
            serial_repair_code(dd, cd->size, dr, ndr, ad, ca->size, ar, nar, &od, &oa, &of);
        if (write_rebuilt(c, cd, dir, od, kept * CODE_PAGE_BYTES) &&
            write_rebuilt(c, ca, dir, oa, kept * 8)) {
            cd->rebuilt = ca->rebuilt = true;
            printf("serial: %s, %s: rebuilt with the %zu of %zu page(s) whose bytes and address "
                   "came whole -> "
                   "%s/%s.dump, %s/%s.addr\n",
                   cd->out_name, ca->out_name, kept, of, dir, HOST_CAPTURE_CODE, dir,
                   HOST_CAPTURE_CODE);
            snprintf(text, sizeof text, "rebuilt: %zu of %zu pages", kept, of);
            append_why(cd, text);
            append_why(ca, text);
            /* a file that came whole and was cut down to pair with the other */
            cd->whole = ca->whole = false;
        }
        free(od);
        free(oa);
        free(dd);
        free(ad);
        free(dr);
        free(ar);
    }
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
        if (!f || (!f->whole && !f->rebuilt)) {
            printf("serial: no whole capture (%s %s): packets only; give ptboot flow the code "
                   "for the instruction flow\n",
                   need[i], f ? "incomplete" : "not in the log");
            return;
        }
    }
    if (t->whole) {
        printf("serial: capture in %s%s: ptboot flow --capture %s --quiet --stat\n", dir,
               recovered(c, dump, need[0])->rebuilt || recovered(c, dump, need[1])->rebuilt
                   ? " (rebuilt parts)"
                   : "",
               dir);
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
    FILE *o = n < sizeof text ? host_serial_create(c, path) : NULL;
    if (!o)
        return;
    bool ok = fwrite(text, 1, n, o) == n;
    if (fclose(o) != 0 || !ok) {
        fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
        c->not_written++;
        unlink(path);
    }
}

/* With more than one dump in the log: where each one's files are, and the
 * flow of every capture among them (one per dump directory). */
void host_serial_captures(struct serial_ctx *c)
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
        repair_capture(c, 0, c->dir);
        write_manifest(c, 0, c->dir);
        decode_capture(c, 0, c->dir);
        return;
    }
    for (unsigned k = 1; k <= c->ndumps; k++) {
        if (k >= 2)
            snprintf(dir, sizeof dir, "%s/dump%u", c->dir, k);
        else
            snprintf(dir, sizeof dir, "%s", c->dir);
        repair_capture(c, k, dir);
        write_manifest(c, k, dir);
        decode_capture(c, k, dir);
    }
}
