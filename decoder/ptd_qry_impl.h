/* Internal to libptd's query/event layer (decoder/ptd_qry*.c): the pieces
 * its files share. Not an interface: only ptd_qry*.c include it.
 *
 * The decode functions of a packet kind (ptd_qry_decode_<kind>) follow one
 * convention, the event decoder's loop in ptd_qry.c relying on it:
 *    0  an event was made (ptd_qry_publish); if its packet is used up the
 *       function fetched the next one, else the packet stays current and is
 *       decoded again on the next call (more events bind to it);
 *    1  the packet is used up without an event: the loop fetches the next;
 *   <0  an error. */
#ifndef PTD_QRY_IMPL_H
#define PTD_QRY_IMPL_H

#include "decoder/ptd_qry.h"
#include "decoder/ptd_qry_fast.h"

/* ---- the queue of pending events (ptd_qry.c) ---- */
struct ptd_event *ptd_qry_enqueue(struct ptd_qry *q, unsigned binding);
struct ptd_event *ptd_qry_dequeue(struct ptd_qry *q, unsigned binding);
struct ptd_event *ptd_qry_find(struct ptd_qry *q, unsigned binding, unsigned type);
struct ptd_event *ptd_qry_peek(struct ptd_qry *q, unsigned binding);
bool ptd_qry_pending(const struct ptd_qry *q, unsigned binding);
void ptd_qry_ev_copy(struct ptd_event *d, const struct ptd_event *s);
/* A cleared standalone event (published at once). */
struct ptd_event *ptd_qry_standalone(struct ptd_qry *q);
/* Hand ev (a queue slot or the standalone slot) out next. */
void ptd_qry_publish(struct ptd_qry *q, struct ptd_event *ev);

/* ---- packets, time and IP (ptd_qry.c) ---- */
/* Decode the next packet other than PAD into q->cur (on an error: kind
 * NONE, size 0, q->status the error). Returns 0. */
int ptd_qry_fetch(struct ptd_qry *q);
/* ptd_qry_ev_time, ptd_qry_ev_ip, ptd_qry_update_ip: decoder/ptd_qry_fast.h */
/* The events that take the IP of the FUP they are bound to (and its
 * time): the one list the FUP binding and the OVF flush go by. */
bool ptd_qry_ev_takes_fup_ip(enum ptd_ev_type type);
/* A timing packet into a time state (q's or a look-ahead's copy): 0, or
 * the error libipt's decoders report for it (a bad configuration is not
 * one). */
int ptd_qry_apply_time(struct ptd_time *t, const struct ptd_pkt *p);

/* ---- PSB+ (ptd_qry_psb.c) ---- */
int ptd_qry_decode_psb(struct ptd_qry *q);
int ptd_qry_decode_psbend(struct ptd_qry *q);
/* Is there a FUP in the PSB+ ahead of d (positioned inside it)? 1 (in
 * *fup), 0, or an error. */
int ptd_qry_find_header_fup(const struct ptd_pkt_decoder *d, struct ptd_pkt *fup);

/* ---- OVF and its errata (ptd_qry_ovf.c) ---- */
int ptd_qry_decode_ovf(struct ptd_qry *q);

/* ---- Event Trace and Trigger Tracing (ptd_qry_trace_events.c) ---- */
int ptd_qry_decode_cfe(struct ptd_qry *q);
int ptd_qry_decode_evd(struct ptd_qry *q);
int ptd_qry_decode_trig(struct ptd_qry *q);

/* The execution mode a MODE.Exec gives (CS.L with CS.D is reserved:
 * unknown). */
unsigned ptd_qry_exec_mode(const struct ptd_pkt *p);

#endif
