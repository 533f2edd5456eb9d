/* The in-memory part of `ptboot serial` (host/serial_recover.h): what
 * host/cmd_serial.c describes, less the CLI and the capture's flow. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "decoder/ptd_fmt.h"
#include "decoder/ptd_frame.h"
#include "host/serial_recover.h"
#include "host/serial_join.h"

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fprintf(stderr, "ptboot serial: out of memory\n");
        exit(1);
    }
    return q;
}

#define GROW(arr, n, cap)                                   \
    do {                                                    \
        if ((n) == (cap)) {                                 \
            (cap) = (cap) ? 2 * (cap) : 64;                 \
            (arr) = xrealloc((arr), (cap) * sizeof *(arr)); \
        }                                                   \
    } while (0)

/* A report line about file f (NULL: the log). Under --quiet only the first
 * SERIAL_QUIET_LINES of each file (and of the log) are printed, the others
 * counted and summed up in one line at the end of the file: thousands of
 * lost lines must not make thousands of lines of output. */
static void say(struct serial_ctx *c, struct sfile *f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(struct serial_ctx *c, struct sfile *f, const char *fmt, ...)
{
    size_t *said = f ? &f->said : &c->said, *hidden = f ? &f->hidden : &c->hidden;
    if (c->quiet && *said >= SERIAL_QUIET_LINES) {
        (*hidden)++;
        return;
    }
    (*said)++;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* A new file, and which dump of the log it belongs to. Ids number the
 * files of one dump 1, 2, ... (decoder/ptd_frame.h), so a file starts a new
 * dump when its id is already taken in the current one, or when the app's
 * "ptboot: serial-dump begin" line came since the last new file. */
static struct sfile *new_file(struct serial_ctx *c, uint32_t id)
{
    bool next = !c->ndumps || c->marker;
    for (size_t i = c->nfiles; !next && i > 0 && c->files[i - 1].dump == c->ndumps; i--)
        next = c->files[i - 1].id == id;
    if (next)
        c->ndumps++;
    c->marker = false;
    GROW(c->files, c->nfiles, c->cap);
    struct sfile *f = &c->files[c->nfiles++];
    memset(f, 0, sizeof *f);
    f->id = id;
    f->dump = c->ndumps;
    return f;
}

/* The line the app prints before a dump's frame lines (efi/capture/serial_dump.c,
 * efi/capture/ebs_report.c), anywhere in the line (console noise before it). */
static bool dump_marker(const char *s, size_t len)
{
    static const char m[] = "ptboot: serial-dump begin ";
    const size_t n = sizeof m - 1;
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp(s + i, m, n))
            return true;
    return false;
}

/* The latest file of the dump with that id. */
static struct sfile *find_file(struct serial_ctx *c, uint32_t id)
{
    for (size_t i = c->nfiles; i > 0; i--)
        if (c->files[i - 1].id == id)
            return &c->files[i - 1];
    return NULL;
}

static void add_damage(struct sfile *f, size_t log_line, const struct ptd_frame_rec *r)
{
    GROW(f->dmg, f->ndmg, f->dmg_cap);
    struct sdamage *d = &f->dmg[f->ndmg++];
    memset(d, 0, sizeof *d);
    d->log_line = log_line;
    d->damage = r->damage;
    d->type = r->hint_type;
    d->has_seq = r->hint_seq;
    d->seq = r->seq;
    d->has_off = r->hint_offset;
    d->off = r->offset;
}

static void add_data(struct sfile *f, size_t log_line, const struct ptd_frame_rec *r)
{
    uint64_t end = r->offset + r->len;
    uint64_t limit = f->have_begin ? f->begin.size : SERIAL_MAX_FILE;
    if (end > limit || end > SERIAL_MAX_FILE) {
        /* CRC-good but impossible: counted as damage of that line */
        struct ptd_frame_rec d = *r;
        d.damage = PTD_FRAME_BAD_SYNTAX;
        d.hint_type = 'D';
        d.hint_seq = d.hint_offset = true;
        add_damage(f, log_line, &d);
        return;
    }
    GROW(f->lines, f->nlines, f->lines_cap);
    while (f->pool_len + r->len > f->pool_cap) {
        f->pool_cap = f->pool_cap ? 2 * f->pool_cap : 65536;
        f->pool = xrealloc(f->pool, f->pool_cap);
    }
    struct sline *l = &f->lines[f->nlines++];
    l->seq = r->seq;
    l->len = r->len;
    l->off = r->offset;
    l->pool = f->pool_len;
    l->log_line = log_line;
    l->psb = r->psb;
    memcpy(f->pool + f->pool_len, r->payload, r->len);
    f->pool_len += r->len;
    if (end > f->extent)
        f->extent = end;
    if (r->len > f->maxlen)
        f->maxlen = r->len;
    if (r->seq >= f->max_seq_plus1)
        f->max_seq_plus1 = r->seq + 1;
}

static bool same_begin(const struct ptd_frame_rec *a, const struct ptd_frame_rec *b)
{
    return a->id == b->id && a->size == b->size && a->file_crc == b->file_crc &&
           a->kind == b->kind && !strcmp(a->name, b->name);
}

static bool same_end(const struct ptd_frame_rec *a, const struct ptd_frame_rec *b)
{
    return a->id == b->id && a->size == b->size && a->file_crc == b->file_crc &&
           a->lines == b->lines && !strcmp(a->name, b->name);
}

/* A data line f already has: same sequence, offset and payload (a log
 * captured twice over, a line sent again). */
static bool has_line(const struct sfile *f, const struct ptd_frame_rec *r)
{
    for (size_t i = f->nlines; i > 0; i--) {
        const struct sline *l = &f->lines[i - 1];
        if (l->seq == r->seq && l->off == r->offset && l->len == r->len &&
            !memcmp(f->pool + l->pool, r->payload, r->len))
            return true;
    }
    return false;
}

static void take_rec(struct serial_ctx *c, struct ptd_frame_rec *r, size_t log_line,
                     struct sfile **cur);

/* One line of the log. cur is the file the last frame line belonged to. */
static void take_line(struct serial_ctx *c, const char *s, size_t len, size_t log_line,
                      struct sfile **cur, struct ptd_frame_rec *r)
{
    if (ptd_frame_parse(s, len, r) == PTD_FRAME_NONE) {
        if (dump_marker(s, len))
            c->marker = true;
        return;
    }
    take_rec(c, r, log_line, cur);
}

/* One frame record (parsed, or joined from pieces). Duplicates of a line
 * already taken (same id, fields and CRC) are counted and dropped: they do
 * not start a new file or dump. */
static void take_rec(struct serial_ctx *c, struct ptd_frame_rec *r, size_t log_line,
                     struct sfile **cur)
{
    struct sfile *f;
    switch (r->type) {
    case PTD_FRAME_NONE: return;
    case PTD_FRAME_BEGIN:
        f = c->marker ? NULL : find_file(c, r->id);
        if (f && f->dump == c->ndumps && f->have_begin && same_begin(&f->begin, r)) {
            c->duplicates++;
            *cur = f;
            return;
        }
        f = c->marker ? NULL : find_file(c, r->id);
        /* a begin line for an id already in use: a new dump (another boot) */
        if (!f || f->have_begin || f->nlines || f->have_end)
            f = new_file(c, r->id);
        f->have_begin = true;
        f->begin = *r;
        f->begin_log = log_line;
        *cur = f;
        return;
    case PTD_FRAME_DATA:
        f = c->marker ? NULL : find_file(c, r->id);
        if (f && f->dump == c->ndumps && f->have_end && r->seq < f->end.lines && has_line(f, r)) {
            c->duplicates++;
            *cur = f;
            return;
        }
        if (!f || f->have_end)
            f = new_file(c, r->id);
        add_data(f, log_line, r);
        *cur = f;
        return;
    case PTD_FRAME_END:
        f = c->marker ? NULL : find_file(c, r->id);
        if (f && f->dump == c->ndumps && f->have_end && same_end(&f->end, r)) {
            c->duplicates++;
            *cur = f;
            return;
        }
        if (!f || f->have_end)
            f = new_file(c, r->id);
        f->have_end = true;
        f->end = *r;
        f->end_log = log_line;
        *cur = f;
        return;
    case PTD_FRAME_CORRUPT:
        f = r->hint_id ? find_file(c, r->id) : NULL;
        if (!f || (f->have_end && *cur && *cur != f))
            f = *cur;
        if (!f) {
            say(c, NULL, "serial: log line %zu: damaged frame line before any file (%s)\n",
                log_line, r->damage == PTD_FRAME_BAD_CRC ? "crc mismatch" : "malformed");
            return;
        }
        add_damage(f, log_line, r);
        return;
    }
}

/* ---- reports and output ------------------------------------------------------ */

static const char *damage_word(const struct sdamage *d)
{
    return d->damage == PTD_FRAME_BAD_CRC ? "crc mismatch" : "malformed";
}

/* A file name safe to write: the base name of the dump's name (into
 * f->base and f->out_name). */
static void base_name(struct sfile *f)
{
    const char *n = f->have_begin ? f->begin.name : f->have_end ? f->end.name : NULL;
    char base[PTD_FRAME_NAME_MAX + 1];
    if (n) {
        const char *b = n;
        for (const char *p = n; *p; p++)
            if (*p == '/' || *p == '\\' || *p == ':')
                b = p + 1;
        snprintf(base, sizeof base, "%s", b);
    } else {
        base[0] = 0;
    }
    if (!base[0] || !strcmp(base, ".") || !strcmp(base, ".."))
        snprintf(base, sizeof base, "file%u.bin", f->id);
    snprintf(f->base, sizeof f->base, "%s", base);
}

/* Where the file goes: DIR/NAME, or DIR/dump<k>/NAME for the k-th dump
 * (k >= 2) when a name comes in more than one dump (c->split), so that each
 * dump's files form a capture directory again (docs/capture-files.md). The
 * same name twice in one directory: the later ones numbered NAME.2, ... */
static void choose_name(struct serial_ctx *c, struct sfile *f)
{
    char sub[24] = "";
    if (c->split && f->dump >= 2) {
        snprintf(sub, sizeof sub, "dump%u/", f->dump);
        if (c->dir) {
            char path[4096];
            snprintf(path, sizeof path, "%s/dump%u", c->dir, f->dump);
            if (mkdir(path, 0777) != 0 && errno != EEXIST)
                fprintf(stderr, "%s: cannot create %s: %s\n", c->prog, path, strerror(errno));
        }
    }
    f->sub_len = strlen(sub);
    snprintf(f->out_name, sizeof f->out_name, "%s%s", sub, f->base);
    for (unsigned k = 2;; k++) {
        bool clash = false;
        for (struct sfile *g = c->files; g < f; g++)
            if (!strcmp(g->out_name, f->out_name))
                clash = true;
        if (!clash)
            break;
        snprintf(f->out_name, sizeof f->out_name, "%s%s.%u", sub, f->base, k);
    }
}

/* The bytes of the sorted lines [i, j), which follow each other. */
static uint8_t *assemble(const struct sfile *f, size_t i, size_t j, uint64_t *len)
{
    uint64_t n = 0;
    for (size_t k = i; k < j; k++)
        n += f->lines[k].len;
    uint8_t *b = xrealloc(NULL, (size_t)n), *p = b;
    for (size_t k = i; k < j; k++) {
        memcpy(p, f->pool + f->lines[k].pool, f->lines[k].len);
        p += f->lines[k].len;
    }
    *len = n;
    return b;
}

/* Opens DIR-relative path for writing: a new file, or with --force any;
 * an existing file without --force is kept and said. NULL after saying
 * why. */
FILE *host_serial_create(struct serial_ctx *c, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | (c->force ? 0 : O_EXCL), 0666);
    if (fd < 0) {
        c->not_written++;
        if (errno == EEXIST) {
            c->kept++;
            fprintf(stderr, "%s: %s exists: not overwritten (--force overwrites)\n", c->prog, path);
        } else {
            fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
        }
        return NULL;
    }
    FILE *o = fdopen(fd, "wb");
    if (!o) {
        close(fd);
        c->not_written++;
        fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(errno));
    }
    return o;
}

/* Closes o after writing; false (said) when anything failed. */
static bool close_written(struct serial_ctx *c, FILE *o, bool ok, const char *path)
{
    int e = errno;
    if (fclose(o) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        c->not_written++;
        fprintf(stderr, "%s: cannot write %s: %s\n", c->prog, path, strerror(e));
        unlink(path); /* a cut file must not look whole */
    }
    return ok;
}

static int write_file(struct serial_ctx *c, const char *name, const uint8_t *data, uint64_t len,
                      char *path, size_t cap)
{
    if (!c->dir) { /* dry run */
        snprintf(path, cap, "%s", name);
        c->written++;
        return 0;
    }
    snprintf(path, cap, "%s/%s", c->dir, name);
    FILE *o = host_serial_create(c, path);
    if (!o)
        return -1;
    bool ok = !len || fwrite(data, 1, (size_t)len, o) == len;
    if (!close_written(c, o, ok, path))
        return -1;
    c->written++;
    return 0;
}

/* Packet-level decode of a recovered trace, as `ptboot dump` would. */
static void decode_summary(struct serial_ctx *c, const char *path, const uint8_t *data,
                           uint64_t len)
{
    static struct ptd_dump dump;
    struct ptd_fmt_options opt = { .flags = PTD_FMT_QUIET };
    char line[PTD_FMT_LINE_MAX];
    uint64_t psbs = 0;
    int n;
    if (c->quiet)
        return;
    for (int64_t q = ptd_psb_find(data, (size_t)len, 0); q >= 0;
         q = ptd_psb_find(data, (size_t)len, (size_t)q + PTD_PSB_SIZE))
        psbs++;
    ptd_dump_init(&dump, &opt);
    ptd_dump_feed(&dump, data, (size_t)len);
    while ((n = ptd_dump_line(&dump, line, sizeof line)) > 0)
        ;
    printf("serial: decode %s: packets=%llu errors=%llu skipped=%llu psbs=%llu\n", path,
           (unsigned long long)dump.packets, (unsigned long long)dump.errors,
           (unsigned long long)dump.skipped, (unsigned long long)psbs);
}

static int cmp_line(const void *a, const void *b)
{
    const struct sline *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->log_line < y->log_line ? -1 : x->log_line > y->log_line;
}

/* Sorts the lines by seq and drops later copies of a line (a log captured
 * twice over); a copy that differs is reported. */
static void sort_lines(struct serial_ctx *c, struct sfile *f)
{
    size_t out = 0;
    if (f->nlines)
        qsort(f->lines, f->nlines, sizeof *f->lines, cmp_line);
    for (size_t i = 0; i < f->nlines; i++) {
        if (out && f->lines[out - 1].seq == f->lines[i].seq) {
            const struct sline *a = &f->lines[out - 1], *b = &f->lines[i];
            if (a->off != b->off || a->len != b->len ||
                memcmp(f->pool + a->pool, f->pool + b->pool, a->len))
                say(c, f,
                    "serial: %s: line %u on log line %zu differs from its copy on log line %zu: "
                    "the first is used\n",
                    f->out_name, b->seq, b->log_line, a->log_line);
            else
                c->duplicates++;
            continue;
        }
        f->lines[out++] = f->lines[i];
    }
    f->nlines = out;
}

/* Attributes the damaged lines in log lines (lo_log, hi_log) to the lost
 * data lines [a, b]: first each one whose seq field reads as one of them,
 * then the others, in log order, to the lost lines still free, in order
 * (their seq field was the damaged part, or names a line that is there).
 * Work is proportional to the damaged lines, not to the gap. */
static void attribute(struct sfile *f, uint32_t a, uint32_t b, size_t lo_log, size_t hi_log)
{
    size_t i0 = 0, i1;
    while (i0 < f->ndmg && f->dmg[i0].log_line <= lo_log)
        i0++;
    for (i1 = i0; i1 < f->ndmg && f->dmg[i1].log_line < hi_log; i1++)
        ;
    for (size_t i = i0; i < i1; i++) {
        struct sdamage *d = &f->dmg[i];
        if (d->used || (d->type && d->type != 'D') || !d->has_seq || d->seq < a || d->seq > b)
            continue;
        bool taken = false;
        for (size_t k = i0; k < i1 && !taken; k++)
            taken = f->dmg[k].used && f->dmg[k].at == d->seq;
        if (!taken) {
            d->used = true;
            d->at = d->seq;
        }
    }
    uint64_t next = a; /* the lowest lost line that may still be free */
    for (size_t i = i0; i < i1 && next <= b; i++) {
        struct sdamage *d = &f->dmg[i];
        if (d->used || (d->type && d->type != 'D'))
            continue;
        if (d->has_seq && d->seq >= a && d->seq <= b)
            continue; /* reads as a lost line already taken: a second copy */
        for (;;) {
            bool taken = false;
            for (size_t k = i0; k < i1 && !taken; k++)
                taken = f->dmg[k].used && f->dmg[k].at == next;
            if (!taken)
                break;
            next++;
        }
        if (next > b)
            break;
        d->used = true;
        d->at = (uint32_t)next++;
    }
}

static int cmp_damage_at(const void *a, const void *b)
{
    const struct sdamage *const *x = a, *const *y = b;
    return (*x)->at < (*y)->at ? -1 : (*x)->at > (*y)->at;
}

static struct sdamage *damage_of_kind(struct sfile *f, char type)
{
    for (size_t i = 0; i < f->ndmg; i++)
        if (!f->dmg[i].used && f->dmg[i].type == type) {
            f->dmg[i].used = true;
            return &f->dmg[i];
        }
    return NULL;
}

static void print_run(struct serial_ctx *c, struct sfile *f, uint32_t from, uint32_t to,
                      uint64_t lo, uint64_t hi, bool exact)
{
    const char *n = f->out_name;
    char lines[32];
    if (to > from)
        snprintf(lines, sizeof lines, "lines %u-%u", from, to);
    else
        snprintf(lines, sizeof lines, "line %u", from);
    if (exact)
        say(c, f, "serial: %s: %s (offset 0x%llx-0x%llx) missing\n", n, lines,
            (unsigned long long)lo, (unsigned long long)hi - 1);
    else
        say(c, f, "serial: %s: %s missing (within offset 0x%llx-0x%llx)\n", n, lines,
            (unsigned long long)lo, (unsigned long long)hi - 1);
}

/* Reports one gap of lost data lines [a, b] covering bytes [lo, hi),
 * between log lines lo_log and hi_log: damaged lines one by one (offset from
 * the line's own offset field when it is plausible), the rest in runs, with
 * their exact byte range when both ends are known. Returns the lines lost;
 * *corrupt counts the damaged ones. */
static uint64_t report_gap(struct serial_ctx *c, struct sfile *f, uint32_t a, uint32_t b,
                           uint64_t lo, uint64_t hi, size_t lo_log, size_t hi_log,
                           uint64_t *corrupt)
{
    const char *n = f->out_name;
    struct sdamage **ds = NULL;
    size_t nd = 0, cap = 0;

    attribute(f, a, b, lo_log, hi_log);
    for (size_t i = 0; i < f->ndmg; i++) {
        struct sdamage *d = &f->dmg[i];
        if (d->used && d->log_line > lo_log && d->log_line < hi_log && d->at >= a && d->at <= b &&
            (!d->type || d->type == 'D')) {
            GROW(ds, nd, cap);
            ds[nd++] = d;
        }
    }
    if (nd)
        qsort(ds, nd, sizeof *ds, cmp_damage_at);

    uint64_t run = a;     /* first seq of the current run of plainly missing lines */
    uint64_t run_lo = lo; /* where that run starts, if run_exact */
    bool run_exact = true;
    for (size_t i = 0; i < nd; i++) {
        struct sdamage *d = ds[i];
        uint64_t s = d->at;
        /* the damaged line's own offset field, if it is plausible: the
         * lost lines before it hold between one byte and a full line each */
        uint64_t k = s - run;
        bool known =
            d->has_off && d->off < hi &&
            (run_exact ? d->off >= run_lo + k && d->off <= run_lo + k * f->maxlen : d->off > lo);
        uint64_t off = known ? d->off : run == s && run_exact ? run_lo : UINT64_MAX;
        if (run < s)
            print_run(c, f, (uint32_t)run, (uint32_t)s - 1, run_exact ? run_lo : lo,
                      known && run_exact ? off : hi, known && run_exact);
        if (off != UINT64_MAX)
            say(c, f, "serial: %s: line %u (offset 0x%llx) %s (log line %zu)\n", n, (unsigned)s,
                (unsigned long long)off, damage_word(d), d->log_line);
        else
            say(c, f, "serial: %s: line %u (within offset 0x%llx-0x%llx) %s (log line %zu)\n", n,
                (unsigned)s, (unsigned long long)lo, (unsigned long long)hi - 1, damage_word(d),
                d->log_line);
        (*corrupt)++;
        run = s + 1;
        run_exact = false; /* a damaged line's length is not known */
    }
    if (run <= b)
        print_run(c, f, (uint32_t)run, b, run_exact ? run_lo : lo, hi, run_exact);
    free(ds);
    return (uint64_t)b - a + 1;
}

/* Writes the PSB-aligned parts of an incomplete trace: runs of lines with
 * consecutive numbers whose bytes follow each other, from the file's start
 * or from the run's first PSB line. */
static void write_segments(struct serial_ctx *c, struct sfile *f, size_t nl)
{
    char path[4096];
    size_t over = 0;
    uint64_t over_bytes = 0;
    for (size_t s = 0, e; s < nl; s = e) {
        for (e = s + 1; e < nl && f->lines[e].seq == f->lines[e - 1].seq + 1 &&
                        f->lines[e].off == f->lines[e - 1].off + f->lines[e - 1].len;
             e++)
            ;
        size_t start = s;
        if (!(f->lines[s].seq == 0 && f->lines[s].off == 0))
            while (start < e && !f->lines[start].psb)
                start++;
        uint64_t lo = f->lines[s].off, hi = f->lines[e - 1].off + f->lines[e - 1].len;
        if (start == e) {
            say(c, f, "serial: %s: bytes 0x%llx-0x%llx survive but hold no PSB: not written\n",
                f->out_name, (unsigned long long)lo, (unsigned long long)hi - 1);
            continue;
        }
        uint64_t from = f->lines[start].off, len;
        char name[PTD_FRAME_NAME_MAX + 96];
        if (c->max_segments && f->nsegs >= c->max_segments) {
            over++;
            over_bytes += hi - from;
            continue;
        }
        if (from > lo)
            say(c, f,
                "serial: %s: bytes 0x%llx-0x%llx before the PSB at 0x%llx cannot be decoded: "
                "not written\n",
                f->out_name, (unsigned long long)lo, (unsigned long long)from - 1,
                (unsigned long long)from);
        snprintf(name, sizeof name, "%s.seg-%llx-%llx", f->out_name, (unsigned long long)from,
                 (unsigned long long)hi);
        uint8_t *data = assemble(f, start, e, &len);
        if (write_file(c, name, data, len, path, sizeof path) == 0) {
            say(c, f, "serial: %s: bytes 0x%llx-0x%llx (%s) -> %s\n", f->out_name,
                (unsigned long long)from, (unsigned long long)hi - 1,
                from ? "from a PSB" : "from the file's start", path);
            GROW(f->segs, f->nsegs, f->segs_cap);
            f->segs[f->nsegs] = xrealloc(NULL, strlen(path) + 1);
            strcpy(f->segs[f->nsegs++], path);
            decode_summary(c, path, data, len);
        }
        free(data);
    }
    if (over)
        printf("serial: %s: %zu more segment(s) (%llu bytes) not written: at most %zu per file "
               "(--max-segments N, 0: all)\n",
               f->out_name, over, (unsigned long long)over_bytes, c->max_segments);
}

/* An incomplete raw file: DIR/NAME.partial, lost ranges as zeros (a
 * sparse file: only the lines received are written). */
static void write_partial(struct serial_ctx *c, struct sfile *f, size_t nl, uint64_t size)
{
    char name[PTD_FRAME_NAME_MAX + 64], path[4096];
    uint64_t len = size > f->extent ? f->extent : size;
    snprintf(name, sizeof name, "%s.partial", f->out_name);
    if (!c->dir) { /* dry run */
        c->written++;
        return;
    }
    snprintf(path, sizeof path, "%s/%s", c->dir, name);
    FILE *o = host_serial_create(c, path);
    if (!o)
        return;
    bool ok = ftruncate(fileno(o), (off_t)len) == 0;
    for (size_t i = 0; ok && i < nl; i++)
        ok = fseeko(o, (off_t)f->lines[i].off, SEEK_SET) == 0 &&
             fwrite(f->pool + f->lines[i].pool, 1, f->lines[i].len, o) == f->lines[i].len;
    if (!close_written(c, o, ok, path))
        return;
    c->written++;
    printf("serial: %s: %llu bytes with the lost ranges as zeros -> %s\n", f->out_name,
           (unsigned long long)len, path);
}

/* Reports and writes one file; returns true when it came back whole. */
static bool finish_file_reports(struct serial_ctx *c, struct sfile *f)
{
    const char *n;
    char path[4096];
    uint64_t size, lost = 0, corrupt = 0, have = 0;
    uint32_t total;
    bool count_known = f->have_end;
    struct sdamage *d;

    choose_name(c, f);
    n = f->out_name;
    sort_lines(c, f);
    if (!f->have_begin) {
        d = damage_of_kind(f, 'B');
        if (d)
            printf("serial: %s: begin line %s (log line %zu)\n", n, damage_word(d), d->log_line);
        else
            printf("serial: %s: begin line missing\n", n);
        if (!f->have_end)
            printf("serial: %s: name, size and file CRC unknown: written as %s\n", n, n);
    }
    if (!f->have_end) {
        d = damage_of_kind(f, 'E');
        if (d)
            printf("serial: %s: end line %s (log line %zu)\n", n, damage_word(d), d->log_line);
        else
            printf("serial: %s: end line missing\n", n);
    }
    if (f->have_begin && f->have_end &&
        (f->begin.size != f->end.size || f->begin.file_crc != f->end.file_crc))
        printf("serial: %s: begin and end lines disagree (size %llu/%llu): begin line used\n", n,
               (unsigned long long)f->begin.size, (unsigned long long)f->end.size);
    size = f->have_begin ? f->begin.size : f->have_end ? f->end.size : f->extent;
    /* the kind is on the begin line; without it, a name ending in .pt or a
     * line flagged at a PSB says pt */
    uint32_t kind = PTD_FRAME_KIND_RAW;
    if (f->have_begin) {
        kind = f->begin.kind;
    } else {
        size_t bl = strlen(f->base);
        if (!(f->have_end) || (bl > 3 && !strcmp(f->base + bl - 3, ".pt")))
            kind = PTD_FRAME_KIND_PT;
        for (size_t i = 0; i < f->nlines && kind != PTD_FRAME_KIND_PT; i++)
            kind = f->lines[i].psb ? PTD_FRAME_KIND_PT : kind;
    }
    uint32_t crc = f->have_begin ? f->begin.file_crc : f->end.file_crc;
    total = count_known ? f->end.lines : f->max_seq_plus1;
    f->size = size;
    f->crc = crc;

    /* lines past the end line's count do not belong to the file */
    size_t nl = f->nlines;
    while (nl && f->lines[nl - 1].seq >= total)
        nl--;
    f->ngood = nl;
    if (nl < f->nlines)
        printf("serial: %s: %zu line(s) numbered past the end line's count %u: ignored\n", n,
               f->nlines - nl, total);

    /* gaps in the sequence: before the first line, between lines, after the last */
    uint64_t prev_end = 0;
    size_t prev_log = f->have_begin ? f->begin_log : 0;
    uint64_t expect = 0; /* the next seq */
    for (size_t i = 0; i <= nl; i++) {
        uint64_t seq = i < nl ? f->lines[i].seq : total;
        if (seq > expect) {
            uint64_t hi = i < nl ? f->lines[i].off : size;
            size_t hi_log = i < nl ? f->lines[i].log_line : f->have_end ? f->end_log : SIZE_MAX;
            if (hi <= prev_end) /* inconsistent offsets (forged lines): no range */
                hi = prev_end + 1;
            lost += report_gap(c, f, (uint32_t)expect, (uint32_t)(seq - 1), prev_end, hi, prev_log,
                               hi_log, &corrupt);
        }
        if (i < nl) {
            prev_end = f->lines[i].off + f->lines[i].len;
            prev_log = f->lines[i].log_line;
            have += f->lines[i].len;
            expect = seq + 1;
        }
    }
    if (!count_known && prev_end < size) {
        /* the end line and the lines before it are gone */
        printf("serial: %s: lines %u and on (offset 0x%llx-0x%llx) missing (their count went "
               "with the end line)\n",
               n, total, (unsigned long long)prev_end, (unsigned long long)size - 1);
        lost++;
    }
    for (size_t i = 0; i < f->ndmg; i++)
        if (!f->dmg[i].used)
            say(c, f,
                "serial: %s: log line %zu: damaged frame line (%s), no line of this file is "
                "missing for it\n",
                n, f->dmg[i].log_line, damage_word(&f->dmg[i]));

    /* whole: every line, bytes following each other up to the size, which
     * with its CRC comes from the begin or the end line (either one is
     * enough: the CRC proves the bytes) */
    bool whole = (f->have_begin || f->have_end) && lost == 0 && (!count_known || nl == total) &&
                 have == size;
    for (size_t i = 1; whole && i < nl; i++)
        whole = f->lines[i].off == f->lines[i - 1].off + f->lines[i - 1].len;
    if (whole && nl)
        whole = f->lines[0].off == 0;
    if (whole) {
        uint64_t len;
        uint8_t *data = assemble(f, 0, nl, &len);
        bool ok = ptd_crc32(0, data, (size_t)len) == crc;
        if (!ok) {
            printf("serial: %s: all lines present but the file CRC32 differs (expected %08x)\n", n,
                   crc);
            snprintf(f->why, sizeof f->why, "serial log: every line came, the file CRC-32 differs");
        } else if (write_file(c, n, data, len, path, sizeof path) == 0) {
            f->whole = true;
            if (!c->quiet)
                printf("serial: %s: complete, %llu byte%s in %u line%s, crc32 %08x ok -> %s\n", n,
                       (unsigned long long)size, size == 1 ? "" : "s", total, total == 1 ? "" : "s",
                       crc, path);
            if (kind == PTD_FRAME_KIND_PT)
                decode_summary(c, path, data, len);
        }
        free(data);
        if (ok)
            return true;
    }
    printf("serial: %s: incomplete: %zu of %s%u lines (%llu damaged), %llu of %s%llu bytes\n", n,
           nl, count_known ? "" : "at least ", total, (unsigned long long)corrupt,
           (unsigned long long)have, f->have_begin || f->have_end ? "" : "at least ",
           (unsigned long long)size);
    if (!f->why[0])
        snprintf(f->why, sizeof f->why, "serial log: %zu of %s%u lines, %llu of %s%llu bytes came",
                 nl, count_known ? "" : "at least ", total, (unsigned long long)have,
                 f->have_begin || f->have_end ? "" : "at least ", (unsigned long long)size);
    if (!nl)
        return false;
    if (kind == PTD_FRAME_KIND_PT)
        write_segments(c, f, nl);
    else
        write_partial(c, f, nl, size);
    return false;
}

static bool finish_file(struct serial_ctx *c, struct sfile *f)
{
    bool whole = finish_file_reports(c, f);
    if (f->hidden)
        printf("serial: %s: %zu more report line(s) not shown (--quiet shows %d per file)\n",
               f->out_name, f->hidden, SERIAL_QUIET_LINES);
    return whole;
}

void host_serial_take_log(struct serial_ctx *c, const uint8_t *text, size_t size)
{
    /* Lines end at LF or at a lone CR (CR noise); log line numbers count
     * LFs. A damaged frame line is first tried joined with the lines after
     * it (a console's wrap, a firmware message in the middle:
     * host/serial_join.h); only a join whose CRC is right is taken. */
    static struct ptd_frame_rec rec;
    struct sfile *cur = NULL;
    struct serial_log_line *lines = NULL;
    size_t n = serial_split_lines(text, size, &lines);
    const char *t = (const char *)text;
    for (size_t i = 0; i < n; i++) {
        const struct serial_log_line *l = &lines[i];
        size_t took = 0, skipped = 0;
        if (serial_has_prefix(t + l->start, l->len) &&
            ptd_frame_parse(t + l->start, l->len, &rec) == PTD_FRAME_CORRUPT)
            took = serial_join(text, lines, n, i, &rec, &skipped, &c->join);
        if (!took) {
            take_line(c, t + l->start, l->len, l->log_line, &cur, &rec);
            continue;
        }
        /* the other text inside the frame line: as any other line */
        static struct ptd_frame_rec other;
        for (size_t k = 1; k <= skipped; k++)
            take_line(c, t + lines[i + k].start, lines[i + k].len, lines[i + k].log_line, &cur,
                      &other);
        if (skipped && !c->quiet)
            printf(
                "serial: log line %zu: a frame line cut by other text (log lines %zu-%zu) joined "
                "again (its CRC is right)\n",
                l->log_line, l->log_line, lines[i + took].log_line);
        take_rec(c, &rec, l->log_line, &cur);
        i += took;
    }
    free(lines);
}

size_t host_serial_finish(struct serial_ctx *c)
{
    size_t whole = 0;
    for (size_t i = 0; i < c->nfiles; i++)
        base_name(&c->files[i]);
    c->split = false;
    for (size_t i = 0; i < c->nfiles && !c->split; i++)
        for (size_t j = i + 1; j < c->nfiles && !c->split; j++)
            c->split =
                c->files[i].dump != c->files[j].dump && !strcmp(c->files[i].base, c->files[j].base);
    for (size_t i = 0; i < c->nfiles; i++)
        whole += finish_file(c, &c->files[i]);
    if (c->hidden)
        printf("serial: %zu more report line(s) about the log not shown (--quiet shows %d)\n",
               c->hidden, SERIAL_QUIET_LINES);
    return whole;
}

void host_serial_free(struct serial_ctx *c)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        free(c->files[i].lines);
        free(c->files[i].pool);
        free(c->files[i].dmg);
        for (size_t k = 0; k < c->files[i].nsegs; k++)
            free(c->files[i].segs[k]);
        free(c->files[i].segs);
    }
    free(c->files);
    c->files = NULL;
    c->nfiles = c->cap = 0;
}

size_t host_serial_ranges(const struct sfile *f, struct serial_range **out)
{
    struct serial_range *r = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < f->ngood; i++) {
        const struct sline *l = &f->lines[i];
        if (!l->len || l->off + l->len > f->size)
            continue;
        if (n && r[n - 1].off + r[n - 1].len == l->off) {
            r[n - 1].len += l->len;
            continue;
        }
        GROW(r, n, cap);
        r[n++] = (struct serial_range){ l->off, l->len };
    }
    *out = r;
    return n;
}

uint8_t *host_serial_bytes(const struct sfile *f)
{
    uint8_t *b = xrealloc(NULL, (size_t)f->size);
    memset(b, 0, (size_t)f->size);
    for (size_t i = 0; i < f->ngood; i++) {
        const struct sline *l = &f->lines[i];
        if (l->off + l->len <= f->size)
            memcpy(b + l->off, f->pool + l->pool, l->len);
    }
    return b;
}
