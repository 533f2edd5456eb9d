/* Unit tests of decoder/ptd_tail.c (the static tail after a trace's last
 * packet) and of the flow driver's --tail lines (decoder/ptd_fmt_tail.c).
 *
 * Each test lays out a few x86-64 instructions, runs them with a tiny
 * executor (the ground truth: every instruction executed, in order), and
 * has libptd's trace-unit model (decoder/ptd_tracer.h) write the packets a
 * CPU writes for that run. The run then just stops, as a trace does when
 * the buffer fills or the machine hangs: no TIP.PGD, and TNT bits the
 * model still holds are never written. The trace is decoded with the flow
 * driver and --tail; the instructions before and after "[tail]" must be
 * the ground truth's, up to the instruction the test expects the tail to
 * end at, for the reason it expects. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_ild.h"
#include "decoder/ptd_sum.h"
#include "decoder/ptd_tail.h"
#include "decoder/ptd_tracer.h"

/* ---- code: a small assembler over one page ------------------------------ */

#define BASE      0x401000ull
#define CODE_SIZE 0x1000
static uint8_t code[CODE_SIZE];
static uint64_t pc;

static void org(uint64_t at)
{
    pc = at;
}

static void emit(const uint8_t *b, size_t n)
{
    assert_true(pc >= BASE && pc + n <= BASE + CODE_SIZE);
    memcpy(code + (pc - BASE), b, n);
    pc += n;
}

static void rel32(uint8_t op, uint64_t target)
{
    int32_t d = (int32_t)(target - (pc + 5));
    uint8_t b[5] = { op, (uint8_t)d, (uint8_t)(d >> 8), (uint8_t)(d >> 16), (uint8_t)(d >> 24) };
    emit(b, 5);
}

static void nop(void)
{
    emit((const uint8_t *)"\x90", 1);
}
static void pause_(void)
{
    emit((const uint8_t *)"\xf3\x90", 2);
}
static void hlt(void)
{
    emit((const uint8_t *)"\xf4", 1);
}
static void ret(void)
{
    emit((const uint8_t *)"\xc3", 1);
}
static void jmp_rax(void)
{
    emit((const uint8_t *)"\xff\xe0", 2);
}
static void jmp(uint64_t t)
{
    rel32(0xe9, t);
}
static void call(uint64_t t)
{
    rel32(0xe8, t);
}
static void jz(uint64_t t)
{
    int32_t d = (int32_t)(t - (pc + 6));
    uint8_t b[6] = {
        0x0f, 0x84, (uint8_t)d, (uint8_t)(d >> 8), (uint8_t)(d >> 16), (uint8_t)(d >> 24)
    };
    emit(b, 6);
}
/* jmp rel8 to t (EB FE: jmp $) */
static void jmp8(uint64_t t)
{
    uint8_t b[2] = { 0xeb, (uint8_t)(int8_t)(int64_t)(t - (pc + 2)) };
    emit(b, 2);
}

static int rd(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    if (ip < BASE || ip >= BASE + CODE_SIZE)
        return 0;
    size_t n = (size_t)(BASE + CODE_SIZE - ip);
    if (n > size)
        n = size;
    memcpy(buf, code + (ip - BASE), n);
    return (int)n;
}

/* ---- the executor and the trace ----------------------------------------- */

#define MAXT 4096
static uint64_t truth[MAXT];
static size_t cut_at[MAXT]; /* trace bytes once truth[i] completed */
static size_t ntruth;
static uint8_t trace[1 << 16];
static size_t tsize;

static int sink(void *ctx, const uint8_t *b, size_t n)
{
    (void)ctx;
    if (tsize + n > sizeof trace)
        return -PTD_ERR_NOSPC;
    memcpy(trace + tsize, b, n);
    tsize += n;
    return 0;
}

struct script {
    const char *tnt;         /* conditional outcomes, 'T'/'N', in order */
    const uint64_t *targets; /* indirect branch targets, in order */
    size_t ntargets;
    uint64_t caller; /* return address below the first frame (0: none) */
    bool dis_retc;
    uint64_t filter_lo, filter_hi; /* FilterEn range (0, 0: everything) */
};

/* Runs from start for at most steps instructions (and stops before an
 * outcome the script does not have); every instruction run is truth. */
static void run(uint64_t start, size_t steps, const struct script *s)
{
    struct ptd_tracer t;
    struct ptd_tracer_config c;
    uint64_t stack[64];
    int sp = 0;
    size_t ti = 0, ii = 0;

    memset(&c, 0, sizeof c);
    c.dis_retc = s->dis_retc;
    c.sink = sink;
    if (s->filter_lo || s->filter_hi) {
        c.nfilter = 1;
        c.filter_lo[0] = s->filter_lo;
        c.filter_hi[0] = s->filter_hi;
    }
    if (s->caller)
        stack[sp++] = s->caller;
    tsize = 0;
    ntruth = 0;
    assert_int_equal(ptd_tracer_init(&t, &c), 0);
    assert_true(ptd_tracer_start(&t, start, PTD_EXEC_MODE_64, 0) >= 0);
    uint64_t ip = start;
    for (size_t k = 0; k < steps && ntruth < MAXT; k++) {
        struct ptd_insn in;
        uint8_t buf[16];
        int n = rd(NULL, ip, buf, sizeof buf);
        if (n <= 0 || ptd_ild_decode_at(&in, buf, (size_t)n, PTD_EXEC_MODE_64, ip) < 0)
            break;
        truth[ntruth++] = ip;
        uint64_t next = ip + in.length, to;
        switch (in.iclass) {
        case PTD_ICLASS_OTHER: to = next; break;
        case PTD_ICLASS_COND_JUMP:
            if (!s->tnt || !s->tnt[ti])
                return;
            to = s->tnt[ti++] == 'T' ? in.target : next;
            break;
        case PTD_ICLASS_DIRECT_JUMP: to = in.target; break;
        case PTD_ICLASS_DIRECT_CALL:
            stack[sp++] = next;
            to = in.target;
            break;
        case PTD_ICLASS_NEAR_RET:
            if (!sp)
                return;
            to = stack[--sp];
            break;
        case PTD_ICLASS_INDIRECT_CALL:
        case PTD_ICLASS_INDIRECT_JUMP:
            if (ii == s->ntargets)
                return;
            if (in.iclass == PTD_ICLASS_INDIRECT_CALL)
                stack[sp++] = next;
            to = s->targets[ii++];
            break;
        default: return;
        }
        assert_true(sp < 64);
        struct ptd_tracer_insn ti_;
        ti_.ip = ip;
        ti_.target = in.target;
        ti_.next_ip = to;
        ti_.length = in.length;
        ti_.iclass = in.iclass;
        ti_.mode = ti_.next_mode = PTD_EXEC_MODE_64;
        assert_true(ptd_tracer_insn(&t, &ti_, 0) >= 0);
        cut_at[ntruth - 1] = tsize;
        ip = to;
    }
}

/* ---- decoding ----------------------------------------------------------- */

#define MAXL 4096
static char lines[MAXL][PTD_FMT_FLOW_LINE_MAX];
static size_t nlines;
static struct ptd_flow_lines L;
static struct ptd_flow F;

static void decode(uint32_t flags, uint32_t tail_max, uint64_t flo, uint64_t fhi)
{
    struct ptd_flow_config cfg;
    enum ptd_flow_line_kind kind;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace = trace;
    cfg.size = tsize;
    cfg.read = rd;
    cfg.flags = PTD_FLOW_F_RAW;
    if (flo || fhi) {
        cfg.nfilter = 1;
        cfg.filter_lo[0] = flo;
        cfg.filter_hi[0] = fhi;
    }
    assert_int_equal(ptd_flow_init(&F, &cfg), 0);
    ptd_flow_lines_init(&L, &F, flags);
    L.tail_max = tail_max;
    nlines = 0;
    int n;
    while ((n = ptd_flow_lines_next(&L, lines[nlines], PTD_FMT_FLOW_LINE_MAX, &kind)) > 0) {
        assert_int_equal((size_t)n, strlen(lines[nlines]));
        assert_true(++nlines < MAXL);
    }
    assert_int_equal(n, 0);
}

static bool is_ip_line(const char *l)
{
    return l[0] != '[';
}

/* The IP of an instruction line (after the offset, with --offset). */
static uint64_t line_ip(const char *l)
{
    const char *sp = strrchr(l, ' ');
    return strtoull(sp ? sp + 1 : l, NULL, 16);
}

/* Checks the decode: the instruction lines are truth[0..], the tail's
 * come after a "[tail]" line and go on to truth[want_last] (inclusive), and
 * nothing but an optional "[spin: ...]" follows. Returns the line index of
 * "[tail]" (nlines when there is none). */
/* TAIL_DEBUG=1: the lines of each decode checked, on stderr */
static void dump_lines(void)
{
    if (getenv("TAIL_DEBUG"))
        for (size_t i = 0; i < nlines; i++)
            fprintf(stderr, "  | %s\n", lines[i]);
}

static size_t check_prefix(size_t want_last, int want_tail)
{
    dump_lines();
    size_t ti = 0, tail_at = nlines;
    for (size_t i = 0; i < nlines; i++) {
        size_t n = strlen(lines[i]);
        if (n >= 5 && !strcmp(lines[i] + n - 5, "tail]")) {
            assert_int_equal(tail_at, nlines);
            tail_at = i;
            continue;
        }
        if (!is_ip_line(lines[i]))
            continue;
        uint64_t ip = line_ip(lines[i]);
        if (ti >= ntruth || ip != truth[ti])
            fail_msg("line %zu: %s, executed %llx (instruction %zu)", i, lines[i],
                     ti < ntruth ? (unsigned long long)truth[ti] : 0ull, ti);
        ti++;
    }
    assert_int_equal(tail_at != nlines, want_tail);
    if (want_tail)
        assert_int_equal(ti, want_last + 1);
    return tail_at;
}

/* The decode without --tail prints exactly the lines before "[tail]"
 * (and the same instruction count). */
static void check_without_tail(uint32_t flags, size_t tail_at)
{
    static char with[MAXL][PTD_FMT_FLOW_LINE_MAX];
    size_t nwith = nlines;
    uint64_t insns = L.insns;
    memcpy(with, lines, sizeof lines);
    decode(flags & ~(uint32_t)PTD_FMT_FLOW_TAIL, 0, 0, 0);
    assert_int_equal(nlines, tail_at);
    for (size_t i = 0; i < nlines; i++)
        assert_string_equal(lines[i], with[i]);
    assert_int_equal(L.insns, insns);
    assert_true(nwith >= nlines);
}

static size_t find_truth(uint64_t ip)
{
    for (size_t i = 0; i < ntruth; i++)
        if (truth[i] == ip)
            return i;
    fail_msg("%llx never ran", (unsigned long long)ip);
    return 0;
}

/* ---- spins -------------------------------------------------------------- */

/* main: nop; jmp L; L: jmp $  -- no packet after the PSB+ */
static void test_spin_jmp_self(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    nop();
    jmp(BASE + 0x100);
    org(BASE + 0x100);
    jmp8(BASE + 0x100);
    run(BASE, 50, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    size_t at = check_prefix(2, 1);
    assert_int_equal(nlines, at + 5);
    assert_string_equal(lines[nlines - 1], "[spin: 0000000000401100-0000000000401101]");
    assert_int_equal(L.tail.end, PTD_TAIL_END_SPIN);
    assert_int_equal(L.tail_insns, 3);
    check_without_tail(PTD_FMT_FLOW_TAIL, at);
}

/* main: jz X (taken, in the trace); jmp rax (TIP: flushes the bit) -> f:
 * call g; g: 1: pause; jmp 1b */
static void test_spin_pause_jmp(void **state)
{
    (void)state;
    static const uint64_t tg[] = { BASE + 0x200 };
    static const struct script s = { "T", tg, 1, 0, false, 0, 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    jz(BASE + 0x10);
    org(BASE + 0x10);
    jmp_rax();
    org(BASE + 0x200);
    nop();
    call(BASE + 0x300);
    org(BASE + 0x300);
    pause_();
    jmp8(BASE + 0x300);
    run(BASE, 60, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    /* the flow: jz, jmp rax; the tail: nop, call, pause, jmp */
    size_t at = check_prefix(5, 1);
    assert_int_equal(L.insns, 2);
    assert_string_equal(lines[nlines - 1], "[spin: 0000000000401300-0000000000401303]");
    assert_int_equal(L.tail_insns, 4);
    check_without_tail(PTD_FMT_FLOW_TAIL, at);
}

/* L: call f; jmp L; f: nop; ret -- a loop through a call and a return (the
 * state repeats at L: same depth, no return below it) */
static void test_spin_through_call(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x80);
    jmp(BASE);
    org(BASE + 0x80);
    nop();
    ret();
    run(BASE, 40, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    /* the compressed returns' TNT bits take the flow round the loop a few
     * times; the tail goes on from the last one, once round */
    check_prefix(L.insns + 3, 1);
    assert_string_equal(lines[nlines - 1], "[spin: 0000000000401000-0000000000401081]");
    assert_int_equal(L.tail_insns, 4);
}

/* A function called twice is no spin: main: call f; call f; jz; f: nop; ret */
static void test_no_false_spin(void **state)
{
    (void)state;
    static const struct script s = { "N", NULL, 0, 0, false, 0, 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x80);
    call(BASE + 0x80);
    jz(BASE);
    nop();
    org(BASE + 0x80);
    nop();
    ret();
    run(BASE, 40, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    /* call, nop, ret, call, nop, ret, jz: the jz needs trace */
    check_prefix(6, 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_TRACE);
    assert_int_equal(L.tail.last_ip, BASE + 10);
    assert_true(is_ip_line(lines[nlines - 1]));
}

/* ---- returns ------------------------------------------------------------ */

/* main: call g; g: jmp rax (TIP) -> h: nop; ret; then main's nop; jz.
 * h's return comes from the flow's call stack (main's call). */
static void test_ret_from_flow_stack(void **state)
{
    (void)state;
    static const uint64_t tg[] = { BASE + 0x300 };
    static const struct script s = { "", tg, 1, BASE + 0x800, false, 0, 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x200);
    nop();
    jz(BASE);
    org(BASE + 0x200);
    jmp_rax();
    org(BASE + 0x300);
    nop();
    ret();
    run(BASE, 40, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    size_t at = check_prefix(find_truth(BASE + 6), 1);
    assert_int_equal(L.insns, 2);
    assert_int_equal(L.tail.end, PTD_TAIL_END_TRACE);
    check_without_tail(PTD_FMT_FLOW_TAIL, at);
}

/* Without RET compression a return writes a TIP and the flow's stack keeps
 * the call's entry: the tail must not take it for a later return.
 * main: call g; g: ret (TIP); main+5: jmp rax -> w: nop; ret (returns to
 * main's caller, not to main+5). */
static void test_ret_stale_entry(void **state)
{
    (void)state;
    static const uint64_t tg[] = { BASE + 0x300 };
    static const struct script s = { "", tg, 1, BASE + 0x800, true, 0, 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x200);
    jmp_rax();
    org(BASE + 0x200);
    ret();
    org(BASE + 0x300);
    nop();
    ret();
    org(BASE + 0x800);
    nop();
    run(BASE, 40, &s);
    tsize = cut_at[find_truth(BASE + 0x300)]; /* before the last ret's TIP */
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    /* the tail: nop, ret (needs trace: the stack is not owed) */
    check_prefix(find_truth(BASE + 0x301), 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_TRACE);
    assert_int_equal(L.tail.last_ip, BASE + 0x301);
    assert_int_equal(F.ret_count, 1); /* the stale entry is there */
    assert_int_equal(F.ret_known, 0);
}

/* A flow that stopped where a query for its last instruction found no
 * packet (ptd_tail_start's -PTD_ERR_EOS case), set up by hand: the flow at
 * ret_ip (a RET, say) with main's call owed on its stack. */
static void flow_at_ret(uint64_t ret_ip)
{
    memset(&F, 0, sizeof F);
    F.read = rd;
    F.enabled = 1;
    F.mode = PTD_EXEC_MODE_64;
    F.ip = ret_ip;
    F.retstack[0] = BASE + 5;
    F.ret_top = 1;
    F.ret_count = 1;
    F.ret_known = 1;
}

static void test_eos_at_ret(void **state)
{
    (void)state;
    struct ptd_tail t;
    struct ptd_flow_insn in;
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x300);
    nop();
    jz(BASE);
    org(BASE + 0x300);
    ret();
    flow_at_ret(BASE + 0x300);
    assert_true(ptd_tail_start(&t, &F, -PTD_ERR_EOS, 0));
    assert_true(ptd_tail_next(&t, &in));
    assert_int_equal(in.ip, BASE + 5);
    assert_true(ptd_tail_next(&t, &in));
    assert_int_equal(in.ip, BASE + 6);
    assert_int_equal(in.iclass, PTD_ICLASS_COND_JUMP);
    assert_false(ptd_tail_next(&t, &in));
    assert_int_equal(t.end, PTD_TAIL_END_TRACE);
    /* nothing owed: the RET needs trace; a conditional branch always does */
    F.ret_known = 0;
    assert_false(ptd_tail_start(&t, &F, -PTD_ERR_EOS, 0));
    assert_int_equal(t.end, PTD_TAIL_END_TRACE);
    assert_int_equal(t.last_ip, BASE + 0x300);
    flow_at_ret(BASE + 6);
    assert_false(ptd_tail_start(&t, &F, -PTD_ERR_EOS, 0));
    assert_int_equal(t.end, PTD_TAIL_END_TRACE);
    assert_int_equal(t.last_iclass, PTD_ICLASS_COND_JUMP);
    /* a direct call needs no packet: that error came from elsewhere */
    flow_at_ret(BASE);
    assert_false(ptd_tail_start(&t, &F, -PTD_ERR_EOS, 0));
    assert_int_equal(t.end, PTD_TAIL_END_NONE);
    /* the query that failed was an event's (the flow holds an instruction
     * for an event to bind to): where it binds is unknown */
    flow_at_ret(BASE + 0x300);
    F.process_insn = 1;
    assert_false(ptd_tail_start(&t, &F, -PTD_ERR_EOS, 0));
    assert_int_equal(t.end, PTD_TAIL_END_NONE);
    /* tracing off, another error, a status that is not the end */
    flow_at_ret(BASE + 0x300);
    F.enabled = 0;
    assert_false(ptd_tail_start(&t, &F, PTD_ST_EOS, 0));
    F.enabled = 1;
    assert_false(ptd_tail_start(&t, &F, -PTD_ERR_BAD_QUERY, 0));
    assert_false(ptd_tail_start(&t, &F, 0, 0));
    assert_int_equal(t.end, PTD_TAIL_END_NONE);
}

/* ---- other ends --------------------------------------------------------- */

static void test_halt(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    nop();
    hlt();
    nop();
    run(BASE, 2, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    check_prefix(1, 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_HALT);
}

/* A direct call out of the FilterEn range: the CPU would write TIP.PGD. */
static void test_filter(void **state)
{
    (void)state;
    static const struct script s = { 0, NULL, 0, 0, false, BASE, BASE + 0x7ff };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    nop();
    call(BASE + 0x900);
    org(BASE + 0x900);
    nop();
    run(BASE, 2, &s);
    tsize = cut_at[0]; /* before the call's TIP.PGD */
    decode(PTD_FMT_FLOW_TAIL, 0, BASE, BASE + 0x7ff);
    check_prefix(1, 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_FILTER);
}

static void test_bound(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    memset(code, 0x90, sizeof code);
    run(BASE, 300, &s);
    decode(PTD_FMT_FLOW_TAIL, 10, 0, 0);
    check_prefix(9, 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_BOUND);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    check_prefix(PTD_TAIL_MAX_DEFAULT - 1, 1);
}

/* Straight into memory the reader does not have. */
static void test_nocode(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    memset(code, 0x90, sizeof code);
    run(BASE + CODE_SIZE - 3, 3, &s);
    decode(PTD_FMT_FLOW_TAIL, 0, 0, 0);
    check_prefix(2, 1);
    assert_int_equal(L.tail.end, PTD_TAIL_END_NOCODE);
}

/* ---- the driver's options ----------------------------------------------- */

/* --offset puts the trace's end in the tail's event lines; --quiet prints
 * nothing but still counts; --time keeps the last time. */
static void test_driver_flags(void **state)
{
    (void)state;
    static const struct script s = { 0 };
    char want[64];
    memset(code, 0xcc, sizeof code);
    org(BASE);
    nop();
    jmp8(BASE + 1);
    run(BASE, 10, &s);
    decode(PTD_FMT_FLOW_TAIL | PTD_FMT_FLOW_OFFSET, 0, 0, 0);
    snprintf(want, sizeof want, "[%016llx  tail]", (unsigned long long)tsize);
    size_t at = check_prefix(1, 1);
    assert_string_equal(lines[at], want);
    snprintf(want, sizeof want, "%016llx  0000000000401000", (unsigned long long)tsize);
    assert_string_equal(lines[at + 1], want);
    decode(PTD_FMT_FLOW_TAIL | PTD_FMT_FLOW_QUIET, 0, 0, 0);
    assert_int_equal(nlines, 0);
    assert_int_equal(L.tail_insns, 2);
    assert_int_equal(L.tail.end, PTD_TAIL_END_SPIN);
}

/* The block API gives the tail the same start (the flow stops at the same
 * place): the tail read straight from ptd_tail after ptd_flow_next_block. */
static void test_block_api(void **state)
{
    (void)state;
    static const uint64_t tg[] = { BASE + 0x300 };
    static const struct script s = { "", tg, 1, BASE + 0x800, false, 0, 0 };
    memset(code, 0xcc, sizeof code);
    org(BASE);
    call(BASE + 0x200);
    nop();
    jz(BASE);
    org(BASE + 0x200);
    jmp_rax();
    org(BASE + 0x300);
    nop();
    ret();
    {
        run(BASE, 40, &s);
        struct ptd_flow_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.trace = trace;
        cfg.size = tsize;
        cfg.read = rd;
        assert_int_equal(ptd_flow_init(&F, &cfg), 0);
        int st = ptd_flow_sync_forward(&F);
        struct ptd_flow_block b = { 0 };
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT)) {
                struct ptd_event ev;
                st = ptd_flow_event(&F, &ev);
            }
            if (st < 0 || (st & PTD_ST_EOS))
                break;
            st = ptd_flow_next_block(&F, &b);
            if (st < 0)
                break;
        }
        struct ptd_tail t;
        struct ptd_flow_insn in;
        assert_true(ptd_tail_start(&t, &F, st, 0));
        size_t k = find_truth(BASE + 0x300);
        while (ptd_tail_next(&t, &in))
            assert_int_equal(in.ip, truth[k++]);
        assert_int_equal(truth[k - 1], BASE + 6);
        assert_int_equal(t.end, PTD_TAIL_END_TRACE);
    }
}

/* ---- the summary's last transitions (PTD_SUM_F_TAIL) -------------------- */

static char sum_text[1 << 16];
static size_t sum_len;

static void sum_line(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    assert_true(sum_len + len + 1 < sizeof sum_text);
    memcpy(sum_text + sum_len, line, len);
    sum_len += len;
    sum_text[sum_len++] = '\n';
    sum_text[sum_len] = '\0';
}

/* a name hook that knows one function: the spin at BASE+0x300 */
static size_t sym(void *ctx, uint64_t ip, char *buf, size_t cap)
{
    (void)ctx;
    if (ip < BASE + 0x300 || ip >= BASE + 0x304)
        return 0; /* no symbol: module+offset */
    return (size_t)snprintf(buf, cap, "spinner+0x%llx", (unsigned long long)(ip - (BASE + 0x300)));
}

static void summarize(unsigned flags, bool symbols)
{
    static uint8_t arena[1 << 16];
    static struct ptd_sum sum;
    static const struct ptd_sum_module mods[] = { { BASE, CODE_SIZE, "mod" } };
    struct ptd_flow_config cfg;
    struct ptd_sum_config sc;
    memset(&cfg, 0, sizeof cfg);
    cfg.trace = trace;
    cfg.size = tsize;
    cfg.read = rd;
    assert_int_equal(ptd_flow_init(&F, &cfg), 0);
    memset(&sc, 0, sizeof sc);
    sc.modules = mods;
    sc.nmodules = 1;
    sc.arena = arena;
    sc.arena_size = sizeof arena;
    sc.line = sum_line;
    sc.flags = flags;
    if (symbols)
        sc.name = sym;
    sum_len = 0;
    sum_text[0] = '\0';
    const struct ptd_sum_stats *st = ptd_sum_run(&sum, &sc, &F);
    assert_true(st->text_bytes <= ptd_sum_text_bound(&sc));
    if (getenv("TAIL_DEBUG"))
        fputs(sum_text, stderr);
}

/* The pause; jmp spin of test_spin_pause_jmp, summarized: the tail's
 * branches close the last transitions and the last line says where it
 * spins, with the function's name when there are symbols. */
static void test_summary_spin(void **state)
{
    test_spin_pause_jmp(state);
    summarize(PTD_SUM_F_TAIL, true);
    assert_non_null(strstr(sum_text, "\nijmp     mod+0x10 -> mod+0x200\n"));
    assert_non_null(strstr(sum_text, "\ncall     mod+0x201 -> spinner+0x0 (tail)\n"));
    assert_non_null(strstr(sum_text, "\njmp      spinner+0x2 -> spinner+0x0 (tail)\n"
                                     "spins at spinner+0x0 (loop spinner+0x0..spinner+0x3; "
                                     "4 insns after the last packet)\n== end\n"));
    summarize(PTD_SUM_F_TAIL, false);
    assert_non_null(strstr(sum_text, "\njmp      mod+0x302 -> mod+0x300 (tail)\n"
                                     "spins at mod+0x300 (loop mod+0x300..mod+0x303; "
                                     "4 insns after the last packet)\n== end\n"));
    /* without the flag: the trace's own transitions only, ending at ? */
    summarize(0, false);
    assert_null(strstr(sum_text, "(tail)"));
    assert_null(strstr(sum_text, "spins"));
    assert_non_null(strstr(sum_text, "\nijmp     mod+0x10 -> ?\n== end\n"));
}

/* A tail that ends where the trace is needed again. */
static void test_summary_needs_trace(void **state)
{
    test_no_false_spin(state);
    summarize(PTD_SUM_F_TAIL, false);
    assert_non_null(strstr(sum_text, "\nret      mod+0x81 -> mod+0x5 (tail)\n"));
    assert_non_null(strstr(
        sum_text, "\njcc      mod+0xa -> ? (tail)\n"
                  "tail ends at mod+0xa: jcc needs trace (7 insns after the last packet)\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spin_jmp_self),
        cmocka_unit_test(test_spin_pause_jmp),
        cmocka_unit_test(test_spin_through_call),
        cmocka_unit_test(test_no_false_spin),
        cmocka_unit_test(test_ret_from_flow_stack),
        cmocka_unit_test(test_ret_stale_entry),
        cmocka_unit_test(test_eos_at_ret),
        cmocka_unit_test(test_halt),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_bound),
        cmocka_unit_test(test_nocode),
        cmocka_unit_test(test_driver_flags),
        cmocka_unit_test(test_block_api),
        cmocka_unit_test(test_summary_spin),
        cmocka_unit_test(test_summary_needs_trace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
