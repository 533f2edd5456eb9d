/* Capture plans (arch/x86/capture_plan.h) for every fixture CPU, run
 * through the RTIT model (test/rtit_model.h, written from the SDM and
 * independent of arch/): the `trace` and `resident` plans, with an image
 * range, explicit filter/TraceStop words, ring and stop, several buffer
 * sizes, start without #GP or STATUS.Error; the model's output pointers and
 * ToPA walk agree with the plan (bytes, wrap, stop, the oldest byte); the
 * capture sequences (pause/resume, new image ranges, snapshot) run on the
 * live model; words a CPU cannot do are refused by rule before any WRMSR
 * (the model's state is unchanged); the soft unit's plan accepts AMD. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/soft_unit.h"
#include "arch/x86/capture_seq.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_seq.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_model_util.h"
#include "test/unit/rtit_test_util.h"

/* Physical memory the model sees. The block handed to the plan starts 4 KiB
 * in, so placement has to align. */
#define MEM_PHYS   0x10000000ull
#define MEM_SIZE   (24u << 20)
#define BLOCK_PHYS (MEM_PHYS + 0x1000)

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));
static struct rtit_model model;

/* an image of 128 KiB at 0x7e000000, like a driver loaded by LoadImage */
static const struct capture_image image = { 0x7e000000ull, 0x20000ull };

static uint8_t pattern(uint64_t k) /* the model's k-th output byte */
{
    return (uint8_t)(k % 251 + 1);
}

static void *at(uint64_t phys)
{
    return mem + (phys - MEM_PHYS);
}

struct rig {
    struct rtit_caps caps;
    struct rtit_msr_ops ops;
    struct capture_plan plan;
};

static void rig_init(struct rig *r, const char *cpu)
{
    r->caps = rtit_fixture_caps(cpu);
    r->ops = rtit_model_fresh(&model, &r->caps, mem, MEM_PHYS, MEM_SIZE);
}

static int make(struct rig *r, enum capture_mode mode, enum capture_unit unit,
                const struct capture_image *im, size_t nim, const char *const *words, size_t nw)
{
    struct capture_request req = {
        .mode = mode,
        .unit = unit,
        .images = im,
        .n_images = nim,
        .words = words,
        .n_words = nw,
        .cpus = 1,
    };
    return capture_plan_make(&r->plan, &r->caps, &req);
}

static bool is_amd(const struct rtit_caps *c)
{
    return !c->pt;
}

/* Places the plan in model memory, builds the ToPA tables, starts through
 * the model: no #GP, no STATUS.Error, PSB+ pending, CTL as planned. */
static void rig_start(struct rig *r, const char *what)
{
    struct capture_plan *p = &r->plan;
    assert_true(p->need.block_bytes <= MEM_SIZE - 0x1000);
    assert_int_equal(capture_plan_place(p, &r->caps, BLOCK_PHYS, p->need.block_bytes), 0);
    /* placed inside the block, buffer aligned as the output needs */
    assert_true(p->cfg.buffer_phys >= BLOCK_PHYS);
    assert_true(p->cfg.buffer_phys + p->buffer_bytes <= BLOCK_PHYS + p->need.block_bytes);
    if (p->cfg.output == RTIT_OUTPUT_TOPA) {
        struct rtit_topa_layout l;
        size_t cap = (size_t)(p->need.table_bytes / RTIT_TOPA_TABLE_ALIGN);
        assert_int_equal(rtit_topa_build(&l, &p->cfg, at(p->cfg.table_phys), cap), 0);
    }
    struct rtit_start_info si;
    int rc = rtit_start(&r->ops, &p->cfg, &r->caps, false, &si);
    if (rc || model.gp_count)
        fail_msg("%s: start %d rule %s gp '%s' error '%s'", what, rc,
                 rtit_rule_name(si.violation.rule), model.last_gp, model.last_error);
    assert_false(model.status & RTIT_STATUS_ERROR);
    assert_true(model.psb_on_enable);
    assert_true(rtit_model_tracing(&model));
    assert_int_equal(model.ctl, rtit_config_ctl(&p->cfg, true));
}

/* n bytes of trace, then finish; the summary must agree with what the
 * model stored and with the plan's buffer (ring: newest kept; stop: the
 * first buffer_bytes kept). */
static void trace_and_check(struct rig *r, uint64_t n, const char *what)
{
    struct capture_plan *p = &r->plan;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;
    uint64_t size = p->buffer_bytes;
    bool stop_mode = p->cfg.output == RTIT_OUTPUT_TOPA && p->cfg.when_full == RTIT_FULL_STOP;
    uint64_t first = model.bytes_stored; /* pattern index of our first byte */

    uint64_t stored = rtit_model_trace(&model, n);
    assert_int_equal(stored, stop_mode && n > size ? size : n);
    assert_int_equal(capture_seq_finish(&r->ops, &p->cfg, at(p->cfg.buffer_phys), &st, &sum), 0);
    if (model.gp_count || st.error)
        fail_msg("%s: gp '%s' error '%s'", what, model.last_gp, model.last_error);
    assert_true(st.was_tracing);
    assert_int_equal(sum.buffer_bytes, size);
    const uint8_t *b = at(p->cfg.buffer_phys);
    if (n < size) {
        assert_int_equal(st.write_pos, n);
        assert_int_equal(sum.bytes, n);
        assert_false(sum.wrapped);
        assert_int_equal(b[0], pattern(first));
        assert_int_equal(b[n - 1], pattern(first + n - 1));
    } else if (stop_mode) {
        assert_true(st.stopped);
        assert_true(sum.stopped_full);
        assert_int_equal(sum.bytes, size);
        assert_int_equal(b[size - 1], pattern(first + size - 1));
    } else {
        /* ring or single range: the newest `size` bytes are kept, the
		 * oldest at the write position */
        assert_false(st.stopped);
        assert_int_equal(st.write_pos, n % size);
        assert_int_equal(sum.bytes, size);
        assert_true(sum.wrapped);
        assert_int_equal(sum.oldest, n % size);
        assert_int_equal(b[sum.oldest], pattern(first + n - size));
        assert_int_equal(b[(sum.oldest + size - 1) % size], pattern(first + n - 1));
    }
    assert_false(model.ctl & RTIT_CTL_TRACEEN);
    /* the output never landed on a ToPA table */
    assert_int_equal(model.table_overwrites, 0);
    /* every range holds its own ends (A <= B, code can run there) */
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        const struct rtit_addr_range *ar = &p->cfg.range[n];
        if (ar->cfg == RTIT_ADDR_CFG_OFF)
            continue;
        assert_true(rtit_model_range_holds(&model, n, ar->start));
        assert_true(rtit_model_range_holds(&model, n, ar->end));
        assert_true(rtit_model_ip_possible(&model, ar->end));
    }
}

/* The plan for `trace` of an image with default words on every fixture. */
static void test_trace_default_every_cpu(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        struct rig r;
        const char *cpu = rtit_fixture_names[i];
        rig_init(&r, cpu);
        int rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, NULL, 0);
        if (is_amd(&r.caps)) {
            assert_int_equal(rc, CAPTURE_PLAN_E_RULE);
            assert_string_equal(r.plan.rule_name, "pt-absent");
            assert_int_equal(model.gp_count, 0);
            continue;
        }
        if (rc)
            fail_msg("%s: %d %s", cpu, rc, r.plan.rule_name ? r.plan.rule_name : r.plan.error);
        const struct rtit_config *c = &r.plan.cfg;
        /* defaults from the CPU: ToPA ring, 1 MiB, TSC, BranchEn,
		 * RET compression, MTC where enumerated, no CYC */
        assert_int_equal(c->output, RTIT_OUTPUT_TOPA);
        assert_int_equal(c->when_full, RTIT_FULL_RING);
        assert_int_equal(r.plan.buffer_bytes, CAPTURE_DEFAULT_BUFFER_TRACE);
        assert_true(c->tsc_en && c->branch_en && c->os);
        assert_false(c->dis_retc || c->cyc_en || c->user);
        assert_int_equal(c->mtc_en, (r.caps.leaf14_0.ebx >> 3) & 1);
        assert_false(r.plan.reserved_memory);
        /* the image is the filter exactly when the CPU has a range */
        unsigned ranges = r.caps.has_leaf14_1 ? (r.caps.leaf14_1.eax & 7) : 0;
        assert_int_equal(r.plan.filtered, ranges >= 1);
        if (ranges) {
            assert_int_equal(c->range[0].cfg, RTIT_ADDR_CFG_FILTER);
            assert_int_equal(c->range[0].start, image.base);
            assert_int_equal(c->range[0].end, image.base + image.size - 1);
        }
        /* multi-entry ToPA: 64 KiB regions; else one region */
        bool multi = (r.caps.leaf14_0.ecx >> 1) & 1;
        assert_int_equal(c->regions, multi ? 16 : 1);
        rig_start(&r, cpu);
        trace_and_check(&r, 300000, cpu);
        /* again past the end: the ring wraps */
        rig_start(&r, cpu);
        trace_and_check(&r, (3ull << 20) + 4321, cpu);
    }
}

/* Explicit words: buffer sizes, ring and stop, filter and TraceStop. */
static void test_trace_words_every_cpu(void **state)
{
    (void)state;
    static const char *const sets[][5] = {
        { "buffer=16K", "mode=stop", NULL },
        { "buffer=256K", "mode=ring", NULL },
        { "buffer=64K", "region-size=8K", "mode=stop", NULL },
        { "buffer=32K", "no-mtc", "dis-retc", "no-tsc", NULL },
        { "buffer=8K", "filter=0:0x7e000000:0x7e00ffff", NULL },
        { "buffer=8K", "trace-stop=0:0x7e001000:0x7e001fff", NULL },
        { "buffer=4K", "output=single", NULL },
        { "buffer=1M", "output=single", NULL },
    };
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
            struct rig r;
            const char *cpu = rtit_fixture_names[i];
            size_t nw = 0;
            char what[128];
            while (sets[s][nw])
                nw++;
            snprintf(what, sizeof(what), "%s set %zu", cpu, s);
            rig_init(&r, cpu);
            int rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, sets[s], nw);
            const struct rtit_caps *k = &r.caps;
            unsigned ranges = k->has_leaf14_1 ? (k->leaf14_1.eax & 7) : 0;
            bool single_ok = (k->leaf14_0.ecx >> 2) & 1;
            /* expected refusals, from the raw CPUID bits */
            bool range_word = strchr(sets[s][1], ':') != NULL;
            bool single_word = !strcmp(sets[s][1], "output=single");
            const char *want = NULL;
            if (is_amd(k))
                want = "pt-absent";
            else if (range_word && ranges == 0)
                want = "range-unsupported";
            else if (single_word && !single_ok)
                want = "single-range-unsupported";
            if (want) {
                if (rc != CAPTURE_PLAN_E_RULE)
                    fail_msg("%s: want %s, got %d", what, want, rc);
                assert_string_equal(r.plan.rule_name, want);
                /* nothing was written: start is refused as well */
                struct rtit_model before = model;
                assert_int_equal(rtit_start(&r.ops, &r.plan.cfg, k, false, NULL), RTIT_SEQ_E_RULE);
                assert_memory_equal(&before, &model, sizeof(model));
                continue;
            }
            if (rc)
                fail_msg("%s: %d %s %s", what, rc, r.plan.rule_name ? r.plan.rule_name : "",
                         r.plan.error);
            /* explicit filter words replace the image filter */
            if (range_word) {
                bool stop = strstr(sets[s][1], "trace-stop") != NULL;
                assert_int_equal(r.plan.cfg.range[0].cfg,
                                 stop ? RTIT_ADDR_CFG_STOP : RTIT_ADDR_CFG_FILTER);
                /* trace-stop leaves the image to range 1 if there is one */
                if (stop)
                    assert_int_equal(r.plan.cfg.range[1].cfg,
                                     ranges >= 2 ? RTIT_ADDR_CFG_FILTER : RTIT_ADDR_CFG_OFF);
            }
            if (r.plan.cfg.output == RTIT_OUTPUT_SINGLE &&
                (r.caps.quirks & RTIT_QUIRK_SINGLE_RANGE_4K))
                assert_int_equal(r.plan.cfg.single_size, 4096);
            rig_start(&r, what);
            trace_and_check(&r, r.plan.buffer_bytes / 2 + 1, what);
            rig_start(&r, what);
            trace_and_check(&r, r.plan.buffer_bytes * 2 + 77, what);
        }
    }
}

/* Resident: filters off, reserved memory, 4 MiB; the whole sequence with a
 * snapshot while tracing and a TraceStop hit where ranges exist. */
static void test_resident_every_cpu(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        struct rig r;
        const char *cpu = rtit_fixture_names[i];
        rig_init(&r, cpu);
        int rc = make(&r, CAPTURE_RESIDENT, CAPTURE_UNIT_HW, &image, 1, NULL, 0);
        if (is_amd(&r.caps)) {
            assert_int_equal(rc, CAPTURE_PLAN_E_RULE);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_true(r.plan.reserved_memory);
        assert_false(r.plan.filtered);
        for (unsigned n = 0; n < RTIT_MAX_RANGES; n++)
            assert_int_equal(r.plan.cfg.range[n].cfg, RTIT_ADDR_CFG_OFF);
        assert_int_equal(r.plan.buffer_bytes, CAPTURE_DEFAULT_BUFFER_RESIDENT);
        rig_start(&r, cpu);

        /* the boot goes on; a snapshot in between (pause, read,
		 * resume) sees exactly what was written and tracing resumes */
        struct rtit_stop_info st;
        rtit_model_trace(&model, 100000);
        assert_int_equal(capture_seq_snapshot(&r.ops, &r.plan.cfg, &st), 0);
        assert_int_equal(model.gp_count, 0);
        assert_int_equal(st.write_pos, 100000);
        assert_true(rtit_model_tracing(&model));
        rtit_model_trace(&model, 50000);
        struct rtit_output_summary all;
        const uint8_t *b = at(r.plan.cfg.buffer_phys);
        assert_int_equal(capture_seq_finish(&r.ops, &r.plan.cfg, b, &st, &all), 0);
        assert_int_equal(model.gp_count, 0);
        assert_false(st.error);
        assert_int_equal(st.write_pos, 150000);
        assert_int_equal(all.bytes, 150000);
        assert_false(all.wrapped);
        assert_int_equal(b[0], pattern(0));
        assert_int_equal(b[149999], pattern(149999));

        /* with a TraceStop word on a CPU with ranges: hit it */
        const char *w[] = { "trace-stop=0:0xfffff000:0xffffffff", "mode=stop", "buffer=64K" };
        rig_init(&r, cpu);
        rc = make(&r, CAPTURE_RESIDENT, CAPTURE_UNIT_HW, NULL, 0, w, 3);
        if (r.caps.num_ranges == 0) {
            assert_int_equal(rc, CAPTURE_PLAN_E_RULE);
            assert_string_equal(r.plan.rule_name, "range-unsupported");
            continue;
        }
        assert_int_equal(rc, 0);
        rig_start(&r, cpu);
        rtit_model_trace(&model, 1000);
        assert_true(rtit_model_trace_stop_hit(&model));
        assert_int_equal(rtit_model_trace(&model, 1000), 0);
        struct rtit_output_summary sum;
        assert_int_equal(
            capture_seq_finish(&r.ops, &r.plan.cfg, at(r.plan.cfg.buffer_phys), &st, &sum), 0);
        assert_true(st.stopped);
        assert_int_equal(sum.bytes, 1000);
        assert_int_equal(model.gp_count, 0);
    }
}

/* A new image while tracing: ADDRn only with TraceEn=0 (the model #GPs
 * otherwise), the new range in CTL after resume; no free range -> refused
 * with nothing written. */
static void test_add_image_while_tracing(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        struct rig r;
        const char *cpu = rtit_fixture_names[i];
        rig_init(&r, cpu);
        const char *w[] = { "buffer=64K" };
        if (make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 1))
            continue; /* AMD */
        rig_start(&r, cpu);
        rtit_model_trace(&model, 500);
        struct rtit_violation v;
        struct rtit_model before = model;
        int rc = capture_seq_add_image(&r.ops, &r.plan.cfg, &r.caps, 0x7f000000, 0x8000, &v);
        unsigned used = r.plan.filtered ? 1 : 0;
        if (r.caps.num_ranges > used) {
            assert_int_equal(rc, RTIT_SEQ_OK);
            assert_int_equal(model.gp_count, 0);
            assert_true(rtit_model_tracing(&model));
            assert_int_equal(model.addr[2 * used], 0x7f000000);
            assert_int_equal(model.addr[2 * used + 1], 0x7f007fff);
            assert_int_equal((model.ctl >> RTIT_CTL_ADDR_CFG_SHIFT(used)) & 0xf,
                             RTIT_ADDR_CFG_FILTER);
            /* the output continued across the pause */
            rtit_model_trace(&model, 500);
            struct rtit_stop_info st;
            struct rtit_output_summary sum;
            assert_int_equal(
                capture_seq_finish(&r.ops, &r.plan.cfg, at(r.plan.cfg.buffer_phys), &st, &sum), 0);
            assert_int_equal(sum.bytes, 1000);
        } else {
            assert_int_equal(rc, RTIT_SEQ_E_RULE);
            assert_memory_equal(&before, &model, sizeof(model));
        }
    }
}

/* Words a CPU cannot do: the named rule, decided from the raw CPUID bits
 * here, and not a single MSR access. */
static void test_refusals_before_any_wrmsr(void **state)
{
    (void)state;
    static const struct {
        const char *word, *rule;
        unsigned reg, bit; /* 0: 14h.0 EBX, 1: 14h.0 ECX */
    } cases[] = {
        { "mtc=3", "mtc-unsupported", 0, 3 },
        { "cyc=0", "cyc-unsupported", 0, 1 },
        { "ptwrite", "ptwrite-unsupported", 0, 4 },
        { "power-events", "power-events-unsupported", 0, 5 },
        { "event-trace", "event-trace-unsupported", 0, 7 },
        { "dis-tnt", "distnt-unsupported", 0, 8 },
        { "cr3=0x1000", "cr3-filter-unsupported", 0, 0 },
        { "output=single", "single-range-unsupported", 1, 2 },
        { "fabric", "fabric-unsupported", 1, 3 },
    };
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            struct rig r;
            const char *cpu = rtit_fixture_names[i];
            rig_init(&r, cpu);
            const char *w[] = { "buffer=8K", cases[c].word };
            struct rtit_model before = model;
            int rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 2);
            assert_memory_equal(&before, &model, sizeof(model));
            if (is_amd(&r.caps)) {
                assert_int_equal(rc, CAPTURE_PLAN_E_RULE);
                assert_string_equal(r.plan.rule_name, "pt-absent");
                continue;
            }
            uint32_t reg = cases[c].reg ? r.caps.leaf14_0.ecx : r.caps.leaf14_0.ebx;
            bool can = (reg >> cases[c].bit) & 1;
            if (can) {
                if (rc)
                    fail_msg("%s %s: refused %s", cpu, cases[c].word,
                             r.plan.rule_name ? r.plan.rule_name : r.plan.error);
                rig_start(&r, cpu);
                trace_and_check(&r, 100, cpu);
                continue;
            }
            if (rc != CAPTURE_PLAN_E_RULE)
                fail_msg("%s %s: accepted", cpu, cases[c].word);
            assert_string_equal(r.plan.rule_name, cases[c].rule);
            assert_int_equal(rtit_start(&r.ops, &r.plan.cfg, &r.caps, false, NULL),
                             RTIT_SEQ_E_RULE);
            assert_memory_equal(&before, &model, sizeof(model));
        }
        /* PSBFreq / MTCFreq encodings outside the 14h.1 bitmaps */
        struct rig r;
        rig_init(&r, rtit_fixture_names[i]);
        if (is_amd(&r.caps) || !r.caps.has_leaf14_1)
            continue;
        for (unsigned f = 0; f < 16; f++) {
            char word[16];
            const char *w[] = { word };
            snprintf(word, sizeof(word), "psb=%u", f);
            int rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 1);
            bool ok = (r.caps.leaf14_1.ebx >> (16 + f)) & 1;
            assert_int_equal(rc, ok ? 0 : CAPTURE_PLAN_E_RULE);
            if (!ok)
                assert_string_equal(r.plan.rule_name, "psb-freq-encoding");
            snprintf(word, sizeof(word), "mtc=%u", f);
            rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 1);
            ok = (r.caps.leaf14_1.eax >> (16 + f)) & 1;
            assert_int_equal(rc, ok ? 0 : CAPTURE_PLAN_E_RULE);
            if (!ok)
                assert_string_equal(r.plan.rule_name, "mtc-freq-encoding");
        }
        assert_int_equal(model.gp_count, 0);
    }
}

/* The soft unit: every fixture (AMD too) gets a plan; what it does not
 * model is refused by name; cpus is cut to the BSP with a note. */
static void test_soft_unit(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        struct rig r;
        rig_init(&r, rtit_fixture_names[i]);
        const char *w0[] = { "cpus=all" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_SOFT, &image, 1, w0, 1), 0);
        assert_int_equal(r.plan.cpus, 1);
        assert_true(r.plan.filtered);
        /* MTC on the soft unit's own clock, at its default period */
        assert_true(r.plan.cfg.mtc_en);
        assert_int_equal(r.plan.cfg.mtc_freq, SOFT_UNIT_MTC_FREQ_DEFAULT);
        assert_true(r.plan.cfg.tsc_en);
        bool said = false;
        for (size_t n = 0; n < r.plan.n_notes; n++)
            said |= strstr(r.plan.notes[n], "BSP only") != NULL;
        assert_true(said);
        /* 4 ranges on the soft unit, whatever the CPU has */
        const char *w1[] = { "trace-stop=3:0x1000:0x1fff", "filter=2:0x2000:0x2fff" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_SOFT, &image, 1, w1, 2), 0);
        /* any MTCFreq, and no-mtc */
        const char *w2[] = { "unit=soft", "mtc=3" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w2, 2), 0);
        assert_true(r.plan.cfg.mtc_en);
        assert_int_equal(r.plan.cfg.mtc_freq, 3);
        const char *w2b[] = { "unit=soft", "no-mtc" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w2b, 2), 0);
        assert_false(r.plan.cfg.mtc_en);
        const char *w3[] = { "cyc=0" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_SOFT, &image, 1, w3, 1),
                         CAPTURE_PLAN_E_RULE);
        assert_string_equal(r.plan.rule_name, "soft-cyc-unsupported");
        const char *w4[] = { "ptwrite" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_SOFT, &image, 1, w4, 1),
                         CAPTURE_PLAN_E_RULE);
        assert_string_equal(r.plan.rule_name, "ptwrite-unsupported");
        assert_int_equal(model.gp_count, 0);
    }
}

/* What a capture cannot honour is refused the way `ptboot plan` refuses
 * it (issue #18), before anything is written; a default that would
 * collide moves with a note. */
static void test_unhonoured_requests(void **state)
{
    (void)state;
    static const struct {
        const char *w[3];
        const char *rule;
    } cases[] = {
        { { "output=single", "mode=stop" }, "single-range-stop" },
        { { "filter=0:0x2000:0x1000" }, "range-empty" },
        { { "trace-stop=1:0x7e002000:0x7e001000" }, "range-empty" },
        { { "buffer=64K", "table-base=0x40000000" }, "topa-table-overlap" },
        { { "buffer=64K", "buffer-base=0x3ff00000" }, NULL }, /* table moves */
        { { "filter=0:0x00ff000000000000:0x00ff000000001000" }, "range-beyond-paging" },
    };
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        const char *cpu = rtit_fixture_names[i];
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            struct rig r;
            rig_init(&r, cpu);
            size_t nw = 0;
            while (nw < 3 && cases[c].w[nw])
                nw++;
            struct rtit_model before = model;
            int rc = make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, cases[c].w, nw);
            assert_memory_equal(&before, &model, sizeof(model));
            if (rc == CAPTURE_PLAN_E_RULE &&
                (!strcmp(r.plan.rule_name, "pt-absent") ||
                 !strcmp(r.plan.rule_name, "range-unsupported") ||
                 !strcmp(r.plan.rule_name, "single-range-unsupported")))
                continue; /* AMD, Broadwell: refused earlier */
            const char *want = cases[c].rule;
            /* 57-bit addresses #GP where the CPU has no 5-level paging */
            if (want && !strcmp(want, "range-beyond-paging") && !r.caps.la57)
                want = "range-noncanonical";
            if (!want) {
                if (rc)
                    fail_msg("%s case %zu: %d %s", cpu, c, rc, r.plan.rule_name);
                assert_int_equal(r.plan.cfg.buffer_phys, 0x3ff00000);
                assert_int_equal(r.plan.cfg.table_phys, 0x3ff00000 - 4096);
                bool said = false, placed = false;
                for (size_t n = 0; n < r.plan.n_notes; n++) {
                    said |= strstr(r.plan.notes[n], "table-base 0x3feff000") != NULL;
                    placed |= strstr(r.plan.notes[n], "this plan only") != NULL;
                }
                assert_true(said && placed);
                continue;
            }
            if (rc != CAPTURE_PLAN_E_RULE)
                fail_msg("%s case %zu: want %s, got %d", cpu, c, want, rc);
            assert_string_equal(r.plan.rule_name, want);
            assert_int_equal(rtit_start(&r.ops, &r.plan.cfg, &r.caps, false, NULL),
                             RTIT_SEQ_E_RULE);
            assert_memory_equal(&before, &model, sizeof(model));
        }
        /* the firmware runs 5-level paging: 57-bit filters are taken
		 * where the CPU has it, and the model traces with them */
        struct rig r;
        rig_init(&r, cpu);
        if (!r.caps.la57)
            continue;
        r.caps.paging_la57 = true;
        r.ops = rtit_model_fresh(&model, &r.caps, mem, MEM_PHYS, MEM_SIZE);
        const char *w[] = { "buffer=16K", "filter=0:0x00ff000000000000:0x00ff000000001000" };
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 2), 0);
        rig_start(&r, "la57");
        assert_int_equal(model.addr[0], 0x00ff000000000000ull);
        trace_and_check(&r, 1000, "la57");
    }
    /* a range named twice: a word error naming both */
    struct rig r;
    rig_init(&r, "skylake-client.txt");
    const char *dup[] = { "filter=0:0x1000:0x2000", "trace-stop=0:0x3000:0x4000" };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, dup, 2),
                     CAPTURE_PLAN_E_WORD);
    assert_string_equal(r.plan.error, "trace-stop=0:0x3000:0x4000: range 0 given twice "
                                      "(range-duplicate): already filter=0:0x1000:0x2000");
    /* the default tables move below the buffer when they would reach it:
	 * 4 KiB regions for 2 GiB of trace need 1027 tables */
    const char *big[] = { "region-size=4K", "buffer=2G" };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, big, 2), 0);
    assert_int_equal(r.plan.cfg.table_phys, 0x40000000 - 1027 * 4096);
    bool said = false;
    for (size_t n = 0; n < r.plan.n_notes; n++)
        said |= strstr(r.plan.notes[n], "1027 ToPA table(s)") != NULL;
    assert_true(said);
}

/* Bad words, cpus, report text. */
static void test_words_and_report(void **state)
{
    (void)state;
    struct rig r;
    rig_init(&r, "skylake-client.txt");
    const char *bad[][1] = { { "frobnicate" }, { "buffer=12" }, { "cpus=0" },    { "mtc" },
                             { "no-mtc=1" },   { "unit=x" },    { "buffer=64Q" } };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, NULL, 0, bad[i], 1),
                         CAPTURE_PLAN_E_WORD);
        assert_non_null(strstr(r.plan.error, bad[i][0]));
    }
    const char *w[] = { "cpus=all", "buffer=128K" };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &image, 1, w, 2), 0);
    assert_int_equal(r.plan.cpus, CAPTURE_CPUS_ALL);
    assert_int_equal(r.plan.cfg.regions, 2);
    /* five images: more than Skylake's two ranges -> everything traced */
    struct capture_image five[5] = { { 0x1000, 16 }, { 0x2000, 16 }, { 0x3000, 16 } };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, five, 3, NULL, 0), 0);
    assert_false(r.plan.filtered);
    /* two images on Skylake's two ranges: both filtered, and the model
	 * takes the writes */
    struct capture_image two[2] = { { 0x7e000000, 0x20000 }, { 0x7f000000, 0x1000 } };
    const char *w2[] = { "buffer=16K" };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, two, 2, w2, 1), 0);
    assert_true(r.plan.filtered);
    assert_int_equal(r.plan.cfg.range[1].cfg, RTIT_ADDR_CFG_FILTER);
    assert_int_equal(r.plan.cfg.range[1].end, 0x7f000fff);
    rig_start(&r, "two images");
    assert_int_equal(model.addr[2], 0x7f000000);
    trace_and_check(&r, 1000, "two images");
    /* an empty image is an argument error, not a silent no-filter */
    struct capture_image empty = { 0x1000, 0 };
    assert_int_equal(make(&r, CAPTURE_TRACE, CAPTURE_UNIT_HW, &empty, 1, NULL, 0),
                     CAPTURE_PLAN_E_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_default_every_cpu),
        cmocka_unit_test(test_trace_words_every_cpu),
        cmocka_unit_test(test_resident_every_cpu),
        cmocka_unit_test(test_add_image_while_tracing),
        cmocka_unit_test(test_refusals_before_any_wrmsr),
        cmocka_unit_test(test_soft_unit),
        cmocka_unit_test(test_unhonoured_requests),
        cmocka_unit_test(test_words_and_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
