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
 *   soft_unit_stop()  when the traced call has returned (TraceEn=0).
 * The unit decodes the instruction it saw last (code read through the
 * callback) to learn its length and branch class, and from the next IP
 * whether a branch was taken. */
#ifndef PTBOOT_ARCH_X86_SOFT_UNIT_H
#define PTBOOT_ARCH_X86_SOFT_UNIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/rtit_config.h"

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
};

struct soft_unit_status {
	uint64_t bytes;        /* bytes written since start (all laps) */
	uint64_t write_pos;    /* buffer offset of the next byte */
	uint64_t insns;        /* instructions traced inside the ranges */
	uint64_t steps;        /* soft_unit_step() calls */
	bool wrapped;          /* the ring wrapped at least once */
	bool stopped;          /* stop-when-full or TraceStop */
	bool stopped_full;     /* the stop was the buffer filling */
};

/* The unit's whole state (fixed size; the caller owns it). Fields are
 * private to soft_unit.c. */
struct soft_unit;   /* defined here by the implementation */

/* Checks cfg the way soft tracing needs it (ToPA or single range output,
 * filter/TraceStop ranges, BranchEn, DisRETC, TSCEn, PSBFreq) and prepares
 * the output over buffer[0..buffer_size) (cfg's regions back to back).
 * Returns 0 or a negative error (soft_unit_strerror). */
int soft_unit_init(struct soft_unit *u, const struct rtit_config *cfg,
		   uint8_t *buffer, size_t buffer_size,
		   soft_unit_read_fn read, void *read_ctx);
/* The instruction at ip (exec_mode 16, 32 or 64) is about to execute; tsc
 * is the time stamp now. Returns an enum soft_unit_action. */
int soft_unit_step(struct soft_unit *u, uint64_t ip, unsigned exec_mode, uint64_t tsc);
/* With SOFT_UNIT_SKIP_CALL: where tracing resumes (the return address). */
uint64_t soft_unit_resume_ip(const struct soft_unit *u);
/* Tracing ends with the instruction at ip about to execute (TraceEn=0):
 * flushes TNT, writes TIP.PGD if inside a range. */
int soft_unit_stop(struct soft_unit *u, uint64_t ip, uint64_t tsc);
void soft_unit_get_status(const struct soft_unit *u, struct soft_unit_status *s);
const char *soft_unit_strerror(int err);

#endif
