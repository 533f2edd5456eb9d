/* libptd query/event layer: OVF (Intel SDM Vol. 3C, "Overflow (OVF)
 * Packet") and the errata around it.
 *
 * After an internal buffer overflow the CPU writes OVF; when the overflow
 * resolves with PacketEn=1 a FUP follows with the IP where tracing resumed
 * (only timing packets in between), else tracing resumed disabled and a
 * TIP.PGE comes later. So: the pending events are settled (published with
 * tracing off, else dropped), the state is reset (the time kept), and the
 * overflow binds to the FUP or stands alone. Errata (the specification
 * updates' wording):
 *   SKD010  "Intel PT FUP may be dropped after OVF": scan ahead for proof
 *           of tracing being on (TIP.PGD, FUP, TIP, a PSB+ with a FUP) and
 *           resume there;
 *   APL11   "OVF may be followed by TIP.PGD": resume after it, disabled;
 *   APL12   "OVF may be followed by an unexpected FUP": if the packets
 *           after the FUP show tracing off, resume after the FUP,
 *           disabled. */
#include "decoder/ptd_qry_impl.h"

/* The offset from d's position to just after the FUP an OVF binds to; 0
 * when a packet first shows that tracing resumed disabled; an error for a
 * packet that cannot come between OVF and its FUP. */
static int find_ovf_fup(const struct ptd_pkt_decoder *at)
{
    struct ptd_pkt_decoder d = *at;
    struct ptd_pkt p;
    int64_t offset = 0;
    for (;;) {
        int r = ptd_pkt_next(&d, &p);
        if (r < 0)
            return r == -PTD_ERR_TRUNCATED ? -PTD_ERR_EOS : r;
        offset += r;
        if (offset > INT32_MAX)
            return -PTD_ERR_OVERFLOW;
        switch (p.kind) {
        case PTD_PKT_FUP: return (int)offset;
        case PTD_PKT_PAD:
        case PTD_PKT_MNT:
        case PTD_PKT_CBR:
        case PTD_PKT_TSC:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_INVALID:
        case PTD_PKT_BBP:
        case PTD_PKT_BIP:
        case PTD_PKT_BEP: continue;
        case PTD_PKT_PSBEND:
        case PTD_PKT_TIP:
        case PTD_PKT_TIP_PGD:
        case PTD_PKT_TNT8:
        case PTD_PKT_TNT64: return -PTD_ERR_BAD_CONTEXT;
        default:
            /* PSB, TIP.PGE, MODE, PIP, VMCS, STOP, OVF, power, PTW, CFE,
             * EVD, TRIG: written with PacketEn=0 */
            return 0;
        }
    }
}

/* Resume after an overflow at the IP of ip_pkt (an erratum's FUP, TIP or
 * PSB+ FUP), tracing on, with the decoder where the look-ahead d stands
 * and cur as its current packet; the overflow event takes the time of the
 * OVF. */
static int recover_at_ip(struct ptd_qry *q, const struct ptd_pkt_decoder *d,
                         const struct ptd_pkt *cur, const struct ptd_pkt *ip_pkt,
                         const struct ptd_time *t)
{
    struct ptd_event *ev;
    int r = ptd_qry_update_ip(q, ip_pkt);
    if (r < 0)
        return r;
    ev = ptd_qry_standalone(q);
    ev->type = PTD_EV_OVERFLOW;
    ptd_qry_ev_time(q, ev);
    q->pkt = *d;
    q->cur = *cur;
    q->cur_off = ptd_pkt_offset(d) - cur->size;
    q->time = *t;
    q->enabled = 1;
    ptd_qry_ev_ip(q, ev);
    ptd_qry_publish(q, ev);
    return 0;
}

/* Resume after an overflow with tracing off, after cur (a TIP.PGD): the
 * overflow takes the time of the OVF, then the next packet. */
static int recover_disabled(struct ptd_qry *q, const struct ptd_pkt_decoder *d,
                            const struct ptd_pkt *cur, const struct ptd_time *t)
{
    struct ptd_event *ev = ptd_qry_standalone(q);
    ev->type = PTD_EV_OVERFLOW;
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    ptd_qry_ev_time(q, ev);
    q->pkt = *d;
    q->cur = *cur;
    q->time = *t;
    ptd_qry_publish(q, ev);
    return ptd_qry_fetch(q);
}

/* Resume with tracing off after the packets up to offset (past the FUP
 * APL12 put there), keeping the time they carry. */
static int recover_at_offset(struct ptd_qry *q, int64_t offset)
{
    struct ptd_event *ev;
    for (;;) {
        int r = ptd_pkt_next(&q->pkt, &q->cur);
        if (r < 0)
            return r == -PTD_ERR_TRUNCATED ? -PTD_ERR_EOS : r;
        if (offset <= r) {
            if (offset < r)
                return -PTD_ERR_INTERNAL;
            break;
        }
        offset -= r;
        switch (q->cur.kind) {
        case PTD_PKT_TSC:
        case PTD_PKT_CBR:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
            r = ptd_qry_apply_time(&q->time, &q->cur);
            if (r < 0)
                return r;
            break;
        case PTD_PKT_MODE_EXEC:
        case PTD_PKT_MODE_TSX:
        case PTD_PKT_PIP:
        case PTD_PKT_VMCS:
        case PTD_PKT_INVALID:
            /* the scan that led here does not pass them */
            return -PTD_ERR_INTERNAL;
        default: break;
        }
    }
    ev = ptd_qry_standalone(q);
    ev->type = PTD_EV_OVERFLOW;
    ev->flags |= PTD_EVF_IP_SUPPRESSED;
    ptd_qry_ev_time(q, ev);
    ptd_qry_publish(q, ev);
    return ptd_qry_fetch(q);
}

static bool is_timing(unsigned kind)
{
    return kind == PTD_PKT_TSC || kind == PTD_PKT_CBR || kind == PTD_PKT_TMA ||
           kind == PTD_PKT_MTC || kind == PTD_PKT_CYC;
}

/* SKD010: no FUP after the OVF. Scan for proof that tracing is on (then
 * the FUP was dropped: resume there) or off. 0 handled (an overflow event
 * made), 1 not (decode as if tracing were off), or an error. */
static int handle_skd010(struct ptd_qry *q)
{
    struct ptd_pkt_decoder d = q->pkt;
    struct ptd_time t = q->time;
    bool tsx_found = false;
    uint8_t tsx_flags = 0;
    /* bounded by the trace */
    for (;;) {
        struct ptd_pkt p, fup;
        int r = ptd_pkt_next(&d, &p);
        if (r < 0)
            return (r == -PTD_ERR_EOS || r == -PTD_ERR_TRUNCATED) ? 1 : r;
        switch (p.kind) {
        case PTD_PKT_TIP_PGE: return 1;
        case PTD_PKT_TIP_PGD:
            /* tracing was on: it stops here */
            return recover_disabled(q, &d, &p, &t);
        case PTD_PKT_TNT8:
        case PTD_PKT_TNT64:
            /* on, but the bits used before an IP packet are unknown */
            return 1;
        case PTD_PKT_PIP:
        case PTD_PKT_VMCS:
        case PTD_PKT_MODE_EXEC:
            /* changes lost with the overflow anyway */
            continue;
        case PTD_PKT_MODE_TSX:
            /* the second one: tracing is off */
            if (tsx_found)
                return 1;
            tsx_found = true;
            tsx_flags = p.flags;
            continue;
        case PTD_PKT_FUP:
            /* on: resume at this FUP (a MODE.TSX before it binds to it) */
            if (tsx_found) {
                struct ptd_event *ev = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
                if (!ev)
                    return -PTD_ERR_NOMEM;
                ev->type = PTD_EV_TSX;
                if (tsx_flags & PTD_PKTF_INTX)
                    ev->flags |= PTD_EVF_SPECULATIVE;
                if (tsx_flags & PTD_PKTF_ABRT)
                    ev->flags |= PTD_EVF_ABORTED;
            }
            return recover_at_ip(q, &d, &p, &p, &t);
        case PTD_PKT_TIP:
            r = recover_at_ip(q, &d, &p, &p, &t);
            if (r < 0)
                return r;
            return ptd_qry_fetch(q);
        case PTD_PKT_PSB:
            /* on exactly when its PSB+ has a FUP */
            r = ptd_qry_find_header_fup(&d, &fup);
            if (r < 0)
                return r == -PTD_ERR_EOS ? 1 : r;
            if (!r)
                return 1;
            return recover_at_ip(q, &d, &p, &fup, &t);
        case PTD_PKT_PSBEND: return -PTD_ERR_BAD_CONTEXT;
        case PTD_PKT_OVF:
        case PTD_PKT_STOP:
        case PTD_PKT_MWAIT: return 1;
        case PTD_PKT_EXSTOP:
        case PTD_PKT_PTW:
        case PTD_PKT_CFE:
            /* standalone ones can be passed; with a FUP to take, no */
            if (p.flags & PTD_PKTF_IP)
                return 1;
            continue;
        case PTD_PKT_PAD:
        case PTD_PKT_MNT:
        case PTD_PKT_PWRE:
        case PTD_PKT_PWRX:
        case PTD_PKT_EVD:
        case PTD_PKT_TRIG: continue;
        default:
            if (is_timing(p.kind)) {
                r = ptd_qry_apply_time(&t, &p);
                if (r < 0)
                    return r;
                continue;
            }
            /* invalid and unknown packets cannot be passed */
            return 1;
        }
    }
}

/* APL11: a TIP.PGD after the OVF: resume after it, disabled. 0 handled, 1
 * not, or an error. */
static int handle_apl11(struct ptd_qry *q)
{
    struct ptd_pkt_decoder d = q->pkt;
    struct ptd_time t = q->time;
    for (;;) {
        struct ptd_pkt p;
        int r = ptd_pkt_next(&d, &p);
        if (r < 0)
            return r == -PTD_ERR_TRUNCATED ? -PTD_ERR_EOS : r;
        switch (p.kind) {
        case PTD_PKT_TIP_PGD: return recover_disabled(q, &d, &p, &t);
        case PTD_PKT_PAD:
        case PTD_PKT_MNT:
        case PTD_PKT_CFE:
        case PTD_PKT_EVD:
        case PTD_PKT_TRIG: continue;
        default:
            if (is_timing(p.kind)) {
                r = ptd_qry_apply_time(&t, &p);
                if (r < 0)
                    return r;
                continue;
            }
            /* any other packet: the erratum does not apply */
            return 1;
        }
    }
}

/* APL12: a FUP after the OVF, ending offset bytes ahead. If what follows
 * it shows tracing off (TIP.PGE, TraceStop, a PSB+ without FUP), resume
 * after the FUP, disabled. 0 handled, 1 not, or an error. */
static int handle_apl12(struct ptd_qry *q, int offset)
{
    struct ptd_pkt_decoder d = q->pkt;
    if ((size_t)(d.end - d.pos) < (size_t)offset)
        return -PTD_ERR_INTERNAL;
    d.pos += offset;
    for (;;) {
        struct ptd_pkt p;
        int r = ptd_pkt_next(&d, &p);
        if (r < 0)
            return (r == -PTD_ERR_EOS || r == -PTD_ERR_TRUNCATED) ? 1 : r;
        switch (p.kind) {
        case PTD_PKT_TNT8:
        case PTD_PKT_TNT64:
        case PTD_PKT_TIP:
        case PTD_PKT_TIP_PGD:
            /* only written with tracing on */
            return 1;
        case PTD_PKT_PSB:
            r = ptd_qry_find_header_fup(&d, &p);
            if (r)
                return r == -PTD_ERR_EOS ? 1 : r;
            return recover_at_offset(q, offset);
        case PTD_PKT_STOP:
        case PTD_PKT_TIP_PGE: return recover_at_offset(q, offset);
        case PTD_PKT_PSBEND:
        case PTD_PKT_OVF: return 1;
        case PTD_PKT_PAD:
        case PTD_PKT_FUP:
        case PTD_PKT_TSC:
        case PTD_PKT_CBR:
        case PTD_PKT_TMA:
        case PTD_PKT_MTC:
        case PTD_PKT_CYC:
        case PTD_PKT_EXSTOP:
        case PTD_PKT_MWAIT:
        case PTD_PKT_PWRE:
        case PTD_PKT_PWRX:
        case PTD_PKT_PTW:
        case PTD_PKT_MNT:
        case PTD_PKT_PIP:
        case PTD_PKT_VMCS:
        case PTD_PKT_MODE_EXEC:
        case PTD_PKT_MODE_TSX:
        case PTD_PKT_CFE:
        case PTD_PKT_EVD:
        case PTD_PKT_TRIG: continue;
        default: return 1;
        }
    }
}

/* Settle the events still waiting at an OVF: with tracing off they come
 * out (without an IP where they would have had one), one per call; with
 * tracing on they are dropped with the rest of the state. 0 an event, 1
 * none left. */
static int flush_pending(struct ptd_qry *q)
{
    const unsigned waiting =
        PTD_QRY_B_FUP_BOUND | PTD_QRY_B_FUP | PTD_QRY_B_TIP | PTD_QRY_B_EXSTOP | PTD_QRY_B_PWRX;
    /* bounded: each round takes an entry out of the queue */
    while (!q->enabled) {
        struct ptd_event *ev = ptd_qry_dequeue(q, waiting);
        if (!ev)
            break;
        switch (ev->type) {
        case PTD_EV_PWRE:
        case PTD_EV_RSM:
        case PTD_EV_SIPI: ptd_qry_publish(q, ev); return 0;
        default:
            if (!ptd_qry_ev_takes_fup_ip(ev->type))
                continue;
            /* the FUP that would have given its IP is lost */
            ev->flags |= PTD_EVF_IP_SUPPRESSED;
            ptd_qry_publish(q, ev);
            return 0;
        }
    }
    return 1;
}

int ptd_qry_decode_ovf(struct ptd_qry *q)
{
    struct ptd_time t;
    struct ptd_event *ev;
    int r, offset;

    /* an OVF ends PSB+ as PSBEND would: its events first */
    r = ptd_qry_decode_psbend(q);
    if (r <= 0)
        return r;
    r = flush_pending(q);
    if (r <= 0)
        return r;
    /* forget the state, keep the time (the calibration only on request:
     * ptd_time_ovf); the OVF stays the current packet */
    t = q->time;
    q->cur.kind = PTD_PKT_NONE; /* as libipt: read again, it is an error */
    q->status = -PTD_ERR_NOSYNC;
    q->event = PTD_QRY_NO_EVENT;
    q->enabled = 0;
    q->bound = 0;
    q->mode_exec_valid = 0;
    ptd_last_ip_init(&q->lip);
    q->evq.begin = q->evq.end = 0;
    q->time = t;
    ptd_time_ovf(&q->time);

    offset = find_ovf_fup(&q->pkt);
    if (offset <= 0) {
        if (q->errata & PTD_ERRATUM_SKD010) {
            r = handle_skd010(q);
            if (r <= 0)
                return r;
        }
        /* a TIP.PGD where the FUP should be */
        if ((q->errata & PTD_ERRATUM_APL11) && offset == -PTD_ERR_BAD_CONTEXT) {
            r = handle_apl11(q);
            if (r <= 0)
                return r;
        }
        /* an OVF at the end of the trace stands alone */
        if (offset < 0 && offset != -PTD_ERR_EOS)
            return offset;
        ev = ptd_qry_standalone(q);
        ev->type = PTD_EV_OVERFLOW;
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
        ptd_qry_ev_time(q, ev);
        ptd_qry_publish(q, ev);
        return ptd_qry_fetch(q);
    }
    if (q->errata & PTD_ERRATUM_APL12) {
        r = handle_apl12(q, offset);
        if (r <= 0)
            return r;
    }
    ev = ptd_qry_enqueue(q, PTD_QRY_B_FUP_BOUND);
    if (!ev)
        return -PTD_ERR_NOMEM;
    ev->type = PTD_EV_OVERFLOW;
    ptd_qry_ev_time(q, ev);
    return 1;
}
