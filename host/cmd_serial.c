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
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "decoder/ptd_opts.h"
#include "format/code_image.h"
#include "host/capture.h"
#include "host/cmd_dump.h"
#include "host/commands.h"
#include "host/serial_recover.h"
#include "host/serial_repair.h"
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
static bool write_rebuilt(struct serial_ctx *c, const struct sfile *f, const char *dir, const void *data,
                          size_t len)
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
            printf("serial: %s: rebuilt from the text lines that came whole -> %s/%s: %zu line(s) kept, %zu cut "
                   "by the loss and %zu refused dropped%s%s; it names %u image(s)\n", sb->out_name, dir,
                   HOST_CAPTURE_SIDEBAND, rep.lines_kept, rep.lines_cut, rep.lines_refused,
                   rep.version_added ? ", version line given back" : "", rep.end_added ? ", end line given back" : "",
                   rep.images);
            snprintf(text, sizeof text, "rebuilt: %zu whole text lines, %u images", rep.lines_kept, rep.images);
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
        size_t kept = serial_repair_code(dd, cd->size, dr, ndr, ad, ca->size, ar, nar, &od, &oa, &of);
        if (write_rebuilt(c, cd, dir, od, kept * CODE_PAGE_BYTES) && write_rebuilt(c, ca, dir, oa, kept * 8)) {
            cd->rebuilt = ca->rebuilt = true;
            printf("serial: %s, %s: rebuilt with the %zu of %zu page(s) whose bytes and address came whole -> "
                   "%s/%s.dump, %s/%s.addr\n", cd->out_name, ca->out_name, kept, of, dir, HOST_CAPTURE_CODE, dir,
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
                   "for the instruction flow\n", need[i], f ? "incomplete" : "not in the log");
            return;
        }
    }
    if (t->whole) {
        printf("serial: capture in %s%s: ptboot flow --capture %s --quiet --stat\n", dir,
               recovered(c, dump, need[0])->rebuilt || recovered(c, dump, need[1])->rebuilt ? " (rebuilt parts)" : "",
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

static void serial_usage(FILE *out)
{
    fprintf(out,
        "usage: ptboot serial LOG [--out DIR | --next-to-log] [--force] [--quiet] [--strict]\n"
        "                         [--max-segments N]\n"
        "\n"
        "Recovers the files of a serial dump (ptboot.efi serial-dump, docs/serial.md)\n"
        "from a captured serial log (LOG, or - for standard input; a pipe works too),\n"
        "reports every lost or damaged line, writes what survives and decodes the\n"
        "traces among it. Frame lines cut by the console (a wrap at N columns, a\n"
        "firmware message in the middle) are joined again when their CRC proves it;\n"
        "duplicated lines are dropped.\n"
        "\n"
        "  --out DIR        write the files into DIR, made if missing (one level).\n"
        "  --next-to-log    write them in the log's directory.\n"
        "                   Without either, only the reports (nothing is written).\n"
        "  --force          overwrite files that exist in DIR (else they are kept).\n"
        "  --quiet          print only damage reports and errors, at most %d lines per file.\n"
        "  --strict         exit 3 when any file came back incomplete.\n"
        "  --max-segments N write at most N segments per damaged trace (default %d, 0: all).\n"
        "\n"
        "Written: DIR/NAME for a file that came back whole (CRC32 checked);\n"
        "DIR/NAME.seg-FROM-TO for each PSB-aligned part of an incomplete trace;\n"
        "DIR/NAME.partial (lost bytes as zeros) for another incomplete file; an\n"
        "incomplete capture's sideband.txt and code snapshot rebuilt from what came;\n"
        "DIR/manifest.txt for each capture (which files are whole).\n"
        "More than one dump of a name in the log: the k-th dump's files (k >= 2)\n"
        "go into DIR/dump<k>/, each a capture directory of its own.\n"
        "Exit: 0 something recovered, 1 nothing recovered or a file not written,\n"
        "2 bad usage, 3 (--strict) a file incomplete.\n", SERIAL_QUIET_LINES, SERIAL_MAX_SEGMENTS);
}

/* The whole log from path, or standard input for "-": any file a read()
 * ends, so pipes and FIFOs too. */
static int read_log(const char *prog, const char *path, uint8_t **text, size_t *size)
{
    bool in = !strcmp(path, "-");
    int fd = in ? 0 : open(path, O_RDONLY);
    struct stat st;
    if (fd < 0) {
        fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: cannot read %s: is a directory\n", prog, path);
        close(fd);
        return -1;
    }
    size_t n = 0, cap = 1 << 16;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (!b) {
            fprintf(stderr, "%s: out of memory for %s\n", prog, path);
            if (!in)
                close(fd);
            return -1;
        }
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
            continue;
        }
        ssize_t r = read(fd, b + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            fprintf(stderr, "%s: cannot read %s: %s\n", prog, in ? "standard input" : path, strerror(errno));
            free(b);
            if (!in)
                close(fd);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (!in)
        close(fd);
    *text = b;
    *size = n;
    return 0;
}

/* DIR made if missing (one level, as mkdir does) and proven writable by
 * making and removing a file in it (as root, permission bits say
 * nothing; a read-only file system does). */
static int out_dir_ready(const char *prog, const char *dir)
{
    struct stat sb;
    char probe[4200];
    if (stat(dir, &sb) != 0 && errno == ENOENT && mkdir(dir, 0777) != 0) {
        fprintf(stderr, "%s: %s: cannot create: %s\n", prog, dir, strerror(errno));
        return 1;
    }
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "%s: %s: not a directory\n", prog, dir);
        return 2;
    }
    snprintf(probe, sizeof probe, "%s/.ptboot-serial-%ld", dir, (long)getpid());
    int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: not writable: %s\n", prog, dir, strerror(errno));
        return 1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

/* One line on how the log's lines were put together (joins, duplicates),
 * before the files' reports. The wrap column is said even under --quiet:
 * a wrapped log recovers nothing else, and nothing else would say why. */
static void log_facts(const struct serial_ctx *c)
{
    const struct serial_join_stats *j = &c->join;
    uint32_t w = serial_wrap_width(j);
    size_t wrapped = j->joined - j->joined_split;
    if (w)
        printf("serial: lines look wrapped at %u columns: %zu frame line(s) joined from their pieces "
               "(their CRCs prove them)%s\n", w, wrapped,
               j->fragments ? ", some pieces would not join (damaged)" : "");
    else if (wrapped && !c->quiet)
        printf("serial: %zu frame line(s) joined from pieces (their CRCs prove them)\n", wrapped);
    if (c->duplicates && !c->quiet)
        printf("serial: %zu duplicate frame line(s) dropped (the same line came before: id, fields and CRC)\n",
               c->duplicates);
}

int host_cmd_serial(int argc, char **argv)
{
    struct serial_ctx c = { .prog = "ptboot serial", .max_segments = SERIAL_MAX_SEGMENTS };
    const char *log = NULL;
    char dirbuf[4096];
    bool strict = false, next_to_log = false;

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
        } else if (!strcmp(a, "--next-to-log")) {
            next_to_log = true;
        } else if (!strcmp(a, "--force")) {
            c.force = true;
        } else if (!strcmp(a, "--quiet")) {
            c.quiet = true;
        } else if (!strcmp(a, "--strict")) {
            strict = true;
        } else if (!strcmp(a, "--max-segments")) {
            uint64_t v;
            if (i + 1 == argc || !ptd_opts_parse_u64(argv[i + 1], &v) || v > 1000000) {
                fprintf(stderr, "%s: --max-segments wants a number 0..1000000 (0: all)\n", c.prog);
                return 2;
            }
            c.max_segments = (size_t)v;
            i++;
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
        fprintf(stderr, "%s: no serial log given (- reads standard input)\n"
                "usage: ptboot serial LOG [--out DIR | --next-to-log] [--force] [--quiet] [--strict]\n", c.prog);
        return 2;
    }
    if (c.dir && next_to_log) {
        fprintf(stderr, "%s: --out DIR or --next-to-log, not both\n", c.prog);
        return 2;
    }
    if (next_to_log) {
        const char *slash = strrchr(log, '/');
        if (!strcmp(log, "-")) {
            fprintf(stderr, "%s: --next-to-log: standard input has no directory; give --out DIR\n", c.prog);
            return 2;
        }
        if (slash)
            snprintf(dirbuf, sizeof dirbuf, "%.*s", (int)(slash - log) ? (int)(slash - log) : 1, log);
        else
            snprintf(dirbuf, sizeof dirbuf, ".");
        c.dir = dirbuf;
    }
    if (c.dir) {
        int rc = out_dir_ready(c.prog, c.dir);
        if (rc)
            return rc;
    }

    uint8_t *text;
    size_t size;
    if (read_log(c.prog, log, &text, &size) < 0)
        return 1;

    host_serial_take_log(&c, text, size);
    free(text);
    log_facts(&c);

    if (!c.nfiles) {
        uint32_t w = serial_wrap_width(&c.join);
        fprintf(stderr, "%s: %s: no serial dump found (no intact frame line%s)\n", c.prog, log,
                c.join.fragments ? (w ? "; lines look wrapped and did not join" : "; only damaged ones")
                                 : "");
        return 1;
    }
    if (!c.dir && !c.quiet)
        printf("serial: reports only, nothing written (--out DIR writes the files)\n");
    size_t whole = host_serial_finish(&c), nfiles = c.nfiles;
    if (c.dir)
        decode_dumps(&c);
    host_serial_free(&c);
    if (!c.quiet || whole < nfiles)
        printf("serial: %zu file(s) in the log, %zu complete, %zu written%s%s\n", nfiles, whole,
               c.written, c.dir ? " to " : "", c.dir ? c.dir : " (reports only)");
    if (c.not_written) {
        fprintf(stderr, "%s: %zu file(s) not written to %s%s\n", c.prog, c.not_written, c.dir,
                c.kept == c.not_written ? ": they exist (--force overwrites)" : "");
        return 1;
    }
    if (c.dir && !c.written) {
        fprintf(stderr, "%s: nothing could be recovered\n", c.prog);
        return 1;
    }
    return strict && whole < nfiles ? 3 : 0;
}
