/* The sideband of one capture and its text form: see sideband.h and
 * docs/capture-files.md. Freestanding: numbers are written by
 * format/text.h, not by a libc printf. */
#include "decoder/ptd_num.h"
#include "format/sideband.h"
#include "format/text.h"

void sideband_init(struct sideband *sb)
{
    bytes_zero(sb, sizeof(*sb));
}

/* Printable ASCII without leading/trailing blanks; the rest becomes '_'.
 * A line-based format must never see a newline inside a value. Into dst
 * (cap bytes); when src is longer, its head (keep_tail 0: names) or its
 * tail (keep_tail 1: paths, whose end names the file) is kept. */
static void copy_text(char *dst, size_t cap, const char *src, int keep_tail)
{
    size_t n = 0, len = 0;
    while (src && (*src == ' ' || *src == '\t'))
        src++;
    while (src && src[len])
        len++;
    if (keep_tail && len + 1 > cap)
        src += len - (cap - 1);
    for (; src && *src && n + 1 < cap; src++)
        dst[n++] = (*src >= 0x20 && *src < 0x7f) ? *src : '_';
    while (n && dst[n - 1] == ' ')
        n--;
    if (n == 0)
        dst[n++] = '?';
    dst[n] = '\0';
}

static void copy_name(char *dst, const char *src)
{
    copy_text(dst, SIDEBAND_NAME_MAX, src, 0);
}

int sideband_add_image(struct sideband *sb, uint64_t base, uint64_t size, uint64_t entry,
                       const char *name, uint32_t flags)
{
    uint32_t i;
    for (i = 0; i < sb->nimages; i++)
        if (sb->images[i].base == base)
            break;
    if (i == sb->nimages) {
        if (sb->nimages >= SIDEBAND_MAX_IMAGES) {
            sb->images_dropped++;
            return -1;
        }
        sb->nimages++;
    }
    struct sideband_image *im = &sb->images[i];
    im->base = base;
    im->size = size;
    im->entry = entry;
    im->flags = flags;
    copy_name(im->name, name);
    /* another image at this base: its own load time and debug file */
    im->load_tsc = 0;
    sideband_set_debug(sb, (int)i, SIDEBAND_CV_NONE, NULL, 0, NULL);
    return (int)i;
}

void sideband_set_debug(struct sideband *sb, int row, uint32_t cv, const uint8_t *guid,
                        uint32_t age, const char *path)
{
    if (row < 0 || (uint32_t)row >= sb->nimages)
        return;
    struct sideband_image *im = &sb->images[row];
    bytes_zero(im->cv_guid, sizeof im->cv_guid);
    im->cv_path[0] = '\0';
    im->cv_age = 0;
    im->cv = SIDEBAND_CV_NONE;
    if (cv != SIDEBAND_CV_RSDS && cv != SIDEBAND_CV_NB10)
        return;
    im->cv = cv;
    im->cv_age = age;
    if (guid)
        bytes_copy(im->cv_guid, guid, cv == SIDEBAND_CV_RSDS ? SIDEBAND_GUID_BYTES : 4);
    copy_text(im->cv_path, sizeof im->cv_path, path, 1);
}

const struct sideband_image *sideband_find_image(const struct sideband *sb, uint64_t addr)
{
    for (uint32_t i = 0; i < sb->nimages; i++) {
        const struct sideband_image *im = &sb->images[i];
        if (addr >= im->base && addr - im->base < im->size)
            return im;
    }
    return NULL;
}

const char *sideband_unit_name(enum sideband_unit u)
{
    switch (u) {
    case SIDEBAND_UNIT_HW: return "hw";
    case SIDEBAND_UNIT_SOFT: return "soft";
    case SIDEBAND_UNIT_NONE: break;
    }
    return "none";
}

static const char *const flag_names[] = { "before", "while", "unloaded", "snapshot", "target" };
#define NFLAGS (sizeof flag_names / sizeof flag_names[0])

static const char *filter_kind_name(uint32_t k)
{
    return k == SIDEBAND_FILTER_EN ? "filter" : k == SIDEBAND_FILTER_STOP ? "stop" : "off";
}

const char *sideband_flags_str(uint32_t flags, char *buf, size_t cap)
{
    struct text_out o;
    size_t n = 0;
    if (cap == 0)
        return buf;
    text_out_init(&o, buf, cap);
    for (unsigned i = 0; i < NFLAGS; i++) {
        if (!(flags & (1u << i)))
            continue;
        if (n)
            text_out_str(&o, ",");
        text_out_str(&o, flag_names[i]);
        if (o.len >= cap)
            break; /* cut: what fit stays, as snprintf leaves it */
        n = o.len;
    }
    if (n == 0) {
        text_out_init(&o, buf, cap);
        text_out_str(&o, "-");
    }
    return buf;
}

/* ---- writer ----------------------------------------------------------- */

static void put_guid(struct text_out *o, const uint8_t *g);

/* One line is built whole, then appended: a line longer than the buffer
 * is cut there (cannot happen for what the parser accepts: names and
 * numbers are bounded). */
struct line {
    char buf[SIDEBAND_LINE_MAX + 8];
    struct text_out o;
};

static struct text_out *line_start(struct line *l, const char *key)
{
    text_out_init(&l->o, l->buf, sizeof l->buf);
    text_out_str(&l->o, key);
    return &l->o;
}

static void line_end(struct text_out *out, struct line *l)
{
    text_out_str(&l->o, "\n");
    size_t n = l->o.len < sizeof l->buf ? l->o.len : sizeof l->buf - 1;
    text_out_chars(out, l->buf, n);
}

static void put_str(struct text_out *out, const char *key, const char *v)
{
    struct line l;
    text_out_str(line_start(&l, key), v);
    line_end(out, &l);
}

static void put_dec(struct text_out *out, const char *key, uint64_t v)
{
    struct line l;
    text_out_dec(line_start(&l, key), v);
    line_end(out, &l);
}

static void put_hex(struct text_out *out, const char *key, uint64_t v)
{
    struct line l;
    struct text_out *o = line_start(&l, key);
    text_out_str(o, "0x");
    text_out_hex(o, v, 1, false);
    line_end(out, &l);
}

/* " NAME=0xHEX" */
static void field_hex(struct text_out *o, const char *name, uint64_t v)
{
    text_out_str(o, name);
    text_out_str(o, "=0x");
    text_out_hex(o, v, 1, false);
}

static void put_regs(struct text_out *out, const char *key, uint32_t eax, uint32_t ebx,
                     uint32_t ecx)
{
    struct line l;
    struct text_out *o = line_start(&l, key);
    field_hex(o, "eax", eax);
    field_hex(o, " ebx", ebx);
    field_hex(o, " ecx", ecx);
    line_end(out, &l);
}

size_t sideband_write(const struct sideband *sb, char *buf, size_t cap)
{
    struct text_out out;
    const struct sideband_cpu *c = &sb->cpu;
    const struct sideband_config *k = &sb->config;
    char flags[64];
    struct line l;

    text_out_init(&out, buf, cap);
    put_dec(&out, SIDEBAND_MAGIC " ", SIDEBAND_VERSION);
    put_str(&out, "unit ", sideband_unit_name(sb->unit));
    put_str(&out, "cpu.vendor ", c->vendor[0] ? c->vendor : "unknown");
    put_dec(&out, "cpu.family ", c->family);
    put_dec(&out, "cpu.model ", c->model);
    put_dec(&out, "cpu.stepping ", c->stepping);
    put_regs(&out, "cpu.cpuid15 ", c->cpuid15_eax, c->cpuid15_ebx, c->cpuid15_ecx);
    put_regs(&out, "cpu.cpuid14 ", c->cpuid14_eax, c->cpuid14_ebx, c->cpuid14_ecx);
    if (c->nom_freq_valid)
        put_dec(&out, "cpu.nom_freq ", c->nom_freq);
    put_hex(&out, "config.ctl ", k->ctl);
    put_dec(&out, "config.tsc ", k->tsc);
    put_dec(&out, "config.mtc ", k->mtc);
    put_dec(&out, "config.mtc_freq ", k->mtc_freq);
    put_dec(&out, "config.cyc ", k->cyc);
    put_dec(&out, "config.cyc_thresh ", k->cyc_thresh);
    put_dec(&out, "config.psb_freq ", k->psb_freq);
    put_hex(&out, "config.buffer ", k->buffer_bytes);
    put_str(&out, "config.full ", k->ring ? "ring" : "stop");
    for (uint32_t i = 0; i < k->nfilter && i < SIDEBAND_MAX_FILTERS; i++) {
        struct text_out *o = line_start(&l, "filter kind=");
        text_out_str(o, filter_kind_name(k->filter[i].kind));
        field_hex(o, " a", k->filter[i].a);
        field_hex(o, " b", k->filter[i].b);
        line_end(&out, &l);
    }
    put_dec(&out, "trace.bytes ", sb->trace.bytes);
    put_dec(&out, "trace.wrapped ", sb->trace.wrapped);
    put_dec(&out, "trace.stopped ", sb->trace.stopped);
    put_dec(&out, "images.dropped ", sb->images_dropped);
    for (uint32_t i = 0; i < sb->nimages && i < SIDEBAND_MAX_IMAGES; i++) {
        const struct sideband_image *im = &sb->images[i];
        struct text_out *o = line_start(&l, "image");
        field_hex(o, " base", im->base);
        field_hex(o, " size", im->size);
        field_hex(o, " entry", im->entry);
        text_out_str(o, " flags=");
        text_out_str(o, sideband_flags_str(im->flags, flags, sizeof flags));
        text_out_str(o, " name=");
        text_out_str(o, im->name);
        line_end(&out, &l);
        if (im->load_tsc) {
            o = line_start(&l, "image.loaded");
            field_hex(o, " base", im->base);
            text_out_str(o, " tsc=");
            text_out_dec(o, im->load_tsc);
            line_end(&out, &l);
        }
        if (im->cv == SIDEBAND_CV_RSDS || im->cv == SIDEBAND_CV_NB10) {
            o = line_start(&l, "image.debug");
            field_hex(o, " base", im->base);
            if (im->cv == SIDEBAND_CV_RSDS) {
                text_out_str(o, " cv=rsds guid=");
                put_guid(o, im->cv_guid);
            } else {
                text_out_str(o, " cv=nb10");
                field_hex(o, " sig",
                          (uint32_t)im->cv_guid[0] | (uint32_t)im->cv_guid[1] << 8 |
                              (uint32_t)im->cv_guid[2] << 16 | (uint32_t)im->cv_guid[3] << 24);
            }
            text_out_str(o, " age=");
            text_out_dec(o, im->cv_age);
            text_out_str(o, " path=");
            text_out_str(o, im->cv_path);
            line_end(&out, &l);
        }
    }
    put_str(&out, "end", "");
    return out.len;
}

/* ---- parser ----------------------------------------------------------- */

/* A whole token (delimited by the caller) as an unsigned number: decimal,
 * or hex after 0x; no sign, no overflow past max. */
static int parse_num(const char *s, size_t n, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;
    unsigned base = 10;
    if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
        n -= 2;
    }
    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int h = ptd_num_hex_digit(s[i]);
        if (h < 0 || h >= (int)base)
            return -1;
        unsigned d = (unsigned)h;
        if (x > (UINT64_MAX - d) / base)
            return -1;
        x = x * base + d;
    }
    if (x > max)
        return -1;
    *v = x;
    return 0;
}

/* A cursor over the value part of one line. */
struct cur {
    const char *p, *end;
};

static void skip_blanks(struct cur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t'))
        c->p++;
}

/* Takes "NAME=VALUE" (VALUE up to the next blank) into val and vlen. */
static int field(struct cur *c, const char *name, const char **val, size_t *vlen)
{
    size_t n = text_len(name);
    skip_blanks(c);
    if ((size_t)(c->end - c->p) <= n || !bytes_equal(c->p, name, n) || c->p[n] != '=')
        return -1;
    c->p += n + 1;
    *val = c->p;
    while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
        c->p++;
    *vlen = (size_t)(c->p - *val);
    return 0;
}

static int num_field(struct cur *c, const char *name, uint64_t max, uint64_t *v)
{
    const char *s;
    size_t n;
    return field(c, name, &s, &n) < 0 ? -1 : parse_num(s, n, max, v);
}

static int at_end(struct cur *c)
{
    skip_blanks(c);
    return c->p == c->end;
}

static int parse_flags(const char *s, size_t n, uint32_t *flags)
{
    *flags = 0;
    if (n == 1 && s[0] == '-')
        return 0;
    while (n) {
        size_t w = 0;
        while (w < n && s[w] != ',')
            w++;
        unsigned i;
        for (i = 0; i < NFLAGS; i++)
            if (text_is(s, w, flag_names[i]))
                break;
        if (i == NFLAGS)
            return -1;
        *flags |= 1u << i;
        if (w == n)
            break;
        s += w + 1;
        n -= w + 1;
        if (n == 0)
            return -1; /* trailing comma */
    }
    return 0;
}

#define FAIL(m)         \
    do {                \
        err->msg = (m); \
        return -1;      \
    } while (0)

/* Scalar keys: name, where the value goes, its largest value. */
struct scalar {
    const char *key;
    size_t off; /* in struct sideband */
    int width;  /* 1 = bool, 4 = uint32_t, 8 = uint64_t */
    uint64_t max;
};

#define SB_OFF(member) offsetof(struct sideband, member)
static const struct scalar scalars[] = {
    { "cpu.family", SB_OFF(cpu.family), 4, 0xfff },
    { "cpu.model", SB_OFF(cpu.model), 4, 0xfff },
    { "cpu.stepping", SB_OFF(cpu.stepping), 4, 0xf },
    { "cpu.nom_freq", SB_OFF(cpu.nom_freq), 4, 0xff },
    { "config.ctl", SB_OFF(config.ctl), 8, UINT64_MAX },
    { "config.tsc", SB_OFF(config.tsc), 1, 1 },
    { "config.mtc", SB_OFF(config.mtc), 1, 1 },
    { "config.mtc_freq", SB_OFF(config.mtc_freq), 4, 15 },
    { "config.cyc", SB_OFF(config.cyc), 1, 1 },
    { "config.cyc_thresh", SB_OFF(config.cyc_thresh), 4, 15 },
    { "config.psb_freq", SB_OFF(config.psb_freq), 4, 15 },
    { "config.buffer", SB_OFF(config.buffer_bytes), 8, UINT64_MAX },
    { "trace.bytes", SB_OFF(trace.bytes), 8, UINT64_MAX },
    { "trace.wrapped", SB_OFF(trace.wrapped), 1, 1 },
    { "trace.stopped", SB_OFF(trace.stopped), 1, 1 },
    { "images.dropped", SB_OFF(images_dropped), 4, UINT32_MAX },
};

static void store(struct sideband *sb, const struct scalar *s, uint64_t v)
{
    char *p = (char *)sb + s->off;
    if (s->width == 1) {
        bool b = v != 0;
        bytes_copy(p, &b, sizeof b);
    } else if (s->width == 4) {
        uint32_t w = (uint32_t)v;
        bytes_copy(p, &w, sizeof w);
    } else {
        bytes_copy(p, &v, sizeof v);
    }
}

static int key_is(const char *key, size_t klen, const char *want)
{
    return text_is(key, klen, want);
}

static int parse_regs(struct cur *c, uint32_t *eax, uint32_t *ebx, uint32_t *ecx)
{
    uint64_t a, b, x;
    if (num_field(c, "eax", UINT32_MAX, &a) || num_field(c, "ebx", UINT32_MAX, &b) ||
        num_field(c, "ecx", UINT32_MAX, &x) || !at_end(c))
        return -1;
    *eax = (uint32_t)a;
    *ebx = (uint32_t)b;
    *ecx = (uint32_t)x;
    return 0;
}

/* The row of the image at base (an image line before this one), or -1. */
static int row_at(const struct sideband *sb, uint64_t base)
{
    for (uint32_t i = 0; i < sb->nimages; i++)
        if (sb->images[i].base == base)
            return (int)i;
    return -1;
}

/* A GUID in its registry form, 8-4-4-4-12 hex digits: Data1 (u32),
 * Data2 and Data3 (u16) as numbers, then Data4's 8 bytes in order; the
 * stored form is little-endian (UEFI 2.10 appendix A, EFI_GUID), as in a
 * CodeView RSDS record. This is how PDB tools and symbol stores write it. */
static const uint8_t guid_order[SIDEBAND_GUID_BYTES] = { 3, 2, 1,  0,  5,  4,  7,  6,
                                                         8, 9, 10, 11, 12, 13, 14, 15 };

static void put_guid(struct text_out *o, const uint8_t *g)
{
    for (unsigned i = 0; i < SIDEBAND_GUID_BYTES; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text_out_str(o, "-");
        text_out_hex(o, g[guid_order[i]], 2, false);
    }
}

static int parse_guid(const char *s, size_t n, uint8_t out[SIDEBAND_GUID_BYTES])
{
    if (n != 2 * SIDEBAND_GUID_BYTES + 4)
        return -1;
    for (unsigned i = 0; i < SIDEBAND_GUID_BYTES; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) {
            if (*s++ != '-')
                return -1;
        }
        int hi = ptd_num_hex_digit(s[0]), lo = ptd_num_hex_digit(s[1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[guid_order[i]] = (uint8_t)(hi << 4 | lo);
        s += 2;
    }
    return 0;
}

/* Version 2's lines about an image already listed: when it was loaded,
 * and its CodeView record. 1 taken, 0 not one of them, -1 error. */
static int parse_image_more(struct sideband *sb, const char *key, size_t klen, struct cur *c,
                            struct sideband_error *err)
{
    const char *s;
    size_t n;
    uint64_t base, v;
    int loaded = key_is(key, klen, "image.loaded");
    if (!loaded && !key_is(key, klen, "image.debug"))
        return 0;
    if (num_field(c, "base", UINT64_MAX, &base))
        FAIL(loaded ? "image.loaded: want base=N tsc=N"
                    : "image.debug: want base=N cv=... age=N path=P");
    int row = row_at(sb, base);
    if (row < 0)
        FAIL("no image line with this base before it");
    struct sideband_image *im = &sb->images[row];
    if (loaded) {
        if (num_field(c, "tsc", UINT64_MAX, &v) || !at_end(c))
            FAIL("image.loaded: want base=N tsc=N");
        im->load_tsc = v;
        return 1;
    }
    uint8_t guid[SIDEBAND_GUID_BYTES];
    uint32_t cv;
    bytes_zero(guid, sizeof guid);
    if (field(c, "cv", &s, &n))
        FAIL("image.debug: want cv=rsds guid=HEX or cv=nb10 sig=N");
    if (text_is(s, n, "rsds")) {
        cv = SIDEBAND_CV_RSDS;
        if (field(c, "guid", &s, &n) || parse_guid(s, n, guid))
            FAIL("image.debug: cv=rsds wants guid=GUID (8-4-4-4-12 hex digits)");
    } else if (text_is(s, n, "nb10")) {
        cv = SIDEBAND_CV_NB10;
        if (num_field(c, "sig", UINT32_MAX, &v))
            FAIL("image.debug: cv=nb10 wants sig=N");
        for (unsigned k = 0; k < 4; k++)
            guid[k] = (uint8_t)(v >> (8 * k));
    } else {
        FAIL("image.debug: cv must be rsds or nb10");
    }
    if (num_field(c, "age", UINT32_MAX, &v))
        FAIL("image.debug: want age=N after the GUID or signature");
    /* path= is last and runs to the end of the line */
    skip_blanks(c);
    if (c->end - c->p < 6 || !bytes_equal(c->p, "path=", 5))
        FAIL("image.debug: want path=PATH last");
    n = (size_t)(c->end - c->p - 5);
    if (n >= SIDEBAND_PATH_MAX)
        FAIL("image.debug: path longer than 127 characters");
    char path[SIDEBAND_PATH_MAX];
    bytes_copy(path, c->p + 5, n);
    path[n] = '\0';
    sideband_set_debug(sb, row, cv, guid, (uint32_t)v, path);
    return 1;
}

static int parse_line(struct sideband *sb, const char *key, size_t klen, struct cur *c,
                      uint64_t version, struct sideband_error *err)
{
    const char *s;
    size_t n;
    uint64_t v;

    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        if (!key_is(key, klen, scalars[i].key))
            continue;
        skip_blanks(c);
        const char *val = c->p;
        while (c->p < c->end && *c->p != ' ' && *c->p != '\t')
            c->p++;
        if (parse_num(val, (size_t)(c->p - val), scalars[i].max, &v) || !at_end(c))
            FAIL("bad number (or out of range) for this key");
        store(sb, &scalars[i], v);
        if (key_is(key, klen, "cpu.nom_freq"))
            sb->cpu.nom_freq_valid = true;
        return 0;
    }
    if (key_is(key, klen, "unit")) {
        skip_blanks(c);
        n = (size_t)(c->end - c->p);
        if (text_is(c->p, n, "hw"))
            sb->unit = SIDEBAND_UNIT_HW;
        else if (text_is(c->p, n, "soft"))
            sb->unit = SIDEBAND_UNIT_SOFT;
        else if (text_is(c->p, n, "none"))
            sb->unit = SIDEBAND_UNIT_NONE;
        else
            FAIL("unit: want hw, soft or none");
        return 0;
    }
    if (key_is(key, klen, "cpu.vendor")) {
        skip_blanks(c);
        n = (size_t)(c->end - c->p);
        if (n == 0 || n >= sizeof sb->cpu.vendor)
            FAIL("cpu.vendor: want 1 to 12 characters");
        /* "unknown" is how the writer spells an empty vendor (a CPUID
         * vendor string is 12 characters): it reads back as empty */
        if (key_is(c->p, n, "unknown"))
            return 0;
        bytes_copy(sb->cpu.vendor, c->p, n);
        sb->cpu.vendor[n] = '\0';
        return 0;
    }
    if (key_is(key, klen, "cpu.cpuid15")) {
        if (parse_regs(c, &sb->cpu.cpuid15_eax, &sb->cpu.cpuid15_ebx, &sb->cpu.cpuid15_ecx))
            FAIL("cpu.cpuid15: want eax=N ebx=N ecx=N");
        return 0;
    }
    if (key_is(key, klen, "cpu.cpuid14")) {
        if (parse_regs(c, &sb->cpu.cpuid14_eax, &sb->cpu.cpuid14_ebx, &sb->cpu.cpuid14_ecx))
            FAIL("cpu.cpuid14: want eax=N ebx=N ecx=N");
        return 0;
    }
    if (key_is(key, klen, "config.full")) {
        skip_blanks(c);
        n = (size_t)(c->end - c->p);
        if (text_is(c->p, n, "ring"))
            sb->config.ring = true;
        else if (text_is(c->p, n, "stop"))
            sb->config.ring = false;
        else
            FAIL("config.full: want ring or stop");
        return 0;
    }
    if (key_is(key, klen, "filter")) {
        struct sideband_filter f;
        uint32_t kind;
        bytes_zero(&f, sizeof f); /* padding too: the struct is compared whole */
        if (sb->config.nfilter >= SIDEBAND_MAX_FILTERS)
            FAIL("filter: more than 4 address ranges");
        if (field(c, "kind", &s, &n))
            FAIL("filter: want kind=filter|stop a=N b=N");
        if (text_is(s, n, "filter"))
            kind = SIDEBAND_FILTER_EN;
        else if (text_is(s, n, "stop"))
            kind = SIDEBAND_FILTER_STOP;
        else
            FAIL("filter: kind must be filter or stop");
        if (num_field(c, "a", UINT64_MAX, &f.a) || num_field(c, "b", UINT64_MAX, &f.b) ||
            !at_end(c))
            FAIL("filter: want kind=filter|stop a=N b=N");
        if (f.b < f.a)
            FAIL("filter: b below a");
        f.kind = kind;
        sb->config.filter[sb->config.nfilter++] = f;
        return 0;
    }
    if (key_is(key, klen, "image")) {
        uint64_t base, size, entry;
        uint32_t flags;
        char name[SIDEBAND_NAME_MAX];
        if (num_field(c, "base", UINT64_MAX, &base) || num_field(c, "size", UINT64_MAX, &size) ||
            num_field(c, "entry", UINT64_MAX, &entry))
            FAIL("image: want base=N size=N entry=N flags=F name=NAME");
        if (size == 0 || base + size - 1 < base)
            FAIL("image: size zero or past the end of the address space");
        if (entry && (entry < base || entry - base >= size))
            FAIL("image: entry outside the image");
        if (field(c, "flags", &s, &n) || parse_flags(s, n, &flags))
            FAIL("image: flags: want - or a comma list of before,while,unloaded,snapshot,target");
        /* name= is last and runs to the end of the line */
        skip_blanks(c);
        if (c->end - c->p < 6 || !bytes_equal(c->p, "name=", 5))
            FAIL("image: want name=NAME last");
        n = (size_t)(c->end - c->p - 5);
        if (n >= SIDEBAND_NAME_MAX)
            FAIL("image: name longer than 71 characters");
        bytes_copy(name, c->p + 5, n);
        name[n] = '\0';
        for (uint32_t i = 0; i < sb->nimages; i++)
            if (sb->images[i].base == base)
                FAIL("image: a second image at the same base");
        if (sideband_add_image(sb, base, size, entry, name, flags) < 0)
            FAIL("image: more images than the table holds (512)");
        return 0;
    }
    if (version >= 2) {
        int r = parse_image_more(sb, key, klen, c, err);
        if (r)
            return r < 0 ? -1 : 0;
    }
    FAIL("unknown key");
}

int sideband_parse(struct sideband *sb, const char *text, size_t len, struct sideband_error *err)
{
    const char *p = text, *end = text + len;
    unsigned line = 0;
    int seen_header = 0, seen_end = 0;
    uint64_t version = 0;

    sideband_init(sb);
    err->line = 0;
    err->msg = NULL;
    while (p < end) {
        const char *eol = text_find(p, (size_t)(end - p), '\n');
        const char *next = eol ? eol + 1 : end;
        if (!eol)
            eol = end;
        line++;
        err->line = line;
        if (eol > p && eol[-1] == '\r')
            eol--;
        if ((size_t)(eol - p) > SIDEBAND_LINE_MAX)
            FAIL("line too long");
        for (const char *q = p; q < eol; q++)
            if ((unsigned char)*q < 0x20 && *q != '\t')
                FAIL("control character in line");
        struct cur c = { p, eol };
        skip_blanks(&c);
        p = next;
        if (c.p == c.end || *c.p == '#')
            continue; /* blank or comment */
        if (seen_end)
            FAIL("text after 'end'");
        const char *key = c.p;
        while (c.p < c.end && *c.p != ' ' && *c.p != '\t')
            c.p++;
        size_t klen = (size_t)(c.p - key);
        if (!seen_header) {
            uint64_t v;
            skip_blanks(&c);
            if (!key_is(key, klen, SIDEBAND_MAGIC))
                FAIL("not a ptboot sideband (first line must be 'ptboot-sideband N')");
            if (parse_num(c.p, (size_t)(c.end - c.p), UINT32_MAX, &v) || v < SIDEBAND_VERSION_MIN ||
                v > SIDEBAND_VERSION)
                FAIL("unsupported sideband version (this reader knows versions 1 and 2)");
            version = v;
            seen_header = 1;
            continue;
        }
        if (key_is(key, klen, "end")) {
            if (!at_end(&c))
                FAIL("end: no value expected");
            seen_end = 1;
            continue;
        }
        if (parse_line(sb, key, klen, &c, version, err) < 0)
            return -1;
    }
    if (!seen_header) {
        err->line = 0;
        FAIL("empty: no 'ptboot-sideband N' line");
    }
    if (!seen_end) {
        err->line = line;
        FAIL("truncated: no 'end' line");
    }
    err->line = 0;
    return 0;
}

void sideband_time_config(const struct sideband *sb, struct ptd_time_config *t)
{
    t->mtc_freq = sb->config.mtc ? (uint8_t)sb->config.mtc_freq : 0;
    t->nom_freq = sb->cpu.nom_freq_valid ? (uint8_t)sb->cpu.nom_freq : 0;
    t->cpuid_0x15_eax = sb->cpu.cpuid15_eax;
    t->cpuid_0x15_ebx = sb->cpu.cpuid15_ebx;
}
