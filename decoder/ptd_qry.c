/* libptd query/event layer: the event queue, packet access, the decode
 * loop and the packets that need no more than a few lines (see ptd_qry.h;
 * PSB+ in ptd_qry_psb.c, OVF in ptd_qry_ovf.c, Event Trace and TRIG in
 * ptd_qry_trace_events.c). */
#include "decoder/ptd_qry_impl.h"
#include "decoder/ptd_ild.h"

/* ---- events ------------------------------------------------------------- */

void ptd_qry_ev_copy(struct ptd_event *d, const struct ptd_event *s)
{
    d->ip = s->ip;
    d->from = s->from;
    d->value = s->value;
    d->value2 = s->value2;
    d->offset = s->offset;
    d->tsc = s->tsc;
    d->lost_mtc = s->lost_mtc;
    d->lost_cyc = s->lost_cyc;
    d->aux = s->aux;
    d->flags = s->flags;
    d->type = s->type;
    d->mode = s->mode;
    d->a = s->a;
    d->b = s->b;
}

static uint8_t evq_inc(uint8_t i)
{
    return (uint8_t)((i + 1u) % PTD_QRY_EVQ);
}

static uint8_t evq_dec(uint8_t i)
{
    return (uint8_t)((i + PTD_QRY_EVQ - 1u) % PTD_QRY_EVQ);
}

static void evq_init(struct ptd_qry_evq *q)
{
    q->begin = 0;
    q->end = 0;
}

/* A new entry at the end, or NULL when full: one slot stays free between
 * end and begin, so the entry dequeued last (handed out, still read) is
 * never overwritten while the next events are queued. */
struct ptd_event *ptd_qry_enqueue(struct ptd_qry *q, unsigned binding)
{
    struct ptd_qry_evq *e = &q->evq;
    uint8_t idx = e->end, end = evq_inc(idx);
    if (evq_inc(end) == e->begin)
        return NULL;
    e->end = end;
    e->binding[idx] = (uint8_t)binding;
    ptd_qry_ev_clear(&e->ev[idx]);
    return &e->ev[idx];
}

/* The first entry bound to one of binding's packets, taken out of the
 * queue (the entries before it move up, keeping the order); NULL if none.
 * The entry stays valid until the next but one enqueue. */
struct ptd_event *ptd_qry_dequeue(struct ptd_qry *q, unsigned binding)
{
    struct ptd_qry_evq *e = &q->evq;
    uint8_t begin = e->begin, idx = begin;
    struct ptd_event tmp;
    uint8_t tmpb;

    if (begin == e->end)
        return NULL;
    if (e->binding[begin] & binding) {
        e->begin = evq_inc(begin);
        return &e->ev[begin];
    }
    do {
        idx = evq_inc(idx);
        if (idx == e->end)
            return NULL;
    } while (!(e->binding[idx] & binding));
    ptd_qry_ev_copy(&tmp, &e->ev[idx]);
    tmpb = e->binding[idx];
    while (idx != begin) {
        uint8_t prev = evq_dec(idx);
        ptd_qry_ev_copy(&e->ev[idx], &e->ev[prev]);
        e->binding[idx] = e->binding[prev];
        idx = prev;
    }
    ptd_qry_ev_copy(&e->ev[begin], &tmp);
    e->binding[begin] = tmpb;
    e->begin = evq_inc(begin);
    return &e->ev[begin];
}

struct ptd_event *ptd_qry_find(struct ptd_qry *q, unsigned binding, unsigned type)
{
    struct ptd_qry_evq *e = &q->evq;
    for (uint8_t i = e->begin; i != e->end; i = evq_inc(i))
        if ((e->binding[i] & binding) && e->ev[i].type == type)
            return &e->ev[i];
    return NULL;
}

struct ptd_event *ptd_qry_peek(struct ptd_qry *q, unsigned binding)
{
    struct ptd_qry_evq *e = &q->evq;
    for (uint8_t i = e->begin; i != e->end; i = evq_inc(i))
        if (e->binding[i] & binding)
            return &e->ev[i];
    return NULL;
}

bool ptd_qry_pending(const struct ptd_qry *q, unsigned binding)
{
    const struct ptd_qry_evq *e = &q->evq;
    for (uint8_t i = e->begin; i != e->end; i = evq_inc(i))
        if (e->binding[i] & binding)
            return true;
    return false;
}

struct ptd_event *ptd_qry_standalone(struct ptd_qry *q)
{
    ptd_qry_ev_clear(&q->standalone);
    return &q->standalone;
}

void ptd_qry_publish(struct ptd_qry *q, struct ptd_event *ev)
{
    q->event = ev == &q->standalone ? (uint8_t)PTD_QRY_STANDALONE : (uint8_t)(ev - q->evq.ev);
}

static struct ptd_event *published(struct ptd_qry *q)
{
    if (q->event == PTD_QRY_NO_EVENT)
        return NULL;
    return q->event == PTD_QRY_STANDALONE ? &q->standalone : &q->evq.ev[q->event];
}

/* ---- packets, time, IP -------------------------------------------------- */

/* The first byte from pos on that is not a PAD (PTD_OPC_PAD is 0), or end:
 * eight bytes at a time while they are all PADs (the CPU writes them in
 * runs: 43% of mruby's trace, 18 bytes a run on average), then the first
 * non-zero byte of the eight (little-endian: the lowest set bit's). */
static const uint8_t *skip_pads(const uint8_t *pos, const uint8_t *end)
{
    _Static_assert(PTD_OPC_PAD == 0, "PAD is the zero byte");
    while (end - pos >= 8) {
        uint64_t w = ptd_pkt_ld_le64(pos);
        if (w)
            return pos + ((unsigned)__builtin_ctzll(w) >> 3);
        pos += 8;
    }
    while (pos < end && *pos == PTD_OPC_PAD)
        pos++;
    return pos;
}

/* The fetch's general case (decoder/ptd_qry_fast.h). */
PTD_NOINLINE int ptd_qry_fetch_slow(struct ptd_qry *q)
{
    struct ptd_pkt_decoder *d = &q->pkt;
    int r;
    /* PAD carries nothing (SDM "PAD Packet"): skip runs of them here, as
     * libipt does (offsets then name the packets that matter). Between BBP
     * and BEP a 00 byte could start a BIP: left to the packet layer. */
    for (;;) {
        if (!d->in_block) {
            const uint8_t *pos = skip_pads(d->pos, d->end);
            const uint8_t *end = d->end;
            d->pos = pos;
            r = (int)ptd_pkt_decode_fast(pos, end, 0, &q->cur);
            if (r) {
                d->pos = pos + r;
                q->cur_off = (uint64_t)(pos - d->begin);
                return 0;
            }
        }
        r = ptd_pkt_next(d, &q->cur);
        if (r < 0 || q->cur.kind != PTD_PKT_PAD)
            break;
    }
    if (r < 0) {
        /* a packet cut by the end of the buffer is the end of the trace */
        q->status = r == -PTD_ERR_TRUNCATED ? -PTD_ERR_EOS : r;
        q->cur.kind = PTD_PKT_NONE;
        q->cur.size = 0;
        q->cur_off = ptd_pkt_offset(d);
        return 0;
    }
    /* the offset the packet's size back from where decoding stopped (an
     * OVF that SKD007 put in a CYC's place is reported one byte in);
     * ptd_pkt_offset's, without the call */
    q->cur_off = (uint64_t)(d->pos - d->begin) - q->cur.size;
    return 0;
}

int ptd_qry_fetch(struct ptd_qry *q)
{
    ptd_qry_fetch_fast(q);
    return 0;
}

int ptd_qry_apply_time(struct ptd_time *t, const struct ptd_pkt *p)
{
    int cal = 0, r;
    switch (p->kind) {
    case PTD_PKT_TSC: r = ptd_time_tsc(t, p->payload, &cal); break;
    case PTD_PKT_TMA: r = ptd_time_tma(t, (uint32_t)p->payload, p->aux, &cal); break;
    case PTD_PKT_MTC: r = ptd_time_mtc(t, (uint8_t)p->payload, &cal); break;
    case PTD_PKT_CYC: r = ptd_time_cyc(t, p->payload, &cal, NULL); break;
    case PTD_PKT_CBR: r = ptd_time_cbr_update(t, (uint8_t)p->payload, &cal); break;
    default: return 0;
    }
    /* the calibration's error first, as libipt applies it first; a
     * missing CPUID 0x15 ratio only makes the time rougher */
    if (cal < 0 && cal != -PTD_ERR_BAD_CONFIG)
        return cal;
    if (r < 0 && r != -PTD_ERR_BAD_CONFIG)
        return r;
    return 0;
}

unsigned ptd_qry_exec_mode(const struct ptd_pkt *p)
{
    if (p->flags & PTD_PKTF_CSL)
        return (p->flags & PTD_PKTF_CSD) ? PTD_QRY_EXEC_MODE_UNKNOWN : PTD_EXEC_MODE_64;
    return (p->flags & PTD_PKTF_CSD) ? PTD_EXEC_MODE_32 : PTD_EXEC_MODE_16;
}

/* ---- set-up -------------------------------------------------------------- */

/* Forget everything but the configuration (libipt's pt_evt_reset): at a
 * sync point, and at an OVF (which keeps the time). */
static void reset(struct ptd_qry *q)
{
    q->cur.kind = PTD_PKT_NONE;
    q->status = -PTD_ERR_NOSYNC;
    q->event = PTD_QRY_NO_EVENT;
    q->enabled = 0;
    q->bound = 0;
    q->mode_exec_valid = 0;
    ptd_last_ip_init(&q->lip);
    evq_init(&q->evq);
}

void ptd_qry_init(struct ptd_qry *q, const uint8_t *buf, size_t size,
                  const struct ptd_time_config *cfg)
{
    ptd_pkt_init(&q->pkt, buf, size);
    /* PEBS packets: unknown opcodes, as libipt (docs/flow.md) */
    ptd_pkt_set_pebs(&q->pkt, 0);
    q->cur.size = 0;
    q->cur_off = 0;
    q->flags = 0;
    q->errata = 0;
    q->csl = q->csd = q->iflag = 0;
    ptd_time_init(&q->time, cfg);
    q->time.cfg.errata = 0;
    reset(q);
}

void ptd_qry_set_errata(struct ptd_qry *q, unsigned errata)
{
    q->errata = errata;
    ptd_pkt_set_errata(&q->pkt, errata);
    /* libipt's event decoder never marks a PSB for SKL168 (only ptdump
     * does): the flow's time takes no SKL168, as libipt's */
    q->time.cfg.errata = errata & ~(unsigned)PTD_ERRATUM_SKL168;
}

void ptd_qry_set_flags(struct ptd_qry *q, unsigned flags)
{
    q->flags = (uint8_t)flags;
    if (flags & PTD_QRY_F_KEEP_TCAL_ON_OVF)
        q->time.cfg.flags |= PTD_TIME_KEEP_TCAL_ON_OVF;
    else
        q->time.cfg.flags &= ~(uint32_t)PTD_TIME_KEEP_TCAL_ON_OVF;
}

void ptd_qry_set_pwre_bit3(struct ptd_qry *q, int on)
{
    ptd_pkt_set_pwre_bit3(&q->pkt, on);
}

uint64_t ptd_qry_offset(const struct ptd_qry *q)
{
    return q->cur_off;
}

uint64_t ptd_qry_sync_offset(const struct ptd_qry *q)
{
    return q->pkt.sync ? (uint64_t)(q->pkt.sync - q->pkt.begin) : 0;
}

/* After positioning at a PSB: read its PSB+ (the events come later). */
static int start(struct ptd_qry *q)
{
    int r;
    q->status = 0;
    ptd_qry_fetch(q);
    switch (q->cur.kind) {
    case PTD_PKT_PSB: r = ptd_qry_decode_psb(q); return r < 0 ? r : 0;
    case PTD_PKT_NONE: return q->status < 0 ? q->status : -PTD_ERR_INTERNAL;
    default: return -PTD_ERR_NOSYNC;
    }
}

int ptd_qry_sync_forward(struct ptd_qry *q)
{
    int r;
    /* from where the packet decoder stands: after the packet being
     * processed, or at the one that could not be decoded */
    reset(q);
    ptd_time_reset(&q->time);
    r = ptd_pkt_sync_forward(&q->pkt);
    if (r < 0)
        return r;
    return start(q);
}

int ptd_qry_sync_set(struct ptd_qry *q, uint64_t offset)
{
    int r;
    reset(q);
    ptd_time_reset(&q->time);
    r = ptd_pkt_sync_set(&q->pkt, offset);
    if (r < 0)
        return r;
    return start(q);
}

/* ---- the packets -------------------------------------------------------- */

/* A standalone event of type for the current packet: published with the
 * time now, and the next packet fetched. */
static struct ptd_event *standalone_now(struct ptd_qry *q, unsigned type)
{
    struct ptd_event *ev = ptd_qry_standalone(q);
    ev->type = (uint8_t)type;
    return ev;
}

static int publish_now(struct ptd_qry *q, struct ptd_event *ev)
{
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return ptd_qry_fetch(q);
}

static int decode_tnt(struct ptd_qry *q)
{
    struct ptd_event *ev;
    if (!q->enabled)
        return -PTD_ERR_BAD_CONTEXT;
    ev = standalone_now(q, PTD_EV_TNT);
    ev->value = q->cur.payload;
    ev->a = q->cur.a;
    return publish_now(q, ev);
}

/* Timing packets outside PSB+ move the time (CBR also makes an event). */
static int decode_timing(struct ptd_qry *q)
{
    int r = ptd_qry_apply_time(&q->time, &q->cur);
    if (r < 0)
        return r;
    if (q->cur.kind == PTD_PKT_CBR) {
        struct ptd_event *ev = standalone_now(q, PTD_EV_CBR);
        ev->value = q->cur.payload;
        return publish_now(q, ev);
    }
    return 1;
}

bool ptd_qry_ev_takes_fup_ip(enum ptd_ev_type type)
{
    switch (type) {
    case PTD_EV_TSX:
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
    case PTD_EV_PTWRITE:
    case PTD_EV_EXEC_MODE:
    case PTD_EV_IFLAGS:
    case PTD_EV_INTERRUPT:
    case PTD_EV_IRET:
    case PTD_EV_SMI:
    case PTD_EV_INIT:
    case PTD_EV_VMENTRY:
    case PTD_EV_VMEXIT:
    case PTD_EV_SHUTDOWN:
    case PTD_EV_UINTR:
    case PTD_EV_UIRET:
    case PTD_EV_TRIG:
    case PTD_EV_SWINTR:
    case PTD_EV_SYSCALL: return true;
    default: return false;
    }
}

/* The time and IP of an event published at a FUP, by type; 0, or
 * -PTD_ERR_BAD_CONTEXT for a type that cannot bind to a FUP. */
static int fup_bound(struct ptd_qry *q, struct ptd_event *ev)
{
    switch (ev->type) {
    case PTD_EV_OVERFLOW:
        /* the time stays the OVF's: with the next event's it tells how
         * long the overflow lasted */
        ptd_qry_ev_ip(q, ev);
        q->enabled = 1;
        return 0;
    case PTD_EV_RSM:
    case PTD_EV_SIPI:
        /* they take the FUP without its IP (queued suppressed) */
        ptd_qry_ev_time(q, ev);
        return (ev->flags & PTD_EVF_IP_SUPPRESSED) ? 0 : -PTD_ERR_INTERNAL;
    default:
        if (!ptd_qry_ev_takes_fup_ip(ev->type))
            return -PTD_ERR_BAD_CONTEXT;
        ptd_qry_ev_time(q, ev);
        ptd_qry_ev_ip(q, ev);
        return 0;
    }
}

/* FUP: the events waiting for it, one per call (those bound to a FUP use
 * it up; the others only take its IP); with none left, the source of an
 * asynchronous branch that the next TIP/TIP.PGD completes. */
static int decode_fup(struct ptd_qry *q)
{
    int r = ptd_qry_update_ip(q, &q->cur);
    if (r < 0)
        return r;
    /* bounded: each round takes an entry out of the queue */
    for (;;) {
        struct ptd_event *ev;
        uint64_t from;
        if (ptd_qry_pending(q, PTD_QRY_B_FUP_BOUND))
            q->bound = 1;
        ev = ptd_qry_dequeue(q, PTD_QRY_B_FUP | PTD_QRY_B_FUP_BOUND);
        if (!ev) {
            if (q->bound)
                return 1;
            /* an asynchronous branch needs its source: a FUP without an
             * IP cannot start one */
            r = ptd_last_ip_query(&q->lip, &from);
            if (r < 0)
                return r;
            ev = ptd_qry_enqueue(q, PTD_QRY_B_TIP);
            if (!ev)
                return -PTD_ERR_NOMEM;
            ev->type = PTD_EV_ASYNC_BRANCH;
            ev->from = from;
            return 1;
        }
        if (ev->type == PTD_EV_IGNORE)
            continue;
        ptd_qry_publish(q, ev);
        return fup_bound(q, ev);
    }
}

/* A TIP that completes an asynchronous branch (the branch first, then the
 * events that take the TIP's IP), or a TIP event for the flow. */
static int decode_tip_event(struct ptd_qry *q)
{
    struct ptd_event *ev, *async;
    q->bound = 1;
    async = ptd_qry_find(q, PTD_QRY_B_TIP, PTD_EV_ASYNC_BRANCH);
    if (async) {
        ev = ptd_qry_dequeue(q, PTD_QRY_B_TIP);
        if (!ev)
            return -PTD_ERR_INTERNAL;
        if (ev != async) {
            /* the branch goes out first */
            struct ptd_event tmp;
            ptd_qry_ev_copy(&tmp, async);
            ptd_qry_ev_copy(async, ev);
            ptd_qry_ev_copy(ev, &tmp);
        }
    } else {
        ev = standalone_now(q, PTD_EV_TIP);
    }
    ptd_qry_ev_ip(q, ev);
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return 0;
}

static int decode_tip(struct ptd_qry *q)
{
    int r;
    if (!q->enabled)
        return -PTD_ERR_BAD_CONTEXT;
    r = ptd_qry_update_ip(q, &q->cur);
    if (r < 0)
        return r;
    if (!q->bound)
        return decode_tip_event(q);
    for (;;) {
        struct ptd_event *ev = ptd_qry_dequeue(q, PTD_QRY_B_TIP);
        if (!ev)
            return 1;
        switch (ev->type) {
        case PTD_EV_IGNORE: continue;
        case PTD_EV_EXEC_MODE:
        case PTD_EV_ASYNC_PAGING:
        case PTD_EV_ASYNC_VMCS:
        case PTD_EV_IFLAGS:
            ptd_qry_ev_ip(q, ev);
            ptd_qry_ev_time(q, ev);
            ptd_qry_publish(q, ev);
            return 0;
        case PTD_EV_ASYNC_BRANCH: return -PTD_ERR_INTERNAL;
        default: return -PTD_ERR_BAD_CONTEXT;
        }
    }
}

/* A TIP.PGE or TIP.PGD (q->cur, its IP applied) with nothing bound to it:
 * the enable or disable into ev (cleared first), with its IP and time.
 * The enable's packet stays, bound (what binds to it comes next); the
 * disable's is used up. */
static void tip_pg_standalone(struct ptd_qry *q, struct ptd_event *ev)
{
    bool pge = q->cur.kind == PTD_PKT_TIP_PGE;
    ptd_qry_ev_clear(ev);
    ev->type = pge ? PTD_EV_ENABLED : PTD_EV_DISABLED;
    ptd_qry_ev_ip(q, ev);
    q->enabled = pge;
    ptd_qry_ev_time(q, ev);
    if (pge)
        q->bound = 1;
    else
        ptd_qry_fetch_fast(q);
}

/* TIP.PGE: the enable first, then what binds to it (MODE.Exec). */
static int decode_tip_pge(struct ptd_qry *q)
{
    struct ptd_event *ev;
    int r = ptd_qry_update_ip(q, &q->cur);
    if (r < 0)
        return r;
    if (!q->bound) {
        tip_pg_standalone(q, &q->standalone);
        ptd_qry_publish(q, &q->standalone);
        return 0;
    }
    for (;;) {
        ev = ptd_qry_dequeue(q, PTD_QRY_B_TIP);
        if (!ev)
            return 1;
        switch (ev->type) {
        case PTD_EV_IGNORE: continue;
        case PTD_EV_EXEC_MODE:
        case PTD_EV_IFLAGS:
            ptd_qry_ev_ip(q, ev);
            ptd_qry_ev_time(q, ev);
            ptd_qry_publish(q, ev);
            return 0;
        default: return -PTD_ERR_BAD_CONTEXT;
        }
    }
}

/* TIP.PGD: a disable; after a FUP an asynchronous one, followed by the
 * PIP/VMCS/MODE.Exec that came with it (without an IP: tracing is off
 * when they apply). */
static int decode_tip_pgd(struct ptd_qry *q)
{
    struct ptd_event *ev;
    int r = ptd_qry_update_ip(q, &q->cur);
    if (r < 0)
        return r;
    ev = ptd_qry_dequeue(q, PTD_QRY_B_TIP);
    if (!ev) {
        if (q->bound)
            return 1;
        tip_pg_standalone(q, &q->standalone);
        ptd_qry_publish(q, &q->standalone);
        return 0;
    }
    switch (ev->type) {
    case PTD_EV_ASYNC_BRANCH:
        ev->type = PTD_EV_ASYNC_DISABLED;
        ptd_qry_ev_ip(q, ev);
        q->enabled = 0;
        q->bound = 1;
        break;
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS:
        if (!q->bound)
            return -PTD_ERR_INTERNAL;
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
        break;
    case PTD_EV_EXEC_MODE: ev->flags |= PTD_EVF_IP_SUPPRESSED; break;
    default: return -PTD_ERR_BAD_CONTEXT;
    }
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return 0;
}

/* MODE.Exec binds to the next TIP, TIP.PGE or FUP; it makes an event only
 * for what changed (the execution mode; RFLAGS.IF with iflags events), an
 * ignore event otherwise to take the binding packet. */
static int decode_mode_exec(struct ptd_qry *q)
{
    const unsigned b = PTD_QRY_B_TIP | PTD_QRY_B_FUP_BOUND;
    const struct ptd_pkt *p = &q->cur;
    uint8_t csl = (p->flags & PTD_PKTF_CSL) != 0, csd = (p->flags & PTD_PKTF_CSD) != 0;
    uint8_t iflag = (p->flags & PTD_PKTF_IF) != 0;
    struct ptd_event *ev;
    int n = 0;

    if (!q->mode_exec_valid || q->csl != csl || q->csd != csd) {
        ev = ptd_qry_enqueue(q, b);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_EXEC_MODE;
        ev->mode = (uint8_t)ptd_qry_exec_mode(p);
        q->csl = csl;
        q->csd = csd;
        n++;
    }
    if ((q->flags & PTD_QRY_F_IFLAGS) && (!q->mode_exec_valid || q->iflag != iflag)) {
        ev = ptd_qry_enqueue(q, b);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_IFLAGS;
        if (iflag)
            ev->flags |= PTD_EVF_IFLAG;
        q->iflag = iflag;
        n++;
    }
    if (!n) {
        ev = ptd_qry_enqueue(q, b);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_IGNORE;
    }
    q->mode_exec_valid = 1;
    return 1;
}

static void tsx_of(struct ptd_event *ev, const struct ptd_pkt *p)
{
    ev->type = PTD_EV_TSX;
    if (p->flags & PTD_PKTF_INTX)
        ev->flags |= PTD_EVF_SPECULATIVE;
    if (p->flags & PTD_PKTF_ABRT)
        ev->flags |= PTD_EVF_ABORTED;
}

/* MODE.TSX binds to the next FUP (an abort to the FUP of the asynchronous
 * branch to the abort handler, which it does not use up); with tracing off
 * it stands alone. */
static int decode_mode_tsx(struct ptd_qry *q)
{
    struct ptd_event *ev;
    if (q->enabled) {
        ev = ptd_qry_enqueue(q,
                             (q->cur.flags & PTD_PKTF_ABRT) ? PTD_QRY_B_FUP : PTD_QRY_B_FUP_BOUND);
        if (!ev)
            return -PTD_ERR_NOMEM;
        tsx_of(ev, &q->cur);
        return 1;
    }
    ev = ptd_qry_standalone(q);
    tsx_of(ev, &q->cur);
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    return publish_now(q, ev);
}

static void paging_of(struct ptd_event *ev, unsigned type, const struct ptd_pkt *p)
{
    ev->type = (uint8_t)type;
    ev->value = p->payload;
    if (p->flags & PTD_PKTF_NR)
        ev->flags |= PTD_EVF_NR;
}

/* PIP: part of an asynchronous branch (after its FUP), or on its own (it
 * binds to MOV CR3 or a far branch: the flow layer finds it). */
static int decode_pip(struct ptd_qry *q)
{
    if (ptd_qry_find(q, PTD_QRY_B_TIP, PTD_EV_ASYNC_BRANCH)) {
        struct ptd_event *ev = ptd_qry_enqueue(q, PTD_QRY_B_TIP);
        if (!ev)
            return -PTD_ERR_NOMEM;
        paging_of(ev, PTD_EV_ASYNC_PAGING, &q->cur);
        return 1;
    }
    struct ptd_event *ev = ptd_qry_standalone(q);
    paging_of(ev, PTD_EV_PAGING, &q->cur);
    return publish_now(q, ev);
}

/* VMCS: as PIP; with both after a FUP, VMCS goes before PIP (it takes the
 * PIP's place in the queue). */
static int decode_vmcs(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_find(q, PTD_QRY_B_TIP, PTD_EV_ASYNC_PAGING);
    if (ev) {
        struct ptd_event *paging = ptd_qry_enqueue(q, PTD_QRY_B_TIP);
        if (!paging)
            return -PTD_ERR_NOMEM;
        ptd_qry_ev_copy(paging, ev);
        ptd_qry_ev_clear(ev);
        ev->type = PTD_EV_ASYNC_VMCS;
        ev->value = q->cur.payload;
        return 1;
    }
    if (ptd_qry_find(q, PTD_QRY_B_TIP, PTD_EV_ASYNC_BRANCH)) {
        ev = ptd_qry_enqueue(q, PTD_QRY_B_TIP);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_ASYNC_VMCS;
        ev->value = q->cur.payload;
        return 1;
    }
    ev = standalone_now(q, PTD_EV_VMCS);
    ev->value = q->cur.payload;
    return publish_now(q, ev);
}

/* EXSTOP: completes a waiting MWAIT (both bound to the FUP when EXSTOP has
 * its IP bit, else both standalone: the MWAIT first); binds to the next
 * FUP with its IP bit. */
static int decode_exstop(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_dequeue(q, PTD_QRY_B_EXSTOP);
    bool ip = (q->cur.flags & PTD_PKTF_IP) != 0;
    if (ev) {
        if (ev->type != PTD_EV_MWAIT)
            return -PTD_ERR_INTERNAL;
        if (!ip) {
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
            ptd_qry_ev_time(q, ev);
            ptd_qry_publish(q, ev);
            return 0; /* the EXSTOP on the next call */
        }
        struct ptd_event *mwait = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
        if (!mwait)
            return -PTD_ERR_NOMEM;
        ptd_qry_ev_copy(mwait, ev);
    }
    if (ip) {
        ev = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_EXSTOP;
        return 1;
    }
    ev = standalone_now(q, PTD_EV_EXSTOP);
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    return publish_now(q, ev);
}

/* MWAIT waits for the EXSTOP after it (libipt: "MWAIT binds to the same IP
 * as a subsequent EXSTOP"). */
static int decode_mwait(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_enqueue(q, PTD_QRY_B_EXSTOP);
    if (!ev)
        return -PTD_ERR_NOMEM;
    ev->type = PTD_EV_MWAIT;
    ev->value = q->cur.payload;
    ev->aux = q->cur.aux;
    return 1;
}

/* PWRE waits for its PWRX (SDM: "PWRX will always apply to the same IP as
 * the PWRE"), keeping its own time. */
static int decode_pwre(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_enqueue(q, PTD_QRY_B_PWRX);
    if (!ev)
        return -PTD_ERR_NOMEM;
    ev->type = PTD_EV_PWRE;
    ev->a = q->cur.a;
    ev->b = (uint8_t)q->cur.aux;
    if (q->cur.flags & PTD_PKTF_HW)
        ev->flags |= PTD_EVF_HW;
    ptd_qry_ev_time(q, ev);
    return 1;
}

/* PWRX: the waiting PWREs first, then the PWRX. */
static int decode_pwrx(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_dequeue(q, PTD_QRY_B_PWRX);
    if (ev) {
        if (ev->type != PTD_EV_PWRE)
            return -PTD_ERR_INTERNAL;
        ptd_qry_publish(q, ev);
        return 0;
    }
    ev = standalone_now(q, PTD_EV_PWRX);
    ev->a = q->cur.a;
    ev->b = (uint8_t)q->cur.aux;
    ev->aux = q->cur.flags;
    return publish_now(q, ev);
}

/* PTW: with its IP bit bound to the next FUP, else standalone. */
static int decode_ptw(struct ptd_qry *q)
{
    enum {
        PTW_BYTES_4 = 4,
        PTW_BYTES_8 = 8
    };
    struct ptd_event *ev;
    if (q->cur.flags & PTD_PKTF_IP) {
        ev = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_PTWRITE;
    } else {
        ev = standalone_now(q, PTD_EV_PTWRITE);
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
    }
    ev->value = q->cur.payload;
    ev->a = q->cur.a ? PTW_BYTES_8 : PTW_BYTES_4;
    if (q->cur.flags & PTD_PKTF_IP)
        return 1;
    return publish_now(q, ev);
}

static int decode_simple(struct ptd_qry *q, unsigned type)
{
    struct ptd_event *ev = standalone_now(q, type);
    ev->value = q->cur.payload;
    return publish_now(q, ev);
}

/* The current packet: 0 an event, 1 read on, < 0 an error (ptd_qry_impl.h). */
static int decode_packet(struct ptd_qry *q)
{
    int r;
    switch (q->cur.kind) {
    case PTD_PKT_TNT8:
    case PTD_PKT_TNT64: return decode_tnt(q);
    case PTD_PKT_TSC:
    case PTD_PKT_TMA:
    case PTD_PKT_MTC:
    case PTD_PKT_CYC:
    case PTD_PKT_CBR: return decode_timing(q);
    case PTD_PKT_FUP: return decode_fup(q);
    case PTD_PKT_TIP: return decode_tip(q);
    case PTD_PKT_TIP_PGE: return decode_tip_pge(q);
    case PTD_PKT_TIP_PGD: return decode_tip_pgd(q);
    case PTD_PKT_MODE_EXEC: return decode_mode_exec(q);
    case PTD_PKT_MODE_TSX: return decode_mode_tsx(q);
    case PTD_PKT_PIP: return decode_pip(q);
    case PTD_PKT_VMCS: return decode_vmcs(q);
    case PTD_PKT_PTW: return decode_ptw(q);
    case PTD_PKT_PSB:
        r = ptd_qry_decode_psb(q);
        if (r <= 0)
            return r;
        return decode_packet(q); /* its PSBEND (or OVF): once */
    case PTD_PKT_PSBEND: return ptd_qry_decode_psbend(q);
    case PTD_PKT_OVF: return ptd_qry_decode_ovf(q);
    case PTD_PKT_EXSTOP: return decode_exstop(q);
    case PTD_PKT_MWAIT: return decode_mwait(q);
    case PTD_PKT_PWRE: return decode_pwre(q);
    case PTD_PKT_PWRX: return decode_pwrx(q);
    case PTD_PKT_STOP: return decode_simple(q, PTD_EV_STOP);
    case PTD_PKT_MNT: return decode_simple(q, PTD_EV_MNT);
    case PTD_PKT_CFE: return ptd_qry_decode_cfe(q);
    case PTD_PKT_EVD: return ptd_qry_decode_evd(q);
    case PTD_PKT_TRIG: return ptd_qry_decode_trig(q);
    case PTD_PKT_NONE:
    case PTD_PKT_INVALID:
        /* a decode error, or a packet an erratum corrupted (SKZ84) */
        return q->status < 0 ? q->status : 1;
    default:
        /* PAD; BBP/BIP/BEP (PEBS via PT) carry nothing for the flow */
        return 1;
    }
}

void ptd_qry_next_tnt(struct ptd_qry *q, struct ptd_event *ev)
{
    /* ptd_qry_next's TNT case without what *ev holds already: cleared
     * fields, the type, the time */
    ev->value = q->cur.payload;
    ev->a = q->cur.a;
    ev->offset = q->cur_off;
    ptd_qry_fetch_fast(q);
}

/* ptd_qry_next past its common cases (decoder/ptd_qry_fast.h); out of
 * line, so that those stay a small function with few registers to save. */
PTD_NOINLINE int ptd_qry_next_decoded(struct ptd_qry *q, struct ptd_event *ev)
{
    struct ptd_event *e;
    int r;

    /* tracing leaving or entering the filter's range, nothing bound to
     * the packet: decode_tip_pgd's and decode_tip_pge's standalone event
     * straight into *ev, without the standalone slot and its copy */
    if (!q->bound && (q->cur.kind == PTD_PKT_TIP_PGE ||
                      (q->cur.kind == PTD_PKT_TIP_PGD && q->evq.begin == q->evq.end))) {
        uint64_t off = q->cur_off;
        r = ptd_qry_update_ip(q, &q->cur);
        if (r < 0)
            return r;
        tip_pg_standalone(q, ev);
        ev->offset = off;
        return 0;
    }

    /* bounded: every round uses a packet up or makes an event */
    for (;;) {
        uint64_t off = q->cur_off;
        r = decode_packet(q);
        if (r < 0)
            return r;
        if (r == 0) {
            e = published(q);
            if (!e)
                return -PTD_ERR_INTERNAL;
            e->offset = off;
            break;
        }
        if (q->event != PTD_QRY_NO_EVENT)
            return -PTD_ERR_INTERNAL;
        /* the packet was used up without an event: the next one is not
         * bound yet */
        q->bound = 0;
        ptd_qry_fetch_fast(q);
    }
    ptd_qry_ev_copy(ev, e);
    q->event = PTD_QRY_NO_EVENT;
    return 0;
}

int ptd_qry_next(struct ptd_qry *q, struct ptd_event *ev)
{
    /* the common cases first (decoder/ptd_qry_fast.h) */
    int r = ptd_qry_next_common(q, ev);
    if (r)
        return r < 0 ? r : 0;
    return ptd_qry_next_decoded(q, ev);
}
