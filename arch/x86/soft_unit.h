/* The software trace unit: on a CPU without Intel PT (AMD, a VM, QEMU TCG)
 * the target's #DB single-step handler reports every instruction the traced
 * code is about to execute, and this unit writes the packets an Intel CPU
 * would have written for that execution (PSB+, TIP.PGE/TIP.PGD at the
 * filter ranges, TNT, TIP, RET compression, TSC, TraceStop) through
 * decoder/'s encoder into the same ToPA-shaped output buffer the hardware
 * path uses (rtit_config: regions back to back from the buffer, ring or
 * stop-when-full). One configuration struct drives both units.
 *
 * Pure C over caller storage (no UEFI, no allocation, no globals), so the
 * host tests feed it the ground-truth instruction stream of generated
 * programs and decode the result with ptboot and libipt.
 *
 * Contract between arch/x86 (this unit) and efi/ (the #DB glue):
 *   soft_unit_init()  once, before single-stepping starts;
 *   soft_unit_step()  from the #DB handler, with the IP of the instruction
 *                     that is about to execute (the saved RIP), in order;
 *   soft_unit_interrupt() instead of a step for an interrupt or exception
 *                     handler's first instruction, if the glue can tell;
 *   soft_unit_stop()  when the traced call has returned (TraceEn=0);
 *   soft_unit_summarize() + rtit_trace_linearize*() (rtit_linear.h) for a
 *                     stream that starts at a PSB, oldest byte first.
 * What it models and its limits against real PT: docs/soft-unit.md.
 * The unit decodes the instruction it saw last (code read through the
 * callback) to learn its length and branch class, and from the next IP
 * whether a branch was taken. */
#ifndef PTBOOT_ARCH_X86_SOFT_UNIT_H
#define PTBOOT_ARCH_X86_SOFT_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_seq.h"
#include "decoder/ptd_time.h"
#include "decoder/ptd_tracer.h"

/* The soft unit's clock (docs/soft-unit.md "Time"): the time stamps the
 * glue passes are the TSC; the crystal clock MTC and TMA count (CTC) ticks
 * once every 2^SOFT_UNIT_CTC_SHIFT TSC ticks, which decoders are told as
 * CPUID.15H EAX = SOFT_UNIT_CPUID15_EAX, EBX = SOFT_UNIT_CPUID15_EBX (TSC =
 * CTC * EBX / EAX; the sideband's cpu.cpuid15 of a soft capture). With
 * MTCEn an MTC every 2^MTCFreq CTC ticks; plans choose MTCFreq
 * SOFT_UNIT_MTC_FREQ_DEFAULT unless told: an MTC every 2^18 TSC ticks
 * (94 us at 2.8 GHz: a few steps in QEMU, about a hundred on hardware). */
#define SOFT_UNIT_CTC_SHIFT        9
#define SOFT_UNIT_CPUID15_EAX      1u
#define SOFT_UNIT_CPUID15_EBX      (1u << SOFT_UNIT_CTC_SHIFT)
#define SOFT_UNIT_MTC_FREQ_DEFAULT 9u

/* Code reader: up to size bytes at ip into buf; returns bytes read (0 if
 * nothing is mapped there). Same shape as decoder/'s ptd_read_fn. */
typedef int (*soft_unit_read_fn)(void *ctx, uint64_t ip, uint8_t *buf, size_t size);

/* What the #DB glue should do after a step. */
enum soft_unit_action {
    SOFT_UNIT_CONTINUE = 0,  /* keep single-stepping */
    SOFT_UNIT_SKIP_CALL = 1, /* the flow left the filter ranges through a
                                * CALL: nothing is traced until execution is
                                * back at soft_unit_resume_ip(); the glue may
                                * run free until then (a breakpoint there) */
    SOFT_UNIT_STOPPED = 2,   /* TraceStop hit or stop-when-full: tracing
                                * is off (STATUS.Stopped); stop stepping */
    SOFT_UNIT_FREE = 3,      /* packets are off here (outside the FilterEn
                                * ranges, or an interrupt handler outside
                                * them was entered): nothing is written
                                * until a taken branch or an event lands in
                                * the ranges. A glue that can watch for
                                * landings (docs/soft-unit.md) may call
                                * soft_unit_unseen() and run free until
                                * execution reaches the ranges again; else
                                * it keeps stepping (as for CONTINUE) */
};

struct soft_unit_status {
    uint64_t bytes;     /* bytes written since start (all laps) */
    uint64_t write_pos; /* buffer offset of the next byte */
    uint64_t insns;     /* instructions traced inside the ranges */
    uint64_t steps;     /* soft_unit_step() calls */
    bool wrapped;       /* the ring wrapped at least once */
    bool stopped;       /* stop-when-full or TraceStop */
    bool stopped_full;  /* the stop was the buffer filling */
    /* added with the implementation: */
    bool tracing;            /* PacketEn now (inside the FilterEn ranges) */
    bool skipping;           /* a SKIP_CALL free run is under way */
    uint64_t gaps;           /* steps no outcome of the previous
                                * instruction explains (written as gaps) */
    uint64_t undecodable;    /* previous instructions the ILD could not
                                * read or decode (written as gaps) */
    uint64_t skips;          /* SKIP_CALL answers */
    uint64_t rep_iterations; /* steps that were one more iteration of a
                                * REP string instruction (traced once) */
    int error;               /* 0, or the negative error that stopped it */
    uint64_t interrupts;     /* soft_unit_interrupt() events recorded */
    uint64_t unseen;         /* soft_unit_unseen() free runs */
};

/* Errors (negative) of soft_unit_init() and in soft_unit_status.error. */
enum soft_unit_error {
    SOFT_UNIT_E_INVALID = -1,   /* NULL unit, config, buffer or reader */
    SOFT_UNIT_E_OUTPUT = -2,    /* no regions, a size code > 15, a
                                   * single range not a power of two
                                   * >= 128, or a buffer smaller than
                                   * the configured output */
    SOFT_UNIT_E_RANGE = -3,     /* ADDRn_CFG other than 0, 1, 2 */
    SOFT_UNIT_E_BRANCH_EN = -4, /* BranchEn=0: nothing to model */
    SOFT_UNIT_E_MODE = -5,      /* exec_mode not 16, 32 or 64 */
    SOFT_UNIT_E_STATE = -6,     /* a call out of order (stop twice) */
};

/* The unit's whole state (fixed size; the caller owns it). Fields are
 * private to soft_unit.c. */
struct soft_unit {
    struct ptd_tracer tracer; /* the packets (decoder/ptd_tracer.h) */
    uint8_t *buf;
    uint64_t size; /* output bytes cfg describes */
    uint64_t pos;  /* offset of the next byte */
    uint64_t bytes;
    soft_unit_read_fn read;
    void *read_ctx;
    uint64_t prev_ip;   /* the instruction stepped last */
    uint64_t resume_ip; /* SKIP_CALL: where stepping resumes */
    uint64_t insns, steps, gaps, undecodable, skips, rep_iterations;
    uint64_t interrupts, unseen;
    int error;
    uint8_t prev_mode; /* enum ptd_exec_mode */
    bool ring;         /* wrap when full (else stop) */
    bool wrapped, stopped_full;
    bool started, have_prev, skipping, ended;
    bool skip_call; /* the free run is SKIP_CALL's */
};

/* Checks cfg the way soft tracing needs it (ToPA or single range output,
 * filter/TraceStop ranges, BranchEn, DisRETC, TSCEn, PSBFreq) and prepares
 * the output over buffer[0..buffer_size) (cfg's regions back to back).
 * Returns 0 or a negative error (soft_unit_strerror). */
int soft_unit_init(struct soft_unit *u, const struct rtit_config *cfg, uint8_t *buffer,
                   size_t buffer_size, soft_unit_read_fn read, void *read_ctx);
/* The instruction at ip (exec_mode 16, 32 or 64) is about to execute; tsc
 * is the time stamp now. Returns an enum soft_unit_action. */
int soft_unit_step(struct soft_unit *u, uint64_t ip, unsigned exec_mode, uint64_t tsc);
/* An interrupt or exception was delivered before the instruction at the
 * IP stepped last completed (for a fault it never does; for an interrupt
 * it runs after the handler returns); the handler's first instruction at
 * ip is about to execute. Writes what the CPU writes for an asynchronous
 * event (the SDM's table "Packet Generation under Different Enable
 * Conditions", cases 11b-11e and 13b-13e): FUP (the interrupted IP) +
 * TIP(ip), or FUP + TIP.PGD(ip) when ip is outside the FilterEn ranges,
 * or TIP.PGE(ip) when packets were off and ip is inside. Glue that can
 * tell a handler's entry from a step calls this instead of
 * soft_unit_step() for it; without it the step shows as a gap. Returns an
 * enum soft_unit_action: FREE when the handler is outside the ranges
 * (soft_unit_resume_ip() is then the interrupted IP). */
int soft_unit_interrupt(struct soft_unit *u, uint64_t ip, unsigned exec_mode, uint64_t tsc);
/* The glue will not report the instruction it reported last (by a step
 * or as an interrupt handler's entry) nor what follows it, until the next
 * soft_unit_step(), which is where execution is seen again (a landing:
 * FilterEn and TraceStop are evaluated there, as where a taken branch or
 * an event lands). With packets on, an asynchronous disable before that
 * instruction (FUP + TIP.PGD, IP suppressed; decoders show [disabled]).
 * For a SOFT_UNIT_FREE answer (nothing is written meanwhile), or for an
 * interrupt handler inside the ranges that the glue does not step.
 * Returns an enum soft_unit_action (FREE, or STOPPED). */
int soft_unit_unseen(struct soft_unit *u, uint64_t tsc);
/* With SOFT_UNIT_SKIP_CALL: where tracing resumes (the return address);
 * after soft_unit_interrupt() answered FREE: the interrupted IP, where
 * the handler returns to (0 when not known). */
uint64_t soft_unit_resume_ip(const struct soft_unit *u);
/* Tracing ends with the instruction at ip about to execute (TraceEn=0):
 * flushes TNT, writes FUP + TIP.PGD (IP suppressed) if packets are on.
 * ip other than the IP stepped last: that instruction completed and went
 * to ip (the glue passes where the traced call returned to), so it is
 * traced first. ip equal to it (stepping ended before it ran) or 0 (not
 * known): tracing ends before it. (An instruction that loops on itself
 * cannot be told from the first case: report its next step first.)
 * Returns 0 or SOFT_UNIT_E_STATE. */
int soft_unit_stop(struct soft_unit *u, uint64_t ip, uint64_t tsc);
void soft_unit_get_status(const struct soft_unit *u, struct soft_unit_status *s);
const char *soft_unit_strerror(int err);

/* What the buffer holds, in the hardware path's terms (rtit_seq.h), for
 * rtit_trace_linearize() (arch/x86/rtit_linear.h): oldest byte and count,
 * wrapped, stopped_full. */
void soft_unit_summarize(const struct soft_unit *u, struct rtit_output_summary *out);

/* A decoder's time configuration for a trace the soft unit wrote with this
 * IA32_RTIT_CTL value: MTCFreq when MTCEn, and the unit's crystal-clock
 * ratio (SOFT_UNIT_CPUID15_*); the rest of *t is left as it was. */
void soft_unit_time_config(uint64_t rtit_ctl, struct ptd_time_config *t);

#endif
