/* libptd static tail: see ptd_tail.h. */
#include "decoder/ptd_tail.h"

/* Instructions that end the path although the ILD calls them "other":
 * HLT (F4) stops the CPU until an interrupt, whose trace would say where
 * it went (SDM Vol. 2 HLT); UD0 (0F FF), UD1 (0F B9) and UD2 (0F 0B)
 * raise #UD (SDM Vol. 2 UD). */
#define OPC_HLT    0xf4
#define OPC_0F_UD0 0xff
#define OPC_0F_UD1 0xb9
#define OPC_0F_UD2 0x0b

static bool stops_cpu(const struct ptd_insn *in)
{
    if (in->map == PTD_ILD_MAP_PRIMARY)
        return in->opcode == OPC_HLT;
    if (in->map == PTD_ILD_MAP_0F)
        return in->opcode == OPC_0F_UD0 || in->opcode == OPC_0F_UD1 || in->opcode == OPC_0F_UD2;
    return false;
}

/* Up to PTD_ILD_MAX_LEN code bytes at ip into buf: the mapped region in
 * place when the flow has one, else the read callback. */
static int fetch(const struct ptd_tail *t, uint64_t ip, uint8_t *buf)
{
    const struct ptd_flow *f = t->f;
    if (f->map) {
        uint64_t base = 0;
        size_t size = 0;
        const uint8_t *p = f->map(f->ctx, ip, &base, &size);
        if (p && ip - base < size) {
            size_t n = size - (size_t)(ip - base);
            if (n > PTD_ILD_MAX_LEN)
                n = PTD_ILD_MAX_LEN;
            for (size_t i = 0; i < n; i++)
                buf[i] = p[ip - base + i];
            return (int)n;
        }
    }
    int n = f->read(f->ctx, ip, buf, PTD_ILD_MAX_LEN);
    return n > PTD_ILD_MAX_LEN ? PTD_ILD_MAX_LEN : n;
}

/* The instruction at ip (its length), or < 0. */
static int decode(const struct ptd_tail *t, uint64_t ip, struct ptd_insn *in, uint8_t *buf)
{
    int n = fetch(t, ip, buf);
    if (n <= 0)
        return -1;
    n = ptd_ild_decode_at(in, buf, (size_t)n, (enum ptd_exec_mode)t->mode, ip);
    return n < 0 ? -1 : n;
}

static bool in_filter(const struct ptd_flow *f, uint64_t ip)
{
    if (!f->nfilter)
        return true;
    for (unsigned i = 0; i < f->nfilter && i < 4; i++)
        if (f->filter_lo[i] <= ip && ip <= f->filter_hi[i])
            return true;
    return false;
}

static void stop(struct ptd_tail *t, enum ptd_tail_end why)
{
    t->active = 0;
    t->end = (uint8_t)why;
}

/* ---- the call stack: the tail's own calls above the flow's owed ones ---- */

static void push(struct ptd_tail *t, uint64_t ret)
{
    t->own[t->own_top] = ret;
    t->own_top = (uint8_t)((t->own_top + 1) % PTD_TAIL_STACK);
    if (t->nown < PTD_TAIL_STACK)
        t->nown++;
    else
        t->own_lost = 1; /* the oldest own call is gone: below is unknown */
    t->depth++;
}

static bool pop(struct ptd_tail *t, uint64_t *ret)
{
    if (t->nown) {
        t->own_top = (uint8_t)((t->own_top + PTD_TAIL_STACK - 1) % PTD_TAIL_STACK);
        t->nown--;
        *ret = t->own[t->own_top];
    } else if (!t->own_lost && t->flow_left) {
        const struct ptd_flow *f = t->f;
        unsigned used = (unsigned)(t->flow_known - t->flow_left);
        *ret = f->retstack[(f->ret_top + 2u * PTD_FLOW_RETSTACK - 1u - used) % PTD_FLOW_RETSTACK];
        t->flow_left--;
    } else {
        return false;
    }
    t->depth--;
    for (unsigned i = 0; i < t->nruns; i++)
        if (t->runs[i].low > t->depth)
            t->runs[i].low = t->depth;
    return true;
}

/* ---- runs and spins ----------------------------------------------------- */

static void run_begin(struct ptd_tail *t, uint64_t ip)
{
    struct ptd_tail_run *r = &t->runs[t->run_next];
    r->start = r->last = r->end = ip;
    r->depth = r->low = t->depth;
    t->cur = t->run_next;
    t->run_next = (uint8_t)((t->run_next + 1) % PTD_TAIL_RUNS);
    if (t->nruns < PTD_TAIL_RUNS)
        t->nruns++;
}

/* Is ip where one of run r's instructions starts? (Every instruction of a
 * run but its last falls through, so their lengths lead from one to the
 * next; at most as many steps as the tail gave instructions.) */
static bool starts_insn(const struct ptd_tail *t, const struct ptd_tail_run *r, uint64_t ip)
{
    uint64_t at = r->start;
    for (uint32_t k = 0; k <= t->count && at < ip; k++) {
        struct ptd_insn in;
        uint8_t buf[PTD_ILD_MAX_LEN];
        int n = decode(t, at, &in, buf);
        if (n < 0)
            return false;
        at += (uint64_t)n;
    }
    return at == ip;
}

/* Does landing at ip (at the current depth) repeat a state of the tail?
 * A run that holds an instruction at ip, entered at this depth, with no
 * return below it since: then the call stack is as it was there, and the
 * path from ip is the same again. Sets the loop's range. */
static bool spins(struct ptd_tail *t, uint64_t ip)
{
    unsigned oldest = (t->run_next + PTD_TAIL_RUNS - t->nruns) % PTD_TAIL_RUNS;
    for (unsigned k = 0; k < t->nruns; k++) {
        const struct ptd_tail_run *r = &t->runs[(oldest + k) % PTD_TAIL_RUNS];
        if (r->depth != t->depth || r->low < t->depth || ip < r->start || ip > r->last ||
            !starts_insn(t, r, ip))
            continue;
        /* the loop: from ip to the end of r, and every run after it */
        uint64_t lo = ip, hi = r->end - 1;
        for (unsigned j = k + 1; j < t->nruns; j++) {
            const struct ptd_tail_run *q = &t->runs[(oldest + j) % PTD_TAIL_RUNS];
            if (q->start < lo)
                lo = q->start;
            if (q->end - 1 > hi)
                hi = q->end - 1;
        }
        t->spin_lo = lo;
        t->spin_hi = hi;
        return true;
    }
    return false;
}

/* A branch of the tail goes to ip. */
static void land(struct ptd_tail *t, uint64_t ip)
{
    t->ip = ip;
    if (!in_filter(t->f, ip)) {
        stop(t, PTD_TAIL_END_FILTER);
        return;
    }
    if (spins(t, ip)) {
        stop(t, PTD_TAIL_END_SPIN);
        return;
    }
    run_begin(t, ip);
}

/* ---- API ---------------------------------------------------------------- */

bool ptd_tail_start(struct ptd_tail *t, const struct ptd_flow *f, int st, uint32_t max)
{
    t->f = f;
    t->ip = 0;
    t->max = max ? max : PTD_TAIL_MAX_DEFAULT;
    t->count = 0;
    t->active = 0;
    t->end = PTD_TAIL_END_NONE;
    t->mode = f->mode;
    t->speculative = f->speculative;
    t->flow_known = f->ret_known < f->ret_count ? f->ret_known : f->ret_count;
    t->flow_left = t->flow_known;
    t->depth = 0;
    t->nown = t->own_top = t->own_lost = 0;
    t->nruns = t->run_next = t->cur = 0;
    t->last_iclass = PTD_FLOW_ICLASS_ERROR;
    t->last_ip = 0;
    t->spin_lo = t->spin_hi = 0;

    if (!f->enabled || f->mode == PTD_FLOW_MODE_UNKNOWN)
        return false;
    if (st >= 0) {
        /* the trace is used up after the last instruction: the flow
         * stands at the next one */
        if (!(st & PTD_ST_EOS) || (st & PTD_ST_EVENT))
            return false;
        t->ip = f->ip;
    } else if (st == -PTD_ERR_EOS) {
        /* a query for the instruction at the IP (the flow gave it and
         * still stands there) found no packet; not one for an event (the
         * flow holds an instruction for an event to bind to: where it
         * binds is unknown) */
        struct ptd_insn in;
        uint8_t buf[PTD_ILD_MAX_LEN];
        if (f->process_insn || decode(t, f->ip, &in, buf) < 0)
            return false;
        t->last_ip = f->ip;
        t->last_iclass = in.iclass;
        if (in.iclass == PTD_ICLASS_OTHER || in.iclass == PTD_ICLASS_DIRECT_JUMP ||
            in.iclass == PTD_ICLASS_DIRECT_CALL)
            return false;
        uint64_t ret;
        if (in.iclass != PTD_ICLASS_NEAR_RET || !pop(t, &ret)) {
            stop(t, PTD_TAIL_END_TRACE);
            return false;
        }
        if (!in_filter(f, ret)) {
            stop(t, PTD_TAIL_END_FILTER);
            return false;
        }
        t->ip = ret;
    } else {
        return false;
    }
    run_begin(t, t->ip);
    t->active = 1;
    return true;
}

bool ptd_tail_next(struct ptd_tail *t, struct ptd_flow_insn *out)
{
    struct ptd_insn in;
    uint8_t buf[PTD_ILD_MAX_LEN];
    uint64_t ip = t->ip, ret;

    if (!t->active)
        return false;
    if (t->count >= t->max) {
        stop(t, PTD_TAIL_END_BOUND);
        return false;
    }
    int n = decode(t, ip, &in, buf);
    if (n < 0) {
        stop(t, PTD_TAIL_END_NOCODE);
        return false;
    }
    out->ip = ip;
    out->size = (uint8_t)n;
    out->iclass = in.iclass;
    out->mode = t->mode;
    out->speculative = t->speculative;
    if (t->f->flags & PTD_FLOW_F_RAW)
        for (int i = 0; i < n; i++)
            out->raw[i] = buf[i];
    t->count++;
    t->last_ip = ip;
    t->last_iclass = in.iclass;
    t->runs[t->cur].last = ip;
    t->runs[t->cur].end = ip + (uint64_t)n;

    /* direct targets are linear, as the flow computes them (ptd_flow.c) */
    uint64_t next = ip + (uint64_t)n;
    uint64_t target = (in.flags & PTD_INSN_REL) ? next + (uint64_t)(int64_t)in.disp : in.target;
    switch (in.iclass) {
    case PTD_ICLASS_OTHER:
        if (stops_cpu(&in))
            stop(t, PTD_TAIL_END_HALT);
        else
            t->ip = next;
        break;
    case PTD_ICLASS_DIRECT_JUMP: land(t, target); break;
    case PTD_ICLASS_DIRECT_CALL:
        /* call +0 (getting the IP) is no call, as for the flow */
        if (in.disp != 0)
            push(t, next);
        land(t, target);
        break;
    case PTD_ICLASS_NEAR_RET:
        if (pop(t, &ret))
            land(t, ret);
        else
            stop(t, PTD_TAIL_END_TRACE);
        break;
    default:
        /* conditional, indirect, far: the trace would say */
        stop(t, PTD_TAIL_END_TRACE);
        break;
    }
    return true;
}

const char *ptd_tail_end_name(unsigned end)
{
    switch (end) {
    case PTD_TAIL_END_TRACE: return "trace";
    case PTD_TAIL_END_SPIN: return "spin";
    case PTD_TAIL_END_HALT: return "halt";
    case PTD_TAIL_END_FILTER: return "filter";
    case PTD_TAIL_END_NOCODE: return "no code";
    case PTD_TAIL_END_BOUND: return "bound";
    default: return "none";
    }
}
