/* libptd query/event layer: turns the packet stream into what the
 * instruction-flow layer asks for, in trace order: conditional-branch bits
 * (TNT), indirect-branch targets (TIP) and events (TIP.PGE/PGD, FUP-bound
 * asynchronous branches, MODE.Exec, MODE.TSX, PIP, VMCS, OVF, TraceStop,
 * PSB+ status updates, power and PTWRITE events).
 *
 * The model is the one of the SDM's "Intel Processor Trace" chapter
 * ("Packet Generation Scenarios"): a FUP followed by TIP is an asynchronous
 * branch from the FUP's IP to the TIP's; FUP + TIP.PGD an asynchronous
 * disable; MODE.Exec binds to the next TIP/TIP.PGE/TIP.PGD; MODE.TSX, and
 * PTW/EXSTOP/MWAIT with their IP bit, bind to the next FUP; the packets
 * between PSB and PSBEND are status, delivered at PSBEND with the IP of the
 * FUP in PSB+ (if any); OVF binds to the following FUP (tracing resumes
 * there) or, when tracing resumed disabled, carries no IP.
 *
 * Ordering: events are reported only once the cached TNT bits are used up
 * (a TNT packet precedes the events that follow it in the trace); a query
 * that does not match the next item fails with -PTD_QRY_ERR_BAD_QUERY and
 * consumes nothing. The status flags and error codes are numbered as
 * libipt's (pts_*, pte_*) so the layers above can mirror libipt's
 * instruction decoder exactly.
 *
 * State: struct ptd_qry, 1696 bytes on x86-64, plain data, no allocation; every
 * loop is bounded by the trace.
 */
#ifndef PTD_QRY_H
#define PTD_QRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_pkt.h"
#include "decoder/ptd_time.h"

/* Status flags returned (>= 0) by the query and flow functions. */
enum {
    PTD_ST_EVENT = 1 << 0,          /* an event is pending: fetch it */
    PTD_ST_IP_SUPPRESSED = 1 << 1,  /* no IP (tracing disabled / TIP with IPBytes 0) */
    PTD_ST_EOS = 1 << 2,            /* the trace is used up */
};

/* Errors above the packet layer's (enum ptd_error), returned negated;
 * numbered as libipt's pt_error_code. */
enum {
    PTD_ERR_BAD_CONTEXT = 6,        /* unexpected packet context */
    PTD_ERR_BAD_QUERY = 8,          /* trace stream does not match query */
    PTD_ERR_NOMAP = 13,             /* no memory mapped at this address */
    PTD_ERR_BAD_INSN = 14,          /* unknown instruction */
    PTD_ERR_RETSTACK_EMPTY = 20,    /* compressed return without call */
    PTD_ERR_BAD_RETCOMP = 21,       /* bad compressed return */
    PTD_ERR_BAD_STATUS_UPDATE = 22, /* bad status update */
    PTD_ERR_NO_ENABLE = 23,         /* expected tracing enabled event */
    PTD_ERR_EVENT_IGNORED = 24,     /* event ignored */
};

/* libipt's pt_errstr() text for every code of either layer. */
const char *ptd_qry_errstr(int code);

/* Event types, in libipt's pt_event_type order. */
enum ptd_ev_type {
    PTD_EV_ENABLED = 0,     /* ip: where tracing starts; RESUMED flag */
    PTD_EV_DISABLED,        /* ip: target outside the filter (or suppressed) */
    PTD_EV_ASYNC_DISABLED,  /* from: where it stopped; ip: destination */
    PTD_EV_ASYNC_BRANCH,    /* from: interrupted IP; ip: destination */
    PTD_EV_PAGING,          /* value: CR3; NR flag */
    PTD_EV_ASYNC_PAGING,    /* value: CR3; NR flag; ip */
    PTD_EV_OVERFLOW,        /* ip: where tracing resumed (or suppressed) */
    PTD_EV_EXEC_MODE,       /* mode: enum ptd_exec_mode; ip */
    PTD_EV_TSX,             /* SPECULATIVE, ABORTED flags; ip */
    PTD_EV_STOP,
    PTD_EV_VMCS,            /* value: VMCS base */
    PTD_EV_ASYNC_VMCS,      /* value: VMCS base; ip */
    PTD_EV_EXSTOP,          /* ip */
    PTD_EV_MWAIT,           /* value: hints; aux: extensions; ip */
    PTD_EV_PWRE,            /* a: state; b: sub-state; HW flag */
    PTD_EV_PWRX,            /* a: last; b: deepest; aux: wake reasons */
    PTD_EV_PTWRITE,         /* value: payload; ip */
    PTD_EV_TICK,            /* ip */
    PTD_EV_CBR,             /* value: ratio */
    PTD_EV_MNT,             /* value: payload */
    PTD_EV_COUNT
};

/* ptd_event.flags */
enum {
    PTD_EVF_IP_SUPPRESSED = 0x01,
    PTD_EVF_STATUS_UPDATE = 0x02,   /* from PSB+: state, not a change */
    PTD_EVF_RESUMED = 0x04,         /* ENABLED at the IP tracing stopped at */
    PTD_EVF_NR = 0x08,              /* PAGING: VMX non-root */
    PTD_EVF_SPECULATIVE = 0x10,     /* TSX: in a transaction */
    PTD_EVF_ABORTED = 0x20,         /* TSX: transaction aborted */
    PTD_EVF_HW = 0x40,              /* PWRE: hardware-initiated */
    PTD_EVF_HAS_TSC = 0x80,         /* tsc is known (libipt's has_tsc) */
};

struct ptd_event {
    uint64_t ip;
    uint64_t from;
    uint64_t value;
    uint64_t offset;     /* trace offset of the packet that completed it */
    uint64_t tsc;        /* time when its packet was decoded (with time
                          * tracking; libipt's event tsc, also without
                          * PTD_EVF_HAS_TSC) */
    uint32_t aux;
    uint8_t type;        /* enum ptd_ev_type */
    uint8_t flags;       /* PTD_EVF_* */
    uint8_t mode;        /* EXEC_MODE: enum ptd_exec_mode (decoder/ptd_ild.h) */
    uint8_t a, b;
};

/* Event queues: events waiting for the packet they bind to. */
#define PTD_QRY_EVQ 8
struct ptd_qry_evq {
    struct ptd_event ev[PTD_QRY_EVQ];
    uint8_t head, count;
};

struct ptd_qry {
    struct ptd_pkt_decoder pkt;
    struct ptd_last_ip lip;
    struct ptd_pkt next;        /* the packet ahead, decoded, not consumed */
    uint64_t next_off;          /* its offset */
    int next_err;               /* 0, or why there is no next packet */
    uint8_t have_next;
    uint8_t ip_applied;         /* next's IP already applied to lip */
    uint8_t ntnt;               /* cached TNT bits left */
    uint8_t tip_used;           /* the TIP/FUP ahead was used up by an event */
    uint8_t enabled;            /* tracing is on as far as the packets say
                                 * (TIP.PGE, PSB+ FUP, OVF + FUP on; TIP.PGD,
                                 * sync, OVF off): libipt's enabled, for BDM70 */
    uint64_t tnt;               /* the bits; next one is bit ntnt-1 */
    unsigned errata;            /* PTD_ERRATUM_* (decoder/ptd_errata.h) */
    struct ptd_qry_evq tipq;    /* bound to the next TIP/TIP.PGE/TIP.PGD */
    struct ptd_qry_evq fupq;    /* bound to the next FUP */
    struct ptd_qry_evq psbq;    /* bound to PSBEND */
    struct ptd_event cur;       /* the event being delivered */
    /* time (ptd_qry_set_time): every consumed packet goes through it; the
     * time handed out is the one at the last TNT/TIP/event taken from the
     * trace, as libipt's pt_qry_time() */
    struct ptd_time time;
    uint64_t snap_tsc;
    uint32_t snap_lost_mtc, snap_lost_cyc;
    int snap_rc;
    uint8_t timing;
};


void ptd_qry_init(struct ptd_qry *q, const uint8_t *buf, size_t size);
void ptd_qry_set_errata(struct ptd_qry *q, unsigned errata);

/* Synchronise at the next PSB after the current position, read PSB+.
 * *ip receives the IP of the FUP in PSB+ (status PTD_ST_IP_SUPPRESSED when
 * there is none: tracing is disabled there). */
int ptd_qry_sync_forward(struct ptd_qry *q, uint64_t *ip);

/* The next conditional branch: *taken = 1/0. */
int ptd_qry_cond(struct ptd_qry *q, int *taken);

/* ptd_qry_cond's fast case, inline for the flow layer's block loop: when
 * at least one more cached TNT bit stays after this one (an event or the
 * end can only come after the last cached bit), or this is the last one
 * and the packet ahead is another TNT, nothing is read from the trace and
 * the status ptd_qry_cond would return is 0. Returns the bit (1 taken, 0
 * not taken) then; -1: call ptd_qry_cond. */
static inline int ptd_qry_cond_cached(struct ptd_qry *q)
{
    if (q->ntnt < 2) {
        /* the last cached bit, with another TNT packet decoded ahead:
         * no event is due either (status_flags() would find none) */
        if (q->ntnt != 1 || !q->have_next || q->next_err ||
            (q->next.kind != PTD_PKT_TNT8 && q->next.kind != PTD_PKT_TNT64))
            return -1;
    }
    q->ntnt--;
    return (int)((q->tnt >> q->ntnt) & 1);
}

/* The next indirect-branch target (PTD_ST_IP_SUPPRESSED: none). */
int ptd_qry_indirect(struct ptd_qry *q, uint64_t *ip);

/* The next event (when PTD_ST_EVENT was reported). */
int ptd_qry_event(struct ptd_qry *q, struct ptd_event *ev);

/* Track time with this configuration (NULL: none, the default). */
void ptd_qry_set_time(struct ptd_qry *q, const struct ptd_time_config *cfg);
/* The time at the last TNT/TIP/event handed out (libipt's pt_qry_time):
 * 0, or -PTD_TIME_ERR_NO_TIME (no TSC yet: *tsc is relative) or another
 * error; lost_* may be NULL. */
int ptd_qry_time(const struct ptd_qry *q, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc);

/* The trace offset of the next packet not yet consumed. */
uint64_t ptd_qry_offset(const struct ptd_qry *q);

#endif
