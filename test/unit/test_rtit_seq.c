/* Start/stop sequences driven through the RTIT model: MSR order, take-over,
 * refusal before any MSR access, output simulation with exact byte counts
 * and wrap detection for ring and stop modes, chained tables, single-entry
 * parts and single range. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_filter.h"
#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_plan_report.h"
#include "arch/x86/rtit_seq.h"
#include "arch/x86/rtit_stop_report.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_model_util.h"
#include "test/unit/rtit_test_util.h"

/* Physical memory the model sees: tables at MEM_PHYS, buffer at BUF_PHYS */
#define MEM_PHYS 0x10000000ull
#define MEM_SIZE (8u << 20)
#define TAB_PHYS MEM_PHYS
#define BUF_PHYS (MEM_PHYS + (4u << 20))

static uint8_t mem[MEM_SIZE] __attribute__((aligned(4096)));
static struct rtit_model model;

static uint8_t *buf(void)
{
    return mem + (BUF_PHYS - MEM_PHYS);
}

static uint64_t *tables(void)
{
    return (uint64_t *)(void *)mem;
}

struct rig {
    struct rtit_caps caps;
    struct rtit_config cfg;
    struct rtit_msr_ops ops;
    struct rtit_topa_layout layout;
};

static void rig_init(struct rig *r, const char *cpu)
{
    r->caps = rtit_fixture_caps(cpu);
    r->ops = rtit_model_fresh(&model, &r->caps, mem, MEM_PHYS, MEM_SIZE);
    rtit_config_default(&r->cfg, &r->caps);
    r->cfg.table_phys = TAB_PHYS;
    r->cfg.buffer_phys = BUF_PHYS;
}

static void rig_start(struct rig *r)
{
    struct rtit_start_info si;
    if (r->cfg.output == RTIT_OUTPUT_TOPA)
        assert_int_equal(rtit_topa_build(&r->layout, &r->cfg, tables(), 4), 0);
    memset(buf(), 0, rtit_config_buffer_bytes(&r->cfg));
    int rc = rtit_start(&r->ops, &r->cfg, &r->caps, false, &si);
    if (rc)
        fail_msg("start: %d rule %s gp '%s' error '%s'", rc, rtit_rule_name(si.violation.rule),
                 model.last_gp, model.last_error);
    assert_int_equal(model.gp_count, 0);
    assert_true(model.psb_on_enable); /* PacketByteCnt was cleared */
    assert_true(rtit_model_tracing(&model));
    assert_int_equal(model.ctl, rtit_config_ctl(&r->cfg, true));
}

static void rig_stop(struct rig *r, struct rtit_stop_info *st, struct rtit_output_summary *sum)
{
    assert_int_equal(rtit_stop(&r->ops, &r->cfg, st), 0);
    assert_int_equal(model.gp_count, 0);
    assert_false(model.ctl & RTIT_CTL_TRACEEN);
    rtit_output_summarize(st, &r->cfg, buf(), sum);
}

/* The byte the model wrote as its k-th output byte (k from 0). */
static uint8_t pattern(uint64_t k)
{
    return (uint8_t)(k % 251 + 1);
}

static void test_plan_order(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_plan p;
    rig_init(&r, "skylake-client.txt");
    rtit_plan_start(&p, &r.cfg);
    assert_int_equal(p.n, 4);
    assert_int_equal(p.w[0].msr, RTIT_MSR_STATUS);
    assert_int_equal(p.w[0].value, 0);
    assert_int_equal(p.w[1].msr, RTIT_MSR_OUTPUT_BASE);
    assert_int_equal(p.w[1].value, TAB_PHYS);
    assert_int_equal(p.w[2].msr, RTIT_MSR_OUTPUT_MASK_PTRS);
    assert_int_equal(p.w[2].value, 0x7f);
    assert_int_equal(p.w[3].msr, RTIT_MSR_CTL);
    assert_int_equal(p.w[3].value, 0xe505);

    r.cfg.cr3_filter = true;
    r.cfg.cr3 = 0x1000;
    r.cfg.range[1] = (struct rtit_addr_range){ RTIT_ADDR_CFG_STOP, 0x100, 0x200 };
    rtit_plan_start(&p, &r.cfg);
    assert_int_equal(p.n, 7);
    assert_int_equal(p.w[3].msr, RTIT_MSR_CR3_MATCH);
    assert_int_equal(p.w[4].msr, 0x582);
    assert_int_equal(p.w[4].value, 0x100);
    assert_int_equal(p.w[5].msr, 0x583);
    assert_int_equal(p.w[6].msr, RTIT_MSR_CTL);

    r.cfg = (struct rtit_config){ 0 };
    rtit_config_default(&r.cfg, &r.caps);
    r.cfg.output = RTIT_OUTPUT_SINGLE;
    r.cfg.buffer_phys = BUF_PHYS;
    r.cfg.single_size = 4096;
    assert_int_equal(rtit_initial_mask_ptrs(&r.cfg), 0xfff);
    rtit_plan_start(&p, &r.cfg);
    assert_int_equal(p.w[1].value, BUF_PHYS);
    assert_int_equal(p.w[3].value & RTIT_CTL_TOPA, 0);
}

static void test_ring_no_wrap_and_wrap(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;

    rig_init(&r, "skylake-client.txt");
    r.cfg.regions = 3;
    r.cfg.region_size_code = 0; /* 3 x 4 KiB */
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, 5000), 5000);
    rig_stop(&r, &st, &sum);
    assert_true(st.was_tracing);
    assert_false(st.error || st.stopped);
    assert_int_equal(st.write_pos, 5000);
    assert_int_equal(sum.bytes, 5000);
    assert_false(sum.wrapped);
    assert_int_equal(sum.buffer_bytes, 12288);

    /* again, past the end of the ring */
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, 20000), 20000);
    rig_stop(&r, &st, &sum);
    assert_int_equal(st.write_pos, 20000 - 12288);
    assert_true(sum.wrapped);
    assert_int_equal(sum.bytes, 12288);
    assert_int_equal(sum.oldest, 7712);
    /* oldest byte is output byte 20000 - 12288 = 7712 */
    assert_int_equal(buf()[sum.oldest], pattern(5000 + 7712));
    assert_int_equal(buf()[sum.oldest - 1], pattern(5000 + 19999));
}

static void test_ring_exactly_full(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;
    rig_init(&r, "icelake-client.txt");
    r.cfg.regions = 2;
    rig_start(&r);
    rtit_model_trace(&model, 8192);
    rig_stop(&r, &st, &sum);
    assert_int_equal(st.write_pos, 0); /* on the final END: region 0 */
    assert_true(sum.wrapped);
    assert_int_equal(sum.bytes, 8192);
}

static void test_stop_when_full(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;

    rig_init(&r, "goldmont.txt");
    r.cfg.regions = 3;
    r.cfg.region_size_code = 1; /* 3 x 8 KiB */
    r.cfg.when_full = RTIT_FULL_STOP;
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, 30000), 24576);
    assert_false(rtit_model_tracing(&model));
    rig_stop(&r, &st, &sum);
    assert_true(st.stopped);
    assert_false(st.error);
    assert_int_equal(sum.bytes, 24576);
    assert_true(sum.stopped_full);
    assert_false(sum.wrapped);
    assert_non_null(strstr(rtit_status_explain(st.status), "STOP"));
    assert_int_equal(buf()[24575], pattern(24575));

    /* Re-enabling with Stopped cleared but the pointers unchanged is an
	 * operational error (36.2.6.2): the model says so ... */
    assert_int_equal(rtit_model_wrmsr(&model, RTIT_MSR_STATUS, 0), 0);
    assert_int_equal(rtit_model_wrmsr(&model, RTIT_MSR_CTL, rtit_config_ctl(&r.cfg, true)), 0);
    assert_true(model.status & RTIT_STATUS_ERROR);
    rtit_stop(&r.ops, &r.cfg, &st);
    assert_true(st.error);
    assert_non_null(strstr(rtit_status_explain(st.status), "Error"));
    /* ... and rtit_start resets them, so a second run works */
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, 100), 100);
    rig_stop(&r, &st, &sum);
    assert_int_equal(sum.bytes, 100);
}

static void test_chained_tables(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;
    const uint64_t total = 600 * 4096ull;

    rig_init(&r, "sapphirerapids.txt");
    r.cfg.regions = 600;
    rig_start(&r);
    assert_int_equal(r.layout.tables, 2);
    rtit_model_trace(&model, 511 * 4096ull + 10); /* into table 1 */
    rig_stop(&r, &st, &sum);
    assert_int_equal(st.output_base, TAB_PHYS + 4096);
    assert_int_equal(sum.bytes, 511 * 4096ull + 10);
    assert_false(sum.wrapped);

    rig_start(&r);
    rtit_model_trace(&model, total + 5000);
    rig_stop(&r, &st, &sum);
    assert_int_equal(st.output_base, TAB_PHYS);
    assert_int_equal(st.write_pos, 5000);
    assert_true(sum.wrapped);
    assert_int_equal(sum.bytes, total);

    /* stop-when-full across the chain */
    r.cfg.when_full = RTIT_FULL_STOP;
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, total + 5000), total);
    rig_stop(&r, &st, &sum);
    assert_true(st.stopped);
    assert_int_equal(sum.bytes, total);
    assert_true(sum.stopped_full);
}

static void test_single_entry_broadwell(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;

    rig_init(&r, "broadwell-client.txt");
    r.cfg.region_size_code = 1; /* one 8 KiB region + END -> itself */
    rig_start(&r);
    rtit_model_trace(&model, 10000);
    rig_stop(&r, &st, &sum);
    assert_false(st.error);
    assert_int_equal(st.write_pos, 10000 - 8192);
    assert_true(sum.wrapped);
    assert_int_equal(sum.bytes, 8192);

    r.cfg.when_full = RTIT_FULL_STOP;
    rig_start(&r);
    assert_int_equal(rtit_model_trace(&model, 10000), 8192);
    rig_stop(&r, &st, &sum);
    assert_true(st.stopped && sum.stopped_full);
    assert_int_equal(sum.bytes, 8192);

    /* a multi-entry table on this CPU: rtit_check refuses before any
	 * MSR access; forced onto the model, it is an operational error */
    r.cfg.regions = 2;
    r.cfg.when_full = RTIT_FULL_RING;
    struct rtit_start_info si;
    unsigned enables = model.enables;
    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, false, &si), RTIT_SEQ_E_RULE);
    assert_int_equal(si.violation.rule, RTIT_RULE_TOPA_SINGLE_ENTRY);
    assert_int_equal(model.enables, enables);
    struct rtit_plan p;
    assert_int_equal(rtit_topa_build(&r.layout, &r.cfg, tables(), 4), 0);
    rtit_plan_start(&p, &r.cfg);
    for (size_t i = 0; i < p.n; i++)
        assert_int_equal(rtit_model_wrmsr(&model, p.w[i].msr, p.w[i].value), 0);
    assert_true(model.status & RTIT_STATUS_ERROR);
    assert_non_null(strstr(model.last_error, "single-entry"));
}

static void test_single_range(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;

    rig_init(&r, "skylake-client.txt");
    r.cfg.output = RTIT_OUTPUT_SINGLE;
    r.cfg.single_size = 4096;
    rig_start(&r);
    rtit_model_trace(&model, 3000);
    rig_stop(&r, &st, &sum);
    assert_int_equal(sum.bytes, 3000);
    assert_false(sum.wrapped);
    rig_start(&r);
    rtit_model_trace(&model, 5000);
    rig_stop(&r, &st, &sum);
    assert_int_equal(st.write_pos, 904);
    assert_true(sum.wrapped);
    assert_int_equal(sum.oldest, 904);
    assert_int_equal(sum.bytes, 4096);
}

static void test_take_over(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_start_info si;
    rig_init(&r, "alderlake.txt");
    rig_start(&r); /* "firmware" is tracing now */
    uint64_t ctl = model.ctl;

    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, false, &si), RTIT_SEQ_E_BUSY);
    assert_true(si.was_tracing);
    assert_int_equal(si.old_ctl, ctl);
    assert_int_equal(model.ctl, ctl); /* untouched */
    assert_int_equal(model.gp_count, 0);

    r.cfg.regions = 2;
    assert_int_equal(rtit_topa_build(&r.layout, &r.cfg, tables(), 4), 0);
    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, true, &si), RTIT_SEQ_OK);
    assert_true(si.was_tracing);
    assert_int_equal(model.gp_count, 0); /* no write while TraceEn=1 */
    assert_int_equal(model.enables, 2);
}

static void test_refusals(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_start_info si;
    struct rtit_stop_info st;

    /* no PT: refused before touching any MSR */
    rig_init(&r, "amd.txt");
    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, false, &si), RTIT_SEQ_E_RULE);
    assert_int_equal(si.violation.rule, RTIT_RULE_PT_ABSENT);
    assert_int_equal(model.gp_count, 0);

    /* an MSR that faults anyway (e.g. a hypervisor) is reported */
    rig_init(&r, "skylake-client.txt");
    model.caps.pt = false;
    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, false, &si), RTIT_SEQ_E_MSR);
    assert_int_equal(si.failed_msr, RTIT_MSR_CTL);
    assert_int_equal(si.msr_err, -1);
    assert_int_equal(rtit_stop(&r.ops, &r.cfg, &st), RTIT_SEQ_E_MSR);

    /* a table with a reserved bit: STATUS.Error at enable -> E_STATUS,
	 * and tracing is off again */
    rig_init(&r, "skylake-client.txt");
    assert_int_equal(rtit_topa_build(&r.layout, &r.cfg, tables(), 4), 0);
    tables()[0] |= 1u << 1;
    assert_int_equal(rtit_start(&r.ops, &r.cfg, &r.caps, false, &si), RTIT_SEQ_E_STATUS);
    assert_true(si.status & RTIT_STATUS_ERROR);
    assert_false(model.ctl & RTIT_CTL_TRACEEN);
    assert_int_equal(model.gp_count, 0);

    /* stop when nothing runs */
    rig_init(&r, "skylake-client.txt");
    assert_int_equal(rtit_stop(&r.ops, &r.cfg, &st), 0);
    assert_false(st.was_tracing);
    assert_null(rtit_status_explain(st.status));
}

static void test_trace_stop_range(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;

    rig_init(&r, "icelake-client.txt");
    r.cfg.regions = 4;
    /* trace one image, stop at the "assert handler" */
    assert_int_equal(rtit_filter_add_image(&r.cfg, &r.caps, 0x7e000000, 0x20000), 0);
    assert_int_equal(rtit_filter_add(&r.cfg, &r.caps, RTIT_ADDR_CFG_STOP, 0x7e010000, 0x7e01003f),
                     1);
    rig_start(&r);
    assert_int_equal(model.addr[0], 0x7e000000);
    assert_int_equal(model.addr[1], 0x7e01ffff);
    assert_int_equal(model.addr[2], 0x7e010000);
    rtit_model_trace(&model, 1000);
    assert_true(rtit_model_trace_stop_hit(&model));
    assert_int_equal(rtit_model_trace(&model, 500), 0);
    rig_stop(&r, &st, &sum);
    assert_true(st.stopped);
    assert_false(st.error);
    assert_int_equal(sum.bytes, 1000);
    assert_false(sum.stopped_full);
    assert_false(sum.wrapped);
    assert_non_null(strstr(rtit_status_explain(st.status), "TraceStop"));
}

static void test_filter_helpers(void **state)
{
    (void)state;
    struct rtit_caps k = rtit_fixture_caps("skylake-client.txt"); /* 2 ranges */
    struct rtit_config c;
    rtit_config_default(&c, &k);
    assert_int_equal(rtit_filter_add(&c, &k, 3, 0, 1), RTIT_FILTER_E_KIND);
    assert_int_equal(rtit_filter_add(&c, &k, 1, 2, 1), RTIT_FILTER_E_EMPTY);
    assert_int_equal(rtit_filter_add_image(&c, &k, 0x1000, 0), RTIT_FILTER_E_EMPTY);
    assert_int_equal(rtit_filter_add(&c, &k, 1, 0x800000000000ull, 0x800000000010ull),
                     RTIT_FILTER_E_NONCANONICAL);
    assert_int_equal(rtit_filter_add(&c, &k, 2, 0x1000, 0x1fff), 0);
    assert_int_equal(rtit_filter_add_image(&c, &k, 0xffffffff80000000ull, 0x1000), 1);
    assert_int_equal(c.range[1].end, 0xffffffff80000fffull);
    assert_int_equal(rtit_filter_add(&c, &k, 1, 0, 1), RTIT_FILTER_E_FULL);
    /* the default addresses are 0: table and region on one page */
    assert_int_equal(rtit_check(&c, &k, NULL), RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.buffer_phys = 0x40000000;
    c.table_phys = 0x3ff00000;
    assert_int_equal(rtit_check(&c, &k, NULL), RTIT_RULE_OK);
    assert_non_null(strstr(rtit_filter_strerror(RTIT_FILTER_E_FULL), "no free"));
    /* Broadwell has none */
    k = rtit_fixture_caps("broadwell-client.txt");
    rtit_config_default(&c, &k);
    assert_int_equal(rtit_filter_add_image(&c, &k, 0x1000, 0x1000), RTIT_FILTER_E_FULL);
}

struct lines {
    char text[8][320];
    int n;
};

static void collect(void *ctx, const char *line)
{
    struct lines *l = ctx;
    assert_true(l->n < 8);
    snprintf(l->text[l->n++], sizeof(l->text[0]), "%s", line);
}

static void test_stop_report(void **state)
{
    (void)state;
    struct rig r;
    struct rtit_stop_info st;
    struct rtit_output_summary sum;
    struct lines l;

    rig_init(&r, "skylake-client.txt");
    r.cfg.regions = 2;
    rig_start(&r);
    rtit_model_trace(&model, 10000);
    rig_stop(&r, &st, &sum);
    l.n = 0;
    rtit_stop_report(&st, &sum, collect, &l);
    assert_int_equal(l.n, 3);
    assert_non_null(strstr(l.text[1], "ring wrapped: the oldest byte is at offset 1808 of 8192"));
    assert_string_equal(l.text[2], "ptboot: trace bytes=8192 buffer=8192 oldest=1808 "
                                   "wrapped=1 stopped=0 error=0");

    r.cfg.when_full = RTIT_FULL_STOP;
    rig_start(&r);
    rtit_model_trace(&model, 10000);
    rig_stop(&r, &st, &sum);
    l.n = 0;
    rtit_stop_report(&st, &sum, collect, &l);
    assert_int_equal(l.n, 4);
    assert_non_null(strstr(l.text[1], "filled and tracing stopped"));
    assert_non_null(strstr(l.text[2], "STATUS.Stopped"));
    assert_string_equal(l.text[3], "ptboot: trace bytes=8192 buffer=8192 oldest=0 "
                                   "wrapped=0 stopped=1 error=0");

    r.cfg.when_full = RTIT_FULL_RING;
    rig_start(&r);
    rtit_model_trace(&model, 100);
    rig_stop(&r, &st, &sum);
    l.n = 0;
    rtit_stop_report(&st, &sum, collect, &l);
    assert_string_equal(l.text[1], "trace: 100 bytes of 8192, not wrapped");
    assert_string_equal(l.text[2], "ptboot: trace bytes=100 buffer=8192 oldest=0 "
                                   "wrapped=0 stopped=0 error=0");
}

static void test_plan_report_default(void **state)
{
    (void)state;
    struct lines l = { .n = 0 };
    struct rtit_caps k = rtit_fixture_caps("broadwell-client.txt");
    assert_int_equal(rtit_plan_report_default(&k, collect, &l), 0);
    assert_int_equal(l.n, 6);
    assert_string_equal(l.text[0], "topa 0 0 0x40000000");
    assert_string_equal(l.text[1], "topa 0 1 0x3ff00001");
    assert_string_equal(l.text[5], "wrmsr 0x570 0x2505");
    l.n = 0;
    k = rtit_fixture_caps("amd.txt");
    assert_int_equal(rtit_plan_report_default(&k, collect, &l), RTIT_RULE_PT_ABSENT);
    assert_int_equal(l.n, 2);
    assert_string_equal(l.text[0], "refused pt-absent kind=#GP");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_order),
        cmocka_unit_test(test_ring_no_wrap_and_wrap),
        cmocka_unit_test(test_ring_exactly_full),
        cmocka_unit_test(test_stop_when_full),
        cmocka_unit_test(test_chained_tables),
        cmocka_unit_test(test_single_entry_broadwell),
        cmocka_unit_test(test_single_range),
        cmocka_unit_test(test_take_over),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_trace_stop_range),
        cmocka_unit_test(test_filter_helpers),
        cmocka_unit_test(test_stop_report),
        cmocka_unit_test(test_plan_report_default),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
