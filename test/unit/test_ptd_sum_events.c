/* Decode summaries (decoder/ptd_sum.h) of traces written by libptd's
 * trace-unit model (decoder/ptd_tracer.h) for a few hand-made executions:
 *   - interrupts whose handler is outside the filter (FUP + TIP.PGD with
 *     the handler's IP, TIP.PGE at the return): counted as irqs, their
 *     time (between the disable and the enable) is the handler's, two in a
 *     row at one IP, a fault whose handler steps over the instruction,
 *     calls and returns still matched;
 *   - code of the trace entered from outside while a call out runs (a
 *     callback): an "in>" function, unwound at the call's return;
 *   - time shared among the blocks of a clock step by instructions;
 *   - a clock that moves too seldom: "time too coarse to rank by", and
 *     functions ranked by instructions.
 * Code (64-bit, filter [0x1000, 0x1fff]):
 *   f 0x1000: nop; nop; call g; nop; jmp f      g 0x1100: nop; ret
 *   cb 0x1200: nop; nop; nop; ret (called from outside, returns outside) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_sum.h"
#include "decoder/ptd_tracer.h"

#define F       0x1000u
#define G       0x1100u
#define CB      0x1200u
#define HANDLER 0x9000u
#define OUTSIDE 0x9100u

static uint8_t mem[0x1000];

static int read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    if (ip < 0x1000 || ip >= 0x2000)
        return 0;
    size_t n = 0x2000 - ip < size ? (size_t)(0x2000 - ip) : size;
    memcpy(buf, &mem[ip - 0x1000], n);
    return (int)n;
}

static void code(void)
{
    static const uint8_t f[] = { 0x90, 0x90, 0xe8, 0xf9, 0x00, 0x00, 0x00, 0x90, 0xeb, 0xf6 };
    static const uint8_t g[] = { 0x90, 0xc3 };
    static const uint8_t cb[] = { 0x90, 0x90, 0x90, 0xc3 };
    memset(mem, 0xcc, sizeof mem);
    memcpy(&mem[F - 0x1000], f, sizeof f);
    memcpy(&mem[G - 0x1000], g, sizeof g);
    memcpy(&mem[CB - 0x1000], cb, sizeof cb);
}

/* ---- the execution, through the trace-unit model ---------------------------- */

static uint8_t trace[65536];
static size_t ntrace;
static struct ptd_tracer T;
static uint64_t now;

static int sink(void *ctx, const uint8_t *b, size_t n)
{
    (void)ctx;
    assert_true(ntrace + n <= sizeof trace);
    memcpy(trace + ntrace, b, n);
    ntrace += n;
    return 0;
}

static void start(bool mtc)
{
    struct ptd_tracer_config c;
    memset(&c, 0, sizeof c);
    c.nfilter = 1;
    c.filter_lo[0] = 0x1000;
    c.filter_hi[0] = 0x1fff;
    c.tsc_en = true;
    c.mtc_en = mtc;
    c.mtc_freq = 0;
    c.ctc_shift = 0; /* an MTC every tick: the clock moves at every step */
    c.sink = sink;
    ntrace = 0;
    code();
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    now = 1000;
    ptd_tracer_start(&T, F, PTD_EXEC_MODE_64, now);
}

/* the instruction at ip completed (dt ticks later) and went to next */
static void step(uint64_t ip, unsigned len, unsigned iclass, uint64_t target, uint64_t next,
                 uint64_t dt)
{
    struct ptd_tracer_insn in;
    in.ip = ip;
    in.length = (uint8_t)len;
    in.iclass = (uint8_t)iclass;
    in.target = target;
    in.next_ip = next;
    in.mode = in.next_mode = PTD_EXEC_MODE_64;
    now += dt;
    assert_true(ptd_tracer_insn(&T, &in, now) >= 0);
}

/* one round of f from its entry, g called; back at f */
static void round_f(uint64_t dt)
{
    step(F, 1, PTD_ICLASS_OTHER, 0, F + 1, dt);
    step(F + 1, 1, PTD_ICLASS_OTHER, 0, F + 2, dt);
    step(F + 2, 5, PTD_ICLASS_DIRECT_CALL, G, G, dt);
    step(G, 1, PTD_ICLASS_OTHER, 0, G + 1, dt);
    step(G + 1, 1, PTD_ICLASS_NEAR_RET, 0, F + 7, dt);
    step(F + 7, 1, PTD_ICLASS_OTHER, 0, F + 8, dt);
    step(F + 8, 2, PTD_ICLASS_DIRECT_JUMP, F, F, dt);
}

/* an interrupt before the instruction at ip, the handler outside for
 * handler_ticks, back at ip */
static void interrupt(uint64_t ip, uint64_t handler_ticks)
{
    now += 1;
    assert_true(ptd_tracer_event(&T, ip, HANDLER, PTD_EXEC_MODE_64, now) >= 0);
    now += handler_ticks;
    assert_true(ptd_tracer_gap(&T, ip, ip, PTD_EXEC_MODE_64, now) >= 0);
}

/* ---- the summary -------------------------------------------------------------- */

static char text[1 << 16];
static size_t ntext;
static uint8_t arena[PTD_SUM_ARENA_SUGGESTED];
static struct ptd_sum S;
static struct ptd_flow FL;

static void line(void *ctx, const char *l, size_t n)
{
    (void)ctx;
    assert_true(ntext + n + 1 < sizeof text);
    memcpy(text + ntext, l, n);
    ntext += n;
    text[ntext++] = '\n';
    text[ntext] = 0;
}

static const struct ptd_sum_stats *summarize(void)
{
    static const struct ptd_time_config tc = { 0, 0, 1, 1, 0, 0 }; /* CTC = TSC */
    struct ptd_flow_config fc;
    memset(&fc, 0, sizeof fc);
    fc.trace = trace;
    fc.size = ntrace;
    fc.read = read_code;
    fc.mode = 64;
    fc.time = &tc;
    fc.filter_lo[0] = 0x1000;
    fc.filter_hi[0] = 0x1fff;
    fc.nfilter = 1;
    ptd_flow_init(&FL, &fc);
    struct ptd_sum_config c;
    memset(&c, 0, sizeof c);
    c.arena = arena;
    c.arena_size = sizeof arena;
    c.line = line;
    c.flags = PTD_SUM_F_TREE_ALL;
    ntext = 0;
    text[0] = 0;
    return ptd_sum_run(&S, &c, &FL);
}

/* The functions section's row of name: calls, self-insns, self-ticks. */
static int func_row(const char *name, uint64_t *calls, uint64_t *insns, uint64_t *ticks)
{
    const char *sec = strstr(text, "== functions");
    assert_non_null(sec);
    for (const char *p = strchr(sec, '\n'); p && p[1] && p[1] != '='; p = strchr(p + 1, '\n')) {
        unsigned long long a, b, d;
        double pc1, pc2;
        char n[64];
        if (sscanf(p + 1, "%llu %llu %lf%% %llu %lf%% %63[^\n]", &a, &b, &pc1, &d, &pc2, n) == 6 &&
            !strcmp(n, name)) {
            *calls = a, *insns = b, *ticks = d;
            return 1;
        }
    }
    return 0;
}

static void test_interrupts_outside(void **state)
{
    (void)state;
    uint64_t calls, insns, ticks;
    start(true);
    round_f(10);
    /* two interrupts at f+1 in a row (the second before the instruction
     * ran), 500 and 700 ticks in the handler; one at g */
    step(F, 1, PTD_ICLASS_OTHER, 0, F + 1, 10);
    interrupt(F + 1, 500);
    interrupt(F + 1, 700);
    step(F + 1, 1, PTD_ICLASS_OTHER, 0, F + 2, 10);
    step(F + 2, 5, PTD_ICLASS_DIRECT_CALL, G, G, 10);
    interrupt(G, 300);
    step(G, 1, PTD_ICLASS_OTHER, 0, G + 1, 10);
    step(G + 1, 1, PTD_ICLASS_NEAR_RET, 0, F + 7, 10);
    round_f(10);
    /* a fault at f+1 whose handler steps over the instruction (1 byte):
     * back at f+2, the frame ends there too */
    step(F, 1, PTD_ICLASS_OTHER, 0, F + 1, 10);
    now += 1;
    assert_true(ptd_tracer_event(&T, F + 1, HANDLER, PTD_EXEC_MODE_64, now) >= 0);
    now += 200;
    assert_true(ptd_tracer_gap(&T, F + 2, F + 2, PTD_EXEC_MODE_64, now) >= 0);
    step(F + 2, 5, PTD_ICLASS_DIRECT_CALL, G, G, 10);
    step(G, 1, PTD_ICLASS_OTHER, 0, G + 1, 10);
    step(G + 1, 1, PTD_ICLASS_NEAR_RET, 0, F + 7, 10);
    step(F + 7, 1, PTD_ICLASS_OTHER, 0, F + 8, 10);
    step(F + 8, 2, PTD_ICLASS_DIRECT_JUMP, F, F, 10);
    ptd_tracer_stop(&T, F);
    const struct ptd_sum_stats *st = summarize();
    assert_int_equal(st->irqs, 4);
    assert_int_equal(st->calls, 4);
    assert_int_equal(st->returns, 4);
    assert_int_equal(st->unmatched_returns, 0);
    assert_int_equal(st->insns, 27);
    assert_null(strstr(text, "in> "));
    assert_false(st->time_coarse);
    /* the handler's time: 500 + 700 + 300 + 200, and no instructions */
    assert_true(func_row("irq> 0x9000", &calls, &insns, &ticks));
    assert_int_equal(calls, 4);
    assert_int_equal(insns, 0);
    assert_int_equal(ticks, 1700);
    /* g: four calls, its two instructions each */
    assert_true(func_row("0x1100", &calls, &insns, &ticks));
    assert_int_equal(calls, 4);
    assert_int_equal(insns, 8);
    assert_non_null(strstr(text, "== summary: "));
    assert_non_null(strstr(text, " 4 irqs, "));
    /* the interrupt frame sits under f in the tree (and under g) */
    assert_non_null(strstr(text, "irq> 0x9000"));
}

/* Counts of one in the totals are singular ("1 call", "1 byte skipped"),
 * others plural ("0 errors"), as the tree's "1 more callee" */
static void test_totals_plurals(void **state)
{
    (void)state;
    start(true);
    step(F, 1, PTD_ICLASS_OTHER, 0, F + 1, 10);
    interrupt(F + 1, 100);
    step(F + 1, 1, PTD_ICLASS_OTHER, 0, F + 2, 10);
    step(F + 2, 5, PTD_ICLASS_DIRECT_CALL, G, G, 10);
    step(G, 1, PTD_ICLASS_OTHER, 0, G + 1, 10);
    step(G + 1, 1, PTD_ICLASS_NEAR_RET, 0, F + 7, 10);
    ptd_tracer_stop(&T, F + 7);
    /* one byte of garbage before the first PSB: skipped and counted */
    assert_true(ntrace + 1 <= sizeof trace);
    memmove(trace + 1, trace, ntrace);
    trace[0] = 0xd9;
    ntrace++;
    const struct ptd_sum_stats *st = summarize();
    assert_int_equal(st->calls, 1);
    assert_int_equal(st->irqs, 1);
    assert_int_equal(st->bytes_skipped, 1);
    assert_non_null(strstr(text, " insns, "));
    assert_non_null(strstr(text, ", 1 call, 1 return, 1 irq, 0 errors"));
    assert_non_null(strstr(text, "\n0 errors, 1 byte skipped, 0 overflows, "));
    assert_null(strstr(text, " 1 calls"));
    assert_null(strstr(text, " 1 bytes"));
}

static void test_callback(void **state)
{
    (void)state;
    uint64_t calls, insns, ticks;
    start(true);
    /* f calls out (its call to g patched to go outside): the call leaves
     * the filter; code outside calls cb; cb returns outside; the call
     * returns to f */
    mem[F + 2 - 0x1000] = 0xe8; /* call OUTSIDE: rel32 = 0x9100 - 0x1007 */
    mem[F + 3 - 0x1000] = 0xf9;
    mem[F + 4 - 0x1000] = 0x80;
    mem[F + 5 - 0x1000] = 0x00;
    mem[F + 6 - 0x1000] = 0x00;
    step(F, 1, PTD_ICLASS_OTHER, 0, F + 1, 10);
    step(F + 1, 1, PTD_ICLASS_OTHER, 0, F + 2, 10);
    step(F + 2, 5, PTD_ICLASS_DIRECT_CALL, OUTSIDE, OUTSIDE, 10);
    /* outside: a call lands in cb (FilterEn at the landing) */
    step(OUTSIDE, 5, PTD_ICLASS_DIRECT_CALL, CB, CB, 100);
    step(CB, 1, PTD_ICLASS_OTHER, 0, CB + 1, 10);
    step(CB + 1, 1, PTD_ICLASS_OTHER, 0, CB + 2, 10);
    step(CB + 2, 1, PTD_ICLASS_OTHER, 0, CB + 3, 10);
    step(CB + 3, 1, PTD_ICLASS_NEAR_RET, 0, OUTSIDE + 5, 10);
    /* and once more before the call returns (cb's frame ended at its
     * return: a second entry, not more of the first) */
    step(OUTSIDE + 5, 5, PTD_ICLASS_DIRECT_CALL, CB, CB, 100);
    step(CB, 1, PTD_ICLASS_OTHER, 0, CB + 1, 10);
    step(CB + 1, 1, PTD_ICLASS_OTHER, 0, CB + 2, 10);
    step(CB + 2, 1, PTD_ICLASS_OTHER, 0, CB + 3, 10);
    step(CB + 3, 1, PTD_ICLASS_NEAR_RET, 0, OUTSIDE + 10, 10);
    step(OUTSIDE + 10, 1, PTD_ICLASS_NEAR_RET, 0, F + 7, 100);
    step(F + 7, 1, PTD_ICLASS_OTHER, 0, F + 8, 10);
    step(F + 8, 2, PTD_ICLASS_DIRECT_JUMP, F, F, 10);
    ptd_tracer_stop(&T, F);
    const struct ptd_sum_stats *st = summarize();
    if (getenv("SUMTEXT"))
        fputs(text, stderr);
    assert_int_equal(st->irqs, 0);
    assert_int_equal(st->unmatched_returns, 0);
    /* cb: entered twice from outside, its 4 instructions each time */
    assert_true(func_row("in> 0x1200", &calls, &insns, &ticks));
    assert_int_equal(calls, 2);
    assert_int_equal(insns, 8);
    /* the call out and its return (cb's return is no return of the trace) */
    assert_int_equal(st->calls, 1);
    assert_int_equal(st->returns, 1);
    assert_true(func_row("0x9100", &calls, &insns, &ticks));
    assert_int_equal(calls, 1);
}

static void test_time_shared(void **state)
{
    (void)state;
    uint64_t calls, insns, t_f, t_g;
    /* no MTC: a TSC now and then only (PSB+, the enables after two
     * interrupts): each clock step spans many blocks, shared by
     * instructions; and far too few steps to rank by */
    start(false);
    for (int i = 0; i < 40; i++) {
        round_f(10);
        if (i == 10 || i == 30)
            interrupt(F, 100);
    }
    ptd_tracer_stop(&T, F);
    const struct ptd_sum_stats *st = summarize();
    if (getenv("SUMTEXT"))
        fputs(text, stderr);
    assert_true(st->time_coarse);
    assert_int_equal(st->irqs, 2);
    assert_non_null(
        strstr(text, "time too coarse to rank by: the clock moved 2 times in 120 blocks"));
    assert_non_null(
        strstr(text, "by self insns, time too coarse): calls self-insns % self-ticks % function"));
    /* with MTC every tick: fine, and f (5 of 7 insns a round) has about
     * 5/7 of the ticks: shared by instructions, not given to whichever
     * block comes when the clock moves */
    start(true);
    for (int i = 0; i < 40; i++)
        round_f(10);
    ptd_tracer_stop(&T, F);
    st = summarize();
    assert_false(st->time_coarse);
    assert_non_null(strstr(text, "by self time): calls self-insns % self-ticks % function"));
    assert_true(func_row("0x1100", &calls, &insns, &t_g));
    assert_int_equal(insns, 80);
    assert_true(func_row("(caller of 0x1000)", &calls, &insns, &t_f));
    assert_int_equal(insns, 200);
    assert_int_equal(t_f + t_g, st->tsc_last - st->tsc_first);
    assert_true(t_f * 7 >= (t_f + t_g) * 5 - 70 && t_f * 7 <= (t_f + t_g) * 5 + 70);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interrupts_outside),
        cmocka_unit_test(test_callback),
        cmocka_unit_test(test_time_shared),
        cmocka_unit_test(test_totals_plurals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
