/* The hardware capture's MSR sequences beyond start/stop (rtit_seq.h), over
 * struct rtit_msr_ops so the target and the RTIT model run the same code:
 *
 *   pause/resume   TraceEn 1 -> 0 -> 1 with the other CTL bits unchanged.
 *                  The ADDRn MSRs, OUTPUT_BASE and OUTPUT_MASK_PTRS may only
 *                  be written, and the output pointers are only stable, with
 *                  TraceEn=0 (SDM 36.2.7.2, 36.2.7.5, 36.2.7.7; rtit.md 1.2).
 *   set_ranges     a new image was loaded: check the new ranges against the
 *                  caps before any write, pause, write ADDRn_A/B, resume
 *                  with the new ADDRn_CFG in CTL.
 *   snapshot       where the output is now (pause, read STATUS, OUTPUT_BASE,
 *                  MASK_PTRS, resume): e.g. the resident tracer's metadata
 *                  while the boot goes on.
 *   finish         stop and linearise: rtit_stop + rtit_output_summarize.
 *
 * None of these takes over a trace someone else started: they act only
 * when CTL shows the configuration they were given (RTIT_SEQ_E_BUSY). */
#ifndef PTBOOT_ARCH_X86_CAPTURE_SEQ_H
#define PTBOOT_ARCH_X86_CAPTURE_SEQ_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_msr.h"
#include "arch/x86/rtit_seq.h"

/* Clears TraceEn (other CTL bits kept). *was_tracing tells whether it was
 * set. CTL must hold cfg's fields (TraceEn aside), else RTIT_SEQ_E_BUSY and
 * nothing is written. */
int capture_seq_pause(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                      bool *was_tracing);

/* Sets TraceEn with cfg's CTL fields, then reads STATUS: Error -> TraceEn
 * off again and RTIT_SEQ_E_STATUS. *status (may be NULL) gets STATUS. A
 * Stopped trace (TraceStop hit, STOP region full) stays stopped: the CPU
 * produces nothing until STATUS is cleared, which only a new start does. */
int capture_seq_resume(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                       uint64_t *status);

/* Replaces cfg's address ranges by ranges[0..RTIT_MAX_RANGES) while tracing
 * continues around it. rtit_check() of the new configuration comes first:
 * a refusal (RTIT_SEQ_E_RULE, *v says why) writes nothing and cfg is
 * unchanged. Ranges that go from used to off are written 0/0. */
int capture_seq_set_ranges(const struct rtit_msr_ops *ops, struct rtit_config *cfg,
                           const struct rtit_caps *caps,
                           const struct rtit_addr_range ranges[RTIT_MAX_RANGES],
                           struct rtit_violation *v);

/* Adds [base, base + size) as a FilterEn range (first free one) with
 * capture_seq_set_ranges(). RTIT_SEQ_E_RULE when no range is free. */
int capture_seq_add_image(const struct rtit_msr_ops *ops, struct rtit_config *cfg,
                          const struct rtit_caps *caps, uint64_t base, uint64_t size,
                          struct rtit_violation *v);

/* Pauses (TraceEn off) and reads the output position and STATUS with
 * rtit_stop; info->was_tracing tells whether it was tracing. Tracing stays
 * paused (capture_seq_resume goes on). */
int capture_seq_pause_read(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                           struct rtit_stop_info *info);

/* The output position while tracing goes on (pause, read, resume if it
 * was tracing). info->write_pos as rtit_stop's. */
int capture_seq_snapshot(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                         struct rtit_stop_info *info);

/* Stops tracing and describes the buffer (buf: the output buffer, zeroed
 * before start, for wrap detection; may be NULL). */
int capture_seq_finish(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                       const uint8_t *buf, struct rtit_stop_info *stop,
                       struct rtit_output_summary *sum);

#endif
