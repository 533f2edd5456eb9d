/* Unit tests of arch/x86/soft_unit.c (the software trace unit) and
 * arch/x86/rtit_linear.c: real x86 code bytes in a small address space,
 * stepped as the #DB glue steps them, and the output buffer decoded back
 * with ptd_pkt (packets shown as words, see pkt_words.h) and, for the
 * instruction flow, with ptd_flow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "arch/x86/rtit_linear.h"
#include "arch/x86/soft_unit.h"
#include "decoder/ptd_flow.h"
#include "decoder/ptd_pkt.h"
#include "test/unit/pkt_words.h"

/* ---- a 64 KiB address space of code ---------------------------------------- */
static uint8_t mem[0x10000];

static int rd(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    size_t n = 0;
    while (n < size && ip + n < sizeof mem) {
        buf[n] = mem[ip + n];
        n++;
    }
    return (int)n;
}

static void put(uint64_t at, const char *hex)
{
    unsigned v;
    while (sscanf(hex, "%2x", &v) == 1) {
        mem[at++] = (uint8_t)v;
        hex += 2;
        while (*hex == ' ')
            hex++;
    }
}

/* The program most tests step through:
 *   1000: 90              nop
 *   1001: e8 fa 1f 00 00  call 3000        (outside [1000, 1fff])
 *   1006: 74 02           je 100a
 *   1008: ff e0           jmp rax
 *   100a: e8 f1 00 00 00  call 1100
 *   100f: c3              ret
 *   1100: c3              ret
 *   3000: 90              nop
 *   3001: c3              ret
 *   5000: 90              nop              (TraceStop range [5000, 50ff])
 *   8000: ff e0           jmp rax */
static void program(void)
{
    memset(mem, 0xcc, sizeof mem);
    put(0x1000, "90 e8 fa 1f 00 00 74 02 ff e0 e8 f1 00 00 00 c3");
    put(0x1100, "c3");
    put(0x3000, "90 c3");
    put(0x5000, "90");
    put(0x8000, "ff e0");
}

static uint8_t buf[3 * 4096];
static struct soft_unit U;

static void config(struct rtit_config *c)
{
    memset(c, 0, sizeof *c);
    c->output = RTIT_OUTPUT_TOPA;
    c->when_full = RTIT_FULL_RING;
    c->region_size_code = 0;
    c->regions = 2;
    c->branch_en = true;
    c->os = true;
    c->psb_freq = 0;
    c->range[0].cfg = RTIT_ADDR_CFG_FILTER;
    c->range[0].start = 0x1000;
    c->range[0].end = 0x1fff;
}

static void init(const struct rtit_config *c)
{
    program();
    memset(buf, 0, sizeof buf);
    assert_int_equal(soft_unit_init(&U, c, buf, sizeof buf, rd, NULL), 0);
}

/* The packets of the unit's linearised output as words. */
static const char *words(void)
{
    static char out[16384];
    static uint8_t lin[sizeof buf];
    struct rtit_output_summary s;
    struct rtit_linear l;
    soft_unit_summarize(&U, &s);
    assert_int_equal(rtit_trace_linearize(buf, &s, lin, sizeof lin, &l), 0);
    return pkt_words(lin, (size_t)l.bytes, true, out, sizeof out);
}

static int step(uint64_t ip)
{
    return soft_unit_step(&U, ip, 64, 0);
}

/* ---- configuration -------------------------------------------------------------- */

static void test_init_errors(void **state)
{
    (void)state;
    struct rtit_config c;
    config(&c);
    assert_int_equal(soft_unit_init(NULL, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_INVALID);
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, NULL, NULL), SOFT_UNIT_E_INVALID);
    /* the buffer must hold the configured regions (2 x 4 KiB) */
    assert_int_equal(soft_unit_init(&U, &c, buf, 8191, rd, NULL), SOFT_UNIT_E_OUTPUT);
    assert_int_equal(soft_unit_init(&U, &c, buf, 8192, rd, NULL), 0);
    c.regions = 0;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_OUTPUT);
    config(&c);
    c.output = RTIT_OUTPUT_SINGLE;
    c.single_size = 96;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_OUTPUT);
    c.single_size = 3000;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_OUTPUT);
    c.single_size = 2048;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), 0);
    config(&c);
    c.range[1].cfg = 3;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_RANGE);
    config(&c);
    c.branch_en = false;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_BRANCH_EN);
    config(&c);
    c.psb_freq = 16;
    assert_int_equal(soft_unit_init(&U, &c, buf, sizeof buf, rd, NULL), SOFT_UNIT_E_OUTPUT);
    /* every error has its own text */
    for (int e = SOFT_UNIT_E_STATE; e <= SOFT_UNIT_E_INVALID; e++)
        for (int f = e + 1; f <= SOFT_UNIT_E_INVALID; f++)
            assert_string_not_equal(soft_unit_strerror(e), soft_unit_strerror(f));
    assert_string_equal(soft_unit_strerror(-100), "unknown error");
}

/* ---- filters, SKIP_CALL -------------------------------------------------------------- */

static void test_filter_and_skip_call(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    init(&c);
    assert_int_equal(step(0x1000), SOFT_UNIT_CONTINUE);
    assert_int_equal(step(0x1001), SOFT_UNIT_CONTINUE);
    /* the call to 3000 leaves [1000, 1fff]: TIP.PGD, and the glue may run
     * the callee free until the return address */
    assert_int_equal(step(0x3000), SOFT_UNIT_SKIP_CALL);
    assert_int_equal(soft_unit_resume_ip(&U), 0x1006);
    soft_unit_get_status(&U, &st);
    assert_true(st.skipping);
    assert_false(st.tracing);
    assert_int_equal(st.skips, 1);
    /* back at the return address: TIP.PGE */
    assert_int_equal(step(0x1006), SOFT_UNIT_CONTINUE);
    soft_unit_get_status(&U, &st);
    assert_true(st.tracing);
    assert_false(st.skipping);
    /* je taken, call 1100, ret (compressed), ret out of the range */
    step(0x100a);
    step(0x1100);
    step(0x100f);
    /* the traced call returns to 4000: the ret leaves the range */
    assert_int_equal(soft_unit_stop(&U, 0x4000, 0), 0);
    assert_int_equal(soft_unit_stop(&U, 0x4000, 0), SOFT_UNIT_E_STATE);
    assert_string_equal(words(), "PSB MODE64 PSBEND PGE(1000) PGD(3000) PGE(1006) TNT!! PGD(4000)");
    soft_unit_get_status(&U, &st);
    /* traced: 1000 1001 1006 100a 1100 100f */
    assert_int_equal(st.insns, 6);
    assert_int_equal(st.steps, 7);
    assert_int_equal(st.gaps, 0);
    assert_false(st.stopped);
}

static void test_no_filter_traces_everything(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    c.range[0].cfg = RTIT_ADDR_CFG_OFF;
    init(&c);
    step(0x1000);
    step(0x1001);
    assert_int_equal(step(0x3000), SOFT_UNIT_CONTINUE);
    step(0x3001);
    step(0x1006);                  /* compressed RET */
    soft_unit_stop(&U, 0x1008, 0); /* je not taken, then TraceEn=0 */
    assert_string_equal(words(), "PSB MODE64 PSBEND PGE(1000) TNT!. FUP(1008) PGD(-)");
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.insns, 5);
}

static void test_stop_before_last_step(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    init(&c);
    step(0x1006);
    step(0x1008); /* je not taken */
    /* stepping ended with jmp rax at 1008 about to run: not traced */
    assert_int_equal(soft_unit_stop(&U, 0x1008, 0), 0);
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.insns, 1);
    assert_string_equal(words(), "PSB MODE64 PSBEND PGE(1006) TNT. FUP(1008) PGD(-)");
    /* ip 0, not known: the same */
    init(&c);
    step(0x1006);
    step(0x1008);
    assert_int_equal(soft_unit_stop(&U, 0, 0), 0);
    assert_string_equal(words(), "PSB MODE64 PSBEND PGE(1006) TNT. FUP(1008) PGD(-)");
    /* stopped before the first step: nothing at all */
    init(&c);
    assert_int_equal(soft_unit_stop(&U, 0x1000, 0), 0);
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.bytes, 0);
}

static void test_disretc_and_tsc(void **state)
{
    (void)state;
    struct rtit_config c;
    config(&c);
    c.dis_retc = true;
    c.tsc_en = true;
    init(&c);
    soft_unit_step(&U, 0x100a, 64, 0x1234);
    soft_unit_step(&U, 0x1100, 64, 0x1240);
    soft_unit_step(&U, 0x100f, 64, 0x1250); /* RET: TIP with DisRETC */
    soft_unit_stop(&U, 0x2000, 0x1260);     /* the ret at 100f went to 2000 */
    /* one TSC: the TIP.PGE has the time of the PSB+'s */
    assert_string_equal(words(), "PSB TSC(1234) MODE64 PSBEND PGE(100a) TIP(100f) PGD(2000)");
}

static void test_tracestop(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    c.range[3].cfg = RTIT_ADDR_CFG_STOP;
    c.range[3].start = 0x5000;
    c.range[3].end = 0x50ff;
    init(&c);
    step(0x1006);
    step(0x1008); /* je not taken */
    /* jmp rax into the TraceStop range */
    assert_int_equal(step(0x5000), SOFT_UNIT_STOPPED);
    assert_int_equal(step(0x5001), SOFT_UNIT_STOPPED);
    soft_unit_get_status(&U, &st);
    assert_true(st.stopped);
    assert_false(st.stopped_full);
    soft_unit_stop(&U, 0x5001, 0);
    assert_string_equal(words(), "PSB MODE64 PSBEND PGE(1006) TNT. PGD(5000) STOP");
}

static void test_gap_interrupt_undecodable(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    init(&c);
    step(0x1000);
    /* nop then 1100: no outcome of a nop: gap after it */
    step(0x1100);
    /* an interrupt before 1100's ret: FUP + TIP */
    assert_int_equal(soft_unit_interrupt(&U, 0x1006, 64, 0), SOFT_UNIT_CONTINUE);
    /* the je at 1006 going neither to 1008 nor to 100a: gap before it */
    put(0x1f00, "90");
    put(0x1f05, "90");
    step(0x1f00);
    step(0x1f05); /* nop at 1f00 then 1f05: gap after it */
    soft_unit_stop(&U, 0x1f06, 0);
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.gaps, 3);
    assert_int_equal(st.undecodable, 0);
    assert_string_equal(
        words(), "PSB MODE64 PSBEND PGE(1000) FUP(1001) PGD(-) PGE(1100) FUP(1100) TIP(1006) "
                 "FUP(1006) PGD(-) PGE(1f00) FUP(1f01) PGD(-) PGE(1f05) FUP(1f06) PGD(-)");
    /* undecodable: 66 prefixes up to the end of the address space */
    init(&c);
    memset(mem + 0xfff0, 0x66, 0x10);
    step(0x1000);
    step(0xfff8); /* gap after the nop; outside the range */
    step(0x1006); /* what ran at fff8 is unknown: lands at 1006 */
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.undecodable, 1);
    assert_int_equal(st.gaps, 1);
    assert_true(st.tracing);
    /* bad mode */
    assert_int_equal(soft_unit_step(&U, 0x1008, 48, 0), SOFT_UNIT_STOPPED);
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.error, SOFT_UNIT_E_MODE);
}

static void test_rep_string_iterations(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    config(&c);
    init(&c);
    /* 1200: f3 a4  rep movsb; 1202: f3 90 (pause: a REP prefix, not a
     * string op); 1204: 90 */
    put(0x1200, "f3 a4 f3 90 90");
    step(0x1200);
    step(0x1200); /* three more iterations: the trap comes after each */
    step(0x1200);
    step(0x1200);
    step(0x1202);
    step(0x1202);                  /* pause to itself: not an iteration, a gap */
    soft_unit_stop(&U, 0x1204, 0); /* the second pause went on to 1204 */
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.rep_iterations, 3);
    assert_int_equal(st.gaps, 1);
    assert_int_equal(st.insns, 3);
    assert_string_equal(words(),
                        "PSB MODE64 PSBEND PGE(1200) FUP(1204) PGD(-) PGE(1202) FUP(1204) PGD(-)");
}

/* ---- output: ring, stop-when-full, PSB period ----------------------------------------- */

/* jmp rax at 1008 and 8000 bouncing: 3-byte TIPs, no filter */
static int bounce(unsigned n)
{
    int act = SOFT_UNIT_CONTINUE;
    for (unsigned i = 0; i < n && act == SOFT_UNIT_CONTINUE; i++)
        act = step(i & 1 ? 0x8000 : 0x1008);
    return act;
}

static void test_ring_wraps_and_linearises(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    struct rtit_output_summary s;
    struct rtit_linear l, l2;
    static uint8_t lin[sizeof buf], copy[sizeof buf];
    config(&c);
    c.range[0].cfg = RTIT_ADDR_CFG_OFF;
    init(&c);
    assert_int_equal(bounce(6000), SOFT_UNIT_CONTINUE);
    soft_unit_stop(&U, 0x1008, 0); /* the last jmp, at 8000, went to 1008 */
    soft_unit_get_status(&U, &st);
    assert_true(st.wrapped);
    assert_false(st.stopped);
    assert_true(st.bytes > 2 * 8192);
    assert_int_equal(st.write_pos, st.bytes % 8192);
    soft_unit_summarize(&U, &s);
    assert_int_equal(s.oldest, st.write_pos);
    assert_int_equal(s.bytes, 8192);
    assert_int_equal(rtit_trace_linearize(buf, &s, lin, sizeof lin, &l), 0);
    assert_true(l.have_psb);
    assert_true(l.skipped < 2048 + 64); /* PSB+ every 2 KiB or so */
    assert_int_equal(l.bytes + l.skipped, 8192);
    /* the stream decodes with ptd_flow to the bouncing jumps, to the end */
    struct ptd_flow f;
    struct ptd_flow_config fc;
    memset(&fc, 0, sizeof fc);
    fc.trace = lin;
    fc.size = (size_t)l.bytes;
    fc.read = rd;
    assert_int_equal(ptd_flow_init(&f, &fc), 0);
    int r = ptd_flow_sync_forward(&f);
    unsigned n = 0;
    uint64_t last = 0;
    while (r >= 0) {
        struct ptd_flow_insn in;
        struct ptd_event ev;
        while (r >= 0 && (r & PTD_ST_EVENT))
            r = ptd_flow_event(&f, &ev);
        if (r < 0 || (r & PTD_ST_EOS))
            break;
        r = ptd_flow_next(&f, &in);
        if (in.iclass == PTD_FLOW_ICLASS_ERROR)
            break;
        assert_true(in.ip == 0x1008 || in.ip == 0x8000);
        assert_true(in.ip != last);
        last = in.ip;
        n++;
    }
    assert_true(r == -PTD_ERR_EOS || (r >= 0 && (r & PTD_ST_EOS)));
    assert_true(n > 2000);
    assert_int_equal(last, 0x8000); /* tracing ended at 1008 */
    /* in place: the same stream */
    memcpy(copy, buf, sizeof buf);
    assert_int_equal(rtit_trace_linearize_in_place(copy, &s, &l2), 0);
    assert_int_equal(l2.bytes, l.bytes);
    assert_memory_equal(copy, lin, (size_t)l.bytes);
    /* a summary that does not fit is refused */
    s.oldest = 8192;
    assert_int_equal(rtit_trace_linearize(buf, &s, lin, sizeof lin, &l), -1);
}

static void test_stop_when_full(void **state)
{
    (void)state;
    struct rtit_config c;
    struct soft_unit_status st;
    struct rtit_output_summary s;
    config(&c);
    c.range[0].cfg = RTIT_ADDR_CFG_OFF;
    c.when_full = RTIT_FULL_STOP;
    c.regions = 1;
    init(&c);
    memset(buf, 0xee, sizeof buf); /* to see what the unit writes */
    assert_int_equal(bounce(6000), SOFT_UNIT_STOPPED);
    soft_unit_get_status(&U, &st);
    assert_true(st.stopped);
    assert_true(st.stopped_full);
    assert_false(st.wrapped);
    assert_int_equal(st.write_pos, 4096);
    assert_true(st.bytes <= 4096 && st.bytes > 4096 - 16);
    /* the packet that did not fit left PAD, nothing beyond the region */
    for (uint64_t i = st.bytes; i < 4096; i++)
        assert_int_equal(buf[i], 0);
    assert_int_equal(buf[4096], 0xee);
    assert_int_equal(soft_unit_stop(&U, 0x1008, 0), 0);
    soft_unit_get_status(&U, &st);
    assert_int_equal(st.write_pos, 4096);
    soft_unit_summarize(&U, &s);
    assert_int_equal(s.bytes, 4096);
    assert_int_equal(s.oldest, 0);
    assert_true(s.stopped_full);
    /* it all decodes: packets up to the end */
    const char *w = words();
    assert_true(strncmp(w, "PSB MODE64 PSBEND PGE(1008) TIP(8000) TIP(1008)", 47) == 0);
}

static void test_psb_period(void **state)
{
    (void)state;
    struct rtit_config c;
    config(&c);
    c.range[0].cfg = RTIT_ADDR_CFG_OFF;
    c.psb_freq = 1; /* 4 KiB */
    c.regions = 3;
    init(&c);
    bounce(3500);
    soft_unit_stop(&U, 0x8000, 0);
    /* PSBs at 0 and after every 4 KiB (at the next instruction boundary) */
    uint64_t prev = 0;
    unsigned n = 0;
    for (int64_t at = ptd_psb_find(buf, sizeof buf, 0); at >= 0;
         at = ptd_psb_find(buf, sizeof buf, (size_t)at + 16)) {
        if (n)
            assert_true((uint64_t)at - prev >= 4096 && (uint64_t)at - prev < 4096 + 3);
        prev = (uint64_t)at;
        n++;
    }
    assert_int_equal(n, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_errors),
        cmocka_unit_test(test_filter_and_skip_call),
        cmocka_unit_test(test_no_filter_traces_everything),
        cmocka_unit_test(test_stop_before_last_step),
        cmocka_unit_test(test_disretc_and_tsc),
        cmocka_unit_test(test_tracestop),
        cmocka_unit_test(test_gap_interrupt_undecodable),
        cmocka_unit_test(test_rep_string_iterations),
        cmocka_unit_test(test_ring_wraps_and_linearises),
        cmocka_unit_test(test_stop_when_full),
        cmocka_unit_test(test_psb_period),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
