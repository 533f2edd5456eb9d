#include "arch/x86/capture_plan.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/rtit_filter.h"
#include "arch/x86/soft_unit.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_plan_report.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"
#include "arch/x86/x86_fmt.h"

/* Rules only the software trace unit has (the hardware ones come from
 * rtit_check() against capture_soft_caps()). */
#define SOFT_KIND "soft-unit"
static const char soft_cyc_name[] = "soft-cyc-unsupported";
static const char soft_cyc_text[] =
    "the software trace unit writes no CYC packets (it has no core clock to count)";
static const char hw_absent_text[] =
    "Intel PT is not usable on this CPU; the software trace unit (unit=soft) traces anywhere";

/* Capture words beyond rtit_options.h (1 = takes a value). */
static const struct {
    const char *name;
    bool value;
} capture_words[] = {
    { "buffer", true }, { "no-mtc", false }, { "no-filter", false },
    { "cpus", true },   { "unit", true },
};

int capture_word_known(const char *name, bool *takes_value)
{
    for (size_t i = 0; i < sizeof(capture_words) / sizeof(capture_words[0]); i++)
        if (strcmp(name, capture_words[i].name) == 0) {
            if (takes_value)
                *takes_value = capture_words[i].value;
            return 1;
        }
    int k = rtit_option_takes_value(name);
    if (k < 0)
        return 0;
    if (takes_value)
        *takes_value = k == 1;
    return 1;
}

const char *capture_mode_name(enum capture_mode m)
{
    return m == CAPTURE_RESIDENT ? "resident" : "trace";
}

const char *capture_unit_name(enum capture_unit u)
{
    return u == CAPTURE_UNIT_SOFT ? "soft" : "hw";
}

void capture_soft_caps(struct rtit_caps *k)
{
    memset(k, 0, sizeof(*k));
    memcpy(k->vendor, "soft", 5);
    k->leaf7_pt = k->has_leaf14 = k->has_leaf14_1 = true;
    k->pt = true;
    k->reason = RTIT_PT_OK;
    /* PSBFreq is modelled (the encoder's PSB period); CYC is not, which
	 * capture_plan_make() refuses by its own rule since rtit_check()
	 * ties both to one CPUID bit. CycThresh 0 (the default) is allowed. */
    k->psb_cyc = true;
    k->psb_periods = 0xffff; /* PSBFreq 0..15 (soft_unit.c) */
    /* MTC and TMA from the TSC the glue reads, on the soft unit's own
	 * crystal clock (soft_unit.h), any MTCFreq */
    k->mtc = true;
    k->mtc_periods = 0xffff;
    k->has_leaf15 = true;
    k->tsc_denominator = SOFT_UNIT_CPUID15_EAX;
    k->tsc_numerator = SOFT_UNIT_CPUID15_EBX;
    k->cyc_thresholds = 0x0001;
    k->ip_filter = true;
    k->num_ranges = RTIT_MAX_RANGES;
    k->topa = k->topa_multi_entry = k->single_range = true;
    /* buffers are wherever the app allocates them */
    k->maxphyaddr = 52;
    k->maxphyaddr_enumerated = true;
}

const struct rtit_caps *capture_plan_caps(const struct capture_plan *p,
                                          const struct rtit_caps *caps,
                                          struct rtit_caps *soft_storage)
{
    if (p->unit == CAPTURE_UNIT_SOFT) {
        capture_soft_caps(soft_storage);
        /* the soft unit steps this CPU's code, in its paging mode */
        soft_storage->la57 = caps->la57;
        soft_storage->paging_la57 = caps->paging_la57;
        return soft_storage;
    }
    return caps;
}

/* The next note line (the last one is reused when all are taken, so a
 * long plan loses a middle note rather than writing past the array). */
static char *note(struct capture_plan *p)
{
    if (p->n_notes < CAPTURE_MAX_NOTES)
        return p->notes[p->n_notes++];
    return p->notes[CAPTURE_MAX_NOTES - 1];
}

/* "64K", "1M", or the bytes in decimal when not a whole K/M/G. */
static const char *size_text(char buf[X86_FMT_DEC64_LEN + 2], uint64_t v)
{
    static const char suffix[] = "GMK";
    for (int i = 0; i < 3; i++) {
        unsigned shift = 30u - 10u * (unsigned)i;
        if (v && !(v & (((uint64_t)1 << shift) - 1))) {
            x86_fmt_dec64(buf, v >> shift);
            size_t n = strlen(buf);
            buf[n] = suffix[i];
            buf[n + 1] = '\0';
            return buf;
        }
    }
    return x86_fmt_dec64(buf, v);
}

/* Smallest power of two >= v, at least lo (v <= 2^62). */
static uint64_t pow2_at_least(uint64_t v, uint64_t lo)
{
    uint64_t p = lo;
    while (p < v && p < ((uint64_t)1 << 62))
        p <<= 1;
    return p;
}

static int word_fail(struct capture_plan *p, const char *word, const char *why)
{
    snprintf(p->error, sizeof(p->error), "%s: %s", word, why);
    p->status = CAPTURE_PLAN_E_WORD;
    return p->status;
}

struct explicit_words {
    bool output, regions, region_size, single_size, mode, mtc, buffer;
    bool buffer_base, table_base, filter_words, no_mtc, no_filter, cyc;
};

/* Splits "name=value" into name (copied) and value. */
static int split_word(const char *w, char *name, size_t cap, const char **value)
{
    /* as an option (--name[=value], the host's command line) or bare (the
     * app's words); errors name the word as it was given */
    if (w[0] == '-' && w[1] == '-')
        w += 2;
    const char *eq = strchr(w, '=');
    size_t n = eq ? (size_t)(eq - w) : strlen(w);
    if (n == 0 || n >= cap)
        return -1;
    memcpy(name, w, n);
    name[n] = '\0';
    *value = eq ? eq + 1 : NULL;
    return 0;
}

/* First pass: unit= (the defaults depend on the unit). */
static int scan_unit(struct capture_plan *p, const struct capture_request *req)
{
    for (size_t i = 0; i < req->n_words; i++) {
        char name[32];
        const char *value;
        if (split_word(req->words[i], name, sizeof(name), &value) || strcmp(name, "unit"))
            continue;
        if (value && strcmp(value, "hw") == 0)
            p->unit = CAPTURE_UNIT_HW;
        else if (value && strcmp(value, "soft") == 0)
            p->unit = CAPTURE_UNIT_SOFT;
        else
            return word_fail(p, req->words[i], "expected unit=hw or unit=soft");
    }
    return 0;
}

static int apply_words(struct capture_plan *p, const struct capture_request *req,
                       struct explicit_words *x, uint64_t *buffer)
{
    for (size_t i = 0; i < req->n_words; i++) {
        const char *w = req->words[i], *value;
        char name[32];
        bool takes;
        uint64_t v;

        if (split_word(w, name, sizeof(name), &value) || !capture_word_known(name, &takes))
            return word_fail(p, w, "unknown option word");
        if (takes && (!value || !*value))
            return word_fail(p, w, "needs a value (name=value)");
        if (!takes && value)
            return word_fail(p, w, "takes no value");
#define IS(s) (strcmp(name, s) == 0)
        if (IS("unit")) {
            continue; /* scan_unit() */
        } else if (IS("buffer")) {
            if (rtit_parse_u64(value, &v, true) || v < 128 || v > ((uint64_t)1 << 32))
                return word_fail(p, w, "expected a size from 128 to 4G");
            *buffer = v;
            x->buffer = true;
        } else if (IS("no-mtc")) {
            x->no_mtc = true;
        } else if (IS("no-filter")) {
            x->no_filter = true;
        } else if (IS("cpus")) {
            if (strcmp(value, "all") == 0) {
                p->cpus = CAPTURE_CPUS_ALL;
            } else if (rtit_parse_u64(value, &v, false) || v == 0 || v >= CAPTURE_CPUS_ALL) {
                return word_fail(p, w, "expected cpus=N (N >= 1) or cpus=all");
            } else {
                p->cpus = (unsigned)v;
            }
        } else {
            char err[160];
            if (rtit_option_apply(&p->cfg, name, value, err, sizeof(err))) {
                snprintf(p->error, sizeof(p->error), "%s", err);
                p->status = CAPTURE_PLAN_E_WORD;
                return p->status;
            }
            x->output |= IS("output");
            x->regions |= IS("regions");
            x->region_size |= IS("region-size");
            x->single_size |= IS("single-size");
            x->mode |= IS("mode");
            x->mtc |= IS("mtc");
            x->cyc |= IS("cyc");
            x->buffer_base |= IS("buffer-base");
            x->table_base |= IS("table-base");
            x->filter_words |= IS("filter") || IS("range-cfg");
        }
#undef IS
    }
    return 0;
}

/* Output scheme and sizes. */
static void plan_output(struct capture_plan *p, const struct rtit_caps *k,
                        const struct explicit_words *x, uint64_t buffer)
{
    struct rtit_config *c = &p->cfg;
    char s1[24], s2[24];

    if (!x->output) {
        if (k->topa) {
            c->output = RTIT_OUTPUT_TOPA;
            snprintf(note(p), CAPTURE_NOTE_LEN, "output: ToPA%s%s",
                     p->unit == CAPTURE_UNIT_SOFT ? " (soft unit)" : " (CPUID.(14h,0).ECX[0])",
                     k->topa_multi_entry ? ", multiple entries" : ", single entry");
        } else if (k->single_range) {
            c->output = RTIT_OUTPUT_SINGLE;
            snprintf(note(p), CAPTURE_NOTE_LEN, "output: single range (no ToPA on this CPU)");
        }
    }
    if (c->output == RTIT_OUTPUT_TOPA) {
        uint64_t region;
        if (x->region_size) {
            region = RTIT_TOPA_REGION_BYTES(c->region_size_code);
        } else {
            /* multi-entry: 64 KiB regions (small alignment
			 * slack); single-entry: one region holds it all */
            uint64_t want = k->topa_multi_entry && !x->regions
                                ? RTIT_TOPA_REGION_BYTES(CAPTURE_DEFAULT_REGION_CODE)
                                : pow2_at_least(buffer, RTIT_TOPA_REGION_BYTES(0));
            if (x->regions && c->regions > 1)
                want = pow2_at_least(buffer / c->regions, RTIT_TOPA_REGION_BYTES(0));
            if (want > buffer)
                want = pow2_at_least(buffer, RTIT_TOPA_REGION_BYTES(0));
            unsigned code = 0;
            while (code < RTIT_TOPA_MAX_SIZE_CODE && RTIT_TOPA_REGION_BYTES(code) < want)
                code++;
            c->region_size_code = code;
            region = RTIT_TOPA_REGION_BYTES(code);
        }
        if (!x->regions) {
            uint64_t n = (buffer + region - 1) / region;
            if (!k->topa_multi_entry && n > 1) {
                snprintf(note(p), CAPTURE_NOTE_LEN, "single-entry ToPA: one region of %s, not %s",
                         size_text(s1, region), size_text(s2, buffer));
                n = 1;
            }
            c->regions = n > RTIT_TOPA_MAX_REGIONS ? RTIT_TOPA_MAX_REGIONS : (unsigned)n;
        }
        if (x->buffer && rtit_config_buffer_bytes(c) != buffer)
            snprintf(note(p), CAPTURE_NOTE_LEN, "buffer=%s rounded to %u region(s) of %s",
                     size_text(s1, buffer), c->regions, size_text(s2, region));
        snprintf(note(p), CAPTURE_NOTE_LEN, "when full: %s",
                 c->when_full == RTIT_FULL_STOP
                     ? "stop (STOP on the last region: the oldest trace is kept)"
                     : "ring (END back to the first table: the newest trace is kept)");
    } else {
        if (!x->single_size) {
            c->single_size = pow2_at_least(buffer, 128);
            if ((k->quirks & RTIT_QUIRK_SINGLE_RANGE_4K) && c->single_size > 4096) {
                c->single_size = 4096;
                snprintf(note(p), CAPTURE_NOTE_LEN,
                         "single range cut to 4K: larger ranges may hold wrong data (%s)",
                         rtit_single_range_4k_reason(k->family, k->model));
            } else if (c->single_size != buffer) {
                snprintf(note(p), CAPTURE_NOTE_LEN, "single range of %s (a power of two)",
                         size_text(s1, c->single_size));
            }
        }
        /* mode=stop stays in the configuration: rtit_check refuses it
		 * (single-range-stop), as `ptboot plan` does, rather than
		 * tracing a ring nobody asked for */
        if (c->when_full == RTIT_FULL_RING)
            snprintf(note(p), CAPTURE_NOTE_LEN, "when full: wraps (single range)");
    }
}

static void plan_packets(struct capture_plan *p, const struct rtit_caps *k,
                         const struct explicit_words *x)
{
    struct rtit_config *c = &p->cfg;
    const char *unit = p->unit == CAPTURE_UNIT_SOFT ? "the soft unit" : "this CPU";

    if (x->no_mtc) {
        c->mtc_en = false;
        snprintf(note(p), CAPTURE_NOTE_LEN, "MTC off (no-mtc)");
    } else if (!x->mtc && k->mtc && p->unit == CAPTURE_UNIT_SOFT) {
        c->mtc_en = true;
        snprintf(
            note(p), CAPTURE_NOTE_LEN,
            "MTC on, MTCFreq=%u (a packet every 2^%u ART ticks; the soft unit's ART is TSC/%u)",
            c->mtc_freq, c->mtc_freq, SOFT_UNIT_CPUID15_EBX / SOFT_UNIT_CPUID15_EAX);
    } else if (!x->mtc && k->mtc) {
        c->mtc_en = true;
        snprintf(note(p), CAPTURE_NOTE_LEN, "MTC on, MTCFreq=%u (a packet every 2^%u ART ticks)",
                 c->mtc_freq, c->mtc_freq);
    } else if (!x->mtc) {
        snprintf(note(p), CAPTURE_NOTE_LEN, "no MTC on %s: time from TSC packets only", unit);
    }
    snprintf(note(p), CAPTURE_NOTE_LEN, "TSC %s, RET compression %s, BranchEn %s",
             c->tsc_en ? "on" : "off (no-tsc)", c->dis_retc ? "off (dis-retc)" : "on",
             c->branch_en ? "on" : "off (no-branch)");
    if (k->psb_cyc)
        snprintf(note(p), CAPTURE_NOTE_LEN, "PSBFreq=%u (a PSB every %uK of trace)", c->psb_freq,
                 c->psb_freq < 16 ? 2u << c->psb_freq : 0u);
    else
        snprintf(note(p), CAPTURE_NOTE_LEN, "PSB period fixed by %s (no CPUID.(14h,0).EBX[1])",
                 unit);
}

static int plan_filter(struct capture_plan *p, const struct rtit_caps *k,
                       const struct capture_request *req, const struct explicit_words *x)
{
    struct rtit_config *c = &p->cfg;
    char h1[X86_FMT_HEX64_LEN], h2[X86_FMT_HEX64_LEN];

    if (x->filter_words) {
        p->filtered = true;
        snprintf(note(p), CAPTURE_NOTE_LEN, "filter: the ranges given in the words");
        return 0;
    }
    if (p->mode == CAPTURE_RESIDENT) {
        snprintf(note(p), CAPTURE_NOTE_LEN, "filter: off (resident: the whole boot is traced)");
        return 0;
    }
    if (x->no_filter || !req->n_images) {
        snprintf(note(p), CAPTURE_NOTE_LEN, "filter: off (%s): everything is traced",
                 x->no_filter ? "no-filter" : "no image range given");
        return 0;
    }
    unsigned free_ranges = 0;
    for (unsigned n = 0; n < k->num_ranges && n < RTIT_MAX_RANGES; n++)
        free_ranges += c->range[n].cfg == RTIT_ADDR_CFG_OFF;
    if (free_ranges < req->n_images) {
        snprintf(note(p), CAPTURE_NOTE_LEN,
                 "filter: off: %u free address range(s) for %u image(s); all is traced (the "
                 "decoder still gets the image)",
                 free_ranges, (unsigned)req->n_images);
        return 0;
    }
    for (size_t i = 0; i < req->n_images; i++) {
        const struct capture_image *im = &req->images[i];
        int n = rtit_filter_add_image(c, k, im->base, im->size);
        if (n < 0) {
            snprintf(p->error, sizeof(p->error), "image %s+%s: %s", x86_fmt_hex64(h1, im->base),
                     x86_fmt_hex64(h2, im->size), rtit_filter_strerror(n));
            p->status = CAPTURE_PLAN_E_ARG;
            return p->status;
        }
        snprintf(note(p), CAPTURE_NOTE_LEN, "filter: range %d = image %s..%s", n,
                 x86_fmt_hex64(h1, im->base), x86_fmt_hex64(h2, im->base + (im->size - 1)));
    }
    p->filtered = true;
    return 0;
}

static void plan_cpus(struct capture_plan *p, const struct rtit_caps *k)
{
    if (p->cpus == 1)
        return;
    if (p->unit == CAPTURE_UNIT_SOFT) {
        snprintf(note(p), CAPTURE_NOTE_LEN,
                 "cpus: the soft unit traces the BSP only (single-stepping runs on one CPU)");
        p->cpus = 1;
        return;
    }
    snprintf(note(p), CAPTURE_NOTE_LEN, "cpus: one buffer per CPU, the same configuration on each");
    if (k->quirks & RTIT_QUIRK_CORE_SCOPED_MSRS)
        snprintf(note(p), CAPTURE_NOTE_LEN,
                 "cpus: RTIT MSRs are core scoped on this CPU: one thread per core is programmed");
    if (k->hybrid)
        snprintf(
            note(p), CAPTURE_NOTE_LEN,
            "cpus: hybrid CPU: each AP's own CPUID leaf 14h is checked before it is programmed");
}

static int refuse_rule(struct capture_plan *p, enum rtit_rule r)
{
    p->rule_name = rtit_rule_name(r);
    p->rule_kind = rtit_rule_kind(r) == RTIT_KIND_OPERROR ? "operational-error"
                                                          : rtit_rule_kind_name(rtit_rule_kind(r));
    p->rule_text = rtit_rule_text(r);
    p->status = CAPTURE_PLAN_E_RULE;
    return p->status;
}

/* Checks the configuration as the unit would take it. */
static int plan_check(struct capture_plan *p, const struct rtit_caps *k)
{
    if (rtit_check(&p->cfg, k, &p->violation) != RTIT_RULE_OK)
        return refuse_rule(p, p->violation.rule);
    if (p->unit == CAPTURE_UNIT_SOFT && p->cfg.cyc_en) {
        p->rule_name = soft_cyc_name;
        p->rule_kind = SOFT_KIND;
        p->rule_text = soft_cyc_text;
        p->status = CAPTURE_PLAN_E_RULE;
        return p->status;
    }
    return 0;
}

int capture_plan_make(struct capture_plan *p, const struct rtit_caps *caps,
                      const struct capture_request *req)
{
    struct rtit_caps soft;
    struct explicit_words x;
    uint64_t buffer;

    if (!p)
        return CAPTURE_PLAN_E_ARG;
    memset(p, 0, sizeof(*p));
    p->violation.index = -1;
    if (!caps || !req || (req->n_words && !req->words) || (req->n_images && !req->images)) {
        snprintf(p->error, sizeof(p->error), "capture plan: missing argument");
        p->status = CAPTURE_PLAN_E_ARG;
        return p->status;
    }
    p->mode = req->mode;
    p->unit = req->unit;
    p->cpus = req->cpus <= 1 ? 1 : req->cpus;
    if (scan_unit(p, req))
        return p->status;
    const struct rtit_caps *k = capture_plan_caps(p, caps, &soft);

    if (!k->pt) {
        /* Nothing to plan on: name the rule the first MSR write would
		 * break (pt-absent, or no output scheme). */
        struct rtit_config probe;
        rtit_config_default(&probe, k);
        enum rtit_rule r = rtit_check(&probe, k, &p->violation);
        snprintf(note(p), CAPTURE_NOTE_LEN, "Intel PT not usable (%s)",
                 rtit_pt_reason_name(k->reason));
        refuse_rule(p, r != RTIT_RULE_OK ? r : RTIT_RULE_PT_ABSENT);
        if (r == RTIT_RULE_PT_ABSENT || r == RTIT_RULE_OK)
            p->rule_text = hw_absent_text;
        return p->status;
    }

    memset(&x, 0, sizeof(x));
    rtit_config_default(&p->cfg, k);
    p->cfg.mtc_en = false;
    if (p->unit == CAPTURE_UNIT_SOFT)
        p->cfg.mtc_freq = SOFT_UNIT_MTC_FREQ_DEFAULT;
    buffer = p->mode == CAPTURE_RESIDENT ? CAPTURE_DEFAULT_BUFFER_RESIDENT
                                         : CAPTURE_DEFAULT_BUFFER_TRACE;
    if (apply_words(p, req, &x, &buffer))
        return p->status;

    plan_output(p, k, &x, buffer);
    plan_packets(p, k, &x);
    if (plan_filter(p, k, req, &x))
        return p->status;
    plan_cpus(p, k);
    if (p->mode == CAPTURE_RESIDENT) {
        p->reserved_memory = true;
        snprintf(note(p), CAPTURE_NOTE_LEN,
                 "memory: EfiReservedMemoryType (the unit may write it after ExitBootServices)");
    }
    p->buffer_bytes = rtit_config_buffer_bytes(&p->cfg);

    /* Illustrative addresses until capture_plan_place(), so the plan
	 * prints and checks like `ptboot plan`: the same defaults, a table
	 * moved out of the output with a note, a given address kept. */
    p->addresses_given = x.buffer_base || x.table_base;
    /* The app allocates its block and places buffer and tables in it
	 * (capture_plan_place): an address word shapes the printed plan
	 * only. Said, so nobody expects the capture at that address. */
    if (p->addresses_given && p->unit == CAPTURE_UNIT_HW)
        snprintf(note(p), CAPTURE_NOTE_LEN,
                 "buffer-base/table-base: this plan only; a capture places buffer and tables in "
                 "memory it allocates");
    if (!x.buffer_base)
        p->cfg.buffer_phys = RTIT_PLAN_DEFAULT_BUFFER;
    if (!x.table_base) {
        bool moved;
        p->cfg.table_phys = rtit_plan_default_table(&p->cfg, k, &moved);
        if (moved)
            rtit_plan_default_table_note(note(p), CAPTURE_NOTE_LEN, &p->cfg, k);
    }
    if (plan_check(p, k))
        return p->status;
    if (rtit_memory_need(&p->cfg, k, &p->need)) {
        snprintf(p->error, sizeof(p->error), "capture plan: no output memory");
        p->status = CAPTURE_PLAN_E_ARG;
        return p->status;
    }
    p->status = CAPTURE_PLAN_OK;
    return p->status;
}

int capture_plan_place(struct capture_plan *p, const struct rtit_caps *caps, uint64_t block_phys,
                       uint64_t block_bytes)
{
    struct rtit_caps soft;
    const struct rtit_caps *k = capture_plan_caps(p, caps, &soft);
    int err = rtit_memory_place(&p->cfg, k, block_phys, block_bytes);
    if (err)
        return err;
    p->addresses_given = true;
    if (plan_check(p, k))
        return p->status;
    return 0;
}

int capture_plan_report(const struct capture_plan *p, const struct rtit_caps *caps,
                        uint64_t *table_mem, size_t table_capacity,
                        void (*emit)(void *ctx, const char *line), void *ctx)
{
    char line[320], d1[X86_FMT_DEC64_LEN], d2[X86_FMT_DEC64_LEN], d3[X86_FMT_DEC64_LEN], cpus[16];
    const struct rtit_config *c = &p->cfg;

    if (p->status == CAPTURE_PLAN_E_WORD || p->status == CAPTURE_PLAN_E_ARG) {
        snprintf(line, sizeof(line), "error: %s", p->error);
        emit(ctx, line);
        return p->status;
    }
    if (p->cpus == CAPTURE_CPUS_ALL)
        snprintf(cpus, sizeof(cpus), "all");
    else
        snprintf(cpus, sizeof(cpus), "%u", p->cpus);
    if (p->status == CAPTURE_PLAN_OK) {
        bool topa = c->output == RTIT_OUTPUT_TOPA;
        snprintf(
            line, sizeof(line),
            "capture mode=%s unit=%s cpus=%s output=%s when-full=%s buffer=%s regions=%u region=%s "
            "memory=%s block=%s filter=%s",
            capture_mode_name(p->mode), capture_unit_name(p->unit), cpus, topa ? "topa" : "single",
            topa && c->when_full == RTIT_FULL_STOP ? "stop" : "ring",
            x86_fmt_dec64(d1, p->buffer_bytes), topa ? c->regions : 1u,
            x86_fmt_dec64(d2, topa ? RTIT_TOPA_REGION_BYTES(c->region_size_code) : c->single_size),
            p->reserved_memory ? "reserved" : "boot", x86_fmt_dec64(d3, p->need.block_bytes),
            p->filtered ? "on" : "off");
    } else {
        snprintf(line, sizeof(line), "capture mode=%s unit=%s cpus=%s refused",
                 capture_mode_name(p->mode), capture_unit_name(p->unit), cpus);
    }
    emit(ctx, line);
    for (size_t i = 0; i < p->n_notes; i++) {
        snprintf(line, sizeof(line), "note: %s", p->notes[i]);
        emit(ctx, line);
    }
    if (p->status == CAPTURE_PLAN_E_RULE) {
        int n = snprintf(line, sizeof(line), "refused %s kind=%s", p->rule_name, p->rule_kind);
        if (p->violation.index >= 0 && n > 0 && (size_t)n < sizeof(line))
            snprintf(line + n, sizeof(line) - (size_t)n, " range=%d", p->violation.index);
        emit(ctx, line);
        snprintf(line, sizeof(line), "why: %s", p->rule_text);
        emit(ctx, line);
        return p->status;
    }
    if (p->unit == CAPTURE_UNIT_SOFT) {
        char h[X86_FMT_HEX64_LEN];
        /* no MSR is written: the unit follows the same CTL fields */
        snprintf(line, sizeof(line), "soft ctl %s", x86_fmt_hex64(h, rtit_config_ctl(c, true)));
        emit(ctx, line);
        for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
            char h2[X86_FMT_HEX64_LEN];
            if (c->range[n].cfg == RTIT_ADDR_CFG_OFF)
                continue;
            snprintf(line, sizeof(line), "soft range %u cfg=%u %s %s", n, c->range[n].cfg,
                     x86_fmt_hex64(h, c->range[n].start), x86_fmt_hex64(h2, c->range[n].end));
            emit(ctx, line);
        }
        return 0;
    }
    int r = rtit_plan_report(c, caps, table_mem, table_capacity, emit, ctx);
    return r > 0 ? CAPTURE_PLAN_E_RULE : r;
}
