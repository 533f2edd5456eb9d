/* Property test over thousands of random capability sets and
 * configurations, with the RTIT model as the CPU:
 *  - every configuration rtit_check() accepts starts, traces and stops on
 *    the model with no #GP and no operational error, and the byte count,
 *    write position and wrap detection are exact;
 *  - every configuration it refuses as #GP / operational error really
 *    faults or sets STATUS.Error on the model when forced onto it (the
 *    start writes issued without the check), and the rule names what the
 *    model complains about;
 *  - erratum rules are policy: the model accepts them;
 *  - what the CPU would take but not do as asked is refused, and the model
 *    shows why: trace stored over a ToPA table (table bases inside, across
 *    and beside the regions), a range that holds no IP (A > B, or beyond
 *    the paging mode's 48/57 bits), a stop request that wraps; and what is
 *    accepted is done as asked: the walk never lands on a table, every
 *    range holds its own ends, a stop request stops;
 *  - option words naming ranges (random N, filter/trace-stop/range-cfg):
 *    a range named twice is refused by name and changes nothing; every
 *    range named once reaches the model's ADDRn MSRs and ADDRn_CFG as
 *    given (none dropped).
 * Seed: PTBOOT_PROP_SEED (default fixed), iterations: PTBOOT_PROP_ITERS. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_seq.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_model_util.h"
#include "test/unit/rtit_test_util.h"

#define MEM_PHYS 0x10000000ull
#define MEM_SIZE (9u << 20)
#define TAB_PHYS MEM_PHYS
#define BUF_PHYS (MEM_PHYS + (4u << 20))
#define BUF_MAX  (4u << 20)

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));
static uint64_t scratch_tables[8 * RTIT_TOPA_ENTRIES_PER_TABLE];
static struct x86_cpuid_dump dump;
static struct rtit_model model;
static uint64_t rng;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

static bool chance(unsigned percent)
{
    return below(100) < percent;
}

static void put(uint32_t leaf, uint32_t sub, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    struct x86_cpuid_dump_entry *e = &dump.entry[dump.count++];
    e->leaf = leaf;
    e->subleaf = sub;
    e->regs = (x86_cpuid_regs){ a, b, c, d };
}

static unsigned random_bitmap(void)
{
    unsigned b = (unsigned)below(0x10000);
    if (chance(85))
        b |= 1;
    return b;
}

/* CR4.LA57 is the firmware's choice, not CPUID's: half of the CPUs with
 * 5-level paging run it. */
static void random_paging(struct rtit_caps *caps)
{
    caps->paging_la57 = caps->la57 && chance(50);
}

/* A random but plausible Intel CPU, as a CPUID dump. */
static void random_cpu(struct rtit_caps *caps)
{
    static const unsigned models[] = { 0x3d, 0x4f, 0x5e, 0x5c, 0x7a, 0x7e, 0x97, 0x8f, 0xb7, 0x55 };
    unsigned model_no = models[below(sizeof(models) / sizeof(models[0]))];
    uint32_t sig = (model_no >> 4) << 16 | 6u << 8 | (model_no & 0xf) << 4 | 1;

    uint32_t ebx = (uint32_t)below(0x200);
    uint32_t ecx = 0;
    if (chance(85))
        ecx |= 1u << 0;
    if ((ecx & 1) && chance(70))
        ecx |= 1u << 1;
    if (chance(60))
        ecx |= 1u << 2;
    if (chance(10))
        ecx |= 1u << 3;
    if (chance(20))
        ecx |= 1u << 31;
    bool sub1 = chance(92);
    unsigned ranges = (ebx & 4) ? (unsigned)below(5) : 0;
    if (chance(3))
        ranges = 7; /* 3 bits, not 2 */

    dump.count = 0;
    put(0, 0, 0x14, 0x756e6547, 0x6c65746e, 0x49656e69);
    put(1, 0, sig, 0, 0, 0);
    put(7, 0, 0, chance(95) ? 1u << 25 : 0, chance(30) ? 1u << 16 : 0, 0);
    put(0x14, 0, sub1 ? 1 : 0, ebx, ecx, 0);
    if (sub1)
        put(0x14, 1, random_bitmap() << 16 | ranges, random_bitmap() << 16 | random_bitmap(), 0, 0);
    put(0x80000000, 0, 0x80000008, 0, 0, 0);
    put(0x80000008, 0, 36 + (uint32_t)below(17), 0, 0, 0);
    rtit_caps_read(caps, x86_cpuid_dump_query, &dump);
    random_paging(caps);
}

static unsigned pick_encoding(unsigned bitmap)
{
    if (bitmap && chance(80)) {
        for (;;) {
            unsigned n = (unsigned)below(16);
            if (bitmap & (1u << n))
                return n;
        }
    }
    return chance(50) ? 0 : (unsigned)below(16);
}

static uint64_t random_linear(void)
{
    if (chance(8))
        return rnd(); /* probably non-canonical */
    if (chance(10)) {
        /* canonical at 57 bits, mostly not at 48 */
        uint64_t v = rnd() & 0x00ffffffffffffffull;
        return chance(30) ? v | 0xff00000000000000ull : v;
    }
    uint64_t v = rnd() & 0x00007fffffffffffull;
    return chance(30) ? v | 0xffff800000000000ull : v;
}

/* A range as a careful user writes it, now and then with the ends the
 * wrong way round or beyond 48 bits on a CPU with 5-level paging. */
static void careful_range(struct rtit_addr_range *r, const struct rtit_caps *k)
{
    r->cfg = 1 + (unsigned)below(2);
    r->start = rnd() & 0x00007fffffffffffull;
    r->end = rnd() | 0xffff800000000000ull;
    if (k->la57 && chance(15)) {
        r->start = rnd() & 0x00ffffffffffffffull;
        r->end = rnd() | 0xff00000000000000ull;
    }
    if (chance(12)) {
        uint64_t t = r->start;
        r->start = r->end;
        r->end = t;
    }
}

/* Table bases that reach the regions: inside them, running into them from
 * below (like table 256 of 130817 4 KiB regions at the default addresses),
 * or just clear of them on either side. */
static void random_table_base(struct rtit_config *c, const struct rtit_caps *k)
{
    if (c->output != RTIT_OUTPUT_TOPA || c->regions == 0 || c->regions > 1100 ||
        c->region_size_code > 15 || !chance(12))
        return;
    uint64_t total = rtit_config_buffer_bytes(c);
    uint64_t tables = rtit_topa_tables_needed(c->regions, k->topa_multi_entry);
    switch (below(4)) {
    case 0: /* inside */ c->table_phys = c->buffer_phys + 4096 * below(total / 4096); break;
    case 1: /* from below, the last k tables on the first regions */
        c->table_phys = c->buffer_phys - 4096 * (1 + below(tables));
        break;
    case 2: /* just below, clear */ c->table_phys = c->buffer_phys - 4096 * tables; break;
    default: /* just after the last region, clear */ c->table_phys = c->buffer_phys + total; break;
    }
}

/* Random configuration. A "careful" one only asks for what the caps
 * enumerate (so most are accepted); the others are free-for-all. */
static void random_config(struct rtit_config *c, const struct rtit_caps *k)
{
    bool careful = chance(45);
    rtit_config_default(c, k);
    c->table_phys = TAB_PHYS;
    c->buffer_phys = BUF_PHYS;
    c->output = chance(75) ? RTIT_OUTPUT_TOPA : RTIT_OUTPUT_SINGLE;
    c->when_full = chance(50) ? RTIT_FULL_RING : RTIT_FULL_STOP;

    unsigned shape = (unsigned)below(100);
    if (shape < 85) {
        c->regions = chance(40) ? 1 : 1 + (unsigned)below(8);
        c->region_size_code = (unsigned)below(5);
    } else if (shape < 90) {
        c->regions = 505 + (unsigned)below(20); /* two chained tables */
        c->region_size_code = 0;
    } else if (shape < 93) {
        c->regions = 1 + (unsigned)below(2);
        c->region_size_code = 9; /* 2 MiB */
    } else if (shape < 95) {
        c->regions = 0;
    } else if (shape < 96) {
        c->region_size_code = 16;
    } else {
        c->regions = 1;
    }
    static const uint64_t odd_sizes[] = { 3000, 0x1800, 64, 100 };
    c->single_size = chance(90) ? (uint64_t)128 << below(10) : odd_sizes[below(4)];

    if (careful) {
        if (!k->topa_multi_entry)
            c->regions = 1;
        if (c->regions == 0 || c->region_size_code > 15)
            c->regions = 1, c->region_size_code = 0;
        if (!k->topa)
            c->output = RTIT_OUTPUT_SINGLE;
        if (!k->single_range)
            c->output = RTIT_OUTPUT_TOPA;
        if (c->single_size < 128 || (c->single_size & (c->single_size - 1)))
            c->single_size = 4096;
        /* mostly what a single range can do; now and then a stop */
        if (c->output == RTIT_OUTPUT_SINGLE && chance(80))
            c->when_full = RTIT_FULL_RING;
        c->user = chance(30);
        c->dis_retc = chance(30);
        c->tsc_en = chance(70);
        c->branch_en = k->mtc && !(k->quirks & RTIT_QUIRK_BRANCHEN_REQUIRED) ? chance(80) : true;
        c->mtc_en = k->mtc && chance(40);
        c->cyc_en = k->psb_cyc && chance(30);
        c->ptw_en = k->ptwrite && chance(30);
        c->fup_on_ptw = k->ptwrite && chance(30);
        c->pwr_evt_en = k->power_events && chance(30);
        c->event_en = k->event_trace && chance(30);
        c->dis_tnt = k->tnt_disable && chance(30);
        c->inject_psb_pmi = k->psb_pmi_preserve && chance(30);
        c->fabric_en = k->trace_transport && chance(5);
        if (k->mtc_periods && chance(50))
            while (!(k->mtc_periods >> (c->mtc_freq = (unsigned)below(16)) & 1))
                ;
        if (k->cyc_thresholds && chance(50))
            while (!(k->cyc_thresholds >> (c->cyc_thresh = (unsigned)below(16)) & 1))
                ;
        if (k->psb_periods && chance(50))
            while (!(k->psb_periods >> (c->psb_freq = (unsigned)below(16)) & 1))
                ;
        if (k->cr3_filter && chance(20)) {
            c->cr3_filter = true;
            c->cr3 = rnd() & 0x000ffffffffff000ull;
        }
        for (unsigned n = 0; n < k->num_ranges && n < RTIT_MAX_RANGES; n++) {
            if (!chance(40))
                continue;
            careful_range(&c->range[n], k);
        }
        random_table_base(c, k);
        return;
    }
    random_table_base(c, k);
    if (chance(4))
        c->buffer_phys += chance(50) ? 4096 : 0x80;
    if (chance(4))
        c->table_phys += (uint64_t[]){ 0x40, 0x80, 0x800, 0x8 }[below(4)];
    if (chance(3))
        c->buffer_phys = (uint64_t)1 << k->maxphyaddr;
    if (chance(2))
        c->table_phys = (uint64_t)1 << k->maxphyaddr;

    c->os = chance(80);
    c->user = chance(30);
    c->branch_en = chance(85);
    c->dis_retc = chance(20);
    c->tsc_en = chance(70);
    c->mtc_en = chance(25);
    c->cyc_en = chance(15);
    c->ptw_en = chance(8);
    c->fup_on_ptw = chance(5);
    c->pwr_evt_en = chance(6);
    c->event_en = chance(5);
    c->dis_tnt = chance(5);
    c->inject_psb_pmi = chance(5);
    c->fabric_en = chance(4);
    if (chance(30))
        c->mtc_freq = pick_encoding(k->mtc_periods);
    if (chance(30))
        c->cyc_thresh = pick_encoding(k->cyc_thresholds);
    if (chance(30))
        c->psb_freq = pick_encoding(k->psb_periods);
    if (chance(10)) {
        c->cr3_filter = true;
        c->cr3 = rnd() & 0x000ffffffffff000ull;
        if (chance(10))
            c->cr3 |= 0x8;
    }
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        if (!chance(20))
            continue;
        c->range[n].cfg = chance(95) ? 1 + (unsigned)below(2) : 3 + (unsigned)below(13);
        c->range[n].start = random_linear();
        c->range[n].end = random_linear();
    }
}

/* Host memory behind a physical address of the arena, or NULL. */
static uint8_t *arena(uint64_t phys, uint64_t len)
{
    if (phys < MEM_PHYS || phys - MEM_PHYS > MEM_SIZE || len > MEM_SIZE - (phys - MEM_PHYS))
        return NULL;
    return mem + (phys - MEM_PHYS);
}

/* Builds the ToPA tables where the CPU will look for them (or in scratch
 * memory when that address is outside the arena). */
static void place_tables(const struct rtit_config *c)
{
    struct rtit_topa_layout l;
    if (c->output != RTIT_OUTPUT_TOPA || rtit_topa_layout(&l, c))
        return;
    uint64_t bytes = l.tables * 4096ull;
    uint8_t *p = arena(c->table_phys, bytes);
    if (p && ((uintptr_t)p & 7) == 0) {
        assert_int_equal(rtit_topa_build(&l, c, (uint64_t *)(void *)p, l.tables), 0);
    } else {
        assert_true(l.tables <= 8);
        assert_int_equal(rtit_topa_build(&l, c, scratch_tables, 8), 0);
    }
}

static void fresh_model(const struct rtit_caps *k, const struct rtit_config *c)
{
    struct rtit_model_caps mc = rtit_model_caps_of(k);
    uint64_t total = rtit_config_buffer_bytes(c);
    uint8_t *b = arena(c->buffer_phys, total);
    memset(mem, 0, 16 * 4096); /* tables */
    if (b)
        memset(b, 0, total);
    rtit_model_init(&model, &mc, mem, MEM_PHYS, MEM_SIZE);
}

static uint8_t pattern(uint64_t k)
{
    return (uint8_t)(k % 251 + 1);
}

static unsigned hits[RTIT_RULE_COUNT];
static struct rtit_caps fixture_caps[RTIT_FIXTURE_COUNT];
static unsigned accepted_runs, wraps, stops;

/* One capture: start (taking over when the previous cycle left tracing on),
 * trace n bytes, and unless leave_running, stop and check the accounting. */
static void one_cycle(const struct rtit_caps *k, const struct rtit_config *c, bool running,
                      bool leave_running)
{
    struct rtit_msr_ops ops = rtit_model_ops(&model);
    struct rtit_start_info si;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;
    uint64_t total = rtit_config_buffer_bytes(c);
    uint8_t *b = c->fabric_en ? NULL : arena(c->buffer_phys, total);

    if (!c->fabric_en) {
        assert_non_null(b);
        memset(b, 0, total); /* wrap detection needs a zeroed buffer */
    }
    int rc;
    if (running) {
        uint64_t ctl = model.ctl;
        assert_int_equal(rtit_start(&ops, c, k, false, &si), RTIT_SEQ_E_BUSY);
        assert_int_equal(model.ctl, ctl);
        rc = rtit_start(&ops, c, k, true, &si);
        assert_true(si.was_tracing);
    } else {
        rc = rtit_start(&ops, c, k, false, &si);
    }
    if (rc != RTIT_SEQ_OK || model.gp_count || (model.status & RTIT_STATUS_ERROR))
        fail_msg("accepted config failed on the model: rc %d, %s / %s", rc, model.last_gp,
                 model.last_error);
    assert_true(model.psb_on_enable);
    assert_int_equal(model.ctl, rtit_config_ctl(c, true));
    /* every range as asked: its ends written as given, and the CPU
	 * would match them (A <= B; code can run there) */
    for (unsigned r = 0; r < RTIT_MAX_RANGES; r++) {
        const struct rtit_addr_range *ar = &c->range[r];
        if (ar->cfg == RTIT_ADDR_CFG_OFF)
            continue;
        assert_int_equal(model.addr[2 * r], ar->start);
        assert_int_equal(model.addr[2 * r + 1], ar->end);
        if (!rtit_model_range_holds(&model, r, ar->start) ||
            !rtit_model_range_holds(&model, r, ar->end) ||
            !rtit_model_ip_possible(&model, ar->start) || !rtit_model_ip_possible(&model, ar->end))
            fail_msg("accepted range %u [0x%llx, 0x%llx] matches no IP on the model", r,
                     (unsigned long long)ar->start, (unsigned long long)ar->end);
    }

    uint64_t base = model.bytes_stored; /* pattern index of our first byte */
    uint64_t n = below(2 * total + 2);
    if (chance(10))
        n = total;
    uint64_t stored = rtit_model_trace(&model, n);
    if (leave_running)
        return;
    assert_int_equal(rtit_stop(&ops, c, &st), RTIT_SEQ_OK);
    if (model.gp_count || st.error)
        fail_msg("accepted config faulted while tracing: %s / %s", model.last_gp, model.last_error);
    assert_int_equal(model.out_of_memory, 0);
    /* the walk of the ToPA never lands on a table */
    if (model.table_overwrites)
        fail_msg("accepted config wrote %llu trace bytes over a ToPA table (0x%llx)",
                 (unsigned long long)model.table_overwrites,
                 (unsigned long long)model.last_table_hit);
    if (c->fabric_en) {
        assert_int_equal(stored, 0);
        return;
    }
    rtit_output_summarize(&st, c, b, &sum);
    assert_int_equal(sum.buffer_bytes, total);

    /* a stop request stops, whatever the output scheme */
    bool stop_mode = c->when_full == RTIT_FULL_STOP;
    if (stop_mode && n >= total) {
        stops++;
        assert_int_equal(stored, total);
        assert_true(st.stopped);
        assert_true(sum.stopped_full);
        assert_int_equal(sum.bytes, total);
        assert_int_equal(b[total - 1], pattern(base + total - 1));
        return;
    }
    assert_int_equal(stored, n);
    assert_false(st.stopped);
    assert_int_equal(st.write_pos, (int64_t)(n % total));
    if (n >= total && n > 0) {
        wraps++;
        assert_true(sum.wrapped);
        assert_int_equal(sum.bytes, total);
        assert_int_equal(sum.oldest, n % total);
        /* the newest byte is just before the write position */
        assert_int_equal(b[(n - 1) % total], pattern(base + n - 1));
        assert_int_equal(b[n % total], pattern(base + n - total));
    } else {
        assert_false(sum.wrapped);
        assert_int_equal(sum.bytes, n);
        assert_int_equal(sum.oldest, 0);
        if (n)
            assert_int_equal(b[n - 1], pattern(base + n - 1));
    }
}

/* 1-3 captures in a row on the same model: re-enabling after a STOP or a
 * wrap must work, and a capture left running is taken over. */
static unsigned takeovers;
static void run_accepted(const struct rtit_caps *k, const struct rtit_config *c)
{
    unsigned cycles = 1 + (unsigned)below(3);
    bool running = false;
    for (unsigned i = 0; i < cycles; i++) {
        bool leave = i + 1 < cycles && chance(30);
        one_cycle(k, c, running, leave);
        takeovers += running;
        running = leave;
    }
}

/* What the model says for each rule: '|'-separated substrings of its #GP
 * or error message. */
static const char *const model_words[RTIT_RULE_COUNT] = {
    [RTIT_RULE_PT_ABSENT] = "does not have",
    [RTIT_RULE_TOPA_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit|does not have",
    [RTIT_RULE_SINGLE_UNSUPPORTED] = "no single-range|does not have",
    [RTIT_RULE_FABRIC_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_CYC_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_PSB_FREQ_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_CYC_THRESH_ENCODING] = "CycThresh encoding",
    [RTIT_RULE_PSB_FREQ_ENCODING] = "PSBFreq encoding",
    [RTIT_RULE_MTC_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_MTC_FREQ_ENCODING] = "MTCFreq encoding",
    [RTIT_RULE_BRANCHEN_BDM106] = "BranchEn=0",
    [RTIT_RULE_BRANCHEN_FIXED] = "BranchEn=0",
    [RTIT_RULE_PTW_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_PWR_EVT_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_INJECT_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_EVENT_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_DISTNT_UNSUPPORTED] = "unsupported IA32_RTIT_CTL bit",
    [RTIT_RULE_CR3_UNSUPPORTED] = "does not have (msr 0x572",
    [RTIT_RULE_CR3_RESERVED] = "CR3_MATCH bits 4:0",
    [RTIT_RULE_RANGE_UNSUPPORTED] = "does not have (msr 0x58",
    [RTIT_RULE_RANGE_CFG_RESERVED] = "ADDRn_CFG",
    [RTIT_RULE_RANGE_NONCANONICAL] = "non-canonical",
    [RTIT_RULE_OUTPUT_BASE_RESERVED] = "OUTPUT_BASE bits 6:0",
    [RTIT_RULE_ABOVE_MAXPHYADDR] = "OUTPUT_BASE above MAXPHYADDR",
    [RTIT_RULE_TOPA_SINGLE_ENTRY] = "single-entry ToPA",
    [RTIT_RULE_TOPA_TABLE_ALIGN] = "table base not 4 KiB aligned",
    [RTIT_RULE_REGION_ALIGN] = "not aligned to its size",
    [RTIT_RULE_TOPA_ABOVE_MAXPHYADDR] = "above MAXPHYADDR|reserved bits set",
    [RTIT_RULE_SINGLE_SIZE] = "mask not contiguous",
    [RTIT_RULE_SINGLE_ALIGN] = "overlaps the mask",
};

static unsigned unhonoured_seen[RTIT_RULE_COUNT];

/* A request the model takes and does not do as asked, shown on the model
 * after the forced start and output. */
static void check_unhonoured(const struct rtit_config *c, const struct rtit_violation *v,
                             uint64_t total)
{
    const struct rtit_addr_range *r = v->index >= 0 ? &c->range[v->index] : NULL;
    switch (v->rule) {
    case RTIT_RULE_TOPA_TABLE_OVERLAP:
        if (!model.table_overwrites)
            fail_msg("topa-table-overlap, but the model's output never hit a table");
        break;
    case RTIT_RULE_RANGE_EMPTY:
        assert_non_null(r);
        assert_int_equal(model.addr[2 * v->index], r->start);
        if (rtit_model_range_holds(&model, (unsigned)v->index, r->start) ||
            rtit_model_range_holds(&model, (unsigned)v->index, r->end) ||
            rtit_model_range_holds(&model, (unsigned)v->index, r->end + (r->start - r->end) / 2))
            fail_msg("range-empty, but the model's range %d holds an IP", v->index);
        break;
    case RTIT_RULE_RANGE_BEYOND_PAGING:
        assert_non_null(r);
        assert_int_equal(model.addr[2 * v->index + 1], r->end);
        if (rtit_model_ip_possible(&model, r->start) && rtit_model_ip_possible(&model, r->end))
            fail_msg("range-beyond-paging, but the model runs code at both ends");
        break;
    case RTIT_RULE_SINGLE_RANGE_STOP:
        /* asked to stop when full: the model wraps and keeps going */
        if ((model.status & RTIT_STATUS_STOPPED) || model.bytes_stored != total + 4096)
            fail_msg("single-range-stop, but the model stopped (stored %llu of %llu)",
                     (unsigned long long)model.bytes_stored, (unsigned long long)(total + 4096));
        break;
    default: fail_msg("unhonoured rule %s has no model check", rtit_rule_name(v->rule));
    }
    unhonoured_seen[v->rule]++;
}

static bool names_same_thing(enum rtit_rule rule, const char *msg)
{
    char words[128];
    const char *w = model_words[rule];
    if (!w)
        return true;
    snprintf(words, sizeof(words), "%s", w);
    for (char *tok = strtok(words, "|"); tok; tok = strtok(NULL, "|"))
        if (strstr(msg, tok))
            return true;
    return false;
}

/* The start writes without the check, as a careless tool would issue them. */
static void force_onto_model(const struct rtit_config *c, uint64_t total)
{
    struct rtit_plan p;
    rtit_plan_start(&p, c);
    for (size_t i = 0; i < p.n; i++)
        if (rtit_model_wrmsr(&model, p.w[i].msr, p.w[i].value))
            return;
    /* errors of entries reached later show as output reaches them */
    rtit_model_trace(&model, total + 4096);
}

static void run_refused(const struct rtit_caps *k, const struct rtit_config *c,
                        const struct rtit_violation *v)
{
    (void)k;
    enum rtit_rule rule = v->rule;
    uint64_t total = rtit_config_buffer_bytes(c);
    force_onto_model(c, total);
    bool gp = model.gp_count > 0;
    bool error = model.status & RTIT_STATUS_ERROR;

    switch (rtit_rule_kind(rule)) {
    case RTIT_KIND_GP:
        if (!gp)
            fail_msg("rule %s: model did not fault (error: %s)", rtit_rule_name(rule),
                     model.last_error);
        break;
    case RTIT_KIND_OPERROR:
        if (gp || !error)
            fail_msg("rule %s: model gp=%d error=%d (%s / %s)", rtit_rule_name(rule), gp, error,
                     model.last_gp, model.last_error);
        break;
    case RTIT_KIND_UNSAFE:
        if (gp || error)
            fail_msg("erratum rule %s: model faulted (%s / %s)", rtit_rule_name(rule),
                     model.last_gp, model.last_error);
        break;
    case RTIT_KIND_UNHONOURED:
        /* the CPU takes it: no #GP; a table overwritten by trace may
		 * turn into an operational error later, nothing else may */
        if (gp || (error && rule != RTIT_RULE_TOPA_TABLE_OVERLAP))
            fail_msg("unhonoured rule %s: model faulted (%s / %s)", rtit_rule_name(rule),
                     model.last_gp, model.last_error);
        check_unhonoured(c, v, total);
        break;
    default: break;
    }
    const char *msg = gp ? model.last_gp : model.last_error;
    if ((gp || error) && !names_same_thing(rule, msg))
        fail_msg("rule %s, but the model says: %s", rtit_rule_name(rule), msg);
}

static void test_random_configurations(void **state)
{
    (void)state;
    const char *s = getenv("PTBOOT_PROP_SEED");
    if (s && !*s)
        s = NULL;
    const char *it = getenv("PTBOOT_PROP_ITERS");
    uint64_t seed = s ? strtoull(s, NULL, 0) : 0x9e3779b97f4a7c15ull;
    unsigned iters = it ? (unsigned)strtoul(it, NULL, 0) : 20000;
    rng = seed ? seed : 1;
    for (size_t f = 0; f < RTIT_FIXTURE_COUNT; f++)
        fixture_caps[f] = rtit_fixture_caps(rtit_fixture_names[f]);

    for (unsigned i = 0; i < iters; i++) {
        struct rtit_caps k;
        struct rtit_config c;
        struct rtit_violation v;

        /* one in five: a real CPU's capabilities (test/fixtures) */
        if (chance(20)) {
            k = fixture_caps[below(RTIT_FIXTURE_COUNT)];
            random_paging(&k);
        } else {
            random_cpu(&k);
        }
        random_config(&c, &k);
        enum rtit_rule rule = rtit_check(&c, &k, &v);
        hits[rule]++;
        if (rtit_rule_kind(rule) == RTIT_KIND_INVALID)
            continue;
        fresh_model(&k, &c);
        place_tables(&c);
        if (rule == RTIT_RULE_OK) {
            accepted_runs++;
            run_accepted(&k, &c);
        } else {
            run_refused(&k, &c, &v);
        }
    }

    printf("seed 0x%llx, %u configurations: %u accepted (%u wrapped, %u stopped full, "
           "%u taken over)\n",
           (unsigned long long)seed, iters, accepted_runs, wraps, stops, takeovers);
    for (int r = 1; r < RTIT_RULE_COUNT; r++)
        printf("  %-28s %u\n", rtit_rule_name(r), hits[r]);
    if (iters >= 20000 && !s) {
        /* the default run reaches every rule and enough accepted runs */
        for (int r = 1; r < RTIT_RULE_COUNT; r++)
            if (!hits[r])
                fail_msg("rule %s never hit", rtit_rule_name(r));
        assert_true(accepted_runs >= iters / 4);
        assert_true(wraps > 50 && stops > 50 && takeovers > 50);
        for (int r = 1; r < RTIT_RULE_COUNT; r++)
            if (rtit_rule_kind(r) == RTIT_KIND_UNHONOURED && unhonoured_seen[r] < 10)
                fail_msg("rule %s shown on the model only %u times", rtit_rule_name(r),
                         unhonoured_seen[r]);
    }
}

/* Range option words with random range numbers: a number named twice is
 * refused by name and changes nothing; the ranges named once reach the
 * model exactly (ADDRn_A/B and ADDRn_CFG), none dropped or merged. */
static void test_random_range_words(void **state)
{
    (void)state;
    static const char *const kinds[] = { "filter", "trace-stop", "range-cfg" };
    const char *it = getenv("PTBOOT_PROP_ITERS");
    unsigned iters = it ? (unsigned)strtoul(it, NULL, 0) / 4 : 5000;
    unsigned dups = 0, started = 0;
    rng = 0x51ed2701f3a5c9b7ull;
    for (size_t f = 0; f < RTIT_FIXTURE_COUNT; f++)
        fixture_caps[f] = rtit_fixture_caps(rtit_fixture_names[f]);

    for (unsigned i = 0; i < iters; i++) {
        struct rtit_caps k = fixture_caps[below(RTIT_FIXTURE_COUNT)];
        struct rtit_config c;
        rtit_config_default(&c, &k);
        c.table_phys = TAB_PHYS;
        c.buffer_phys = BUF_PHYS;
        struct rtit_addr_range want[RTIT_MAX_RANGES];
        unsigned named = 0;
        memset(want, 0, sizeof(want));
        unsigned words = 1 + (unsigned)below(5);
        for (unsigned w = 0; w < words; w++) {
            unsigned n = (unsigned)below(k.num_ranges ? k.num_ranges : 1);
            unsigned kind = (unsigned)below(3);
            uint64_t a = (rnd() & 0x7fffffffffull) & ~0xfffull;
            uint64_t b = a + (rnd() & 0xffff);
            char value[80], err[256];
            if (kind == 2)
                snprintf(value, sizeof(value), "%u:%u:0x%llx:0x%llx", n, 1 + (unsigned)below(2),
                         (unsigned long long)a, (unsigned long long)b);
            else
                snprintf(value, sizeof(value), "%u:0x%llx:0x%llx", n, (unsigned long long)a,
                         (unsigned long long)b);
            struct rtit_config before = c;
            int rc = rtit_option_apply(&c, kinds[kind], value, err, sizeof(err));
            if (named & (1u << n)) {
                char who[40];
                snprintf(who, sizeof(who), "range %u given twice", n);
                if (rc != -1 || !strstr(err, "range-duplicate") || !strstr(err, who))
                    fail_msg("%s=%s after range %u was named: rc %d '%s'", kinds[kind], value, n,
                             rc, err);
                assert_memory_equal(&before, &c, sizeof(c));
                dups++;
                continue;
            }
            assert_int_equal(rc, 0);
            named |= 1u << n;
            want[n] = c.range[n];
            assert_int_equal(want[n].start, a);
            assert_int_equal(want[n].end, b);
        }
        struct rtit_violation v;
        if (rtit_check(&c, &k, &v) != RTIT_RULE_OK)
            continue; /* AMD, Broadwell (no ranges), ... */
        fresh_model(&k, &c);
        place_tables(&c);
        struct rtit_msr_ops ops = rtit_model_ops(&model);
        assert_int_equal(rtit_start(&ops, &c, &k, false, NULL), RTIT_SEQ_OK);
        for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
            unsigned cfg = (unsigned)(model.ctl >> (32 + 4 * n)) & 0xf;
            if (!(named & (1u << n))) {
                assert_int_equal(cfg, 0);
                continue;
            }
            assert_int_equal(cfg, want[n].cfg);
            assert_int_equal(model.addr[2 * n], want[n].start);
            assert_int_equal(model.addr[2 * n + 1], want[n].end);
        }
        started++;
    }
    printf("range words: %u lists, %u duplicates refused, %u started on the model\n", iters, dups,
           started);
    if (!it) {
        assert_true(dups > iters / 4);
        assert_true(started > iters / 4);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_configurations),
        cmocka_unit_test(test_random_range_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
