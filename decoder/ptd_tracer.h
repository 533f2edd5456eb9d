/* libptd trace-unit model (layer 5, with ptd_enc): fed the instructions a
 * CPU executed, in order, plus asynchronous events, it writes the packets
 * an Intel CPU's trace unit would write for that execution (SDM Vol. 3C,
 * chapter "Intel Processor Trace"):
 *
 *   - PSB+ (PSB, [TSC], MODE.Exec, [FUP], PSBEND) when tracing starts and
 *     again at the first instruction boundary after psb_period bytes; the
 *     FUP only while packets are enabled (PacketEn). Last IP and the RET
 *     compression stack start over at every PSB ("only RETs that
 *     correspond to CALLs seen since the last PSB may be compressed",
 *     36.2.1.2; "Last IP is reset to zero when a PSB is sent", 36.4.2.2).
 *   - FilterEn (36.2.4.3, 36.2.5.5): evaluated when tracing starts and
 *     where a taken branch or an event lands, never on fall-through (a
 *     not-taken Jcc or a plain instruction crossing a range boundary keeps
 *     FilterEn as it was). TIP.PGE(target) where it becomes 1; TIP.PGD
 *     where it becomes 0, replacing the branch's TNT bit or TIP. The PGD
 *     carries the target for every near branch: the SDM permits a
 *     suppressed IP for a Jcc leaving the range, but libipt 2.0 binds a
 *     suppressed PGD only to far transfers, and a trace that the oracle
 *     cannot decode helps no one (test/vpt/vpt_encode.c does the same).
 *     An event (interrupt, exception) leaving the ranges: FUP + TIP.PGD
 *     with the handler's IP (BLIP; the SDM's table "Packet Generation
 *     under Different Enable Conditions", cases 11d and 13d: ContextEn
 *     stays 1, so the IP is not suppressed). No ranges configured:
 *     FilterEn is always 1.
 *   - TraceStop ranges: a taken branch or event landing in one stops
 *     tracing for good (STATUS.Stopped): TIP.PGD(target) if packets were
 *     enabled, then a TraceStop packet, which is written even while
 *     FilterEn is 0 (it depends on TriggerEn and ContextEn only, table
 *     "TraceStop Packet Definition"). Also when tracing starts inside one.
 *   - TNT-8 packets of up to 6 bits; pending bits are written before any
 *     other packet of the flow (TIP, FUP, PGD, MODE, PSB), as CPUs do.
 *   - TIP with IP compression against the last IP (ptd_enc_ip_compress).
 *   - RET compression with the CPU's 64-entry stack (off with dis_retc);
 *     the stack is emptied at PSB, TIP.PGE/TIP.PGD and after a RET that
 *     could not be compressed (decoders never see a stale entry).
 *   - MODE.Exec before the TIP or TIP.PGE that follows a change of
 *     16/32/64-bit mode (far transfers, events, re-entering the ranges) and
 *     in every PSB+; not before a TIP.PGD (36.4.2.8 binds it to TIP and
 *     TIP.PGE; ptboot's query layer rejects MODE.Exec + TIP.PGD).
 *   - TSC (tsc_en): in PSB+ and before every TIP.PGE (unless the time is
 *     that of the TSC written last), which libipt and ptd_time read as
 *     plain timestamps.
 *   - MTC (mtc_en): a crystal clock (CTC) is derived from the time stamps
 *     the caller passes, one CTC tick per 2^ctc_shift TSC ticks (what
 *     CPUID.15H would say as EAX = 1, EBX = 2^ctc_shift: TSC = CTC * EBX /
 *     EAX). As the CPU does ("MTC Packet", 36.3.7.2), an MTC with
 *     CTC[mtc_freq+7:mtc_freq] every time CTC crosses a multiple of
 *     2^mtc_freq, also while packets are disabled (MTC does not depend on
 *     FilterEn); a TMA (CTC[15:0] and FastCounter, the TSC ticks since the
 *     last CTC tick) after every TSC when both are on. Time passes in the
 *     calls below (their tsc): the MTCs of the periods that ended since
 *     the last call come first, after pending TNT bits (so the branches
 *     before them keep their time). More than PTD_TRACER_MTC_BURST
 *     periods at once (a long run the caller did not report) are told by
 *     a TSC + TMA instead of a run of MTCs, which decoders take as the
 *     same time. ctc_shift is at most 9 (TMA's FastCounter is 9 bits).
 *
 * Packets leave through a sink callback, one whole packet per call; a sink
 * that refuses one (full) stops the model as the CPU stops when its STOP
 * region fills. Freestanding, no allocation, the state is the caller's. */
#ifndef PTD_TRACER_H
#define PTD_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_ild.h"

#define PTD_TRACER_MAX_RANGES    4  /* IA32_RTIT_ADDR0..3 */
#define PTD_TRACER_CTC_SHIFT_MAX 9  /* TMA's FastCounter: 9 bits */
#define PTD_TRACER_MTC_BURST     8  /* more MTCs at once: TSC + TMA instead */
#define PTD_TRACER_RETSTACK      64 /* SDM: the CPU's RET compression stack */

/* Receives one encoded packet (size 1..16). Returns 0, or a negative value
 * when the packet cannot be stored: the model stops (stop-when-full). */
typedef int (*ptd_tracer_sink_fn)(void *ctx, const uint8_t *bytes, size_t size);

struct ptd_tracer_config {
    /* FilterEn ranges, inclusive as IA32_RTIT_ADDRn_A/B; none: trace all */
    uint8_t nfilter;
    uint64_t filter_lo[PTD_TRACER_MAX_RANGES], filter_hi[PTD_TRACER_MAX_RANGES];
    /* TraceStop ranges, inclusive */
    uint8_t nstop;
    uint64_t stop_lo[PTD_TRACER_MAX_RANGES], stop_hi[PTD_TRACER_MAX_RANGES];
    bool dis_retc;       /* IA32_RTIT_CTL.DisRETC */
    bool tsc_en;         /* IA32_RTIT_CTL.TSCEn */
    bool mtc_en;         /* IA32_RTIT_CTL.MTCEn */
    uint8_t mtc_freq;    /* IA32_RTIT_CTL.MTCFreq (0..15) */
    uint8_t ctc_shift;   /* TSC ticks per CTC tick: 2^ctc_shift (<= 9) */
    uint64_t psb_period; /* bytes between PSB+; 0: only at the start */
    ptd_tracer_sink_fn sink;
    void *sink_ctx;
};

/* One executed instruction: it was at ip, in mode (enum ptd_exec_mode),
 * and execution went on at next_ip in next_mode. iclass and, for direct
 * branches (PTD_INSN_REL), target come from the ILD. */
struct ptd_tracer_insn {
    uint64_t ip;
    uint64_t target;
    uint64_t next_ip;
    uint8_t length;
    uint8_t iclass; /* enum ptd_iclass */
    uint8_t mode, next_mode;
};

/* Result bits of the calls below (>= 0), or a negative -PTD_ERR_*. */
enum {
    PTD_TRACER_ENTERED = 0x01, /* PacketEn went to 1 (TIP.PGE) */
    PTD_TRACER_LEFT = 0x02,    /* PacketEn went to 0 (TIP.PGD) */
    PTD_TRACER_STOPPED = 0x04, /* TraceStop or the sink refused a packet */
    PTD_TRACER_GAP = 0x08,     /* next_ip fits no outcome of the insn:
                                  * written as a gap (ptd_tracer_gap) */
    PTD_TRACER_TRACED = 0x10,  /* the instruction was traced (PacketEn) */
    PTD_TRACER_MODE = 0x20,    /* a MODE.Exec told a new mode (outside
                                  * PSB+; with ENTERED: before the TIP.PGE,
                                  * else before a far transfer's or an
                                  * event's TIP: decoders report it) */
};

struct ptd_tracer {
    struct ptd_tracer_config cfg;
    uint64_t last_ip;
    uint64_t since_psb; /* bytes since the last PSB */
    uint64_t bytes;     /* bytes written */
    uint64_t tsc;
    uint64_t mtc_period; /* MTC period (CTC >> mtc_freq) told last */
    bool mtc_have;       /* mtc_period is set */
    uint64_t tsc_last;   /* the TSC packet written last since the PSB */
    bool tsc_told;       /* tsc_last is set (a TSC of the same time is
                            * not written again) */
    uint64_t ret[PTD_TRACER_RETSTACK];
    uint8_t ret_top, ret_n;
    uint8_t tnt_bits, tnt_n;
    uint8_t mode; /* the mode decoders were last told */
    bool have_last;
    bool on;        /* TraceEn (and TriggerEn) */
    bool enabled;   /* PacketEn: on and FilterEn */
    bool stopped;   /* TraceStop hit or the sink full */
    bool full;      /* the stop was the sink refusing */
    bool mode_told; /* this call wrote a MODE.Exec (PTD_TRACER_MODE) */
    int sink_err;
};

/* Copies cfg. Returns 0 or -PTD_ERR_INVALID (no sink, too many ranges,
 * mtc_freq > 15, ctc_shift > 9). */
int ptd_tracer_init(struct ptd_tracer *t, const struct ptd_tracer_config *cfg);

/* TraceEn 0->1 with the instruction at ip about to execute: PSB+, then
 * TIP.PGE if ip is inside the FilterEn ranges (or TraceStop if inside a
 * TraceStop range). */
int ptd_tracer_start(struct ptd_tracer *t, uint64_t ip, unsigned mode, uint64_t tsc);

/* The instruction in *in completed (tsc: the time now). Writes what the
 * CPU writes for it; a next_ip that no outcome of the instruction explains
 * is passed to ptd_tracer_gap(): at the end of a non-branch or direct
 * jump/call (which completed), or before a Jcc (its outcome is unknown). */
int ptd_tracer_insn(struct ptd_tracer *t, const struct ptd_tracer_insn *in, uint64_t tsc);

/* An interrupt or exception: the flow stood at from (the FUP IP: the next
 * instruction for a trap or interrupt, the faulting one for a fault) and
 * continues at to. FUP + [MODE.Exec] + TIP(to), or FUP + TIP.PGD(to) when
 * to is outside the ranges (TraceStop after it when to is in a TraceStop
 * range), or TIP.PGE(to) when packets were disabled and to is inside. */
int ptd_tracer_event(struct ptd_tracer *t, uint64_t from, uint64_t to, unsigned to_mode,
                     uint64_t tsc);

/* Unknown execution between at and to (code the caller did not see):
 * tracing is disabled at at (FUP + TIP.PGD, IP suppressed, as for an
 * asynchronous disable) and FilterEn evaluated at to as for an event
 * landing there (TIP.PGE if inside). Decoders show [disabled] [enabled]
 * and never invent the missing instructions. */
int ptd_tracer_gap(struct ptd_tracer *t, uint64_t at, uint64_t to, unsigned to_mode, uint64_t tsc);

/* Execution from the instruction at at on is not seen (the caller lets it
 * run without watching it): if packets were enabled, an asynchronous
 * disable there (pending TNT, FUP(at) + TIP.PGD with the IP suppressed,
 * as for ptd_tracer_gap). Where execution is seen again, the caller
 * evaluates FilterEn with ptd_tracer_gap(t, to, to, ...) (a landing). */
int ptd_tracer_pause(struct ptd_tracer *t, uint64_t at, uint64_t tsc);

/* TraceEn 1->0 with the instruction at ip about to execute: pending TNT,
 * then FUP + TIP.PGD (IP suppressed) if packets were enabled. */
int ptd_tracer_stop(struct ptd_tracer *t, uint64_t ip);

/* FilterEn / TraceStop range tests of the configuration. */
bool ptd_tracer_in_filter(const struct ptd_tracer *t, uint64_t ip);
bool ptd_tracer_in_stop(const struct ptd_tracer *t, uint64_t ip);

#endif /* PTD_TRACER_H */
