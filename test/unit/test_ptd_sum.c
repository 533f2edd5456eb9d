/* Decode summaries (decoder/ptd_sum.h) on generated programs whose control
 * flow the test knows: it lays out functions (fill instructions, calls
 * skipped by conditional jumps, direct and indirect calls, loops, returns)
 * in two images and a region outside both, and an interrupt handler;
 * executes them with random
 * decisions, and writes the trace a CPU would write (TNT, TIP, PSB+, TSC,
 * an asynchronous disable at the end) with libptd's encoder. While it
 * executes it keeps its own account: calls per function, the call tree
 * (calls and instructions per path), blocks (count, instructions), the
 * transitions in order, instructions per image. The summary must give the
 * same numbers; a small arena must degrade (counted, no crash, totals
 * right); a corrupted trace must give the same errors and instructions as
 * the flow driver (decoder/ptd_fmt_flow.h) and listed error lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_sum.h"

/* ---- program ------------------------------------------------------------ */

#define BASE     0x10000ull
#define MEM_SIZE 0x10000u
#define NF_MAX   16
#define NI_MAX   4096

enum {
    K_FILL,
    K_JCC_SKIP,
    K_JCC_LOOP,
    K_CALL,
    K_ICALL,
    K_RET,
    K_JMP,
    K_IRET
};

struct insn {
    uint64_t ip, target;
    uint8_t len, kind;
    int func, callee;
};

struct prog {
    uint8_t mem[MEM_SIZE];
    struct insn in[NI_MAX];
    int ni, nf, handler; /* handler: the interrupt handler's index */
    uint64_t entry[NF_MAX + 1];
    struct ptd_sum_module mods[2];
};

static uint64_t rs;
static unsigned calls_max = 4; /* call sites per function: 0..calls_max-1 */
static unsigned rn(unsigned n)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (unsigned)(rs % n);
}

static struct insn *add(struct prog *p, uint64_t *at, uint8_t kind, uint8_t len, int f)
{
    struct insn *in = &p->in[p->ni++];
    in->ip = *at;
    in->kind = kind;
    in->len = len;
    in->func = f;
    in->target = 0;
    in->callee = -1;
    *at += len;
    return in;
}

static void fill(struct prog *p, uint64_t *at, int f)
{
    static const uint8_t fills[][4] = { { 1, 0x90 }, { 3, 0x48, 0x89, 0xc3 }, { 2, 0x31, 0xc0 } };
    const uint8_t *e = fills[rn(3)];
    memcpy(&p->mem[*at - BASE], e + 1, e[0]);
    add(p, at, K_FILL, e[0], f);
}

static void put32(uint8_t *b, uint64_t from, uint64_t to)
{
    uint32_t d = (uint32_t)(to - from);
    for (int i = 0; i < 4; i++)
        b[i] = (uint8_t)(d >> (8 * i));
}

/* Functions 0..nf-1; function f calls only functions after it, so the
 * call graph is finite; function 0 loops forever. Functions 0..3 lie in
 * image "a.efi", 4..7 in "b.efi", the rest in no image. */
static void gen(struct prog *p, unsigned seed)
{
    rs = 0x9e3779b97f4a7c15ull ^ ((uint64_t)seed * 0x2545f4914f6cdd1dull);
    memset(p->mem, 0xcc, sizeof(p->mem));
    p->ni = 0;
    p->nf = 10 + (int)rn(6);
    uint64_t at = BASE;
    for (int f = 0; f < p->nf; f++) {
        if (f == 4)
            at = BASE + 0x4000;
        if (f == 8)
            at = BASE + 0x8000;
        at += rn(8);
        p->entry[f] = at;
        fill(p, &at, f);
        int ncalls = f + 1 < p->nf ? (int)rn(calls_max) + (f == 0) : 0;
        for (int j = 0; j < ncalls; j++) {
            fill(p, &at, f);
            int ind = rn(3) == 0;
            /* jcc over the call: taken skips it */
            struct insn *jcc = add(p, &at, K_JCC_SKIP, 2, f);
            p->mem[jcc->ip - BASE] = 0x74;
            p->mem[jcc->ip - BASE + 1] = ind ? 2 : 5;
            jcc->target = at + (ind ? 2 : 5);
            struct insn *c = add(p, &at, ind ? K_ICALL : K_CALL, ind ? 2 : 5, f);
            c->callee = f + 1 + (int)rn((unsigned)(p->nf - f - 1));
            if (ind) {
                p->mem[c->ip - BASE] = 0xff;
                p->mem[c->ip - BASE + 1] = 0xd0;
            } else {
                p->mem[c->ip - BASE] = 0xe8;
            }
        }
        /* a loop: head: fill; fill; jcc head */
        uint64_t head = at;
        fill(p, &at, f);
        fill(p, &at, f);
        struct insn *lp = add(p, &at, K_JCC_LOOP, 2, f);
        lp->target = head;
        p->mem[lp->ip - BASE] = 0x75;
        p->mem[lp->ip - BASE + 1] = (uint8_t)(int8_t)(head - at);
        fill(p, &at, f);
        if (f == 0) {
            struct insn *j = add(p, &at, K_JMP, 5, f);
            j->target = p->entry[0];
            p->mem[j->ip - BASE] = 0xe9;
            put32(&p->mem[j->ip - BASE + 1], at, j->target);
        } else {
            struct insn *r = add(p, &at, K_RET, 1, f);
            p->mem[r->ip - BASE] = 0xc3;
        }
    }
    for (int k = 0; k < p->ni; k++)
        if (p->in[k].kind == K_CALL || p->in[k].kind == K_ICALL) {
            p->in[k].target = p->entry[p->in[k].callee];
            if (p->in[k].kind == K_CALL)
                put32(&p->mem[p->in[k].ip - BASE + 1], p->in[k].ip + 5, p->in[k].target);
        }
    /* the interrupt handler, in no image: two fills and IRETQ */
    p->handler = p->nf;
    at += 16;
    p->entry[p->handler] = at;
    fill(p, &at, p->handler);
    fill(p, &at, p->handler);
    struct insn *iret = add(p, &at, K_IRET, 2, p->handler);
    p->mem[iret->ip - BASE] = 0x48;
    p->mem[iret->ip - BASE + 1] = 0xcf;
    p->mods[0].base = BASE;
    p->mods[0].size = 0x4000;
    p->mods[0].name = "a.efi";
    p->mods[1].base = BASE + 0x4000;
    p->mods[1].size = 0x4000;
    p->mods[1].name = "b.efi";
}

static int find(const struct prog *p, uint64_t ip)
{
    int lo = 0, hi = p->ni;
    while (lo < hi) {
        int m = (lo + hi) / 2;
        if (p->in[m].ip < ip)
            lo = m + 1;
        else
            hi = m;
    }
    return lo < p->ni && p->in[lo].ip == ip ? lo : -1;
}

static int read_code(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct prog *p = ctx;
    if (ip < BASE || ip >= BASE + MEM_SIZE)
        return 0;
    size_t n = BASE + MEM_SIZE - ip < size ? (size_t)(BASE + MEM_SIZE - ip) : size;
    memcpy(buf, &p->mem[ip - BASE], n);
    return (int)n;
}

/* The flow over trace[0..size) of program p in 64-bit mode (no timing). */
static struct ptd_flow_config flow_cfg(struct prog *p, const uint8_t *trace, size_t size)
{
    struct ptd_flow_config fc;
    memset(&fc, 0, sizeof(fc));
    fc.trace = trace;
    fc.size = size;
    fc.read = read_code;
    fc.ctx = p;
    fc.mode = 64;
    return fc;
}

/* ---- execution: trace and ground truth ---------------------------------- */

struct tnode { /* the call tree as executed */
    int func, parent;
    uint64_t calls, insns; /* insns: exclusive */
};
struct tblock {
    uint64_t ip, count, insns;
};
struct ttr {
    uint64_t from, to;
    uint32_t kind;
};

#define TN_MAX 4096
#define TB_MAX 4096
#define TR_MAX 200000

struct truth {
    uint64_t insns, calls, irqs, fcalls[NF_MAX + 1], fins[NF_MAX + 1], mod_insns[3];
    struct tnode node[TN_MAX];
    int nnode;
    struct tblock blk[TB_MAX];
    int nblk;
    struct ttr *tr;
    size_t ntr;
    uint64_t tsc_first, tsc_last;
};

struct writer {
    struct ptd_encoder e;
    uint8_t tnt;
    int ntnt;
    uint64_t last_ip, since_psb;
    int have_last;
};

static void w_pkt(struct writer *w, uint8_t kind, uint64_t payload, uint8_t a, uint8_t flags)
{
    struct ptd_pkt pk = ptd_pkt_make(kind, payload, a, 0, flags);
    uint64_t before = ptd_enc_offset(&w->e);
    assert_true(ptd_enc_next(&w->e, &pk) > 0);
    w->since_psb += ptd_enc_offset(&w->e) - before;
}

static void w_flush(struct writer *w)
{
    if (w->ntnt)
        w_pkt(w, PTD_PKT_TNT8, w->tnt, (uint8_t)w->ntnt, 0);
    w->tnt = 0;
    w->ntnt = 0;
}

static void w_bit(struct writer *w, int taken)
{
    w->tnt = (uint8_t)((w->tnt << 1) | (taken != 0));
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
}

static void w_psb(struct writer *w, uint64_t ip, uint64_t tsc, int timing)
{
    w_flush(w);
    w_pkt(w, PTD_PKT_PSB, 0, 0, 0);
    w->have_last = 0;
    w_pkt(w, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    if (timing)
        w_pkt(w, PTD_PKT_TSC, tsc, 0, 0);
    w_ip(w, PTD_PKT_FUP, ip, 0);
    w_pkt(w, PTD_PKT_PSBEND, 0, 0, 0);
    w->since_psb = 0;
}

static int tchild(struct truth *t, int parent, int func)
{
    for (int i = 0; i < t->nnode; i++)
        if (t->node[i].parent == parent && t->node[i].func == func)
            return i;
    assert_true(t->nnode < TN_MAX);
    t->node[t->nnode].func = func;
    t->node[t->nnode].parent = parent;
    t->node[t->nnode].calls = 0;
    t->node[t->nnode].insns = 0;
    return t->nnode++;
}

static void tblock_add(struct truth *t, uint64_t ip, uint64_t insns)
{
    for (int i = 0; i < t->nblk; i++)
        if (t->blk[i].ip == ip) {
            t->blk[i].count++;
            t->blk[i].insns += insns;
            return;
        }
    assert_true(t->nblk < TB_MAX);
    t->blk[t->nblk].ip = ip;
    t->blk[t->nblk].count = 1;
    t->blk[t->nblk].insns = insns;
    t->nblk++;
}

static void ttr_add(struct truth *t, uint64_t from, uint64_t to, uint32_t kind)
{
    if (t->ntr < TR_MAX) {
        t->tr[t->ntr].from = from;
        t->tr[t->ntr].to = to;
        t->tr[t->ntr].kind = kind;
        t->ntr++;
    }
}

static int mod_of(uint64_t ip)
{
    return ip < BASE + 0x4000 ? 0 : ip < BASE + 0x8000 ? 1 : 2;
}

/* Runs the program for budget instructions; writes the trace into buf. */
static size_t execute(const struct prog *p, struct truth *t, uint8_t *buf, size_t cap,
                      uint64_t budget, int timing, int irqs)
{
    uint64_t irq_ret = 0;
    int irq_node = -1;
    struct writer w;
    int stack_node[256], sp = 0;
    uint64_t stack_ret[256];
    uint64_t ip = p->entry[0], blk_ip = ip, blk_n = 0, tsc = 1000;
    int node, loops = 0;

    memset(&w, 0, sizeof(w));
    memset(t->fcalls, 0, sizeof(t->fcalls));
    memset(t->fins, 0, sizeof(t->fins));
    memset(t->mod_insns, 0, sizeof(t->mod_insns));
    t->insns = t->calls = t->irqs = 0;
    t->nnode = t->nblk = 0;
    t->ntr = 0;
    ptd_enc_init(&w.e, buf, cap);
    w_pkt(&w, PTD_PKT_PSB, 0, 0, 0);
    if (timing)
        w_pkt(&w, PTD_PKT_TSC, tsc, 0, 0);
    w_pkt(&w, PTD_PKT_PSBEND, 0, 0, 0);
    w_pkt(&w, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    w_ip(&w, PTD_PKT_TIP_PGE, ip, 0);
    ttr_add(t, 0, ip, PTD_SUM_TR_ENABLE);
    t->tsc_first = t->tsc_last = tsc;
    node = tchild(t, -1, 0);
    t->node[node].calls = 1;

    for (uint64_t step = 0; step < budget; step++) {
        int k = find(p, ip);
        assert_true(k >= 0);
        const struct insn *in = &p->in[k];
        if (irqs && irq_node < 0 && rn(200) == 0) {
            /* an interrupt before this instruction: FUP + TIP */
            if (blk_n)
                tblock_add(t, blk_ip, blk_n);
            w_flush(&w);
            w_ip(&w, PTD_PKT_FUP, ip, 0);
            w_ip(&w, PTD_PKT_TIP, p->entry[p->handler], 0);
            ttr_add(t, ip, p->entry[p->handler], PTD_SUM_TR_IRQ);
            irq_ret = ip;
            irq_node = node;
            node = tchild(t, node, p->handler);
            t->node[node].calls++;
            t->fcalls[p->handler]++;
            t->irqs++;
            ip = blk_ip = p->entry[p->handler];
            blk_n = 0;
            k = find(p, ip);
            in = &p->in[k];
        }
        if (w.since_psb >= 300) {
            tsc += 7;
            w_psb(&w, ip, tsc, timing);
            if (timing)
                t->tsc_last = tsc;
        }
        t->insns++;
        t->fins[in->func]++;
        t->node[node].insns++;
        t->mod_insns[mod_of(ip)]++;
        blk_n++;
        uint64_t next = ip + in->len, to = next;
        switch (in->kind) {
        case K_FILL: break;
        case K_JCC_SKIP: {
            int taken = rn(3) == 0;
            w_bit(&w, taken);
            to = taken ? in->target : next;
            break;
        }
        case K_JCC_LOOP: {
            int taken = loops < 3 && rn(2);
            loops = taken ? loops + 1 : 0;
            w_bit(&w, taken);
            to = taken ? in->target : next;
            break;
        }
        case K_CALL:
        case K_ICALL:
            if (in->kind == K_ICALL) {
                w_flush(&w);
                w_ip(&w, PTD_PKT_TIP, in->target, 0);
            }
            assert_true(sp < 256);
            stack_ret[sp] = next;
            stack_node[sp++] = node;
            node = tchild(t, node, in->callee);
            t->node[node].calls++;
            t->fcalls[in->callee]++;
            t->calls++;
            to = in->target;
            break;
        case K_RET:
            assert_true(sp > 0);
            to = stack_ret[--sp];
            node = stack_node[sp];
            w_flush(&w);
            w_ip(&w, PTD_PKT_TIP, to, 0);
            break;
        case K_JMP: to = in->target; break;
        case K_IRET:
            to = irq_ret;
            node = irq_node;
            irq_node = -1;
            w_flush(&w);
            w_ip(&w, PTD_PKT_TIP, to, 0);
            break;
        }
        if (timing && rn(40) == 0) {
            /* a TSC between packets: after the TNT bits so far */
            w_flush(&w);
            tsc += 1 + rn(50);
            w_pkt(&w, PTD_PKT_TSC, tsc, 0, 0);
            t->tsc_last = tsc;
        }
        if (in->kind != K_FILL) {
            /* every branch ends a block, taken or not */
            tblock_add(t, blk_ip, blk_n);
            ttr_add(t, ip, to,
                    in->kind == K_JCC_SKIP || in->kind == K_JCC_LOOP ? PTD_ICLASS_COND_JUMP
                    : in->kind == K_CALL                             ? PTD_ICLASS_DIRECT_CALL
                    : in->kind == K_ICALL                            ? PTD_ICLASS_INDIRECT_CALL
                    : in->kind == K_RET                              ? PTD_ICLASS_NEAR_RET
                    : in->kind == K_IRET                             ? PTD_ICLASS_FAR_TRANSFER
                                                                     : PTD_ICLASS_DIRECT_JUMP);
            blk_ip = to;
            blk_n = 0;
        }
        ip = to;
    }
    /* tracing stops before ip: FUP + TIP.PGD without an IP */
    if (blk_n)
        tblock_add(t, blk_ip, blk_n);
    ttr_add(t, ip, 0, PTD_SUM_TR_DISABLE);
    w_flush(&w);
    w_ip(&w, PTD_PKT_FUP, ip, 0);
    w_ip(&w, PTD_PKT_TIP_PGD, 0, 1);
    return (size_t)ptd_enc_offset(&w.e);
}

/* ---- running the summary ------------------------------------------------ */

struct text {
    char *buf;
    size_t len, cap;
    uint64_t lines;
};

static void collect(void *ctx, const char *line, size_t len)
{
    struct text *t = ctx;
    assert_int_equal(strlen(line), len);
    assert_true(len + 1 < PTD_SUM_LINE_MAX);
    if (t->len + len + 2 > t->cap) {
        t->cap = (t->len + len + 2) * 2;
        t->buf = realloc(t->buf, t->cap);
        assert_non_null(t->buf);
    }
    memcpy(t->buf + t->len, line, len);
    t->len += len;
    t->buf[t->len++] = '\n';
    t->buf[t->len] = '\0';
    t->lines++;
}

struct run {
    struct ptd_flow f;
    struct ptd_sum s;
    struct ptd_time_config tcfg;
    struct text text;
    uint8_t *arena;
};

static void run_sum(struct run *r, struct prog *p, const uint8_t *trace, size_t size,
                    size_t arena_size, unsigned last, int timing)
{
    struct ptd_flow_config fc;
    struct ptd_sum_config c;
    memset(&c, 0, sizeof(c));
    memset(&r->tcfg, 0, sizeof(r->tcfg));
    fc = flow_cfg(p, trace, size);
    fc.time = timing ? &r->tcfg : NULL;
    assert_int_equal(ptd_flow_init(&r->f, &fc), 0);
    r->arena = arena_size ? malloc(arena_size) : NULL;
    c.modules = p->mods;
    c.nmodules = 2;
    c.arena = r->arena;
    c.arena_size = arena_size;
    c.line = collect;
    c.ctx = &r->text;
    c.last = last;
    c.tree_depth = 1000;
    c.stack_depth = 1000;
    c.flags = PTD_SUM_F_TREE_ALL;
    c.tree_lines = 100000;
    r->text.buf = NULL;
    r->text.len = r->text.cap = 0;
    r->text.lines = 0;
    ptd_sum_run(&r->s, &c, &r->f);
}

static void run_free(struct run *r)
{
    free(r->arena);
    free(r->text.buf);
}

/* The summary's function index for function f of the program (CALL kind,
 * or the root for function 0). */
static const struct ptd_sum_func *sum_func(const struct ptd_sum *s, uint64_t entry, int kind)
{
    const struct ptd_sum_func *fn = s->funcs.p;
    for (uint32_t i = 0; i < s->funcs.cap; i++)
        if (fn[i].used && fn[i].entry == entry && fn[i].kind == kind)
            return &fn[i];
    return NULL;
}

/* Path of entries from the root to summary node n equals truth node tn's? */
static int same_path(const struct ptd_sum *s, uint32_t n, const struct prog *p,
                     const struct truth *t, int tn)
{
    const struct ptd_sum_node *sn = s->nodes.p;
    const struct ptd_sum_func *fn = s->funcs.p;
    while (n != PTD_SUM_NONE && tn >= 0) {
        if (fn[sn[n].func].entry != p->entry[t->node[tn].func])
            return 0;
        n = sn[n].parent;
        tn = t->node[tn].parent;
    }
    return n == PTD_SUM_NONE && tn < 0;
}

static uint8_t tracebuf[1 << 20];
static struct truth truth;
static struct prog prog;

static void check_against_truth(unsigned seed, uint64_t budget, int timing, int irqs)
{
    struct run *r = calloc(1, sizeof(*r));
    gen(&prog, seed);
    truth.tr = malloc(TR_MAX * sizeof(*truth.tr));
    size_t size = execute(&prog, &truth, tracebuf, sizeof(tracebuf), budget, timing, irqs);
    run_sum(r, &prog, tracebuf, size, 4u << 20, 64, timing);
    const struct ptd_sum_stats *st = ptd_sum_stats(&r->s);
    const struct ptd_sum *s = &r->s;

    /* totals */
    assert_int_equal(st->insns, truth.insns);
    assert_int_equal(st->calls, truth.calls);
    assert_int_equal(st->irqs, truth.irqs);
    assert_true(!irqs || truth.irqs > 0);
    assert_int_equal(st->errors, 0);
    assert_int_equal(st->untracked, 0);
    assert_int_equal(st->unmatched_returns, 0);
    assert_int_equal(st->bytes, size);

    /* calls and self instructions per function */
    for (int f = 0; f <= prog.nf; f++) {
        const struct ptd_sum_func *fn = sum_func(s, prog.entry[f],
                                                 f == 0              ? PTD_SUM_FN_ROOT
                                                 : f == prog.handler ? PTD_SUM_FN_IRQ
                                                                     : PTD_SUM_FN_CALL);
        if (!truth.fcalls[f] && f) {
            assert_null(fn);
            continue;
        }
        assert_non_null(fn);
        assert_int_equal(fn->calls, truth.fcalls[f]);
        assert_int_equal(fn->insns, truth.fins[f]);
        assert_int_equal(fn->module, f < 4 ? 0u : f < 8 && f < prog.nf ? 1u : PTD_SUM_NONE);
    }

    /* the tree: every executed path is a node with its calls and self
     * instructions, and nothing else is */
    assert_int_equal(s->nodes.used, truth.nnode);
    const struct ptd_sum_node *sn = s->nodes.p;
    for (int tn = 0; tn < truth.nnode; tn++) {
        int found = 0;
        for (uint32_t n = 0; n < s->nodes.cap; n++)
            if (sn[n].used && same_path(s, n, &prog, &truth, tn)) {
                assert_int_equal(sn[n].calls, truth.node[tn].calls);
                assert_int_equal(sn[n].insns, truth.node[tn].insns);
                found++;
            }
        assert_int_equal(found, 1);
    }

    /* blocks: count and instructions, all of them */
    assert_int_equal(s->blocks.used, truth.nblk);
    uint64_t nblocks = 0;
    const struct ptd_sum_block *sb = s->blocks.p;
    for (int i = 0; i < truth.nblk; i++) {
        int found = 0;
        nblocks += truth.blk[i].count;
        for (uint32_t b = 0; b < s->blocks.cap; b++)
            if (sb[b].used && sb[b].ip == truth.blk[i].ip) {
                assert_int_equal(sb[b].count, truth.blk[i].count);
                assert_int_equal(sb[b].insns, truth.blk[i].insns);
                found++;
            }
        assert_int_equal(found, 1);
    }
    assert_int_equal(st->blocks, nblocks);

    /* the last 64 transitions, oldest first */
    assert_true(truth.ntr >= 64);
    const struct ptd_sum_tr *ring = s->ring.p;
    assert_int_equal(s->ring.cap, 64);
    assert_int_equal(s->ring_count, truth.ntr);
    for (size_t i = 0; i < 64; i++) {
        const struct ttr *want = &truth.tr[truth.ntr - 64 + i];
        const struct ptd_sum_tr *got = &ring[(s->ring_pos + i) % 64];
        assert_int_equal(got->from, want->from);
        assert_int_equal(got->kind, want->kind);
        if (want->kind != PTD_SUM_TR_DISABLE)
            assert_int_equal(got->to, want->to);
    }

    /* instructions per image */
    const struct ptd_sum_modstat *ms = s->mods.p;
    assert_int_equal(s->mods.cap, 3);
    for (int m = 0; m < 3; m++)
        assert_int_equal(ms[m].insns, truth.mod_insns[m]);

    /* time: all of it lands in some function and some image */
    if (timing) {
        assert_true(st->has_time);
        uint64_t span = st->tsc_last - st->tsc_first, fsum = 0, msum = 0;
        assert_true(span > 0);
        assert_true(st->tsc_first >= truth.tsc_first && st->tsc_last <= truth.tsc_last);
        const struct ptd_sum_func *fn = s->funcs.p;
        for (uint32_t i = 0; i < s->funcs.cap; i++)
            if (fn[i].used)
                fsum += fn[i].tsc;
        for (int m = 0; m < 3; m++)
            msum += ms[m].tsc;
        assert_int_equal(fsum, span);
        assert_int_equal(msum, span);
    } else {
        assert_false(st->has_time);
    }

    /* the text: sections present, the hottest block first in its list */
    assert_non_null(strstr(r->text.buf, "== call tree"));
    assert_non_null(strstr(r->text.buf, "== hot blocks"));
    assert_non_null(strstr(r->text.buf, "== last 64 of"));
    assert_non_null(strstr(r->text.buf, "a.efi+0x"));
    assert_int_equal(st->lines, r->text.lines);
    assert_int_equal(st->text_bytes, r->text.len);
    uint64_t maxc = 0;
    for (int i = 0; i < truth.nblk; i++)
        if (truth.blk[i].count > maxc)
            maxc = truth.blk[i].count;
    const char *hb = strstr(r->text.buf, "== hot blocks");
    hb = strchr(hb, '\n') + 1;
    assert_int_equal(strtoull(hb, NULL, 10), maxc);

    free(truth.tr);
    run_free(r);
    free(r);
}

static void test_truth_small(void **state)
{
    (void)state;
    for (unsigned seed = 1; seed <= 20; seed++)
        check_against_truth(seed, 5000, 0, 0);
}

static void test_truth_large(void **state)
{
    (void)state;
    for (unsigned seed = 100; seed < 104; seed++)
        check_against_truth(seed, 100000, 0, seed & 1);
}

static void test_truth_timing(void **state)
{
    (void)state;
    for (unsigned seed = 200; seed < 210; seed++)
        check_against_truth(seed, 20000, 1, seed & 1);
}

/* Arenas from nothing to a few KiB: totals stay right, what did not fit is
 * counted and said, the text stays well formed. */
/* Interrupts: the handler is a child of the code it interrupted (irq>),
 * IRETQ returns to the interrupted instruction. */
static void test_truth_irqs(void **state)
{
    (void)state;
    for (unsigned seed = 300; seed < 320; seed++)
        check_against_truth(seed, 20000, 0, 1);
}

static void test_small_arena(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 64, 700, 2048, 8192, 32768 };
    gen(&prog, 7);
    truth.tr = malloc(TR_MAX * sizeof(*truth.tr));
    size_t size = execute(&prog, &truth, tracebuf, sizeof(tracebuf), 50000, 0, 1);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct run *r = calloc(1, sizeof(*r));
        run_sum(r, &prog, tracebuf, size, sizes[i], 0, 0);
        const struct ptd_sum_stats *st = ptd_sum_stats(&r->s);
        assert_int_equal(st->insns, truth.insns);
        assert_int_equal(st->calls, truth.calls);
        assert_int_equal(st->errors, 0);
        if (sizes[i] < 8192) {
            assert_true(st->untracked > 0);
            assert_non_null(strstr(r->text.buf, "not tracked (arena "));
        }
        assert_non_null(strstr(r->text.buf, "== end\n"));
        assert_int_equal(st->text_bytes, r->text.len);
        run_free(r);
        free(r);
    }
    free(truth.tr);
}

/* With the default limits the text stays under ptd_sum_text_bound (the
 * serial budget), on programs with many call paths. */
static void test_default_bound(void **state)
{
    (void)state;
    calls_max = 8;
    gen(&prog, 21);
    calls_max = 4;
    truth.tr = malloc(TR_MAX * sizeof(*truth.tr));
    size_t size = execute(&prog, &truth, tracebuf, sizeof(tracebuf), 100000, 1, 1);
    struct ptd_flow *f = malloc(sizeof(*f));
    struct ptd_sum *s = malloc(sizeof(*s));
    struct ptd_time_config tc;
    struct ptd_flow_config fc;
    struct ptd_sum_config c;
    struct text text = { NULL, 0, 0, 0 };
    memset(&tc, 0, sizeof(tc));
    memset(&c, 0, sizeof(c));
    fc = flow_cfg(&prog, tracebuf, size);
    fc.time = &tc;
    ptd_flow_init(f, &fc);
    c.modules = prog.mods;
    c.nmodules = 2;
    c.arena = malloc(PTD_SUM_ARENA_SUGGESTED);
    c.arena_size = PTD_SUM_ARENA_SUGGESTED;
    c.line = collect;
    c.ctx = &text;
    c.tree_permille = 1; /* more of the tree */
    const struct ptd_sum_stats *st = ptd_sum_run(s, &c, f);
    assert_int_equal(st->insns, truth.insns);
    print_message("default_bound: %d call paths, %d blocks\n", truth.nnode, truth.nblk);
    assert_true(truth.nnode > 100);
    assert_true(st->text_bytes <= ptd_sum_text_bound(&c));
    assert_true(ptd_sum_text_bound(&c) < 115200 / 10 * 30); /* 30 s of serial */
    assert_int_equal(st->text_bytes, text.len);
    free(text.buf);
    free(c.arena);
    free(s);
    free(f);
    free(truth.tr);
}

/* Corrupted traces: as many errors and instructions as the flow driver
 * finds (the same decoder, one instruction at a time), each error listed
 * with its offset, decoding resumed. */
static void test_corrupt(void **state)
{
    (void)state;
    static uint8_t bad[1 << 20];
    gen(&prog, 11);
    truth.tr = malloc(TR_MAX * sizeof(*truth.tr));
    size_t size = execute(&prog, &truth, tracebuf, sizeof(tracebuf), 30000, 0, 1);
    uint64_t with_errors = 0;
    for (unsigned k = 0; k < 200; k++) {
        size_t bsize = size;
        memcpy(bad, tracebuf, size);
        rs = 0x1234567ull + k;
        if (k % 5 == 4)
            bsize = 1 + rn((unsigned)size); /* cut anywhere */
        for (unsigned j = 0; j < 1 + k % 4; j++) {
            size_t at = 16 + rn((unsigned)(size - 16));
            bad[at] = (uint8_t)(k & 1 ? 0x02 : rn(256)); /* 0x02: extended opcodes */
            if (at + 1 < size && (k & 1))
                bad[at + 1] = 0xff; /* no such extended opcode */
        }
        struct run *r = calloc(1, sizeof(*r));
        run_sum(r, &prog, bad, bsize, 1u << 20, 0, 0);
        const struct ptd_sum_stats *st = ptd_sum_stats(&r->s);
        assert_true(st->bytes_skipped <= bsize);

        struct ptd_flow_config fc = flow_cfg(&prog, bad, bsize);
        struct ptd_flow *f = malloc(sizeof(*f));
        ptd_flow_init(f, &fc);
        struct ptd_flow_lines L;
        char line[PTD_FMT_FLOW_LINE_MAX];
        enum ptd_flow_line_kind kind;
        ptd_flow_lines_init(&L, f, PTD_FMT_FLOW_QUIET);
        while (ptd_flow_lines_next(&L, line, sizeof(line), &kind) > 0)
            ;
        assert_int_equal(st->errors, L.errors);
        assert_int_equal(st->insns, L.insns);
        if (st->errors) {
            with_errors++;
            assert_non_null(strstr(r->text.buf, "error at 0x"));
            assert_true(st->insns > 0);
        }
        assert_non_null(strstr(r->text.buf, "== end\n"));
        free(f);
        run_free(r);
        free(r);
    }
    assert_true(with_errors >= 50);
    free(truth.tr);
}

/* The state fits the documented bound; the decode can be cut in slices. */
static void test_state_and_slices(void **state)
{
    (void)state;
    assert_true(sizeof(struct ptd_sum) <= PTD_SUM_STATE_SIZE);
    gen(&prog, 3);
    truth.tr = malloc(TR_MAX * sizeof(*truth.tr));
    size_t size = execute(&prog, &truth, tracebuf, sizeof(tracebuf), 20000, 0, 1);
    struct run *r = calloc(1, sizeof(*r));
    run_sum(r, &prog, tracebuf, size, 1u << 20, 0, 0);
    uint64_t insns = ptd_sum_stats(&r->s)->insns;
    size_t len = r->text.len;
    char *whole = strdup(r->text.buf);

    /* again, 7 steps per call */
    struct ptd_flow_config fc;
    struct ptd_sum_config c;
    fc = flow_cfg(&prog, tracebuf, size);
    ptd_flow_init(&r->f, &fc);
    memset(&c, 0, sizeof(c));
    c.modules = prog.mods;
    c.nmodules = 2;
    c.arena = r->arena;
    c.arena_size = 1u << 20;
    c.line = collect;
    c.ctx = &r->text;
    c.tree_depth = 1000;
    c.stack_depth = 1000;
    c.flags = PTD_SUM_F_TREE_ALL;
    c.tree_lines = 100000;
    r->text.len = 0;
    ptd_sum_init(&r->s, &c);
    unsigned calls = 0;
    while (ptd_sum_decode(&r->s, &r->f, 7) > 0)
        calls++;
    assert_true(calls > 100);
    assert_int_equal(ptd_sum_decode(&r->s, &r->f, 7), 0);
    ptd_sum_print(&r->s);
    assert_int_equal(ptd_sum_stats(&r->s)->insns, insns);
    assert_int_equal(r->text.len, len);
    assert_string_equal(r->text.buf, whole);
    free(whole);
    run_free(r);
    free(r);
    free(truth.tr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truth_small),  cmocka_unit_test(test_truth_large),
        cmocka_unit_test(test_truth_timing), cmocka_unit_test(test_truth_irqs),
        cmocka_unit_test(test_small_arena),  cmocka_unit_test(test_default_bound),
        cmocka_unit_test(test_corrupt),      cmocka_unit_test(test_state_and_slices),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
