/* libptd query/event layer: PSB+ (Intel SDM Vol. 3C, "Packet Stream
 * Boundary (PSB) Packet"). The packets between PSB and PSBEND restate the
 * state (IP, execution and TSX modes, CR3, VMCS base, timing); their order
 * is undefined, so they all bind to the end of PSB+: PSBEND, or an OVF in
 * its place (an overflow while the header was written). They come out as
 * status updates at that point, with the IP of the header's FUP and the
 * time after the header; MNT in PSB+ comes out as a normal event. */
#include "decoder/ptd_qry_impl.h"

/* BDM70: a PSB+ written while PacketEn=0 just before tracing is enabled
 * may hold a FUP; a TIP.PGE then follows after packets that do not depend
 * on PacketEn. Is it so after d? 1, 0, or an error. */
static int bdm70_pge_follows(const struct ptd_pkt_decoder *at)
{
    struct ptd_pkt_decoder d = *at;
    struct ptd_pkt p;
    /* bounded by the trace: each round takes a packet */
    for (;;) {
        int r = ptd_pkt_next(&d, &p);
        if (r < 0)
            return (r == -PTD_ERR_EOS || r == -PTD_ERR_TRUNCATED) ? 0 : r;
        switch (p.kind) {
        case PTD_PKT_TIP_PGE: return 1;
        case PTD_PKT_PAD:
        case PTD_PKT_TSC:
        case PTD_PKT_CBR:
        case PTD_PKT_PSBEND:
        case PTD_PKT_PIP:
        case PTD_PKT_MODE_EXEC:
        case PTD_PKT_MODE_TSX:
        case PTD_PKT_VMCS:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_MNT: continue;
        default: return 0;
        }
    }
}

int ptd_qry_find_header_fup(const struct ptd_pkt_decoder *at, struct ptd_pkt *fup)
{
    struct ptd_pkt_decoder d = *at;
    for (;;) {
        int r = ptd_pkt_next(&d, fup);
        if (r < 0)
            return r == -PTD_ERR_TRUNCATED ? -PTD_ERR_EOS : r;
        switch (fup->kind) {
        case PTD_PKT_FUP: return 1;
        case PTD_PKT_MODE_EXEC:
        case PTD_PKT_MODE_TSX:
        case PTD_PKT_PIP:
        case PTD_PKT_VMCS:
        case PTD_PKT_MNT:
        case PTD_PKT_TSC:
        case PTD_PKT_CBR:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_PAD:
        case PTD_PKT_INVALID: continue;
        case PTD_PKT_PSBEND:
        case PTD_PKT_OVF: return 0;
        default: return -PTD_ERR_BAD_CONTEXT;
        }
    }
}

/* The FUP in PSB+: tracing is on there, at its IP (unless it is BDM70's). */
static int header_fup(struct ptd_qry *q)
{
    bool enabled = q->cur.a != PTD_IPC_SUPPRESSED;
    if (q->errata & PTD_ERRATUM_BDM70) {
        int r = bdm70_pge_follows(&q->pkt);
        if (r < 0)
            return r;
        if (r)
            enabled = false;
    }
    q->enabled = enabled;
    if (!enabled)
        return 0;
    return ptd_qry_update_ip(q, &q->cur);
}

static struct ptd_event *status_update(struct ptd_qry *q, unsigned type)
{
    struct ptd_event *ev = ptd_qry_enqueue(q, PTD_QRY_B_PSBEND);
    if (ev) {
        ev->type = (uint8_t)type;
        ev->flags |= PTD_EVF_STATUS_UPDATE;
    }
    return ev;
}

/* MODE in PSB+: the state, checked against what the decoder knows (a
 * different execution mode, or IF when iflags events are on, is a bad
 * status update). */
static int header_mode(struct ptd_qry *q)
{
    const struct ptd_pkt *p = &q->cur;
    struct ptd_event *ev;

    if (p->kind == PTD_PKT_MODE_TSX) {
        ev = status_update(q, PTD_EV_TSX);
        if (!ev)
            return -PTD_ERR_NOMEM;
        if (p->flags & PTD_PKTF_INTX)
            ev->flags |= PTD_EVF_SPECULATIVE;
        if (p->flags & PTD_PKTF_ABRT)
            ev->flags |= PTD_EVF_ABORTED;
        return 0;
    }
    uint8_t csl = (p->flags & PTD_PKTF_CSL) != 0, csd = (p->flags & PTD_PKTF_CSD) != 0;
    uint8_t iflag = (p->flags & PTD_PKTF_IF) != 0;
    if (q->mode_exec_valid) {
        /* IF is only complete with Event Trace (iflags events) */
        if ((q->flags & PTD_QRY_F_IFLAGS) && q->iflag != iflag)
            return -PTD_ERR_BAD_STATUS_UPDATE;
        if (q->csd != csd || q->csl != csl)
            return -PTD_ERR_BAD_STATUS_UPDATE;
    } else {
        q->mode_exec_valid = 1;
        q->iflag = iflag;
        q->csd = csd;
        q->csl = csl;
    }
    ev = status_update(q, PTD_EV_EXEC_MODE);
    if (!ev)
        return -PTD_ERR_NOMEM;
    ev->mode = (uint8_t)ptd_qry_exec_mode(p);
    if (q->flags & PTD_QRY_F_IFLAGS) {
        ev = status_update(q, PTD_EV_IFLAGS);
        if (!ev)
            return -PTD_ERR_NOMEM;
        if (iflag)
            ev->flags |= PTD_EVF_IFLAG;
    }
    return 0;
}

/* One packet of PSB+ (not its end): 0 or an error. */
static int header_packet(struct ptd_qry *q)
{
    struct ptd_event *ev;
    int r;
    switch (q->cur.kind) {
    case PTD_PKT_FUP: return header_fup(q);
    case PTD_PKT_MODE_EXEC:
    case PTD_PKT_MODE_TSX: return header_mode(q);
    case PTD_PKT_PIP:
        ev = status_update(q, PTD_EV_ASYNC_PAGING);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->value = q->cur.payload;
        if (q->cur.flags & PTD_PKTF_NR)
            ev->flags |= PTD_EVF_NR;
        return 0;
    case PTD_PKT_VMCS:
        ev = status_update(q, PTD_EV_ASYNC_VMCS);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->value = q->cur.payload;
        return 0;
    case PTD_PKT_MNT:
        /* maintenance: an event of its own, not a status */
        ev = ptd_qry_enqueue(q, PTD_QRY_B_PSBEND);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->type = PTD_EV_MNT;
        ev->value = q->cur.payload;
        return 0;
    case PTD_PKT_CBR:
        r = ptd_qry_apply_time(&q->time, &q->cur);
        if (r < 0)
            return r;
        ev = status_update(q, PTD_EV_CBR);
        if (!ev)
            return -PTD_ERR_NOMEM;
        ev->value = q->cur.payload;
        return 0;
    case PTD_PKT_TSC:
    case PTD_PKT_TMA:
    case PTD_PKT_MTC:
    case PTD_PKT_CYC: return ptd_qry_apply_time(&q->time, &q->cur);
    case PTD_PKT_PAD: return 0;
    case PTD_PKT_NONE:
    case PTD_PKT_INVALID: return q->status;
    default: return -PTD_ERR_BAD_CONTEXT;
    }
}

/* PSB: read the header up to its end, queueing its state for it. PSBEND
 * (or OVF) stays current. 1, or an error. */
int ptd_qry_decode_psb(struct ptd_qry *q)
{
    struct ptd_event *st;
    /* no event may wait across a PSB (libipt gives up here) */
    if (ptd_qry_pending(q, ~0u))
        return -PTD_ERR_BAD_CONTEXT;
    ptd_last_ip_init(&q->lip);
    q->enabled = 0;
    (void)ptd_time_psb(&q->time);
    /* first: enabled or disabled, known at the end */
    st = status_update(q, PTD_EV_DISABLED);
    if (!st)
        return -PTD_ERR_NOMEM;
    /* bounded by the trace: every round takes a packet */
    for (;;) {
        int r;
        ptd_qry_fetch(q);
        switch (q->cur.kind) {
        case PTD_PKT_PSBEND:
            ptd_time_psbend(&q->time);
            if (q->enabled)
                st->type = PTD_EV_ENABLED;
            else
                st->flags |= PTD_EVF_IP_SUPPRESSED;
            return 1;
        case PTD_PKT_OVF:
            /* an OVF ends PSB+ like PSBEND; with tracing off the status
             * goes (the FUP may have been lost: no status to check) */
            ptd_time_psbend(&q->time);
            if (q->enabled)
                st->type = PTD_EV_ENABLED;
            else if (ptd_qry_dequeue(q, PTD_QRY_B_PSBEND) != st)
                return -PTD_ERR_INTERNAL;
            return 1;
        default:
            r = header_packet(q);
            if (r < 0)
                return r;
        }
    }
}

/* PSBEND (and an OVF ending PSB+): the header's events, one per call, with
 * its IP and the time at its end. 1 when none is left. */
int ptd_qry_decode_psbend(struct ptd_qry *q)
{
    struct ptd_event *ev = ptd_qry_dequeue(q, PTD_QRY_B_PSBEND);
    if (!ev)
        return 1;
    switch (ev->type) {
    case PTD_EV_ENABLED:
    case PTD_EV_EXEC_MODE:
    case PTD_EV_IFLAGS:
    case PTD_EV_TSX:
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS: ptd_qry_ev_ip(q, ev); break;
    case PTD_EV_DISABLED:
    case PTD_EV_CBR:
    case PTD_EV_MNT: break;
    default: return -PTD_ERR_BAD_CONTEXT;
    }
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return 0;
}
