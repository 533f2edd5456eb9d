#include "format/recorder.h"
#include "decoder/ptd_frame.h"

/* The largest trace area, sideband and code area we write (the resident
 * tracer's --buffer limit; 512 images of 160-byte lines; 64 MiB of code). */
#define RECORDER_MAX_TRACE      (1ull << 30)
#define RECORDER_MAX_SIDEBAND   (1ull << 20)
#define RECORDER_MAX_CODE_PAGES (16384ull)

static void copy(void *dst, const void *src, size_t n)
{
    uint8_t *d = dst;
    const uint8_t *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}

static void zero(void *dst, size_t n)
{
    uint8_t *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = 0;
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) / a * a;
}

/* The CRC of a struct whose last field is its uint32_t crc. */
static uint32_t struct_crc(const void *s, size_t bytes)
{
    return ptd_crc32(0, s, bytes - sizeof(uint32_t));
}

uint64_t recorder_plan(struct recorder_fixed *f, uint64_t phys, const struct recorder_request *r)
{
    if (r->trace_bytes == 0 || r->trace_bytes > RECORDER_MAX_TRACE ||
        r->sideband_cap > RECORDER_MAX_SIDEBAND || r->code_pages > RECORDER_MAX_CODE_PAGES ||
        r->table_bytes > RECORDER_MAX_TRACE)
        return 0;
    uint64_t align = r->trace_align > RECORDER_PAGE ? r->trace_align : RECORDER_PAGE;
    if (align & (align - 1))
        return 0;
    uint64_t at = RECORDER_HEADER_BYTES;
    f->region_phys = phys;
    f->sideband_off = at;
    f->sideband_cap = round_up(r->sideband_cap, RECORDER_PAGE);
    at += f->sideband_cap;
    f->addr_off = at;
    f->addr_cap = round_up(r->code_pages * 8, RECORDER_PAGE);
    at += f->addr_cap;
    f->code_off = at;
    f->code_cap = r->code_pages * RECORDER_PAGE;
    at += f->code_cap;
    f->table_off = r->table_bytes ? at : 0;
    f->table_bytes = round_up(r->table_bytes, RECORDER_PAGE);
    at += f->table_bytes;
    /* the trace area aligned in physical memory (ToPA regions are aligned
     * to their size, SDM 36.2.6.2) */
    uint64_t trace_phys = round_up(phys + at, align);
    f->trace_off = trace_phys - phys;
    f->trace_bytes = r->trace_bytes;
    f->region_bytes = round_up(f->trace_off + f->trace_bytes, RECORDER_PAGE);
    if (f->region_bytes > RECORDER_MAX_REGION)
        return 0;
    return f->region_bytes;
}

void recorder_seal(struct recorder_fixed *f)
{
    f->magic = RECORDER_MAGIC;
    f->version = RECORDER_VERSION;
    f->fixed_bytes = sizeof *f;
    f->options[sizeof f->options - 1] = '\0';
    f->image[sizeof f->image - 1] = '\0';
    f->crc = 0;
    f->crc = struct_crc(f, sizeof *f);
}

void recorder_writer_init(struct recorder_writer *w, uint8_t *region,
                          const struct recorder_fixed *f)
{
    w->region = region;
    w->seq = 0;
    zero(region, RECORDER_HEADER_BYTES);
    copy(region, f, sizeof *f);
}

void recorder_write_live(struct recorder_writer *w, const struct recorder_live *live)
{
    struct recorder_live l = *live;
    l.seq = ++w->seq;
    l.crc = 0;
    l.crc = struct_crc(&l, sizeof l);
    /* the slot not written last: slot 1 for odd, 0 for even sequence numbers */
    uint32_t off = (l.seq & 1) ? RECORDER_LIVE_OFF1 : RECORDER_LIVE_OFF0;
    /* volatile stores, so a reset sees the slot as written */
    volatile uint8_t *d = w->region + off;
    const uint8_t *s = (const uint8_t *)&l;
    for (size_t i = 0; i < sizeof l; i++)
        d[i] = s[i];
}

/* [off, off + len) inside [0, region) and page aligned. */
static bool area_ok(uint64_t off, uint64_t len, uint64_t region)
{
    return off % RECORDER_PAGE == 0 && off >= RECORDER_HEADER_BYTES && off <= region &&
           len <= region - off;
}

static bool apart(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
    return !alen || !blen || a + alen <= b || b + blen <= a;
}

static bool layout_ok(const struct recorder_fixed *f)
{
    uint64_t reg = f->region_bytes;
    if (reg < RECORDER_HEADER_BYTES + RECORDER_PAGE || reg > RECORDER_MAX_REGION ||
        reg % RECORDER_PAGE || f->region_phys % RECORDER_PAGE)
        return false;
    if (f->unit != RECORDER_UNIT_HW && f->unit != RECORDER_UNIT_SOFT)
        return false;
    if (!area_ok(f->sideband_off, f->sideband_cap, reg) ||
        f->sideband_cap > RECORDER_MAX_SIDEBAND || !area_ok(f->addr_off, f->addr_cap, reg) ||
        !area_ok(f->code_off, f->code_cap, reg) || !area_ok(f->trace_off, f->trace_bytes, reg) ||
        (f->table_bytes && !area_ok(f->table_off, f->table_bytes, reg)))
        return false;
    if (f->code_cap % RECORDER_PAGE || f->code_cap / RECORDER_PAGE > RECORDER_MAX_CODE_PAGES ||
        f->addr_cap < f->code_cap / RECORDER_PAGE * 8)
        return false;
    if (!f->trace_bytes || f->trace_bytes > RECORDER_MAX_TRACE)
        return false;
    /* the output layout must cover the trace area exactly */
    if (f->region_code > 15 || !f->regions ||
        (uint64_t)f->regions * (RECORDER_PAGE << f->region_code) != f->trace_bytes)
        return false;
    if (f->psb_freq > 15)
        return false;
    uint64_t o[5] = { f->sideband_off, f->addr_off, f->code_off, f->trace_off, f->table_off };
    uint64_t l[5] = { f->sideband_cap, f->addr_cap, f->code_cap, f->trace_bytes, f->table_bytes };
    for (int i = 0; i < 5; i++)
        for (int j = i + 1; j < 5; j++)
            if (!apart(o[i], l[i], o[j], l[j]))
                return false;
    return true;
}

static bool live_ok(const struct recorder_live *l)
{
    return l->seq != 0 && struct_crc(l, sizeof *l) == l->crc;
}

static bool live_plausible(const struct recorder_fixed *f, const struct recorder_live *l)
{
    if (l->state > RECORDER_FAILED || l->pos_source > RECORDER_POS_STOPPED)
        return false;
    if (l->write_pos > f->trace_bytes)
        return false;
    /* the unit counts every byte it wrote: a position beyond the count is
     * not one it wrote (the hardware does not count) */
    if (f->unit == RECORDER_UNIT_SOFT && !l->linear && l->bytes < l->write_pos)
        return false;
    if (l->sideband_bytes > f->sideband_cap)
        return false;
    if ((uint64_t)l->code_pages * RECORDER_PAGE > f->code_cap)
        return false;
    return true;
}

int recorder_check(const uint8_t *mem, uint64_t avail, uint64_t phys, struct recorder_view *v)
{
    zero(v, sizeof *v);
    if (avail < RECORDER_HEADER_BYTES)
        return RECORDER_E_SHORT;
    copy(&v->fixed, mem, sizeof v->fixed);
    const struct recorder_fixed *f = &v->fixed;
    if (f->magic != RECORDER_MAGIC)
        return RECORDER_E_NONE;
    if (f->version != RECORDER_VERSION || f->fixed_bytes != sizeof *f)
        return RECORDER_E_VERSION;
    if (struct_crc(f, sizeof *f) != f->crc)
        return RECORDER_E_CRC;
    if (f->region_phys != phys)
        return RECORDER_E_PLACE;
    if (!layout_ok(f))
        return RECORDER_E_LAYOUT;
    if (avail < f->region_bytes)
        return RECORDER_E_SHORT;
    struct recorder_live a, b;
    copy(&a, mem + RECORDER_LIVE_OFF0, sizeof a);
    copy(&b, mem + RECORDER_LIVE_OFF1, sizeof b);
    bool aok = live_ok(&a), bok = live_ok(&b);
    if (!aok && !bok)
        return RECORDER_E_LIVE;
    /* the newest good slot; the other, if good, must be older */
    bool take_b = bok && (!aok || b.seq > a.seq);
    v->live = take_b ? b : a;
    v->slot = take_b ? 1 : 0;
    v->other_slot_ok = aok && bok;
    if (!live_plausible(f, &v->live)) {
        /* a good CRC over nonsense: try the other slot before giving up */
        struct recorder_live *o = take_b ? &a : &b;
        if (!(take_b ? aok : bok) || !live_plausible(f, o))
            return RECORDER_E_POS;
        v->live = *o;
        v->slot = take_b ? 0 : 1;
        v->other_slot_ok = false;
    }
    return RECORDER_OK;
}

const char *recorder_sideband(const uint8_t *mem, const struct recorder_view *v, size_t *len)
{
    *len = 0;
    const struct recorder_live *l = &v->live;
    if (!l->sideband_bytes || l->sideband_bytes > v->fixed.sideband_cap)
        return NULL;
    const uint8_t *t = mem + v->fixed.sideband_off;
    if (ptd_crc32(0, t, (size_t)l->sideband_bytes) != l->sideband_crc)
        return NULL;
    *len = (size_t)l->sideband_bytes;
    return (const char *)t;
}

bool recorder_code(const uint8_t *mem, const struct recorder_view *v, const uint8_t **dump,
                   const uint8_t **addr, size_t *pages)
{
    *pages = 0;
    *dump = *addr = NULL;
    const struct recorder_live *l = &v->live;
    uint64_t n = l->code_pages;
    if (!n || n * RECORDER_PAGE > v->fixed.code_cap || n * 8 > v->fixed.addr_cap)
        return false;
    const uint8_t *d = mem + v->fixed.code_off, *a = mem + v->fixed.addr_off;
    if (ptd_crc32(0, d, (size_t)(n * RECORDER_PAGE)) != l->code_crc ||
        ptd_crc32(0, a, (size_t)(n * 8)) != l->addr_crc)
        return false;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t p = 0;
        for (int k = 7; k >= 0; k--)
            p = (p << 8) | a[i * 8 + (uint64_t)k];
        if (p % RECORDER_PAGE)
            return false;
    }
    *dump = d;
    *addr = a;
    *pages = (size_t)n;
    return true;
}

const char *recorder_strerror(int err)
{
    switch (err) {
    case RECORDER_OK: return "ok";
    case RECORDER_E_NONE:
        return "no recorder header there (never written, or cleared by the firmware or a power "
               "cycle)";
    case RECORDER_E_VERSION: return "a recorder header of another format version";
    case RECORDER_E_CRC: return "the recorder header is damaged (its CRC does not hold)";
    case RECORDER_E_PLACE: return "the recorder header says it was written at another address";
    case RECORDER_E_LAYOUT: return "the recorder header describes an impossible layout";
    case RECORDER_E_LIVE: return "both live records of the recorder are damaged";
    case RECORDER_E_POS: return "the recorder's write position and counts make no sense";
    case RECORDER_E_SHORT: return "the region is not readable in full";
    }
    return "?";
}

void recorder_var_encode(struct recorder_var *out, uint32_t unit, uint64_t generation,
                         uint64_t phys, uint64_t bytes)
{
    zero(out, sizeof *out);
    out->magic = RECORDER_VAR_MAGIC;
    out->version = RECORDER_VERSION;
    out->unit = unit;
    out->generation = generation;
    out->region_phys = phys;
    out->region_bytes = bytes;
    out->crc = struct_crc(out, sizeof *out);
}

int recorder_var_decode(const void *data, size_t len, struct recorder_var *out)
{
    zero(out, sizeof *out);
    if (len != sizeof *out)
        return -1;
    copy(out, data, sizeof *out);
    if (out->magic != RECORDER_VAR_MAGIC || out->version != RECORDER_VERSION ||
        struct_crc(out, sizeof *out) != out->crc || out->region_phys % RECORDER_PAGE ||
        out->region_bytes % RECORDER_PAGE || out->region_bytes < RECORDER_HEADER_BYTES ||
        out->region_bytes > RECORDER_MAX_REGION || out->unit > RECORDER_UNIT_SOFT ||
        out->region_phys + out->region_bytes < out->region_phys)
        return -1;
    return 0;
}

const char *recorder_state_name(uint32_t state)
{
    switch (state) {
    case RECORDER_STARTING: return "starting";
    case RECORDER_ARMED: return "armed";
    case RECORDER_TRACING: return "tracing";
    case RECORDER_STOPPED: return "stopped";
    case RECORDER_FAILED: return "failed";
    }
    return "unknown";
}

const char *recorder_pos_source_name(uint32_t source)
{
    switch (source) {
    case RECORDER_POS_NONE: return "none";
    case RECORDER_POS_UNIT: return "unit";
    case RECORDER_POS_SAVED: return "saved";
    case RECORDER_POS_STOPPED: return "stopped";
    }
    return "unknown";
}
