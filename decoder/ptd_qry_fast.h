/* libptd query layer: its common events inline. Most events are a TNT or
 * a TIP whose packet is at hand, with nothing bound to it; ptd_qry_next
 * takes those here first, and so does the flow layer's counting loop
 * where it uses up an event (ptd_flow_fetch_event_inline,
 * decoder/ptd_flow_impl.h), without the calls into ptd_qry_next and
 * ptd_flow_fetch_event: in a short trace that enters and leaves its
 * filter often, that is most of its events (foo: 4,349 of 6,599; mruby:
 * 69,000 of 121,000).
 *
 * Internal to libptd (decoder/): the query layer's files take it through
 * ptd_qry_impl.h, the flow layer's through ptd_flow_impl.h. */
#ifndef PTD_QRY_FAST_H
#define PTD_QRY_FAST_H

#include "decoder/ptd_hints.h"
#include "decoder/ptd_qry.h"

static inline void ptd_qry_ev_clear(struct ptd_event *e)
{
    e->ip = 0;
    e->from = 0;
    e->value = 0;
    e->value2 = 0;
    e->offset = 0;
    e->tsc = 0;
    e->lost_mtc = 0;
    e->lost_cyc = 0;
    e->aux = 0;
    e->flags = 0;
    e->type = 0;
    e->mode = 0;
    e->a = 0;
    e->b = 0;
}

/* ptd_qry_fetch's general case (ptd_qry.c): a run of PADs first, a packet
 * outside the fast table, the end of the buffer, an error. */
int ptd_qry_fetch_slow(struct ptd_qry *q);

/* The next packet into q->cur (ptd_qry_fetch): most are one of the fast
 * table's with no PAD before them, decoded here; the rest is
 * ptd_qry_fetch_slow's. Nothing here reads the packet back from q->cur:
 * a byte load from the 16 bytes just stored there waits for the store on
 * some CPUs (no forwarding into a part of a wider store). */
static PTD_ALWAYS_INLINE void ptd_qry_fetch_fast(struct ptd_qry *q)
{
    struct ptd_pkt_decoder *d = &q->pkt;
    const uint8_t *pos = d->pos, *end = d->end;
    if ((size_t)(end - pos) >= PTD_PKT_FAST_BYTES && !d->in_block && *pos != PTD_OPC_PAD) {
        unsigned r = ptd_pkt_decode_fast(pos, end, 0, &q->cur);
        if (r) {
            d->pos = pos + r;
            q->cur_off = (uint64_t)(pos - d->begin);
            return;
        }
    }
    (void)ptd_qry_fetch_slow(q);
}

/* The event's time (libipt's event time: the TSC estimate now). */
static PTD_ALWAYS_INLINE void ptd_qry_ev_time(const struct ptd_qry *q, struct ptd_event *ev)
{
    if (ptd_time_now(&q->time, &ev->tsc, &ev->lost_mtc, &ev->lost_cyc) == 0)
        ev->flags |= PTD_EVF_HAS_TSC;
}

/* The event's IP from last-IP, or PTD_EVF_IP_SUPPRESSED. */
static PTD_ALWAYS_INLINE void ptd_qry_ev_ip(const struct ptd_qry *q, struct ptd_event *ev)
{
    if (ptd_last_ip_query(&q->lip, &ev->ip) < 0)
        ev->flags |= PTD_EVF_IP_SUPPRESSED;
}

/* Apply p's IP to last-IP (an error for a reserved IPBytes). */
static PTD_ALWAYS_INLINE int ptd_qry_update_ip(struct ptd_qry *q, const struct ptd_pkt *p)
{
    return ptd_last_ip_update(&q->lip, p->a, p->payload);
}

/* ptd_qry_next's common cases: 1 with the event in *ev, or an error; 0
 * when the next event is none of them (ptd_qry_next_decoded then goes on
 * from where this left the packets). */
static PTD_ALWAYS_INLINE int ptd_qry_next_common(struct ptd_qry *q, struct ptd_event *ev)
{
    /* A TIP handed out (below) stays the current packet, as in the loop
     * (error offsets stay libipt's); with nothing waiting for it, the
     * round that finds nothing more bound to it is this one. */
    if (q->cur.kind == PTD_PKT_TIP && q->bound && q->evq.begin == q->evq.end) {
        q->bound = 0;
        ptd_qry_fetch_fast(q);
    }
    /* a TNT packet with tracing on */
    if ((q->cur.kind == PTD_PKT_TNT8 || q->cur.kind == PTD_PKT_TNT64) && q->enabled) {
        ptd_qry_ev_clear(ev);
        ev->type = PTD_EV_TNT;
        ev->value = q->cur.payload;
        ev->a = q->cur.a;
        ev->offset = q->cur_off;
        ptd_qry_ev_time(q, ev);
        ptd_qry_fetch_fast(q);
        return 1;
    }
    /* a TIP for an indirect branch, nothing waiting for it: straight into
     * *ev (decode_tip's TIP event) */
    if (q->cur.kind == PTD_PKT_TIP && q->enabled && !q->bound && q->evq.begin == q->evq.end) {
        uint64_t off = q->cur_off;
        int r = ptd_qry_update_ip(q, &q->cur);
        if (r < 0)
            return r;
        ptd_qry_ev_clear(ev);
        ev->type = PTD_EV_TIP;
        ev->offset = off;
        ptd_qry_ev_ip(q, ev);
        ptd_qry_ev_time(q, ev);
        q->bound = 1;
        return 1;
    }
    return 0;
}

/* ptd_qry_next after ptd_qry_next_common found none of its cases: the
 * packets decoded until one makes an event. 0, or an error. */
int ptd_qry_next_decoded(struct ptd_qry *q, struct ptd_event *ev);

#endif /* PTD_QRY_FAST_H */
