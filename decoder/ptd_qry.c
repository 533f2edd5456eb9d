/* libptd query/event layer: see ptd_qry.h. */
#include "decoder/ptd_qry.h"
#include "decoder/ptd_ild.h"

const char *ptd_qry_errstr(int code)
{
    if (code < 0)
        code = -code;
    switch (code) {
    case PTD_ERR_BAD_CONTEXT: return "unexpected packet context";
    case PTD_ERR_BAD_QUERY: return "trace stream does not match query";
    case 9: return "out of memory";
    case 10: return "bad configuration";
    case PTD_ERR_NOMAP: return "no memory mapped at this address";
    case PTD_ERR_BAD_INSN: return "unknown instruction";
    case PTD_ERR_RETSTACK_EMPTY: return "compressed return without call";
    case PTD_ERR_BAD_RETCOMP: return "bad compressed return";
    case PTD_ERR_BAD_STATUS_UPDATE: return "bad status update";
    case PTD_ERR_NO_ENABLE: return "expected tracing enabled event";
    case PTD_ERR_EVENT_IGNORED: return "event ignored";
    case 25: return "overflow";
    default: return ptd_errstr(code);
    }
}

/* ---- small helpers ------------------------------------------------------ */

static void ev_clear(struct ptd_event *e)
{
    e->ip = 0;
    e->from = 0;
    e->value = 0;
    e->offset = 0;
    e->tsc = 0;
    e->aux = 0;
    e->type = 0;
    e->flags = 0;
    e->mode = 0;
    e->a = 0;
    e->b = 0;
}

static void evq_init(struct ptd_qry_evq *q)
{
    q->head = 0;
    q->count = 0;
}

/* Appends a cleared event; when full, the oldest is dropped (bounded
 * memory for a corrupt trace that never sends the binding packet). */
static void ev_stamp(const struct ptd_qry *q, struct ptd_event *e);

static struct ptd_event *evq_push_(struct ptd_qry_evq *q)
{
    struct ptd_event *e;
    if (q->count == PTD_QRY_EVQ) {
        q->head = (uint8_t)((q->head + 1) % PTD_QRY_EVQ);
        q->count--;
    }
    e = &q->ev[(q->head + q->count) % PTD_QRY_EVQ];
    q->count++;
    ev_clear(e);
    return e;
}

/* An event made now takes the current time (libipt's pt_qry_event_time). */
#define evq_push(qry, evq) ev_stamped((qry), evq_push_(evq))
static struct ptd_event *ev_stamped(const struct ptd_qry *q, struct ptd_event *e)
{
    ev_stamp(q, e);
    return e;
}

static struct ptd_event *evq_front(struct ptd_qry_evq *q)
{
    return q->count ? &q->ev[q->head] : NULL;
}

static void evq_pop(struct ptd_qry_evq *q)
{
    if (q->count) {
        q->head = (uint8_t)((q->head + 1) % PTD_QRY_EVQ);
        q->count--;
    }
}

static bool evq_has(const struct ptd_qry_evq *q, unsigned type)
{
    for (unsigned i = 0; i < q->count; i++)
        if (q->ev[(q->head + i) % PTD_QRY_EVQ].type == type)
            return true;
    return false;
}

static void ev_copy(struct ptd_event *d, const struct ptd_event *s)
{
    d->ip = s->ip;
    d->from = s->from;
    d->value = s->value;
    d->offset = s->offset;
    d->tsc = s->tsc;
    d->aux = s->aux;
    d->type = s->type;
    d->flags = s->flags;
    d->mode = s->mode;
    d->a = s->a;
    d->b = s->b;
}

static unsigned exec_mode_of(const struct ptd_pkt *p)
{
    if (p->flags & PTD_PKTF_CSL)
        return PTD_EXEC_MODE_64;
    if (p->flags & PTD_PKTF_CSD)
        return PTD_EXEC_MODE_32;
    return PTD_EXEC_MODE_16;
}

/* Sets e's type and the fields the packet p carries (MODE.Exec: the mode;
 * MODE.TSX: in transaction / aborted; PIP: CR3 and NR; VMCS: the base).
 * The same packet makes different event types in PSB+, ahead of a TIP or
 * on its own, so the caller names the type. */
static void event_from_packet(struct ptd_event *e, uint8_t type, const struct ptd_pkt *p)
{
    e->type = type;
    switch (p->kind) {
    case PTD_PKT_MODE_EXEC:
        e->mode = (uint8_t)exec_mode_of(p);
        break;
    case PTD_PKT_MODE_TSX:
        if (p->flags & PTD_PKTF_INTX)
            e->flags |= PTD_EVF_SPECULATIVE;
        if (p->flags & PTD_PKTF_ABRT)
            e->flags |= PTD_EVF_ABORTED;
        break;
    case PTD_PKT_PIP:
        e->value = p->payload;
        if (p->flags & PTD_PKTF_NR)
            e->flags |= PTD_EVF_NR;
        break;
    case PTD_PKT_VMCS:
        e->value = p->payload;
        break;
    default:
        break;
    }
}

/* ---- packet access ------------------------------------------------------ */

void ptd_qry_init(struct ptd_qry *q, const uint8_t *buf, size_t size)
{
    ptd_pkt_init(&q->pkt, buf, size);
    ptd_last_ip_init(&q->lip);
    q->next_off = 0;
    q->next_err = 0;
    q->have_next = 0;
    q->ip_applied = 0;
    q->ntnt = 0;
    q->tnt = 0;
    q->enabled = 0;
    q->errata = 0;
    evq_init(&q->tipq);
    evq_init(&q->fupq);
    evq_init(&q->psbq);
    ev_clear(&q->cur);
    ptd_qry_set_time(q, NULL);
}

void ptd_qry_set_errata(struct ptd_qry *q, unsigned errata)
{
    q->errata = errata;
    ptd_pkt_set_errata(&q->pkt, errata);
}

/* Decode the packet ahead (once). Returns 0 or the error why there is
 * none (-PTD_ERR_EOS at the end; a packet cut by the end counts as end). */
static int fetch(struct ptd_qry *q)
{
    int r;
    if (q->have_next)
        return q->next_err;
    /* PAD carries nothing (SDM "PAD Packet"), and the layers above never
     * stop at one (read_ahead decodes it as status): skip runs of them
     * here, byte by byte, instead of a packet decode each. Between BBP and
     * BEP a 00 byte could start a BIP: leave that to the packet layer. */
    if (!q->pkt.in_block) {
        const uint8_t *p = q->pkt.pos;
        while (p < q->pkt.end && *p == PTD_OPC_PAD)
            p++;
        q->pkt.pos = p;
    }
    q->next_off = (uint64_t)(q->pkt.pos - q->pkt.begin);
    r = ptd_pkt_next(&q->pkt, &q->next);
    if (r >= 0 && q->next.kind == PTD_PKT_CYC && (q->errata & PTD_ERRATUM_SKD007) &&
        ptd_time_skd007_cyc(&q->next, q->pkt.begin + q->next_off, q->pkt.end)) {
        /* SKD007: an OVF cut this CYC; drop it, go on at the OVF */
        q->pkt.pos = q->pkt.begin + q->next_off + 1;
        r = ptd_pkt_next(&q->pkt, &q->next);
    }
    if (r == -PTD_ERR_TRUNCATED)
        r = -PTD_ERR_EOS;
    q->next_err = r < 0 ? r : 0;
    if (r < 0)
        q->next.kind = PTD_PKT_NONE;
    q->have_next = 1;
    q->ip_applied = 0;
    return q->next_err;
}

/* Forget the packet ahead without taking it (resync). */
static void drop(struct ptd_qry *q)
{
    q->tip_used = 0;
    q->have_next = 0;
    q->ip_applied = 0;
}

static void consume(struct ptd_qry *q)
{
    if (q->timing && q->have_next && !q->next_err)
        (void)ptd_time_packet(&q->time, &q->next);
    q->tip_used = 0;
    q->have_next = 0;
    q->ip_applied = 0;
}

void ptd_qry_set_time(struct ptd_qry *q, const struct ptd_time_config *cfg)
{
    q->timing = cfg != NULL;
    ptd_time_init(&q->time, cfg);
    q->snap_rc = -PTD_TIME_ERR_NO_TIME;
    q->snap_tsc = 0;
}

static void ev_stamp(const struct ptd_qry *q, struct ptd_event *e)
{
    if (q->timing && ptd_time_now(&q->time, &e->tsc, NULL, NULL) == 0)
        e->flags |= PTD_EVF_HAS_TSC;
}

/* The time handed out from now on (libipt's last_time). */
static void snapshot(struct ptd_qry *q)
{
    if (q->timing)
        q->snap_rc = ptd_time_now(&q->time, &q->snap_tsc, &q->snap_lost_mtc, &q->snap_lost_cyc);
}

int ptd_qry_time(const struct ptd_qry *q, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
    if (!q->timing)
        return -PTD_TIME_ERR_NO_TIME;
    *tsc = q->snap_tsc;
    if (lost_mtc)
        *lost_mtc = q->snap_lost_mtc;
    if (lost_cyc)
        *lost_cyc = q->snap_lost_cyc;
    return q->snap_rc;
}

uint64_t ptd_qry_offset(const struct ptd_qry *q)
{
    return q->have_next ? q->next_off : ptd_pkt_offset(&q->pkt);
}

/* Apply the IP of the packet ahead to last-IP once; *ip and 0, or
 * suppressed (1). */
static int apply_ip(struct ptd_qry *q, uint64_t *ip, int *err)
{
    *err = 0;
    if (!q->ip_applied) {
        int r = ptd_last_ip_update(&q->lip, q->next.a, q->next.payload);
        if (r < 0) {
            *err = r;
            return 1;
        }
        q->ip_applied = 1;
    }
    if (q->next.a == PTD_IPC_SUPPRESSED)
        return 1;
    return ptd_last_ip_query(&q->lip, ip) < 0 ? 1 : 0;
}

/* Would the packet ahead produce an event? */
static bool will_event(const struct ptd_qry *q)
{
    if (!q->have_next || q->next_err)
        return false;
    switch (q->next.kind) {
    case PTD_PKT_TIP_PGE:
    case PTD_PKT_TIP_PGD:
    case PTD_PKT_OVF:
    case PTD_PKT_PIP:
    case PTD_PKT_VMCS:
    case PTD_PKT_STOP:
    case PTD_PKT_EXSTOP:
    case PTD_PKT_MWAIT:
    case PTD_PKT_PWRE:
    case PTD_PKT_PWRX:
    case PTD_PKT_PTW:
    case PTD_PKT_CBR:
    case PTD_PKT_MNT:
        return true;
    case PTD_PKT_TIP:
        return q->tipq.count != 0;
    case PTD_PKT_FUP:
        return q->fupq.count != 0;
    case PTD_PKT_MODE_EXEC:
    case PTD_PKT_MODE_TSX:
        /* as libipt (its MODE decoder is an event one): a query that
         * wants a TNT or TIP stops here (the error is at the MODE), the
         * event query reads it and goes on to where it binds */
        return true;
    case PTD_PKT_PSBEND:
        return q->psbq.count != 0;
    default:
        return false;
    }
}

static bool is_branch_pkt(const struct ptd_qry *q)
{
    return q->have_next && !q->next_err &&
           (q->next.kind == PTD_PKT_TIP || q->next.kind == PTD_PKT_TNT8 ||
            q->next.kind == PTD_PKT_TNT64);
}

static int status_flags(struct ptd_qry *q)
{
    int flags = 0;
    if (q->ntnt == 0) {
        int r = fetch(q);
        if (r == -PTD_ERR_EOS)
            flags |= PTD_ST_EOS;
        else if (r == 0 && will_event(q))
            flags |= PTD_ST_EVENT;
    }
    return flags;
}

/* ---- PSB+ --------------------------------------------------------------- */

/* BDM70: is the FUP just fetched (in PSB+, tracing disabled) followed by a
 * TIP.PGE, with only packets that do not depend on PacketEn in between
 * (PAD, timing, CBR, PSBEND, PIP, MODE, VMCS, MNT)? Then it is the
 * erratum's FUP. Looks ahead on a copy of the packet decoder; bounded by
 * the trace. */
static bool bdm70_pge_follows(const struct ptd_qry *q)
{
    struct ptd_pkt_decoder d = q->pkt;
    struct ptd_pkt p;
    for (;;) {
        if (ptd_pkt_next(&d, &p) < 0)
            return false;
        switch (p.kind) {
        case PTD_PKT_TIP_PGE:
            return true;
        case PTD_PKT_PAD:
        case PTD_PKT_TSC:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_CBR:
        case PTD_PKT_PSBEND:
        case PTD_PKT_PIP:
        case PTD_PKT_MODE_EXEC:
        case PTD_PKT_MODE_TSX:
        case PTD_PKT_VMCS:
        case PTD_PKT_MNT:
            continue;
        default:
            return false;
        }
    }
}

/* The packet ahead is PSB: read the header up to (not including) PSBEND,
 * queueing its status for PSBEND (SDM "Packet Stream Boundary"). */
static int read_psb(struct ptd_qry *q)
{
    consume(q);
    /* IP compression restarts at PSB; cached TNT bits stay (they were
     * read ahead of the PSB and belong before it) */
    ptd_last_ip_init(&q->lip);
    evq_init(&q->psbq);
    /* bounded: every iteration consumes a packet */
    for (;;) {
        uint64_t ip;
        int err, r = fetch(q);
        if (r < 0)
            return r;
        switch (q->next.kind) {
        case PTD_PKT_PSBEND:
            return 0;
        case PTD_PKT_PAD:
        case PTD_PKT_TSC:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_CBR:
            break;
        case PTD_PKT_FUP:
            if ((q->errata & PTD_ERRATUM_BDM70) && !q->enabled && bdm70_pge_follows(q))
                break;      /* BDM70: not where tracing is; TIP.PGE says it */
            (void)apply_ip(q, &ip, &err);
            if (err)
                return err;
            if (q->next.a != PTD_IPC_SUPPRESSED)
                q->enabled = 1;
            break;
        case PTD_PKT_MODE_EXEC:
            event_from_packet(evq_push(q, &q->psbq), PTD_EV_EXEC_MODE, &q->next);
            break;
        case PTD_PKT_MODE_TSX:
            event_from_packet(evq_push(q, &q->psbq), PTD_EV_TSX, &q->next);
            break;
        case PTD_PKT_PIP:
            event_from_packet(evq_push(q, &q->psbq), PTD_EV_ASYNC_PAGING, &q->next);
            break;
        case PTD_PKT_VMCS:
            event_from_packet(evq_push(q, &q->psbq), PTD_EV_ASYNC_VMCS, &q->next);
            break;
        default:
            return -PTD_ERR_BAD_CONTEXT;
        }
        consume(q);
    }
}

/* ---- status packets (read ahead) ---------------------------------------- */

static int decode_status(struct ptd_qry *q)
{
    struct ptd_event *e;
    uint64_t ip;
    int err;

    switch (q->next.kind) {
    case PTD_PKT_PSB:
        return read_psb(q);
    case PTD_PKT_MODE_EXEC:
        event_from_packet(evq_push(q, &q->tipq), PTD_EV_EXEC_MODE, &q->next);
        break;
    case PTD_PKT_MODE_TSX:
        /* tracing on (will_event): it binds to the FUP that follows */
        event_from_packet(evq_push(q, &q->fupq), PTD_EV_TSX, &q->next);
        break;
    case PTD_PKT_FUP:
        /* a FUP with nothing bound to it: the source of an asynchronous
         * branch; the next TIP/TIP.PGD completes it */
        {
            int s = apply_ip(q, &ip, &err);
            if (err)
                return err;
            e = evq_push(q, &q->tipq);
            e->type = PTD_EV_ASYNC_BRANCH;
            e->from = ip;
            if (s)
                e->flags |= PTD_EVF_IP_SUPPRESSED;
        }
        break;
    default:
        /* PAD, timing, PSBEND without status, BBP/BIP/BEP/CFE/EVD... */
        break;
    }
    consume(q);
    return 0;
}

/* Decode status packets up to the next TNT/TIP or event packet. */
static int read_ahead(struct ptd_qry *q)
{
    for (;;) {
        int r = fetch(q);
        if (r < 0)
            return r;
        if (is_branch_pkt(q) || will_event(q))
            return 0;
        r = decode_status(q);
        if (r < 0)
            return r;
    }
}

/* ---- events ------------------------------------------------------------- */

/* Kind of the first packet after the one ahead that is not PAD or timing
 * (a second look-ahead on a copy of the packet decoder). */
static unsigned peek_after_next(const struct ptd_qry *q)
{
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    d.begin = q->pkt.begin;
    d.end = q->pkt.end;
    d.pos = q->pkt.pos;
    d.sync = q->pkt.sync;
    d.in_block = q->pkt.in_block;
    d.block_sz4 = q->pkt.block_sz4;
    d.errata = q->pkt.errata;
    d.libipt20 = q->pkt.libipt20;
    d.pwre_bit3 = q->pkt.pwre_bit3;
    for (;;) {
        if (ptd_pkt_next(&d, &p) < 0)
            return PTD_PKT_NONE;
        if (p.kind != PTD_PKT_PAD && p.kind != PTD_PKT_TSC && p.kind != PTD_PKT_MTC &&
            p.kind != PTD_PKT_TMA && p.kind != PTD_PKT_CYC)
            return p.kind;
    }
}

/* OVF: drop what was pending; tracing resumes at the next FUP (only
 * timing packets in between), else the overflow resolved with tracing
 * disabled (SDM "Overflow Packet"); a TNT or TIP right after OVF contradicts
 * both. Errata: APL12, a FUP followed by TIP.PGE is not where tracing
 * resumed; APL11, a TIP.PGD may follow OVF; SKD010, the FUP may be missing
 * and the TIP that follows gives the IP. */
static int decode_ovf(struct ptd_qry *q, struct ptd_event *ev)
{
    uint64_t off = q->next_off;
    consume(q);
    q->ntnt = 0;
    q->enabled = 0;
    evq_init(&q->tipq);
    evq_init(&q->fupq);
    evq_init(&q->psbq);
    ptd_last_ip_init(&q->lip);
    ev->type = PTD_EV_OVERFLOW;
    ev->offset = off;
    for (;;) {
        uint64_t ip = 0;
        int err, s;
        if (fetch(q) < 0)
            break;
        switch (q->next.kind) {
        case PTD_PKT_PAD:
        case PTD_PKT_TSC:
        case PTD_PKT_MTC:
        case PTD_PKT_TMA:
        case PTD_PKT_CYC:
            consume(q);
            continue;
        case PTD_PKT_FUP:
            if ((q->errata & PTD_ERRATUM_APL12) && peek_after_next(q) == PTD_PKT_TIP_PGE) {
                consume(q);
                break;
            }
            s = apply_ip(q, &ip, &err);
            if (err)
                return err;
            consume(q);
            if (s)
                break;
            ev->ip = ip;
            q->enabled = 1;
            return 1;
        case PTD_PKT_TIP_PGD:
            if (!(q->errata & PTD_ERRATUM_APL11))
                return -PTD_ERR_BAD_CONTEXT;
            consume(q);
            break;
        case PTD_PKT_TIP:
            if (!(q->errata & PTD_ERRATUM_SKD010))
                return -PTD_ERR_BAD_CONTEXT;
            s = apply_ip(q, &ip, &err);
            if (err)
                return err;
            consume(q);
            if (s)
                break;
            ev->ip = ip;
            q->enabled = 1;
            return 1;
        case PTD_PKT_TNT8:
        case PTD_PKT_TNT64:
            return -PTD_ERR_BAD_CONTEXT;
        default:
            break;
        }
        break;
    }
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    return 1;
}

/* Publish the front of a queue with the packet's IP; consume the packet
 * when the queue is empty afterwards. */
static int publish_bound(struct ptd_qry *q, struct ptd_qry_evq *bq,
                         struct ptd_event *ev, uint64_t ip, int suppressed)
{
    struct ptd_event *f = evq_front(bq);
    ev_copy(ev, f);
    evq_pop(bq);
    ev->offset = q->next_off;
    if (ev->type == PTD_EV_ASYNC_BRANCH || ev->type == PTD_EV_ASYNC_PAGING ||
        ev->type == PTD_EV_ASYNC_VMCS || ev->type == PTD_EV_EXEC_MODE ||
        ev->type == PTD_EV_TSX || ev->type == PTD_EV_EXSTOP ||
        ev->type == PTD_EV_MWAIT || ev->type == PTD_EV_PTWRITE) {
        ev->ip = ip;
        if (suppressed)
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
    }
    if (!bq->count)
        consume(q);
    return 1;
}

/* Decode the event packet ahead. 1: *ev holds an event; 0: none (read
 * on); < 0: error. */
static int decode_event(struct ptd_qry *q, struct ptd_event *ev)
{
    struct ptd_event *e;
    uint64_t ip = 0;
    int s, err;

    ev_clear(ev);
    ev_stamp(q, ev);
    ev->offset = q->next_off;
    switch (q->next.kind) {
    case PTD_PKT_TIP_PGE:
        s = apply_ip(q, &ip, &err);
        if (err)
            return err;
        /* first the enable, then what binds to it (MODE.Exec): the packet
         * stays ahead until they are all out. ip_applied marks the first. */
        if (q->ip_applied == 1) {
            q->ip_applied = 2;
            if (s)
                return -PTD_ERR_BAD_PACKET;
            /* TNT bits left over belong to before the disable: drop them */
            q->ntnt = 0;
            q->enabled = 1;
            ev->type = PTD_EV_ENABLED;
            ev->ip = ip;
            if (s)
                ev->flags |= PTD_EVF_IP_SUPPRESSED;
            if (!q->tipq.count)
                consume(q);
            return 1;
        }
        return publish_bound(q, &q->tipq, ev, ip, s);
    case PTD_PKT_TIP_PGD:
        s = apply_ip(q, &ip, &err);
        if (err)
            return err;
        /* only an asynchronous branch may bind to TIP.PGD */
        e = evq_front(&q->tipq);
        if (e) {
            if (e->type != PTD_EV_ASYNC_BRANCH || q->tipq.count > 1)
                return -PTD_ERR_BAD_CONTEXT;
            ev->type = PTD_EV_ASYNC_DISABLED;
            ev->from = e->from;
            evq_pop(&q->tipq);
        } else {
            ev->type = PTD_EV_DISABLED;
        }
        ev->ip = ip;
        if (s)
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
        q->enabled = 0;
        consume(q);
        return 1;
    case PTD_PKT_TIP:
        /* An asynchronous branch uses the TIP up; MODE.Exec (and PIP/VMCS
         * bound to it) only take its IP and leave it to the far branch's
         * indirect query. */
        s = apply_ip(q, &ip, &err);
        if (err)
            return err;
        e = evq_front(&q->tipq);
        if (e->type == PTD_EV_ASYNC_BRANCH)
            q->tip_used = 1;
        ev_copy(ev, e);
        evq_pop(&q->tipq);
        ev->offset = q->next_off;
        ev->ip = ip;
        if (s)
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
        if (!q->tipq.count && q->tip_used) {
            q->tip_used = 0;
            consume(q);
        }
        return 1;
    case PTD_PKT_FUP:
        /* MODE.TSX begin/commit, EXSTOP, MWAIT and PTW use the FUP up; a
         * transaction abort only takes its IP: the FUP then also starts the
         * asynchronous branch to the abort handler (SDM "MODE.TSX") */
        s = apply_ip(q, &ip, &err);
        if (err)
            return err;
        e = evq_front(&q->fupq);
        if (!(e->type == PTD_EV_TSX && (e->flags & PTD_EVF_ABORTED)))
            q->tip_used = 1;
        ev_copy(ev, e);
        evq_pop(&q->fupq);
        ev->offset = q->next_off;
        ev->ip = ip;
        if (s)
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
        if (!q->fupq.count && q->tip_used)
            consume(q);
        return 1;
    case PTD_PKT_PSBEND:
        s = ptd_last_ip_query(&q->lip, &ip) < 0;
        publish_bound(q, &q->psbq, ev, ip, s);
        ev->flags |= PTD_EVF_STATUS_UPDATE;
        /* PSB+ events take the time at PSBEND (libipt's psbend events) */
        ev->flags &= (uint8_t)~PTD_EVF_HAS_TSC;
        ev->tsc = 0;
        ev_stamp(q, ev);
        return 1;
    case PTD_PKT_OVF:
        return decode_ovf(q, ev);
    case PTD_PKT_PIP:
        if (evq_has(&q->tipq, PTD_EV_ASYNC_BRANCH)) {
            event_from_packet(evq_push(q, &q->tipq), PTD_EV_ASYNC_PAGING, &q->next);
            consume(q);
            return 0;
        }
        event_from_packet(ev, PTD_EV_PAGING, &q->next);
        consume(q);
        return 1;
    case PTD_PKT_VMCS:
        if (evq_has(&q->tipq, PTD_EV_ASYNC_BRANCH)) {
            event_from_packet(evq_push(q, &q->tipq), PTD_EV_ASYNC_VMCS, &q->next);
            consume(q);
            return 0;
        }
        event_from_packet(ev, PTD_EV_VMCS, &q->next);
        consume(q);
        return 1;
    case PTD_PKT_MODE_EXEC:
        /* binds to the next TIP/TIP.PGE/TIP.PGD: read on */
        event_from_packet(evq_push(q, &q->tipq), PTD_EV_EXEC_MODE, &q->next);
        consume(q);
        return 0;
    case PTD_PKT_MODE_TSX:
        if (q->enabled) {
            /* binds to the FUP that follows: read on */
            event_from_packet(evq_push(q, &q->fupq), PTD_EV_TSX, &q->next);
            consume(q);
            return 0;
        }
        /* tracing is off: no FUP follows, no IP (libipt's standalone TSX) */
        event_from_packet(ev, PTD_EV_TSX, &q->next);
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
        consume(q);
        return 1;
    case PTD_PKT_STOP:
        ev->type = PTD_EV_STOP;
        consume(q);
        return 1;
    case PTD_PKT_CBR:
        ev->type = PTD_EV_CBR;
        ev->value = q->next.payload;
        consume(q);
        return 1;
    case PTD_PKT_MNT:
        ev->type = PTD_EV_MNT;
        ev->value = q->next.payload;
        consume(q);
        return 1;
    case PTD_PKT_PWRE:
        ev->type = PTD_EV_PWRE;
        ev->a = q->next.a;
        ev->b = (uint8_t)q->next.aux;
        if (q->next.flags & PTD_PKTF_HW)
            ev->flags |= PTD_EVF_HW;
        consume(q);
        return 1;
    case PTD_PKT_PWRX:
        ev->type = PTD_EV_PWRX;
        ev->a = q->next.a;
        ev->b = (uint8_t)q->next.aux;
        ev->aux = q->next.flags;
        consume(q);
        return 1;
    case PTD_PKT_EXSTOP:
    case PTD_PKT_PTW:
    case PTD_PKT_MWAIT:
        {
            unsigned type = q->next.kind == PTD_PKT_EXSTOP ? PTD_EV_EXSTOP
                          : q->next.kind == PTD_PKT_PTW ? PTD_EV_PTWRITE : PTD_EV_MWAIT;
            bool bound = q->next.kind == PTD_PKT_MWAIT || (q->next.flags & PTD_PKTF_IP);
            e = bound ? evq_push(q, &q->fupq) : ev;
            e->type = (uint8_t)type;
            e->value = q->next.payload;
            e->aux = q->next.aux;
            consume(q);
            if (bound)
                return 0;
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
            return 1;
        }
    default:
        return -PTD_ERR_INTERNAL;
    }
}

/* ---- queries ------------------------------------------------------------ */

int ptd_qry_sync_forward(struct ptd_qry *q, uint64_t *ip)
{
    int r, flags = 0;
    uint64_t at = ptd_qry_offset(q);

    q->pkt.pos = q->pkt.begin + at;
    drop(q);
    if (q->timing)
        ptd_time_reset(&q->time);
    q->ntnt = 0;
    q->enabled = 0;
    evq_init(&q->tipq);
    evq_init(&q->fupq);
    evq_init(&q->psbq);
    ptd_last_ip_init(&q->lip);
    r = ptd_pkt_sync_forward(&q->pkt);
    if (r < 0)
        return r;
    r = fetch(q);
    if (r < 0)
        return r;
    if (q->next.kind != PTD_PKT_PSB)
        return -PTD_ERR_NOSYNC;
    r = read_psb(q);
    if (r < 0)
        return r;
    if (ptd_last_ip_query(&q->lip, ip) < 0)
        flags |= PTD_ST_IP_SUPPRESSED;
    snapshot(q);
    r = read_ahead(q);
    if (r < 0 && r != -PTD_ERR_EOS)
        return r;
    return flags | status_flags(q);
}

int ptd_qry_cond(struct ptd_qry *q, int *taken)
{
    if (q->ntnt == 0) {
        for (;;) {
            int r = fetch(q);
            if (r < 0)
                return r;
            /* TNT first: the common case, and never an event */
            if (q->next.kind != PTD_PKT_TNT8 && q->next.kind != PTD_PKT_TNT64 &&
                (will_event(q) || q->next.kind == PTD_PKT_TIP))
                return -PTD_ERR_BAD_QUERY;
            if (q->next.kind == PTD_PKT_TNT8 || q->next.kind == PTD_PKT_TNT64) {
                q->tnt = q->next.payload;
                q->ntnt = q->next.a;
                consume(q);
                snapshot(q);
                r = read_ahead(q);
                if (r < 0 && r != -PTD_ERR_EOS)
                    return r;
                if (q->ntnt == 0)
                    continue;   /* an empty TNT (not architectural) */
                break;
            }
            r = decode_status(q);
            if (r < 0)
                return r;
        }
    }
    q->ntnt--;
    *taken = (int)((q->tnt >> q->ntnt) & 1);
    return status_flags(q);
}

int ptd_qry_indirect(struct ptd_qry *q, uint64_t *ip)
{
    int flags = 0, r;
    for (;;) {
        r = fetch(q);
        if (r < 0)
            return r;
        if (will_event(q))
            return -PTD_ERR_BAD_QUERY;
        if (q->next.kind == PTD_PKT_TNT8 || q->next.kind == PTD_PKT_TNT64) {
            if (q->ntnt)
                return -PTD_ERR_BAD_QUERY;
            q->tnt = q->next.payload;
            q->ntnt = q->next.a;
            consume(q);
        } else if (q->next.kind == PTD_PKT_TIP) {
            int err;
            if (apply_ip(q, ip, &err))
                flags |= PTD_ST_IP_SUPPRESSED;
            if (err)
                return err;
            consume(q);
            snapshot(q);
            break;
        } else {
            r = decode_status(q);
            if (r < 0)
                return r;
            continue;
        }
        r = read_ahead(q);
        if (r < 0)
            return r;
    }
    r = read_ahead(q);
    if (r < 0 && r != -PTD_ERR_EOS)
        return r;
    return flags | status_flags(q);
}

int ptd_qry_event(struct ptd_qry *q, struct ptd_event *ev)
{
    int r;
    if (q->ntnt)
        return -PTD_ERR_BAD_QUERY;
    for (;;) {
        r = fetch(q);
        if (r < 0)
            return r;
        if (will_event(q)) {
            r = decode_event(q, ev);
            if (r < 0)
                return r;
            if (r > 0) {
                snapshot(q);
                break;
            }
        } else {
            if (is_branch_pkt(q))
                return -PTD_ERR_BAD_QUERY;
            r = decode_status(q);
            if (r < 0)
                return r;
        }
        r = read_ahead(q);
        if (r < 0)
            return r;
    }
    r = read_ahead(q);
    if (r < 0 && r != -PTD_ERR_EOS)
        return r;
    return status_flags(q);
}
