/* flowgen: random x86 programs with ground truth for the flow layers.
 *
 * For each seed it lays out a random program (64-bit functions with
 * conditional branches, direct and indirect jumps and calls, returns,
 * recursion past the 64-entry return stack; an interrupt handler ending in
 * IRETQ; functions outside the traced range; a 32-bit region entered and
 * left by far jumps), executes it itself for a budget of instructions
 * (the ground truth: every instruction executed while tracing was on),
 * and writes the trace the CPU would write with libptd's encoder: TNT
 * bits, TIP for indirect branches and uncompressed returns, taken bits for
 * compressed returns (when enabled, with the CPU's 64-entry stack), FUP+TIP
 * for interrupts, MODE.Exec+TIP for far jumps that switch modes,
 * TIP.PGD/TIP.PGE around calls out of the range, PSB+ every N bytes, and a
 * final FUP+TIP.PGD; every 4th program has TSX transactions (XBEGIN: MODE.TSX
 * + FUP; XEND: MODE.TSX + FUP; aborts now and then and where the flow would
 * leave the traced code: MODE.TSX with TXAbort + FUP + TIP to XBEGIN's
 * handler; MODE.TSX in PSB+), the speculative flag of every instruction
 * checked against the ground truth, half of them decoded as a Broadwell
 * (errata BDM64, BDM70); seeds 9 mod 10 are APX/FRED programs and seeds
 * 4 mod 10 return from interrupts with UIRET (see "APX, FRED, UIRET"
 * below); every 5th program also writes TSC/TMA in PSB+ and
 * MTC/CYC/TSC between packets (the times themselves follow current
 * libipt's event decoder, which 2.0.5's query decoder does not match at
 * every event: test/flow/flow_current.sh checks them against current
 * libipt's output). Some programs also write what libipt 2.0.5 does not
 * know: Event Trace (CFE.INTR with the vector, and EVD with CR2 for a page
 * fault, before an interrupt's FUP + TIP; CFE.IRET, or CFE.UIRET, before
 * the return's TIP) and TRIG packets whose ICNT counts the instructions
 * from the last IP packet or TNT packet to the instruction the trigger
 * fired at; libipt 2.0.5 then decodes the same trace without those
 * packets. The Skylake programs decode as one of several CPUs of current
 * libipt's errata table: with SKL014, or with it fixed (current libipt's
 * lists: Alder Lake, Sapphire Rapids, family 19), where the TIP.PGDs
 * without IP are errors as without a CPU. Then it decodes the trace with
 * libptd's flow layer and
 * with libipt's instruction decoder and checks: both give the ground
 * truth's instructions, and both give the same events and errors in the
 * same places; the Event Trace and TRIG events come out where the
 * programs took them (current libipt's rules). With --corrupt it also flips bytes of each trace and checks
 * that the flow layer ends (no crash, hang or out-of-range read: run it
 * under ASan), reports errors and resynchronises.
 *
 *   flowgen [--seeds N] [--first S] [--insns N] [--corrupt] [--write DIR] [-v]
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <intel-pt.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_flow.h"
#include "host/flow_image.h"

/* ---- random ------------------------------------------------------------- */
static uint64_t rs;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static unsigned rn(unsigned n)
{
    return (unsigned)(rnd() % n);
}

/* ---- program ------------------------------------------------------------ */
enum kind {
    K_FILL,
    K_JCC,
    K_JMP,
    K_CALL,
    K_ICALL,
    K_IJMP,
    K_RET,
    K_IRET,
    K_FARJMP,
    K_CALLOUT,
    K_XBEGIN,
    K_XEND,
    K_ICALLOUT,
    K_JMPABS
};

struct insn {
    uint64_t ip;
    uint8_t len, kind, mode; /* mode: 1 = 32-bit, 2 = 64-bit */
    uint64_t target;         /* JCC/JMP/CALL/CALLOUT */
    int func;                /* owning function */
};

#define MAXI 20000
#define MAXF 64
static struct insn prog[MAXI];
static int nprog;
struct func {
    int first, count;
    uint64_t entry;
    int outside;
    int mode;
};
static struct func funcs[MAXF];
static int nfuncs, ninside, handler, region32;

#define BASE_A    0x400000ull /* traced 64-bit code */
#define BASE_32   0x600000ull /* traced 32-bit code */
#define BASE_OUT  0x900000ull /* outside the filter */
#define FILTER_LO 0x400000ull
#define FILTER_HI 0x7fffffull

static uint8_t mem_a[0x40000], mem_32[0x10000], mem_out[0x10000];
/* TSX programs: XBEGIN/XEND in the traced 64-bit functions (only with the
 * flag, so other programs and users of this file stay as they were) */
static int tsx;

static uint8_t *memp(uint64_t ip)
{
    if (ip >= BASE_A && ip < BASE_A + sizeof(mem_a))
        return mem_a + (ip - BASE_A);
    if (ip >= BASE_32 && ip < BASE_32 + sizeof(mem_32))
        return mem_32 + (ip - BASE_32);
    if (ip >= BASE_OUT && ip < BASE_OUT + sizeof(mem_out))
        return mem_out + (ip - BASE_OUT);
    return NULL;
}

static int find_insn(uint64_t ip)
{
    int lo = 0, hi = nprog;
    while (lo < hi) {
        int m = (lo + hi) / 2;
        if (prog[m].ip < ip)
            lo = m + 1;
        else
            hi = m;
    }
    return (lo < nprog && prog[lo].ip == ip) ? lo : -1;
}

static const uint8_t fills64[][11] = {
    { 1, 0x90 },
    { 3, 0x48, 0x89, 0xc3 },
    { 5, 0x48, 0x8d, 0x44, 0x24, 0x08 },
    { 5, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
    { 10, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 },
};
static const uint8_t fills32[][11] = {
    { 1, 0x90 },
    { 2, 0x89, 0xc3 },
    { 4, 0x8d, 0x44, 0x24, 0x08 },
    { 5, 0x0f, 0x1f, 0x44, 0x00, 0x00 },
};

/* ---- APX, FRED, UIRET ----------------------------------------------------
 * apx programs (seeds 9 mod 10): REX2 in the traced 64-bit code (fills with
 * REX2, CALL/JMP r/m and RET with REX2, which keep their class), JMPABS
 * (REX2 A1 imm64: its target is in the instruction, but the CPU reports it
 * with a TIP as for an indirect jump), and the interrupt handler returning
 * with FRED's ERETU or ERETS (far returns: TIP). libipt 2.0.5 reads D5 as
 * AAD and ERETU/ERETS as CLAC, so it cannot be the oracle there: those
 * programs are checked against their ground truth only (every executed
 * instruction, in order, no error). uiret programs (seeds 4 mod 10)
 * return from interrupts with UIRET, which libipt 2.0.5 knows as a far
 * return: they keep libipt as the oracle. Every random number these draw
 * is drawn only with the flag set, so the other programs stay as they
 * were. */
static int apx, uiret;
static uint64_t n_rex2, n_jmpabs, n_eret, n_uiret;
static const uint8_t fills64_rex2[][12] = {
    { 4, 0xd5, 0x48, 0x89, 0xc3 },                    /* mov rbx, r16 */
    { 4, 0xd5, 0x19, 0x89, 0xc3 },                    /* mov r27, rax */
    { 4, 0xd5, 0xc8, 0xaf, 0xc0 },                    /* imul r16, rax (map 1) */
    { 4, 0xd5, 0x10, 0xff, 0xc0 },                    /* inc r16d */
    { 11, 0xd5, 0x08, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, /* mov rax, imm64 */
};
#define REX2_JMPABS_LEN 11                                   /* D5 00 A1 imm64 */
static const uint8_t eret_u[4] = { 0xf3, 0x0f, 0x01, 0xca }; /* ERETU */
static const uint8_t eret_s[4] = { 0xf2, 0x0f, 0x01, 0xca }; /* ERETS */
static const uint8_t uiret_insn[4] = { 0xf3, 0x0f, 0x01, 0xec };

/* The encoding of slot in (kind and length chosen), for the apx/uiret
 * programs; 0 when the usual one applies. */
static int apx_encode(struct insn *in, uint8_t *p)
{
    switch (in->kind) {
    case K_IRET:
        if (apx || uiret) {
            memcpy(p, uiret ? uiret_insn : rn(2) ? eret_u : eret_s, 4);
            in->len = 4;
            return 1;
        }
        return 0;
    case K_FILL:
        if (apx && in->mode == 2 && rn(3) == 0) {
            const uint8_t *e = fills64_rex2[rn(5)];
            in->len = e[0];
            memcpy(p, e + 1, e[0]);
            n_rex2++;
            return 1;
        }
        return 0;
    case K_ICALL:
    case K_IJMP:
    case K_RET: /* the REX2 forms */
        if (apx && rn(2)) {
            in->len = in->kind == K_RET ? 3 : 4;
            n_rex2++;
            return 1;
        }
        return 0;
    case K_JMPABS:
        in->len = REX2_JMPABS_LEN;
        n_rex2++;
        return 1;
    }
    return 0;
}

/* Lay out function f's slots at *at: kinds only, targets fixed later. */
static void gen_func(int f, uint64_t *at, int mode, int outside, int is_handler, int n)
{
    funcs[f].first = nprog;
    funcs[f].entry = *at;
    funcs[f].outside = outside;
    funcs[f].mode = mode;
    for (int i = 0; i < n && nprog < MAXI - 2; i++) {
        struct insn *in = &prog[nprog++];
        unsigned r = rn(100);
        in->ip = *at;
        in->mode = (uint8_t)mode;
        in->func = f;
        in->target = 0;
        in->len = 0;
        if (i == n - 1 && f == 0) {
            in->kind = K_JMP; /* main loops forever */
            in->target = funcs[0].entry;
        } else if (i == n - 1) {
            in->kind = is_handler ? K_IRET : (mode == 1 ? K_FARJMP : K_RET);
        } else if (i == 0 && f == 0) {
            in->kind = K_JCC; /* main's loop shows in the trace */
        } else if (r < 40) {
            in->kind = K_FILL;
        } else if (r < 62) {
            in->kind = K_JCC;
        } else if (r < 67) {
            in->kind = K_JMP;
        } else if (outside || mode == 1 || is_handler) {
            in->kind = K_FILL;
        } else if (r < 80) {
            /* direct calls only go to later functions: recursion is by
             * indirect calls, which the trace shows (a cycle of direct
             * calls and jumps would leave no packet to tell its rounds) */
            in->kind = f < ninside - 1 ? K_CALL : K_FILL;
        } else if (r < 84) {
            in->kind = K_ICALL;
        } else if (r < 87) {
            in->kind = K_IJMP;
        } else if (r < 89) {
            /* every other one indirect (CALL RAX): TIP.PGD with the
             * target, and the TIP.PGE at its return address is "resumed"
             * (no extra random number: the other programs stay as they
             * were) */
            in->kind = (nprog & 1) ? K_ICALLOUT : K_CALLOUT;
        } else if (r < 90) {
            in->kind = K_FARJMP;
        } else {
            in->kind = K_FILL;
        }
        if (tsx && in->kind == K_FILL && mode == 2 && !outside && !is_handler) {
            unsigned q = rn(8);
            if (q == 0)
                in->kind = K_XBEGIN;
            else if (q == 1)
                in->kind = K_XEND;
        }
        if (apx && in->kind == K_FILL && mode == 2 && !outside && rn(12) == 0)
            in->kind = K_JMPABS;
        if ((apx || uiret) && apx_encode(in, memp(*at))) {
            *at += in->len;
            continue;
        }
        switch (in->kind) {
        case K_FILL: {
            const uint8_t *e = mode == 2 ? fills64[rn(5)] : fills32[rn(4)];
            in->len = e[0];
            memcpy(memp(*at), e + 1, e[0]);
            break;
        }
        case K_JCC: in->len = rn(2) ? 2 : 6; break;
        case K_JMP: in->len = 5; break;
        case K_CALL:
        case K_CALLOUT: in->len = 5; break;
        case K_ICALL:
        case K_IJMP:
        case K_ICALLOUT: in->len = 2; break;
        case K_RET:
            in->len = 1;
            memp(*at)[0] = 0xc3;
            break;
        case K_IRET:
            in->len = 2;
            memp(*at)[0] = 0x48;
            memp(*at)[1] = 0xcf;
            break;
        case K_FARJMP:
            in->len = 2;
            memp(*at)[0] = 0xff;
            memp(*at)[1] = 0x28;
            break;
        case K_XBEGIN: in->len = 6; break; /* C7 F8 rel32 */
        case K_XEND:                       /* 0F 01 D5 */
            in->len = 3;
            memcpy(memp(*at), "\x0f\x01\xd5", 3);
            break;
        }
        *at += in->len;
    }
    funcs[f].count = nprog - funcs[f].first;
}

static void put32(uint8_t *p, int32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)((uint32_t)v >> (8 * i));
}

static void fix_targets(void)
{
    for (int k = 0; k < nprog; k++) {
        struct insn *in = &prog[k];
        struct func *fn = &funcs[in->func];
        uint8_t *p = memp(in->ip);
        int64_t d;
        switch (in->kind) {
        case K_JCC:
        case K_JMP: {
            /* JCC anywhere in the function; JMP forward only (no branch-free
             * endless loop) */
            int lo = in->kind == K_JMP ? k + 1 : fn->first;
            int hi = fn->first + fn->count - 1;
            int t = lo > hi ? hi : lo + (int)rn((unsigned)(hi - lo + 1));
            if (!in->target)
                in->target = prog[t].ip;
            d = (int64_t)(in->target - (in->ip + in->len));
            if (in->kind == K_JCC && in->len == 2 && (d < -128 || d > 127)) {
                in->len = 6;
                /* keep length: re-layout is not possible; use a near target */
                in->len = 2;
                t = k + 1;
                in->target = prog[t].ip;
                d = (int64_t)(in->target - (in->ip + in->len));
            }
            if (in->kind == K_JCC && in->len == 2) {
                p[0] = (uint8_t)(0x70 + rn(16));
                p[1] = (uint8_t)(int8_t)d;
            } else if (in->kind == K_JCC) {
                p[0] = 0x0f;
                p[1] = (uint8_t)(0x80 + rn(16));
                put32(p + 2, (int32_t)d);
            } else {
                p[0] = 0xe9;
                put32(p + 1, (int32_t)d);
            }
            break;
        }
        case K_CALL: {
            int f = in->func + 1 + (int)rn((unsigned)(ninside - in->func - 1));
            in->target = funcs[f].entry;
            p[0] = 0xe8;
            put32(p + 1, (int32_t)(in->target - (in->ip + 5)));
            break;
        }
        case K_CALLOUT:
        case K_ICALLOUT: {
            int f;
            do
                f = (int)rn((unsigned)nfuncs);
            while (!funcs[f].outside);
            in->target = funcs[f].entry;
            if (in->kind == K_ICALLOUT) {
                p[0] = 0xff;
                p[1] = 0xd0;
                break;
            }
            p[0] = 0xe8;
            put32(p + 1, (int32_t)(in->target - (in->ip + 5)));
            break;
        }
        case K_ICALL:
        case K_IJMP:
            if (in->len == 4) { /* REX2 (apx) */
                *p++ = 0xd5;
                *p++ = 0x00;
            }
            p[0] = 0xff;
            p[1] = in->kind == K_ICALL ? 0xd0 : 0xe0;
            break;
        case K_RET:
            if (in->len == 3) /* REX2 (apx) */
                memcpy(p, "\xd5\x00\xc3", 3);
            break;
        case K_JMPABS: {
            /* forward, as JMP (its TIP would show the rounds of a loop,
               but a loop of JMPABS alone would not end) */
            int lo = k + 1, hi = fn->first + fn->count - 1;
            uint64_t t = prog[lo > hi ? hi : lo + (int)rn((unsigned)(hi - lo + 1))].ip;
            in->target = t;
            p[0] = 0xd5;
            p[1] = 0x00;
            p[2] = 0xa1;
            for (int i = 0; i < 8; i++)
                p[3 + i] = (uint8_t)(t >> (8 * i));
            break;
        }
        case K_XBEGIN: {
            /* the abort handler: any instruction of the same function */
            int t = fn->first + (int)rn((unsigned)fn->count);
            in->target = prog[t].ip;
            p[0] = 0xc7;
            p[1] = 0xf8;
            put32(p + 2, (int32_t)(in->target - (in->ip + 6)));
            break;
        }
        }
    }
}

static void gen_program(void)
{
    uint64_t a = BASE_A, b = BASE_32, o = BASE_OUT;
    nprog = 0;
    memset(mem_a, 0xcc, sizeof(mem_a));
    memset(mem_32, 0xcc, sizeof(mem_32));
    memset(mem_out, 0xcc, sizeof(mem_out));
    nfuncs = 4 + (int)rn(20);
    ninside = nfuncs;
    handler = nfuncs;
    region32 = nfuncs + 1;
    for (int f = 0; f < nfuncs; f++) {
        gen_func(f, &a, 2, 0, 0, 4 + (int)rn(30));
        a += rn(16);
    }
    gen_func(handler, &a, 2, 0, 1, 3 + (int)rn(10));
    gen_func(region32, &b, 1, 0, 0, 3 + (int)rn(12));
    for (int f = region32 + 1; f < region32 + 4; f++) {
        gen_func(f, &o, 2, 1, 0, 3 + (int)rn(10));
        o += rn(16);
    }
    nfuncs = region32 + 4;
    fix_targets();
}

/* ---- trace writer (the CPU's side) -------------------------------------- */
static uint64_t n_comp, n_far, n_irq, n_out, n_psb, n_txbegin, n_txcommit, n_txabort, n_resumed;
static uint64_t n_trig, n_cfe, n_evd;
static int et;   /* Event Trace: CFE/EVD at interrupts and IRET */
static int trig; /* TRIG packets with ICNT */
/* The CPU the Skylake programs decode as (current libipt's table): with
 * SKL014, or with it fixed. */
static const struct {
    unsigned family, model;
    int skl014;
} skl_cpus[] = {
    { 6, 0x4e, 1 }, { 6, 0x55, 1 }, { 6, 0x7e, 1 }, { 6, 0x97, 0 }, { 6, 0x8f, 0 }, { 19, 0x01, 0 },
};
static unsigned skl_cpu;
/* The events of Event Trace and TRIG the program took, in order: where
 * (instructions executed before it is reported) and what. */
struct newev {
    uint8_t type;
    uint64_t pos, w;
};
static struct newev *newevs;
static size_t nnewevs, newevs_cap;
static void newev_add(uint8_t type, uint64_t pos, uint64_t w)
{
    if (nnewevs == newevs_cap) {
        newevs_cap = newevs_cap ? newevs_cap * 2 : 256;
        newevs = realloc(newevs, newevs_cap * sizeof(*newevs));
    }
    newevs[nnewevs].type = type;
    newevs[nnewevs].pos = pos;
    newevs[nnewevs].w = w;
    nnewevs++;
}
/* an item word for the new events: TRIG's TRBV; an interrupt's vector and
 * CR2 */
static uint64_t newev_word(uint8_t type, unsigned a, uint64_t cr2)
{
    return type == PTD_EV_TRIG ? a : (uint64_t)a | cr2 << 8;
}
static int bdw;    /* simulate a Broadwell (errata BDM64, BDM70) */
static int skl014; /* simulate a Skylake with erratum SKL014 */
static int timing; /* write TSC/TMA/MTC/CYC and compare the flows' times */
static uint64_t vclock;
static struct ptd_time_config time_cfg = { 3, 0, 2, 168, 0, 0 };
static int max_depth;
struct writer {
    struct ptd_encoder e;
    struct ptd_encoder plain; /* the same without CFE/EVD/TRIG (et, trig) */
    int has_plain;
    /* instructions since TRIG's anchor (the last IP packet, or the branch
     * that took the last bit of a TNT packet) and since the last TNT bit */
    uint32_t cnt_anchor, cnt_bit;
    uint8_t tnt; /* bits, oldest first in the high positions */
    int ntnt;
    uint64_t last_ip;
    int have_last;
    uint64_t since_psb;
    int retcomp, psb_period;
    uint64_t stack[64];
    int sp, cnt; /* model of the CPU's return-compression stack */
    int in_tx;   /* in a TSX transaction (MODE.TSX in PSB+) */
};

static void w_pkt(struct writer *w, uint8_t kind, uint64_t payload, uint8_t a, uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, 0, flags);
    uint64_t before = ptd_enc_offset(&w->e);
    if (ptd_enc_next(&w->e, &p) < 0 || (w->has_plain && ptd_enc_next(&w->plain, &p) < 0)) {
        fprintf(stderr, "flowgen: trace buffer full\n");
        exit(2);
    }
    w->since_psb += ptd_enc_offset(&w->e) - before;
}

/* A packet libipt 2.0.5 does not know: in the full trace only. */
static void w_new(struct writer *w, uint8_t kind, uint64_t payload, uint8_t a, uint32_t aux,
                  uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, aux, flags);
    uint64_t before = ptd_enc_offset(&w->e);
    if (ptd_enc_next(&w->e, &p) < 0) {
        fprintf(stderr, "flowgen: trace buffer full\n");
        exit(2);
    }
    w->since_psb += ptd_enc_offset(&w->e) - before;
}

static void w_flush(struct writer *w)
{
    if (w->ntnt) {
        w_pkt(w, PTD_PKT_TNT8, w->tnt, (uint8_t)w->ntnt, 0);
        w->tnt = 0;
        w->ntnt = 0;
        /* the packet's last bit is TRIG's anchor now */
        w->cnt_anchor = w->cnt_bit;
    }
}

static void w_bit(struct writer *w, int taken)
{
    w->cnt_bit = 0;
    w->tnt = (uint8_t)((w->tnt << 1) | (taken ? 1 : 0));
    if (++w->ntnt == 6)
        w_flush(w);
}

static void w_ip(struct writer *w, uint8_t kind, uint64_t ip, int suppress)
{
    uint64_t payload = 0;
    unsigned ipc = 0;
    if (!suppress) {
        ipc = ptd_enc_ip_compress(w->last_ip, w->have_last, ip, &payload);
        w->last_ip = ip;
        w->have_last = 1;
    }
    w_pkt(w, kind, payload, (uint8_t)ipc, 0);
    w->cnt_anchor = 0;
}

static void w_mode(struct writer *w, int mode)
{
    w_pkt(w, PTD_PKT_MODE_EXEC, 0, 0, mode == 2 ? PTD_PKTF_CSL : PTD_PKTF_CSD);
}

static void w_psb(struct writer *w, int mode, int enabled, uint64_t ip)
{
    w_flush(w);
    w_pkt(w, PTD_PKT_PSB, 0, 0, 0);
    w->have_last = 0;
    w_mode(w, mode);
    if (tsx)
        w_pkt(w, PTD_PKT_MODE_TSX, 0, 0, w->in_tx ? PTD_PKTF_INTX : 0);
    if (timing) {
        w_pkt(w, PTD_PKT_TSC, vclock & 0xffffffffffffffull, 0, 0);
        {
            struct ptd_pkt p =
                ptd_pkt_make(PTD_PKT_TMA, (vclock / 84) & 0xffff, 0, (uint32_t)(vclock % 84), 0);
            if (ptd_enc_next(&w->e, &p) < 0)
                exit(2);
        }
    }
    if (enabled)
        w_ip(w, PTD_PKT_FUP, ip, 0);
    w_pkt(w, PTD_PKT_PSBEND, 0, 0, 0);
    w->cnt_anchor = 0;
    w->since_psb = 0;
    n_psb++;
}

/* ---- execution (ground truth) ------------------------------------------- */
/* Every instruction about to execute, in order (mode 1 = 32-bit, 2 =
 * 64-bit; how = 0), an interrupt taken before the instruction at ip (how =
 * 2; the handler's first instruction follows), and the IP where execution
 * ends (how = 1): test/tracer's soft-unit check single-steps the software
 * trace unit with it. */
static void (*exec_hook)(uint64_t ip, int mode, int how);

struct run {
    uint64_t *truth;
    size_t ntruth;
    uint8_t *trace;
    size_t tsize;
    uint8_t *plain; /* without CFE/EVD/TRIG: trace itself when none */
    size_t psize;
};
/* Per truth entry: executed inside a TSX transaction (as decoders mark
 * it: from the instruction at the begin FUP's IP, XBEGIN itself, up to
 * the one at the commit or abort FUP's IP, excluded). Kept by execute(). */
static uint8_t *truth_spec;
static size_t truth_spec_cap;

static void execute(struct run *r, size_t budget, int retcomp, int psb_period, int interrupts)
{
    static uint64_t stack[1 << 16];
    int sp = 0, in_handler = 0, enabled = 1, tx_sp = 0;
    uint64_t ip = funcs[0].entry, irq_ret = 0, far_ret = 0, tx_handler = 0;
    int mode = 2;
    struct writer w;
    /* bytes per instruction at most: 8; a transaction that aborts right
     * after XBEGIN writes about 16 */
    size_t cap = budget * (tsx ? 24 : 8) + 4096;

    memset(&w, 0, sizeof(w));
    nnewevs = 0;
    r->trace = malloc(cap);
    r->plain = r->trace;
    if (et || trig) {
        r->plain = malloc(cap);
        ptd_enc_init(&w.plain, r->plain, cap);
        w.has_plain = 1;
    }
    r->truth = malloc(budget * sizeof(uint64_t));
    r->ntruth = 0;
    if (truth_spec_cap < budget) {
        truth_spec = realloc(truth_spec, budget);
        truth_spec_cap = budget;
    }
    ptd_enc_init(&w.e, r->trace, cap);
    w.retcomp = retcomp;
    w.psb_period = psb_period;
    w_pkt(&w, PTD_PKT_PSB, 0, 0, 0);
    w_pkt(&w, PTD_PKT_PSBEND, 0, 0, 0);
    w_mode(&w, 2);
    w_ip(&w, PTD_PKT_TIP_PGE, ip, 0);

    for (size_t step = 0; step < budget; step++) {
        int k = find_insn(ip);
        struct insn *in;
        uint64_t next;
        if (k < 0) {
            fprintf(stderr, "flowgen: internal: no instruction at %" PRIx64 "\n", ip);
            exit(2);
        }
        in = &prog[k];
        /* PSB+ at an instruction boundary once the period is used up */
        if (psb_period && w.since_psb >= (uint64_t)psb_period && enabled)
            w_psb(&w, mode, 1, ip);
        /* a transaction aborts before this instruction (SDM "Transactional
         * Synchronization Extensions": MODE.TSX with TXAbort, FUP at the
         * instruction that did not complete, TIP to the abort handler, the
         * state as at XBEGIN): now and then, and where the flow would
         * leave the traced 64-bit code, take an interrupt or return past
         * XBEGIN's frame (so the call stack below it is as it was) */
        if (w.in_tx && (rn(150) == 0 || in->kind == K_CALLOUT || in->kind == K_ICALLOUT ||
                        in->kind == K_FARJMP || (in->kind == K_RET && sp <= tx_sp) ||
                        (interrupts && !in_handler && rn(150) == 0))) {
            w_flush(&w);
            w_pkt(&w, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_ABRT);
            w_ip(&w, PTD_PKT_FUP, ip, 0);
            w_ip(&w, PTD_PKT_TIP, tx_handler, 0);
            w.in_tx = 0;
            sp = tx_sp;
            w.cnt = 0; /* the CPU's return stack is not the decoder's now */
            n_txabort++;
            ip = tx_handler;
            step--;
            continue;
        }
        /* an interrupt before this instruction */
        if (interrupts && enabled && !in_handler && mode == 2 && !w.in_tx && rn(150) == 0) {
            w_flush(&w);
            if (et) {
                /* Event Trace (SDM "Event Trace"): the vector, and for a
                 * page fault CR2 first; both reported before the
                 * interrupt's branch */
                unsigned vec = rn(3) == 0 ? 14 : 32 + rn(200);
                uint64_t cr2 = 0;
                if (vec == 14 && rn(2)) {
                    cr2 = 0x7f0000000000ull | (rnd() & 0xfffffffff000ull);
                    w_new(&w, PTD_PKT_EVD, cr2, 0, 0, 0);
                    n_evd++;
                }
                w_new(&w, PTD_PKT_CFE, 0, 1 /* INTR */, vec, 0);
                n_cfe++;
                newev_add(PTD_EV_INTERRUPT, r->ntruth, newev_word(PTD_EV_INTERRUPT, vec, cr2));
            }
            w_ip(&w, PTD_PKT_FUP, ip, 0);
            w_ip(&w, PTD_PKT_TIP, funcs[handler].entry, 0);
            irq_ret = ip;
            in_handler = 1;
            n_irq++;
            if (exec_hook)
                exec_hook(ip, mode, 2);
            ip = funcs[handler].entry;
            step--;
            continue;
        }
        if (exec_hook)
            exec_hook(ip, mode, 0);
        if (in->kind == K_XBEGIN && !w.in_tx) {
            /* begin: MODE.TSX with InTX, FUP at the XBEGIN (nested ones
             * write nothing) */
            w_flush(&w);
            w_pkt(&w, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
            w_ip(&w, PTD_PKT_FUP, ip, 0);
            w.in_tx = 1;
            tx_sp = sp;
            tx_handler = in->target;
            n_txbegin++;
        } else if (in->kind == K_XEND && w.in_tx) {
            /* commit: MODE.TSX without InTX, FUP at the XEND (outside a
             * transaction the CPU would fault; here it does nothing) */
            w_flush(&w);
            w_pkt(&w, PTD_PKT_MODE_TSX, 0, 0, 0);
            w_ip(&w, PTD_PKT_FUP, ip, 0);
            w.in_tx = 0;
            n_txcommit++;
        }
        /* a trigger fires at this instruction: TRIG with the count from
         * the anchor (the TNT bits written first, so their packet is the
         * anchor when it is the last) */
        if (trig && enabled && rn(40) == 0) {
            unsigned trbv = 1 + rn(255);
            w_flush(&w);
            if (w.cnt_anchor <= 0xffff) {
                w_new(&w, PTD_PKT_TRIG, 0, (uint8_t)trbv, w.cnt_anchor, PTD_PKTF_ICNTV);
                n_trig++;
                newev_add(PTD_EV_TRIG, r->ntruth, newev_word(PTD_EV_TRIG, trbv, 0));
                w.cnt_anchor = 0; /* TRIG is the next one's anchor */
            }
        }
        if (enabled) {
            truth_spec[r->ntruth] = (uint8_t)w.in_tx;
            r->truth[r->ntruth++] = ip;
            w.cnt_anchor++;
            w.cnt_bit++;
        }
        next = ip + in->len;
        vclock += 3;
        if (timing && rn(24) == 0) {
            unsigned k = rn(3);
            if (k == 0)
                w_pkt(&w, PTD_PKT_MTC, (vclock / 84 >> 3) & 0xff, 0, 0);
            else if (k == 1)
                w_pkt(&w, PTD_PKT_CYC, 1 + rn(200), 0, 0);
            else
                w_pkt(&w, PTD_PKT_TSC, vclock & 0xffffffffffffffull, 0, 0);
        }
        switch (in->kind) {
        case K_FILL:
        case K_XBEGIN:
        case K_XEND: ip = next; break;
        case K_JCC: {
            int t = rn(2);
            if (enabled)
                w_bit(&w, t);
            ip = t ? in->target : next;
            break;
        }
        case K_JMP: ip = in->target; break;
        case K_CALL:
        case K_ICALL: {
            uint64_t t = in->target;
            if (in->kind == K_ICALL) {
                int f;
                do
                    f = (int)rn((unsigned)nfuncs);
                while (funcs[f].outside || funcs[f].mode != 2 || f == handler || f == 0);
                t = funcs[f].entry;
                w_flush(&w);
                w_ip(&w, PTD_PKT_TIP, t, 0);
            }
            if (sp >= (int)(sizeof(stack) / sizeof(stack[0])))
                goto end;
            stack[sp++] = next;
            if (sp > max_depth)
                max_depth = sp;
            w.stack[w.sp] = next;
            w.sp = (w.sp + 1) % 64;
            if (w.cnt < 64)
                w.cnt++;
            ip = t;
            break;
        }
        case K_IJMP: {
            struct func *fn = &funcs[in->func];
            uint64_t t = prog[fn->first + (int)rn((unsigned)fn->count)].ip;
            w_flush(&w);
            w_ip(&w, PTD_PKT_TIP, t, 0);
            ip = t;
            break;
        }
        case K_JMPABS: /* its own target, reported with a TIP */
            w_flush(&w);
            w_ip(&w, PTD_PKT_TIP, in->target, 0);
            ip = in->target;
            n_jmpabs++;
            break;
        case K_RET: {
            uint64_t t;
            if (!sp)
                goto end;
            t = stack[--sp];
            if (funcs[in->func].outside) {
                /* back into the traced range */
                if (rn(2))
                    w_mode(&w, 2);
                w_ip(&w, PTD_PKT_TIP_PGE, t, 0);
                enabled = 1;
                w.cnt = 0;
            } else if (w.retcomp && w.cnt && w.stack[(w.sp + 63) % 64] == t) {
                w.sp = (w.sp + 63) % 64;
                w.cnt--;
                w_bit(&w, 1);
                n_comp++;
            } else {
                w_flush(&w);
                w_ip(&w, PTD_PKT_TIP, t, 0);
            }
            ip = t;
            break;
        }
        case K_CALLOUT:
        case K_ICALLOUT:
            if (sp >= (int)(sizeof(stack) / sizeof(stack[0])))
                goto end;
            stack[sp++] = next;
            w_flush(&w);
            /* SKL014: a direct call out of the filter may lose the PGD's IP */
            w_ip(&w, PTD_PKT_TIP_PGD, in->target, skl014 && in->kind == K_CALLOUT);
            enabled = 0;
            n_out++;
            ip = in->target;
            break;
        case K_IRET: /* IRETQ, ERETU/ERETS (apx), UIRET (uiret) */
            w_flush(&w);
            if (et) {
                /* reported after the IRET (ERETU/ERETS are IRETs too), or
                 * the UIRET */
                w_new(&w, PTD_PKT_CFE, 0, uiret ? 13 /* UIRET */ : 2 /* IRET */, 0, 0);
                n_cfe++;
                newev_add(uiret ? PTD_EV_UIRET : PTD_EV_IRET, r->ntruth, 0);
            }
            w_ip(&w, PTD_PKT_TIP, irq_ret, 0);
            in_handler = 0;
            ip = irq_ret;
            n_eret += apx != 0;
            n_uiret += uiret != 0;
            break;
        case K_FARJMP:
            n_far++;
            w_flush(&w);
            if (mode == 2) {
                far_ret = next;
                mode = 1;
                ip = funcs[region32].entry;
            } else {
                mode = 2;
                ip = far_ret;
            }
            w_mode(&w, mode);
            w_ip(&w, PTD_PKT_TIP, ip, 0);
            break;
        }
    }
end:
    if (exec_hook)
        exec_hook(ip, mode, 1);
    /* tracing stops here: asynchronous disable */
    w_flush(&w);
    if (enabled) {
        w_ip(&w, PTD_PKT_FUP, ip, 0);
        w_ip(&w, PTD_PKT_TIP_PGD, 0, 1);
    }
    r->tsize = (size_t)ptd_enc_offset(&w.e);
    r->psize = w.has_plain ? (size_t)ptd_enc_offset(&w.plain) : r->tsize;
}

/* ---- decoding ----------------------------------------------------------- */
/* A decoder's output as items: instruction IPs, events, errors. */
struct item {
    uint8_t kind;
    uint64_t v;
    uint64_t w;
    uint8_t spec;
}; /* 0 insn, 1 event, 2 error */
struct items {
    struct item *it;
    size_t n, cap;
};

static void add(struct items *l, uint8_t kind, uint64_t v, uint64_t w)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 1024;
        l->it = realloc(l->it, l->cap * sizeof(*l->it));
    }
    l->it[l->n].kind = kind;
    l->it[l->n].v = v;
    l->it[l->n].w = w;
    l->it[l->n].spec = 0;
    l->n++;
}

/* the last item was an instruction executed speculatively (TSX) */
static void mark_spec(struct items *l, int spec)
{
    l->it[l->n - 1].spec = (uint8_t)(spec != 0);
}

static struct flow_image img;

static int rd(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    return (int)flow_image_read(ctx, ip, buf, size);
}

/* code in place (ptd_map_fn) instead of copies, on some programs */
static const uint8_t *img_map(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    struct flow_image *im = ctx;
    for (size_t i = 0; i < im->nsegs; i++)
        if (ip - im->segs[i].base < im->segs[i].size) {
            *base = im->segs[i].base;
            *size = (size_t)im->segs[i].size;
            return im->segs[i].data;
        }
    return NULL;
}

static int use_cache, use_blocks, use_map;
/* the block cache: room for the three code regions (as the host gives) */
static uint64_t cache_mem[4096],
    bcache_mem[PTD_FLOW_BCACHE_BYTES(sizeof(mem_a) + sizeof(mem_32) + sizeof(mem_out), 3) / 8 + 2];

/* An event's item word: resumed (bit 0). */
static uint64_t ev_word(int resumed, uint64_t tsc, int has_tsc)
{
    (void)tsc;
    (void)has_tsc;
    return (uint64_t)(resumed != 0);
}

static void decode_ptboot(const uint8_t *trace, size_t size, struct items *out, size_t limit)
{
    static struct ptd_flow f;
    struct ptd_flow_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    if (use_cache) {
        cfg.cache = (uint8_t *)cache_mem + (use_cache & 7); /* unaligned on purpose */
        cfg.cache_size = sizeof(cache_mem) - 8;
    }
    if (use_blocks && (use_blocks & 4)) {
        cfg.bcache = (uint8_t *)bcache_mem + (use_blocks & 7);
        cfg.bcache_size = sizeof(bcache_mem) - 8;
    }
    cfg.trace = trace;
    cfg.size = size;
    cfg.read = rd;
    cfg.ctx = &img;
    if (use_map)
        cfg.map = img_map;
    cfg.nfilter = 1;
    cfg.filter_lo[0] = FILTER_LO;
    cfg.filter_hi[0] = FILTER_HI;
    if (skl014)
        cfg.errata = ptd_errata_cpu(skl_cpus[skl_cpu].family, skl_cpus[skl_cpu].model);
    else if (bdw)
        cfg.errata = ptd_errata_cpu(6, 0x3d);
    if (timing)
        cfg.time = &time_cfg;
    ptd_flow_init(&f, &cfg);
    uint64_t sync = 0;
    int have_sync = 0;
    for (;;) {
        struct ptd_flow_insn insn;
        struct ptd_event ev;
        int st = ptd_flow_sync_forward(&f);
        insn.ip = 0;
        if (st < 0) {
            if (st == -PTD_ERR_EOS)
                break;
            add(out, 2, (uint64_t)-st, ptd_flow_offset(&f));
            if (have_sync && ptd_flow_offset(&f) <= sync)
                break;
            sync = ptd_flow_offset(&f);
            have_sync = 1;
            continue;
        }
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT)) {
                st = ptd_flow_event(&f, &ev);
                if (st < 0 || (ev.flags & PTD_EVF_STATUS_UPDATE))
                    continue;
                /* Event Trace and TRIG: items of their own (kind 4) */
                if (ev.type == PTD_EV_TRIG)
                    add(out, 4, ev.type, newev_word(ev.type, ev.a, 0));
                else if (ev.type == PTD_EV_INTERRUPT)
                    add(out, 4, ev.type,
                        newev_word(ev.type, ev.aux, (ev.flags & PTD_EVF_HAS_CR2) ? ev.value : 0));
                else if (ev.type == PTD_EV_IRET || ev.type == PTD_EV_UIRET)
                    add(out, 4, ev.type, 0);
                else
                    add(out, 1, ev.type,
                        ev_word((ev.flags & PTD_EVF_RESUMED) != 0, ev.tsc,
                                (ev.flags & PTD_EVF_HAS_TSC) != 0));
            }
            if (st < 0)
                break;
            if (st & PTD_ST_EOS) {
                st = -PTD_ERR_EOS;
                break;
            }
            if (use_blocks) {
                /* a block: its first IP, then placeholders (kind 3) the
                 * comparison fills from the ground truth */
                struct ptd_flow_block blk;
                st = ptd_flow_next_block(&f, &blk);
                for (uint32_t k = 0; k < blk.ninsn; k++) {
                    add(out, k ? 3 : 0, k ? 0 : blk.ip, k == blk.ninsn - 1 ? blk.last_ip : 0);
                    mark_spec(out, blk.speculative);
                }
            } else {
                st = ptd_flow_next(&f, &insn);
                if (insn.iclass != PTD_FLOW_ICLASS_ERROR) {
                    uint64_t tsc = 0;
                    (void)tsc;
                    add(out, 0, insn.ip, 0);
                    mark_spec(out, insn.speculative);
                }
            }
            if (st < 0 || out->n > limit)
                break;
        }
        if (st == -PTD_ERR_EOS || out->n > limit)
            break;
        add(out, 2, (uint64_t)-st, ptd_flow_offset(&f));
    }
}

static int lib_rd(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
    size_t n;
    (void)asid;
    n = flow_image_read(ctx, ip, buf, size);
    return n ? (int)n : -pte_nomap;
}

static void decode_libipt(const uint8_t *trace, size_t size, struct items *out)
{
    struct pt_config cfg;
    struct pt_insn_decoder *d;
    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)trace;
    cfg.end = (uint8_t *)trace + size;
    if (timing) {
        cfg.mtc_freq = time_cfg.mtc_freq;
        cfg.cpuid_0x15_eax = time_cfg.cpuid_0x15_eax;
        cfg.cpuid_0x15_ebx = time_cfg.cpuid_0x15_ebx;
    }
    /* the CPU (libipt 2.0.5's lists; a Skylake program's CPU with SKL014
     * fixed decodes as no CPU, as current libipt's lists have it) */
    if ((skl014 && skl_cpus[skl_cpu].skl014) || bdw) {
        cfg.cpu.vendor = pcv_intel;
        cfg.cpu.family = skl014 ? (uint16_t)skl_cpus[skl_cpu].family : 6;
        cfg.cpu.model = skl014 ? (uint8_t)skl_cpus[skl_cpu].model : 0x3d;
        pt_cpu_errata(&cfg.errata, &cfg.cpu);
        cfg.addr_filter.config.ctl.addr0_cfg = 1;
        cfg.addr_filter.addr0_a = FILTER_LO;
        cfg.addr_filter.addr0_b = FILTER_HI;
    }
    d = pt_insn_alloc_decoder(&cfg);
    pt_image_set_callback(pt_insn_get_image(d), lib_rd, &img);
    uint64_t sync = 0;
    int have_sync = 0;
    /* libipt 2.0.5 makes an exec-mode event of every MODE.Exec; current
     * libipt, whose rules ptboot follows, only of one that changes the
     * mode it knows (from PSB+ or the last change; forgotten at a sync and
     * an overflow): the unchanged ones are left out of 2.0.5's list */
    int mode_known = 0;
    enum pt_exec_mode mode = ptem_unknown;
    for (;;) {
        struct pt_insn insn;
        struct pt_event ev;
        uint64_t off = 0;
        int st = pt_insn_sync_forward(d);
        mode_known = 0;
        memset(&insn, 0, sizeof(insn));
        if (st < 0) {
            if (st == -pte_eos)
                break;
            pt_insn_get_offset(d, &off);
            add(out, 2, (uint64_t)-st, off);
            if (have_sync && off <= sync)
                break;
            sync = off;
            have_sync = 1;
            continue;
        }
        for (;;) {
            while (st >= 0 && (st & pts_event_pending)) {
                st = pt_insn_event(d, &ev, sizeof(ev));
                if (st < 0)
                    break;

                if (ev.type == ptev_overflow)
                    mode_known = 0;
                if (ev.type == ptev_exec_mode) {
                    int same = mode_known && ev.variant.exec_mode.mode == mode;
                    mode_known = 1;
                    mode = ev.variant.exec_mode.mode;
                    if (same || ev.status_update)
                        continue;
                }
                if (!ev.status_update)
                    add(out, 1, (uint64_t)ev.type,
                        ev_word(ev.type == ptev_enabled && ev.variant.enabled.resumed, ev.tsc,
                                ev.has_tsc));
            }
            if (st < 0)
                break;
            if (st & pts_eos) {
                st = -pte_eos;
                break;
            }
            st = pt_insn_next(d, &insn, sizeof(insn));
            {
                uint64_t tsc = 0, tw = 0;
                (void)tsc;
                if (st < 0) {
                    if (insn.iclass != ptic_error) {
                        add(out, 0, insn.ip, tw);
                        mark_spec(out, insn.speculative);
                    }
                    break;
                }
                add(out, 0, insn.ip, tw);
                mark_spec(out, insn.speculative);
            }
        }
        if (st == -pte_eos)
            break;
        pt_insn_get_offset(d, &off);
        add(out, 2, (uint64_t)-st, off);
    }
    pt_insn_free_decoder(d);
}

/* apx programs have no libipt to fill the blocks' inner instructions
 * (kind 3) from: take them from the ground truth, checking each block's
 * last IP against it; the truth check then covers the rest. */
static int apx_blocks_from_truth(struct items *a, const struct run *r, unsigned seed)
{
    size_t ti = 0;
    for (size_t i = 0; i < a->n; i++) {
        struct item *it = &a->it[i];
        if (it->kind != 0 && it->kind != 3)
            continue;
        if (ti >= r->ntruth)
            return 0; /* the truth check reports it */
        if (it->kind == 3) {
            it->kind = 0;
            it->v = r->truth[ti];
        }
        if (it->w && it->w != r->truth[ti]) {
            printf("flowgen: seed %u: block ends at %" PRIx64 ", executed %" PRIx64 "\n", seed,
                   it->w, r->truth[ti]);
            return 1;
        }
        it->w = 0;
        ti++;
    }
    return 0;
}

static const char *item_str(const struct item *it, char *buf, size_t n)
{
    if (it->kind == 0)
        snprintf(buf, n, "insn %" PRIx64, it->v);
    else if (it->kind == 1)
        snprintf(buf, n, "event %" PRIu64 "%s time %" PRIx64, it->v,
                 (it->w & 1) ? " (resumed)" : "", it->w >> 1);
    else if (it->kind == 4)
        snprintf(buf, n, "event %" PRIu64 " (%" PRIx64 ")", it->v, it->w);
    else
        snprintf(buf, n, "error %s at %" PRIx64, ptd_errstr((int)it->v), it->w);
    return buf;
}

/* ---- main --------------------------------------------------------------- */
int main(int argc, char **argv)
{
    unsigned seeds = 100, first = 1, insns = 5000, corrupt = 0, verbose = 0;
    const char *wdir = NULL;
    unsigned fails = 0, checked = 0, corrupted_runs = 0;
    uint64_t total_insns = 0, total_errors = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--insns") && i + 1 < argc)
            insns = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--corrupt"))
            corrupt = 1;
        else if (!strcmp(argv[i], "--write") && i + 1 < argc)
            wdir = argv[++i];
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else {
            fprintf(stderr, "usage: flowgen [--seeds N] [--first S] [--insns N] [--corrupt] "
                            "[--write DIR] [-v]\n");
            return 2;
        }
    }
    for (unsigned s = first; s < first + seeds; s++) {
        struct run r;
        struct items a = { 0 }, b = { 0 };
        int retcomp = (int)(s & 1), psb = (s & 2) ? 0 : 64 + (int)(s % 7) * 100, irq = (s % 5) != 0;
        size_t ti = 0;
        int bad = 0;
        char x[128], y[128];

        use_cache = (s % 3 != 0) ? (int)(s % 8) + 8 : 0;
        use_blocks = (s % 4 == 1) ? (int)(s % 8) + 8 : 0;
        use_map = (s % 6) < 3;
        skl014 = (s % 7 == 3);
        skl_cpu = (s / 7) % (unsigned)(sizeof(skl_cpus) / sizeof(skl_cpus[0]));
        timing = (s % 5 == 2);
        et = (s % 3 == 2);
        trig = (s % 4 == 2);
        /* every 4th program has transactions; half of those decode as a
         * Broadwell (BDM64's TSX part and BDM70 on clean traces: no effect) */
        tsx = (s % 4 == 3);
        bdw = tsx && !skl014 && (s % 8 == 7);
        apx = (s % 10 == 9);
        uiret = (s % 10 == 4);
        if (timing)
            use_blocks = 0;
        /* the CPU's timing errata too (SKL168), as libipt takes them from --cpu */
        time_cfg.errata =
            skl014 ? ptd_errata_cpu(skl_cpus[skl_cpu].family, skl_cpus[skl_cpu].model) : 0;
        rs = 0x9e3779b97f4a7c15ull * (s + 1);
        vclock = 0x100000 + rnd() % 0x100000;
        gen_program();
        execute(&r, insns, retcomp, psb, irq);
        flow_image_init(&img);
        flow_image_add_buf(&img, BASE_A, mem_a, sizeof(mem_a));
        flow_image_add_buf(&img, BASE_32, mem_32, sizeof(mem_32));
        flow_image_add_buf(&img, BASE_OUT, mem_out, sizeof(mem_out));
        if (wdir) {
            char p[4096];
            FILE *f;
            mkdir(wdir, 0755);
            snprintf(p, sizeof(p), "%s/seed%u.pt", wdir, s);
            f = fopen(p, "wb");
            fwrite(r.trace, 1, r.tsize, f);
            fclose(f);
            /* what libipt 2.0.5 reads (without CFE/EVD/TRIG) */
            snprintf(p, sizeof(p), "%s/seed%u.plain.pt", wdir, s);
            f = fopen(p, "wb");
            fwrite(r.plain, 1, r.psize, f);
            fclose(f);
            snprintf(p, sizeof(p), "%s/seed%u.a.bin", wdir, s);
            f = fopen(p, "wb");
            fwrite(mem_a, 1, sizeof(mem_a), f);
            fclose(f);
            snprintf(p, sizeof(p), "%s/seed%u.32.bin", wdir, s);
            f = fopen(p, "wb");
            fwrite(mem_32, 1, sizeof(mem_32), f);
            fclose(f);
            snprintf(p, sizeof(p), "%s/seed%u.out.bin", wdir, s);
            f = fopen(p, "wb");
            fwrite(mem_out, 1, sizeof(mem_out), f);
            fclose(f);
        }
        if (getenv("FLOWGEN_TRUTH"))
            for (size_t i = 0; i < r.ntruth && i < 40; i++)
                printf("truth %zu %" PRIx64 "\n", i, r.truth[i]);
        decode_ptboot(r.trace, r.tsize, &a, (size_t)-1);
        int fixed = skl014 && !skl_cpus[skl_cpu].skl014;
        if (fixed) {
            /* SKL014 fixed: as without a CPU (current libipt's rule: a
             * TIP.PGD without IP binds to the next branch that needs trace,
             * outside the range; libipt 2.0.5 reports an error there) */
            skl014 = 0;
            decode_ptboot(r.trace, r.tsize, &b, (size_t)-1);
            skl014 = 1;
            for (size_t i = 0; (i < a.n || i < b.n) && !bad; i++)
                if (i >= a.n || i >= b.n || a.it[i].kind != b.it[i].kind ||
                    a.it[i].v != b.it[i].v || a.it[i].w != b.it[i].w ||
                    a.it[i].spec != b.it[i].spec) {
                    printf("flowgen: seed %u: ptboot as %u/%u and without a CPU differ at item "
                           "%zu: %s, %s\n",
                           s, skl_cpus[skl_cpu].family, skl_cpus[skl_cpu].model, i,
                           i < a.n ? item_str(&a.it[i], x, sizeof(x)) : "(end)",
                           i < b.n ? item_str(&b.it[i], y, sizeof(y)) : "(end)");
                    bad = 1;
                }
            a.n = b.n = 0;
        } else if (!apx) {
            decode_libipt(r.plain, r.psize, &b);
        }
        /* the Event Trace and TRIG events where the program took them (the
         * instructions before each), then out of the list for the
         * comparison with libipt 2.0.5 */
        {
            size_t k = 0, pos = 0, o = 0;
            for (size_t i = 0; i < a.n; i++) {
                if (a.it[i].kind == 4) {
                    if (!bad && (k >= nnewevs || newevs[k].type != a.it[i].v ||
                                 newevs[k].pos != pos || newevs[k].w != a.it[i].w)) {
                        printf("flowgen: seed %u: event %zu of Event Trace/TRIG: ptboot %s after "
                               "%zu instructions,"
                               " the program took %s\n",
                               s, k, item_str(&a.it[i], x, sizeof(x)), pos,
                               k < nnewevs ? "another" : "none");
                        if (k < nnewevs)
                            printf("flowgen:   the program's: event %u (%" PRIx64 ") after %" PRIu64
                                   " instructions\n",
                                   newevs[k].type, newevs[k].w, newevs[k].pos);
                        bad = 1;
                    }
                    k++;
                    continue;
                }
                if (a.it[i].kind == 0 || a.it[i].kind == 3)
                    pos++;
                a.it[o++] = a.it[i];
            }
            a.n = o;
            if (!bad && k != nnewevs && !fixed) {
                printf(
                    "flowgen: seed %u: %zu Event Trace/TRIG events decoded, the program took %zu\n",
                    s, k, nnewevs);
                bad = 1;
            }
        }
        if (apx && !fixed)
            bad |= apx_blocks_from_truth(&a, &r, s);
        /* ptboot == libipt, item by item (apx: the ground truth only) */
        for (size_t i = 0; !apx && (i < a.n || i < b.n); i++) {
            if (i < a.n && i < b.n && b.it[i].kind == 0 &&
                (a.it[i].kind == 3 || a.it[i].kind == 0) &&
                (a.it[i].kind == 3 || a.it[i].v == b.it[i].v) &&
                (!a.it[i].w || a.it[i].w == b.it[i].v)) {
                if (a.it[i].spec != b.it[i].spec) {
                    printf("flowgen: seed %u: item %zu (%" PRIx64
                           "): speculative %u in ptboot, %u in libipt\n",
                           s, i, b.it[i].v, a.it[i].spec, b.it[i].spec);
                    bad = 1;
                    break;
                }
                a.it[i].kind = 0; /* block placeholder: take libipt's (checked vs truth below) */
                a.it[i].v = b.it[i].v;
                a.it[i].w = 0;
                continue;
            }
            if (i >= a.n || i >= b.n || a.it[i].kind != b.it[i].kind || a.it[i].v != b.it[i].v ||
                a.it[i].w != b.it[i].w || a.it[i].spec != b.it[i].spec) {
                printf("flowgen: seed %u: ptboot and libipt differ at item %zu: ptboot %s, libipt "
                       "%s\n",
                       s, i, i < a.n ? item_str(&a.it[i], x, sizeof(x)) : "(end)",
                       i < b.n ? item_str(&b.it[i], y, sizeof(y)) : "(end)");
                bad = 1;
                break;
            }
            if (a.it[i].kind == 1 && (a.it[i].w & 1))
                n_resumed++;
        }
        /* ptboot == ground truth (instructions; no errors), but for a CPU
         * without SKL014 (a TIP.PGD without IP is an error there) */
        int truth = !fixed;
        for (size_t i = 0; i < a.n && !bad && truth; i++) {
            if (a.it[i].kind == 2) {
                printf("flowgen: seed %u: error on a clean trace: %s\n", s,
                       item_str(&a.it[i], x, sizeof(x)));
                bad = 1;
            } else if (a.it[i].kind == 0) {
                if (ti >= r.ntruth || a.it[i].v != r.truth[ti]) {
                    printf("flowgen: seed %u: instruction %zu is %" PRIx64 ", executed %" PRIx64
                           "\n",
                           s, ti, a.it[i].v, ti < r.ntruth ? r.truth[ti] : 0);
                    bad = 1;
                } else if (a.it[i].spec != truth_spec[ti]) {
                    printf("flowgen: seed %u: instruction %zu (%" PRIx64
                           ") speculative %u, executed %s a transaction\n",
                           s, ti, a.it[i].v, a.it[i].spec, truth_spec[ti] ? "in" : "outside");
                    bad = 1;
                }
                ti++;
            }
        }
        if (!bad && truth && ti != r.ntruth) {
            printf("flowgen: seed %u: %zu instructions decoded, %zu executed\n", s, ti, r.ntruth);
            bad = 1;
        }
        if (bad) {
            fails++;
            printf("flowgen: seed %u (retcomp %d, psb %d, interrupts %d, skl014 %d (cpu %u/%u), "
                   "tsx %d, bdw %d, et %d, trig %d):"
                   " reproduce with --first %u --seeds 1 --write DIR\n",
                   s, retcomp, psb, irq, skl014, skl_cpus[skl_cpu].family, skl_cpus[skl_cpu].model,
                   tsx, bdw, et, trig, s);
        } else if (verbose) {
            printf("flowgen: seed %u ok: %zu instructions, %zu trace bytes\n", s, r.ntruth,
                   r.tsize);
        }
        total_insns += r.ntruth;
        checked++;
        if (corrupt) {
            /* flip bytes: decoding must end, report errors, keep going */
            for (int c = 0; c < 4; c++) {
                struct items e = { 0 };
                uint8_t *t = malloc(r.tsize + 1);
                memcpy(t, r.trace, r.tsize);
                for (int k = 0; k < 1 + c * 3; k++)
                    t[rn((unsigned)r.tsize)] = (uint8_t)rnd();
                decode_ptboot(t, r.tsize, &e, (size_t)insns * 64 + 100000);
                for (size_t i = 0; i < e.n; i++)
                    if (e.it[i].kind == 2)
                        total_errors++;
                corrupted_runs++;
                free(e.it);
                free(t);
            }
        }
        free(a.it);
        free(b.it);
        if (r.plain != r.trace)
            free(r.plain);
        free(r.trace);
        free(r.truth);
        flow_image_free(&img);
    }
    printf("flowgen: %u programs, %" PRIu64 " instructions: %u failed\n", checked, total_insns,
           fails);
    printf("flowgen: covered %" PRIu64 " compressed returns, %" PRIu64
           " far jumps switching modes, %" PRIu64 " interrupts, %" PRIu64
           " calls out of the traced range, %" PRIu64 " PSB+, call depth up to %d\n",
           n_comp, n_far, n_irq, n_out, n_psb, max_depth);
    printf("flowgen: covered %" PRIu64 " transactions begun, %" PRIu64 " committed, %" PRIu64
           " aborted\n",
           n_txbegin, n_txcommit, n_txabort);
    printf("flowgen: covered %" PRIu64
           " resumed TIP.PGE (after indirect calls out), equal in both decoders\n",
           n_resumed);
    printf("flowgen: covered %" PRIu64 " TRIG, %" PRIu64 " CFE, %" PRIu64
           " EVD, at the instructions taken\n",
           n_trig, n_cfe, n_evd);
    printf("flowgen: covered %" PRIu64 " REX2 instructions laid out; executed %" PRIu64
           " JMPABS, %" PRIu64 " ERETU/ERETS (ground truth), %" PRIu64
           " UIRET (libipt and ground truth)\n",
           n_rex2, n_jmpabs, n_eret, n_uiret);
    if (corrupt)
        printf("flowgen: %u corrupted traces decoded, %" PRIu64
               " errors reported and resynchronised\n",
               corrupted_runs, total_errors);
    return fails ? 1 : 0;
}
