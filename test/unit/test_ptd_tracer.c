/* Unit tests of decoder/ptd_tracer.c, the trace-unit model: each test feeds
 * a short execution and checks the packets (decoded back with ptd_pkt, IPs
 * resolved with ptd_last_ip) against what the SDM says a CPU writes. The
 * packets are shown as words: PSB PSBEND MODE64 TSC(t) TNT.!  (. not taken,
 * ! taken, oldest first) TIP(ip) PGE(ip) PGD(ip) PGD(-) FUP(ip) STOP
 * MTC(ctc bits) TMA(ctc,fc). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_pkt.h"
#include "decoder/ptd_tracer.h"
#include "test/unit/pkt_words.h"

struct sink {
    uint8_t buf[8192];
    size_t n, cap;
    unsigned calls;
};

static int sink_put(void *ctx, const uint8_t *b, size_t n)
{
    struct sink *s = ctx;
    if (s->n + n > s->cap)
        return -PTD_ERR_NOSPC;
    memcpy(s->buf + s->n, b, n);
    s->n += n;
    s->calls++;
    return 0;
}

/* The packets in s as words (see above). */
static const char *words(const struct sink *s)
{
    static char out[8192];
    return pkt_words(s->buf, s->n, false, out, sizeof out);
}

static struct sink S;
static struct ptd_tracer T;

/* A configuration with one FilterEn range [lo, hi] (none if lo > hi). */
static void setup(uint64_t lo, uint64_t hi, bool dis_retc, bool tsc, uint64_t psb)
{
    struct ptd_tracer_config c;
    memset(&c, 0, sizeof c);
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    if (lo <= hi) {
        c.nfilter = 1;
        c.filter_lo[0] = lo;
        c.filter_hi[0] = hi;
    }
    c.dis_retc = dis_retc;
    c.tsc_en = tsc;
    c.psb_period = psb;
    c.sink = sink_put;
    c.sink_ctx = &S;
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
}

static uint64_t now; /* the time stamp insn() passes */

static int insn(uint64_t ip, unsigned len, unsigned iclass, uint64_t target, uint64_t next)
{
    struct ptd_tracer_insn in;
    in.ip = ip;
    in.length = (uint8_t)len;
    in.iclass = (uint8_t)iclass;
    in.target = target;
    in.next_ip = next;
    in.mode = in.next_mode = PTD_EXEC_MODE_64;
    return ptd_tracer_insn(&T, &in, now);
}

/* ---- start, TNT, TIP ---------------------------------------------------- */

static void test_start_inside_and_outside(void **state)
{
    (void)state;
    setup(0x1000, 0x1fff, false, false, 0);
    assert_int_equal(ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0), PTD_TRACER_ENTERED);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000)");

    setup(0x1000, 0x1fff, false, false, 0);
    assert_int_equal(ptd_tracer_start(&T, 0x3000, PTD_EXEC_MODE_32, 0), 0);
    assert_string_equal(words(&S), "PSB MODE32 PSBEND");
    /* a starting request twice is one start */
    assert_int_equal(ptd_tracer_start(&T, 0x3000, PTD_EXEC_MODE_32, 0), 0);
    assert_string_equal(words(&S), "PSB MODE32 PSBEND");
    /* bad arguments */
    assert_int_equal(ptd_tracer_start(&T, 0x3000, 3, 0), -PTD_ERR_INVALID);
    assert_int_equal(ptd_tracer_init(&T, NULL), -PTD_ERR_INVALID);
}

static void test_tnt_accumulates_and_flushes(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    /* 7 conditional branches: six fill one TNT-8, the seventh waits */
    uint64_t ip = 0x1000;
    for (int i = 0; i < 7; i++) {
        int taken = i % 3 == 0;
        uint64_t next = taken ? ip + 0x10 : ip + 2;
        assert_int_equal(insn(ip, 2, PTD_ICLASS_COND_JUMP, ip + 0x10, next), PTD_TRACER_TRACED);
        ip = next;
    }
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TNT!..!..");
    /* an indirect jump: the pending bit goes out before the TIP */
    insn(ip, 2, PTD_ICLASS_INDIRECT_JUMP, 0, 0x1234);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TNT!..!.. TNT! TIP(1234)");
    /* plain instructions and direct jumps/calls write nothing */
    size_t n = S.n;
    insn(0x1234, 3, PTD_ICLASS_OTHER, 0, 0x1237);
    insn(0x1237, 5, PTD_ICLASS_DIRECT_JUMP, 0x1300, 0x1300);
    insn(0x1300, 5, PTD_ICLASS_DIRECT_CALL, 0x1400, 0x1400);
    assert_int_equal(S.n, n);
}

static void test_far_transfer_mode_change(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    struct ptd_tracer_insn in = { .ip = 0x1000,
                                  .length = 2,
                                  .iclass = PTD_ICLASS_FAR_TRANSFER,
                                  .next_ip = 0x600000,
                                  .mode = PTD_EXEC_MODE_64,
                                  .next_mode = PTD_EXEC_MODE_32 };
    assert_int_equal(ptd_tracer_insn(&T, &in, 0), PTD_TRACER_TRACED | PTD_TRACER_MODE);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) MODE32 TIP(600000)");
    /* same mode: no MODE.Exec */
    in.ip = 0x600000;
    in.next_ip = 0x600100;
    in.mode = in.next_mode = PTD_EXEC_MODE_32;
    assert_int_equal(ptd_tracer_insn(&T, &in, 0), PTD_TRACER_TRACED);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) MODE32 TIP(600000) TIP(600100)");
}

static void test_far_transfer_out_of_range(void **state)
{
    (void)state;
    /* leaving the ranges by a far transfer into 32-bit code: TIP.PGD alone
     * (MODE.Exec goes with TIP/TIP.PGE); the next TIP.PGE tells the mode */
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    struct ptd_tracer_insn in = { .ip = 0x1000,
                                  .length = 2,
                                  .iclass = PTD_ICLASS_FAR_TRANSFER,
                                  .next_ip = 0x9000,
                                  .mode = PTD_EXEC_MODE_64,
                                  .next_mode = PTD_EXEC_MODE_32 };
    assert_int_equal(ptd_tracer_insn(&T, &in, 0), PTD_TRACER_TRACED | PTD_TRACER_LEFT);
    struct ptd_tracer_insn jmp = { .ip = 0x9000,
                                   .length = 5,
                                   .iclass = PTD_ICLASS_DIRECT_JUMP,
                                   .target = 0x1100,
                                   .next_ip = 0x1100,
                                   .mode = PTD_EXEC_MODE_32,
                                   .next_mode = PTD_EXEC_MODE_32 };
    assert_int_equal(ptd_tracer_insn(&T, &jmp, 0), PTD_TRACER_ENTERED | PTD_TRACER_MODE);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) PGD(9000) MODE32 PGE(1100)");
}

/* ---- RET compression ------------------------------------------------------ */

static void test_ret_compression(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 5, PTD_ICLASS_DIRECT_CALL, 0x2000, 0x2000);
    insn(0x2000, 2, PTD_ICLASS_INDIRECT_CALL, 0, 0x3000);
    insn(0x3000, 1, PTD_ICLASS_NEAR_RET, 0, 0x2002); /* compressed */
    insn(0x2002, 1, PTD_ICLASS_NEAR_RET, 0, 0x1005); /* compressed */
    insn(0x1005, 1, PTD_ICLASS_NEAR_RET, 0, 0x4000); /* stack empty: TIP */
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TIP(3000) TNT!! TIP(4000)");

    /* a call with displacement 0 (call next: get IP) pushes nothing */
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 5, PTD_ICLASS_DIRECT_CALL, 0x2000, 0x2000);
    insn(0x2000, 5, PTD_ICLASS_DIRECT_CALL, 0x2005, 0x2005);
    insn(0x2005, 1, PTD_ICLASS_NEAR_RET, 0, 0x2005); /* not compressible */
    insn(0x2005, 1, PTD_ICLASS_NEAR_RET, 0, 0x1005);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TIP(2005) TIP(1005)");

    /* DisRETC: every RET is a TIP */
    setup(1, 0, true, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 5, PTD_ICLASS_DIRECT_CALL, 0x2000, 0x2000);
    insn(0x2000, 1, PTD_ICLASS_NEAR_RET, 0, 0x1005);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TIP(1005)");

    /* a RET to another address than the pushed one is a TIP, and empties
     * the stack: the next matching RET is not compressed either */
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 5, PTD_ICLASS_DIRECT_CALL, 0x2000, 0x2000);
    insn(0x2000, 5, PTD_ICLASS_DIRECT_CALL, 0x3000, 0x3000);
    insn(0x3000, 1, PTD_ICLASS_NEAR_RET, 0, 0x2100);
    insn(0x2100, 1, PTD_ICLASS_NEAR_RET, 0, 0x1005);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TIP(2100) TIP(1005)");
}

static void test_ret_stack_depth_64(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x10000, PTD_EXEC_MODE_64, 0);
    /* 65 nested calls: the oldest return address falls off the stack */
    for (uint64_t i = 0; i < 65; i++)
        insn(0x10000 + i * 0x100, 5, PTD_ICLASS_DIRECT_CALL, 0x10000 + (i + 1) * 0x100,
             0x10000 + (i + 1) * 0x100);
    for (uint64_t i = 65; i-- > 0;)
        insn(0x10000 + (i + 1) * 0x100, 1, PTD_ICLASS_NEAR_RET, 0, 0x10000 + i * 0x100 + 5);
    /* 64 compressed returns (ten full TNT-8 and four bits), then a TIP */
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(10000) TNT!!!!!! TNT!!!!!! TNT!!!!!! "
                                   "TNT!!!!!! TNT!!!!!! TNT!!!!!! TNT!!!!!! TNT!!!!!! TNT!!!!!! "
                                   "TNT!!!!!! TNT!!!! TIP(10005)");
}

/* ---- filtering ---------------------------------------------------------------- */

static void test_call_out_and_back(void **state)
{
    (void)state;
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1002);
    assert_int_equal(insn(0x1002, 5, PTD_ICLASS_DIRECT_CALL, 0x9000, 0x9000),
                     PTD_TRACER_TRACED | PTD_TRACER_LEFT);
    /* outside: nothing, not even for branches */
    assert_int_equal(insn(0x9000, 2, PTD_ICLASS_COND_JUMP, 0x9010, 0x9010), 0);
    assert_int_equal(insn(0x9010, 1, PTD_ICLASS_NEAR_RET, 0, 0x1007), PTD_TRACER_ENTERED);
    insn(0x1007, 1, PTD_ICLASS_NEAR_RET, 0, 0x1500);
    assert_string_equal(words(&S),
                        "PSB MODE64 PSBEND PGE(1000) TNT. PGD(9000) PGE(1007) TIP(1500)");
}

static void test_leave_by_jcc_and_indirect(void **state)
{
    (void)state;
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    /* a taken Jcc out of the range: PGD with the target replaces the bit */
    insn(0x1000, 6, PTD_ICLASS_COND_JUMP, 0x2010, 0x2010);
    /* an indirect jump back in */
    insn(0x2010, 2, PTD_ICLASS_INDIRECT_JUMP, 0, 0x1100);
    /* an indirect call out: PGD with the target, no TIP */
    insn(0x1100, 2, PTD_ICLASS_INDIRECT_CALL, 0, 0x5000);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) PGD(2010) PGE(1100) PGD(5000)");
}

static void test_filter_only_at_taken_branches(void **state)
{
    (void)state;
    /* 36.2.4.3: FilterEn changes where a taken branch lands; falling
     * through a range boundary (plain instruction, not-taken Jcc) does not */
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1ffe, PTD_EXEC_MODE_64, 0);
    assert_int_equal(insn(0x1ffe, 2, PTD_ICLASS_COND_JUMP, 0x1000, 0x2000), PTD_TRACER_TRACED);
    assert_int_equal(insn(0x2000, 3, PTD_ICLASS_OTHER, 0, 0x2003), PTD_TRACER_TRACED);
    assert_int_equal(insn(0x2003, 2, PTD_ICLASS_COND_JUMP, 0x2100, 0x2100),
                     PTD_TRACER_TRACED | PTD_TRACER_LEFT);
    /* and in from outside by fall-through: still off until a branch lands */
    assert_int_equal(insn(0x0ffe, 2, PTD_ICLASS_OTHER, 0, 0x1000), 0);
    assert_int_equal(insn(0x1000, 5, PTD_ICLASS_DIRECT_JUMP, 0x1800, 0x1800), PTD_TRACER_ENTERED);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1ffe) TNT. PGD(2100) PGE(1800)");
}

static void test_tracestop(void **state)
{
    (void)state;
    struct ptd_tracer_config c;
    memset(&c, 0, sizeof c);
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    c.nfilter = 1;
    c.filter_lo[0] = 0x1000;
    c.filter_hi[0] = 0x1fff;
    c.nstop = 1;
    c.stop_lo[0] = 0x8000;
    c.stop_hi[0] = 0x80ff;
    c.sink = sink_put;
    c.sink_ctx = &S;
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1002);
    assert_int_equal(insn(0x1002, 5, PTD_ICLASS_DIRECT_JUMP, 0x8000, 0x8000),
                     PTD_TRACER_TRACED | PTD_TRACER_LEFT | PTD_TRACER_STOPPED);
    /* stopped for good: nothing more, not even a TIP.PGE */
    assert_int_equal(insn(0x8000, 5, PTD_ICLASS_DIRECT_JUMP, 0x1000, 0x1000), PTD_TRACER_STOPPED);
    assert_int_equal(ptd_tracer_stop(&T, 0x1000), PTD_TRACER_STOPPED);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TNT. PGD(8000) STOP");

    /* outside the FilterEn range a landing still stops: TraceStop alone */
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    ptd_tracer_start(&T, 0x5000, PTD_EXEC_MODE_64, 0);
    insn(0x5000, 2, PTD_ICLASS_INDIRECT_JUMP, 0, 0x8010);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND STOP");

    /* tracing starting inside a TraceStop range */
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    assert_int_equal(ptd_tracer_start(&T, 0x8000, PTD_EXEC_MODE_64, 0), PTD_TRACER_STOPPED);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND STOP");
}

/* ---- events, gaps, stop ----------------------------------------------------------- */

static void test_event(void **state)
{
    (void)state;
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1010);
    /* interrupt before 0x1010, handler inside: FUP + TIP (bit first) */
    assert_int_equal(ptd_tracer_event(&T, 0x1010, 0x1800, PTD_EXEC_MODE_64, 0), 0);
    insn(0x1800, 2, PTD_ICLASS_FAR_TRANSFER, 0, 0x1010); /* IRET */
    /* handler outside: FUP + PGD with the handler's IP; back in by IRET: PGE */
    assert_int_equal(ptd_tracer_event(&T, 0x1010, 0x9000, PTD_EXEC_MODE_64, 0), PTD_TRACER_LEFT);
    insn(0x9000, 2, PTD_ICLASS_FAR_TRANSFER, 0, 0x1010);
    /* into 32-bit code */
    assert_int_equal(ptd_tracer_event(&T, 0x1010, 0x1900, PTD_EXEC_MODE_32, 0), PTD_TRACER_MODE);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TNT! FUP(1010) TIP(1800) TIP(1010) "
                                   "FUP(1010) PGD(9000) PGE(1010) FUP(1010) MODE32 TIP(1900)");
}

static void test_gap(void **state)
{
    (void)state;
    setup(0x1000, 0x1fff, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    /* a plain instruction followed by an unexplained IP: it completed, the
     * gap starts after it */
    assert_int_equal(insn(0x1000, 3, PTD_ICLASS_OTHER, 0, 0x1500),
                     PTD_TRACER_TRACED | PTD_TRACER_GAP | PTD_TRACER_LEFT | PTD_TRACER_ENTERED);
    /* a Jcc going neither way: the gap starts before it */
    assert_int_equal(insn(0x1500, 2, PTD_ICLASS_COND_JUMP, 0x1510, 0x1600),
                     PTD_TRACER_GAP | PTD_TRACER_LEFT | PTD_TRACER_ENTERED);
    /* a direct call that lands elsewhere (outside): it pushed, then gap */
    assert_int_equal(insn(0x1600, 5, PTD_ICLASS_DIRECT_CALL, 0x1700, 0x9000),
                     PTD_TRACER_TRACED | PTD_TRACER_GAP | PTD_TRACER_LEFT);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) FUP(1003) PGD(-) PGE(1500) "
                                   "FUP(1500) PGD(-) PGE(1600) FUP(1700) PGD(-)");
}

static void test_stop(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1010);
    assert_int_equal(ptd_tracer_stop(&T, 0x1010), PTD_TRACER_LEFT);
    /* after TraceEn=0 nothing is written */
    assert_int_equal(insn(0x1010, 2, PTD_ICLASS_COND_JUMP, 0x1020, 0x1020), 0);
    assert_string_equal(words(&S), "PSB MODE64 PSBEND PGE(1000) TNT! FUP(1010) PGD(-)");
}

/* ---- PSB period, TSC, full sink ------------------------------------------------------ */

static void test_psb_period(void **state)
{
    (void)state;
    setup(1, 0, false, true, 34);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0x55);
    now = 0x77; /* the PSB+ in the middle carries the time of its insn */
    /* the period runs from PSB to PSB: the start wrote 35 bytes (PSB 16,
     * TSC 8, MODE 2, PSBEND 2, PGE 7; no second TSC of the same time
     * before the PGE), so the next boundary has a PSB+ with a FUP, and
     * the call before it cannot be compressed after it; that PSB+ (35
     * bytes) and a TIP (3) stay... over 34, so one more PSB+ follows */
    insn(0x1000, 5, PTD_ICLASS_DIRECT_CALL, 0x2000, 0x2000);
    insn(0x2000, 1, PTD_ICLASS_NEAR_RET, 0, 0x1005);
    assert_string_equal(words(&S), "PSB TSC(55) MODE64 PSBEND PGE(1000) "
                                   "PSB TSC(77) MODE64 FUP(2000) PSBEND TIP(1005) "
                                   "PSB TSC(77) MODE64 FUP(1005) PSBEND");
    now = 0;
}

/* MTC on a crystal clock of TSC / 2^9, an MTC every 2^1 CTC ticks (1024
 * TSC ticks): TMA after every TSC (CTC and the ticks since its last tick),
 * an MTC for each period that ended since the last call, before the
 * packets of the call and after the TNT bits before it; a long pause is a
 * TSC + TMA; without TSC at most 256 MTCs in a row. */
static void test_mtc(void **state)
{
    (void)state;
    struct ptd_tracer_config c;
    memset(&c, 0, sizeof c);
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    c.nfilter = 1;
    c.filter_lo[0] = 0x1000;
    c.filter_hi[0] = 0x1fff;
    c.tsc_en = true;
    c.mtc_en = true;
    c.mtc_freq = 1;
    c.ctc_shift = 9;
    c.sink = sink_put;
    c.sink_ctx = &S;
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    /* 0x10123: CTC 0x80, 0x123 ticks past it; MTC period 0x40 */
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0x10123);
    now = 0x10300; /* same period: nothing */
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1002);
    now = 0x10c00; /* CTC 0x86: periods 0x41 to 0x43 ended */
    insn(0x1002, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1010);
    now = 0x10c10;
    insn(0x1010, 1, PTD_ICLASS_NEAR_RET, 0, 0x3000);
    assert_string_equal(words(&S), "PSB TSC(10123) TMA(80,123) MODE64 PSBEND PGE(1000) "
                                   "TNT. MTC(41) MTC(42) MTC(43) TNT! PGD(3000)");
    /* a long pause outside: TSC + TMA instead of 9 MTCs or more; the
     * TIP.PGE after it tells no time again */
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    now = 0x10c10 + 9 * 0x400;
    insn(0x3000, 5, PTD_ICLASS_DIRECT_JUMP, 0x1000, 0x1000);
    assert_string_equal(words(&S), "TSC(13010) TMA(98,10) PGE(1000)");
    /* 8 periods: MTCs */
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    now = 0x13010 + 8 * 0x400;
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1002);
    assert_string_equal(words(&S),
                        "MTC(4d) MTC(4e) MTC(4f) MTC(50) MTC(51) MTC(52) MTC(53) MTC(54)");
    /* no TSC: MTCs only, at most 256 of them */
    c.tsc_en = false;
    c.nfilter = 0;
    memset(&S, 0, sizeof S);
    S.cap = sizeof S.buf;
    assert_int_equal(ptd_tracer_init(&T, &c), 0);
    ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0x10123);
    now = 0x10123 + 300 * 0x400;
    insn(0x1000, 2, PTD_ICLASS_COND_JUMP, 0x1010, 0x1002);
    const char *w = words(&S);
    /* periods 0x41 to 0x16c ended: the last 256, 0x6d to 0x16c */
    assert_non_null(strstr(w, "PGE(1000) MTC(6d) MTC(6e)"));
    assert_non_null(strstr(w, "MTC(6b) MTC(6c)")); /* the TNT bit waits */
    size_t mtcs = 0;
    for (const char *p = w; (p = strstr(p, "MTC(")); p++)
        mtcs++;
    assert_int_equal(mtcs, 256);
    /* bad configurations */
    c.mtc_freq = 16;
    assert_int_equal(ptd_tracer_init(&T, &c), -PTD_ERR_INVALID);
    c.mtc_freq = 0;
    c.ctc_shift = 10;
    assert_int_equal(ptd_tracer_init(&T, &c), -PTD_ERR_INVALID);
    now = 0;
}

static void test_sink_full(void **state)
{
    (void)state;
    setup(1, 0, false, false, 0);
    S.cap = 27; /* PSB (16) + MODE (2) + PSBEND (2) + PGE (7: sext48) */
    int r = ptd_tracer_start(&T, 0x1000, PTD_EXEC_MODE_64, 0);
    assert_int_equal(r, PTD_TRACER_ENTERED);
    assert_int_equal(S.n, 27);
    r = insn(0x1000, 2, PTD_ICLASS_INDIRECT_JUMP, 0, 0x123456);
    assert_true(r & PTD_TRACER_STOPPED);
    assert_true(T.full);
    assert_int_equal(S.n, 27);
    /* nothing afterwards */
    unsigned calls = S.calls;
    insn(0x123456, 2, PTD_ICLASS_INDIRECT_JUMP, 0, 0x1000);
    ptd_tracer_stop(&T, 0x1000);
    assert_int_equal(S.calls, calls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_inside_and_outside),
        cmocka_unit_test(test_tnt_accumulates_and_flushes),
        cmocka_unit_test(test_far_transfer_mode_change),
        cmocka_unit_test(test_far_transfer_out_of_range),
        cmocka_unit_test(test_ret_compression),
        cmocka_unit_test(test_ret_stack_depth_64),
        cmocka_unit_test(test_call_out_and_back),
        cmocka_unit_test(test_leave_by_jcc_and_indirect),
        cmocka_unit_test(test_filter_only_at_taken_branches),
        cmocka_unit_test(test_tracestop),
        cmocka_unit_test(test_event),
        cmocka_unit_test(test_gap),
        cmocka_unit_test(test_stop),
        cmocka_unit_test(test_psb_period),
        cmocka_unit_test(test_mtc),
        cmocka_unit_test(test_sink_full),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
