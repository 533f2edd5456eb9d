/* libptd query/event layer: turns the packet stream into a stream of
 * events, in trace order, each bound to the packet that completes it
 * (Intel SDM Vol. 3C, chapter "Intel Processor Trace", "Packet Generation
 * Scenarios"): conditional-branch bits (TNT), indirect-branch targets (TIP),
 * TIP.PGE/TIP.PGD, FUP-bound asynchronous branches and disables, MODE.Exec
 * and MODE.TSX, PIP, VMCS, OVF, TraceStop, PSB+ status updates, power
 * events, PTWRITE, Event Trace (CFE/EVD) and Trigger Tracing (TRIG).
 *
 * The binding rules are those of current libipt's event decoder (the
 * reference the output is measured against; docs/flow.md lists them):
 *   - MODE.Exec binds to the next TIP, TIP.PGE or FUP; it makes an exec-mode
 *     event only when CS.L/CS.D changed, an iflags event (when asked for)
 *     only when IF changed;
 *   - MODE.TSX, PTW/EXSTOP/CFE/TRIG with their IP bit bind to the next FUP;
 *     a FUP with nothing bound to it starts an asynchronous branch that the
 *     next TIP (or TIP.PGD: a disable) completes; PIP and VMCS between them
 *     belong to that branch (VMCS ordered before PIP);
 *   - MWAIT waits for the EXSTOP that follows, PWRE for the PWRX; EVD for
 *     the CFE it describes;
 *   - the packets between PSB and PSBEND (or an OVF that ends PSB+) are
 *     status updates, delivered at its end with the IP of its FUP;
 *   - OVF binds to the FUP after it (only timing, PAD, MNT and CBR in
 *     between), or stands alone with tracing disabled; with the CPU's
 *     errata, the SKD010, APL11 and APL12 look-ahead scans.
 * An event is reported only when its binding packet is read, and the layer
 * stops at every event: its offset (ptd_qry_offset) is then that of the
 * packet after the ones used up, as libipt's.
 *
 * Time (decoder/ptd_time.h) is tracked from every timing packet, as libipt's
 * event decoder does (its errors are decode errors: a TMA without a TSC, a
 * CBR of 0); events carry the time at their packet.
 *
 * State: struct ptd_qry, plain data (a copy is an independent decoder: the
 * flow layer reads ahead on one), no allocation; every loop is bounded by
 * the trace.
 */
#ifndef PTD_QRY_H
#define PTD_QRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_pkt.h"
#include "decoder/ptd_time.h"

/* Status flags returned (>= 0) by the flow functions. */
enum {
    PTD_ST_EVENT = 1 << 0,         /* an event is pending: fetch it */
    PTD_ST_IP_SUPPRESSED = 1 << 1, /* no IP (tracing disabled) */
    PTD_ST_EOS = 1 << 2,           /* the trace is used up */
};

/* Event types, in libipt's pt_event_type order. */
enum ptd_ev_type {
    PTD_EV_ENABLED = 0,    /* ip: where tracing starts; RESUMED flag */
    PTD_EV_DISABLED,       /* ip: target outside the filter (or suppressed) */
    PTD_EV_ASYNC_DISABLED, /* from: where it stopped; ip: destination */
    PTD_EV_ASYNC_BRANCH,   /* from: interrupted IP; ip: destination */
    PTD_EV_PAGING,         /* value: CR3; NR flag */
    PTD_EV_ASYNC_PAGING,   /* value: CR3; NR flag; ip */
    PTD_EV_OVERFLOW,       /* ip: where tracing resumed (or suppressed) */
    PTD_EV_EXEC_MODE,      /* mode: enum ptd_exec_mode; ip */
    PTD_EV_TSX,            /* SPECULATIVE, ABORTED flags; ip */
    PTD_EV_STOP,
    PTD_EV_VMCS,       /* value: VMCS base */
    PTD_EV_ASYNC_VMCS, /* value: VMCS base; ip */
    PTD_EV_EXSTOP,     /* ip */
    PTD_EV_MWAIT,      /* value: hints; aux: extensions; ip */
    PTD_EV_PWRE,       /* a: state; b: sub-state; HW flag */
    PTD_EV_PWRX,       /* a: last; b: deepest; aux: wake reasons */
    PTD_EV_PTWRITE,    /* value: payload; a: its size; ip */
    PTD_EV_TICK,       /* ip */
    PTD_EV_CBR,        /* value: ratio */
    PTD_EV_MNT,        /* value: payload */
    PTD_EV_TIP,        /* ip: an indirect branch's target */
    PTD_EV_TNT,        /* value: the bits, the next in bit a-1; a: how many */
    PTD_EV_IFLAGS,     /* IFLAG flag: RFLAGS.IF; ip */
    PTD_EV_INTERRUPT,  /* aux: vector; value: CR2 (HAS_CR2); ip */
    PTD_EV_IRET,       /* ip */
    PTD_EV_SMI,        /* ip */
    PTD_EV_RSM,
    PTD_EV_SIPI,     /* aux: vector */
    PTD_EV_INIT,     /* ip */
    PTD_EV_VMENTRY,  /* ip */
    PTD_EV_VMEXIT,   /* aux: vector (HAS_VECTOR); value: VM-exit reason
                        * (HAS_VMXR); value2: qualification (HAS_VMXQ); ip */
    PTD_EV_SHUTDOWN, /* ip */
    PTD_EV_UINTR,    /* aux: vector; ip */
    PTD_EV_UIRET,    /* ip */
    PTD_EV_TRIG,     /* a: TRBV; aux: ICNT; MULT flag; ip */
    PTD_EV_SWINTR,   /* aux: vector; ip */
    PTD_EV_SYSCALL,  /* ip */
    PTD_EV_COUNT,
    /* internal: takes a packet's binding silently (a MODE.Exec that
     * changes nothing, an unknown CFE with its IP bit); never handed out */
    PTD_EV_IGNORE = PTD_EV_COUNT,
};

/* ptd_event.flags */
enum {
    PTD_EVF_IP_SUPPRESSED = 1u << 0,
    PTD_EVF_STATUS_UPDATE = 1u << 1, /* from PSB+: state, not a change */
    PTD_EVF_RESUMED = 1u << 2,       /* ENABLED at the IP tracing stopped at */
    PTD_EVF_NR = 1u << 3,            /* PAGING: VMX non-root */
    PTD_EVF_SPECULATIVE = 1u << 4,   /* TSX: in a transaction */
    PTD_EVF_ABORTED = 1u << 5,       /* TSX: transaction aborted */
    PTD_EVF_HW = 1u << 6,            /* PWRE: hardware-initiated */
    PTD_EVF_HAS_TSC = 1u << 7,       /* tsc is known (libipt's has_tsc) */
    PTD_EVF_IFLAG = 1u << 8,         /* IFLAGS: interrupts enabled */
    PTD_EVF_HAS_CR2 = 1u << 9,       /* INTERRUPT: value holds CR2 */
    PTD_EVF_HAS_VMXQ = 1u << 10,     /* VMEXIT: value2 holds the qualification */
    PTD_EVF_HAS_VMXR = 1u << 11,     /* VMEXIT: value holds the reason */
    PTD_EVF_HAS_VECTOR = 1u << 12,   /* VMEXIT: aux holds the vector */
    PTD_EVF_MULT = 1u << 13,         /* TRIG: more triggers fired */
};

struct ptd_event {
    uint64_t ip;
    uint64_t from;
    uint64_t value;
    uint64_t value2;
    uint64_t offset; /* trace offset of the packet that completed it */
    uint64_t tsc;    /* time at its packet (libipt's event tsc, also
                        * without PTD_EVF_HAS_TSC: relative then) */
    uint32_t lost_mtc, lost_cyc;
    uint32_t aux;
    uint16_t flags; /* PTD_EVF_* */
    uint8_t type;   /* enum ptd_ev_type */
    uint8_t mode;   /* EXEC_MODE: enum ptd_exec_mode (decoder/ptd_ild.h) */
    uint8_t a, b;
};

/* Pending events, waiting for the packet they bind to: a ring of entries,
 * each with the packets it binds to (PTD_QRY_B_*). One slot stays free, as
 * in libipt, so at most PTD_QRY_EVQ - 2 wait at once. */
#define PTD_QRY_EVQ 16
enum {
    PTD_QRY_B_PSBEND = 1u << 0,
    PTD_QRY_B_TIP = 1u << 1,       /* TIP, TIP.PGE, TIP.PGD */
    PTD_QRY_B_FUP = 1u << 2,       /* the FUP of a FUP + TIP pair */
    PTD_QRY_B_FUP_BOUND = 1u << 3, /* the next FUP, used up by the event */
    PTD_QRY_B_EXSTOP = 1u << 4,
    PTD_QRY_B_CFE = 1u << 5,
    PTD_QRY_B_PWRX = 1u << 6,
};
struct ptd_qry_evq {
    struct ptd_event ev[PTD_QRY_EVQ];
    uint8_t binding[PTD_QRY_EVQ];
    uint8_t begin, end;
};

/* MODE.Exec with both CS.L and CS.D (reserved): an unknown mode (beside
 * enum ptd_exec_mode). */
#define PTD_QRY_EXEC_MODE_UNKNOWN 3

/* Where the event to hand out is: none, a queue slot, or the standalone
 * slot. */
#define PTD_QRY_NO_EVENT   0xff
#define PTD_QRY_STANDALONE PTD_QRY_EVQ

/* Options (ptd_qry_set_flags). */
enum {
    PTD_QRY_F_IFLAGS = 1u << 0,           /* iflags events (ptxed's --event:iflags) */
    PTD_QRY_F_KEEP_TCAL_ON_OVF = 1u << 1, /* keep the time calibration over OVF */
};

struct ptd_qry {
    struct ptd_pkt_decoder pkt;
    struct ptd_pkt cur; /* the packet being processed (kind NONE
                           * when decoding failed: status says why) */
    uint64_t cur_off;   /* its offset */
    int status;         /* the packet decoder's last error, kept
                           * until it is reported */
    struct ptd_last_ip lip;
    struct ptd_time time;
    struct ptd_qry_evq evq;
    struct ptd_event standalone;
    uint8_t event;   /* PTD_QRY_NO_EVENT, a slot, or STANDALONE */
    uint8_t enabled; /* PacketEn as far as the packets say */
    uint8_t bound;   /* cur is bound: not a standalone packet */
    uint8_t mode_exec_valid, csl, csd, iflag;
    uint8_t flags;   /* PTD_QRY_F_* */
    unsigned errata; /* PTD_ERRATUM_* (decoder/ptd_errata.h) */
};

/* Initialise over a trace; time with cfg (NULL: none configured; time is
 * still tracked as far as the packets allow, for the errors libipt
 * reports). The time configuration's errata are replaced by the CPU's
 * (ptd_qry_set_errata). */
void ptd_qry_init(struct ptd_qry *q, const uint8_t *buf, size_t size,
                  const struct ptd_time_config *cfg);
void ptd_qry_set_errata(struct ptd_qry *q, unsigned errata);
void ptd_qry_set_flags(struct ptd_qry *q, unsigned flags);
/* PWRE's HW flag from bit 3, as libipt (ptd_pkt_set_pwre_bit3). */
void ptd_qry_set_pwre_bit3(struct ptd_qry *q, int on);

/* Synchronise at the next PSB after the current position and read its
 * PSB+ (the events come from ptd_qry_next). 0 or an error
 * (-PTD_ERR_EOS: no further PSB). */
int ptd_qry_sync_forward(struct ptd_qry *q);
/* Synchronise at the PSB at offset (the start of a PSB+). */
int ptd_qry_sync_set(struct ptd_qry *q, uint64_t offset);

/* The next event into *ev: 0, or a negative error (-PTD_ERR_EOS at the end
 * of the trace). */
int ptd_qry_next(struct ptd_qry *q, struct ptd_event *ev);
/* Whether ptd_qry_next's next event is a TNT (its packet is at hand,
 * tracing on): then it cannot fail. */
static inline bool ptd_qry_tnt_ahead(const struct ptd_qry *q)
{
    return (q->cur.kind == PTD_PKT_TNT8 || q->cur.kind == PTD_PKT_TNT64) && q->enabled;
}
/* ptd_qry_next with a TNT ahead (ptd_qry_tnt_ahead) right after the call
 * that gave *ev, a TNT (no other call between): only what differs. The
 * time stays (it moves at timing packets, which only the decode loop
 * takes, never between a TNT and the packet after it). */
void ptd_qry_next_tnt(struct ptd_qry *q, struct ptd_event *ev);

/* The trace offset of the packet being processed (libipt's
 * pt_evt_get_offset). */
uint64_t ptd_qry_offset(const struct ptd_qry *q);
/* The offset of the last PSB decoded or synchronised at. */
uint64_t ptd_qry_sync_offset(const struct ptd_qry *q);

#endif
