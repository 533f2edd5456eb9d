/* Start and stop of Intel PT as ordered lists of MSR accesses, through
 * struct rtit_msr_ops so the target (#GP-safe RDMSR/WRMSR) and the test
 * RTIT model run the same code. Sequence (SDM 36.2.7.3, 36.3.2; Linux
 * pt_config(); EDK2 ProcTrace; rtit.md 1.2):
 *
 *   start: read CTL; if TraceEn=1 someone else owns PT -> refuse, or with
 *          take_over write CTL=0; STATUS=0 (clears Error/Stopped and
 *          PacketByteCnt, so the trace begins with a PSB+); OUTPUT_BASE;
 *          OUTPUT_MASK_PTRS; CR3_MATCH; ADDRn_A/B; CTL with TraceEn last;
 *          read STATUS: Error right away means a bad configuration.
 *   stop:  CTL with TraceEn cleared (other bits unchanged), fence, read
 *          STATUS, OUTPUT_BASE, OUTPUT_MASK_PTRS (stable only now). */
#ifndef PTBOOT_ARCH_X86_RTIT_SEQ_H
#define PTBOOT_ARCH_X86_RTIT_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_msr.h"

struct rtit_msr_write {
    uint32_t msr;
    uint64_t value;
};

/* STATUS, BASE, MASK, CR3, 4 x (ADDR_A, ADDR_B), CTL */
#define RTIT_PLAN_MAX 16

struct rtit_plan {
    size_t n;
    struct rtit_msr_write w[RTIT_PLAN_MAX];
};

/* The writes rtit_start() performs once TraceEn is 0, in order. Mechanical:
 * no checks (run rtit_check() first; tests also feed rejected configs). */
void rtit_plan_start(struct rtit_plan *p, const struct rtit_config *cfg);

/* IA32_RTIT_OUTPUT_MASK_PTRS at start: ToPA: LowerMask 7Fh, entry 0,
 * offset 0; single range: (size - 1) as the mask, offset 0 (36.2.7.8). */
uint64_t rtit_initial_mask_ptrs(const struct rtit_config *cfg);

enum rtit_seq_result {
    RTIT_SEQ_OK = 0,
    RTIT_SEQ_E_RULE = -1,   /* rtit_check() refused: see info.violation */
    RTIT_SEQ_E_BUSY = -2,   /* TraceEn was already 1 and take_over=false */
    RTIT_SEQ_E_MSR = -3,    /* an MSR access failed: see info.failed_msr */
    RTIT_SEQ_E_STATUS = -4, /* STATUS.Error right after enabling */
};

struct rtit_start_info {
    struct rtit_violation violation;
    bool was_tracing; /* CTL.TraceEn was 1 before start */
    uint64_t old_ctl;
    uint32_t failed_msr; /* with RTIT_SEQ_E_MSR */
    int msr_err;
    uint64_t status; /* STATUS read after enabling */
};

/* Checks cfg against caps, then runs the start sequence. On E_STATUS
 * tracing is switched off again. */
int rtit_start(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
               const struct rtit_caps *caps, bool take_over, struct rtit_start_info *info);

struct rtit_stop_info {
    uint64_t ctl, status, output_base, mask_ptrs;
    bool was_tracing;    /* TraceEn was 1 when stop ran */
    bool error, stopped; /* STATUS.Error, STATUS.Stopped */
    int64_t write_pos;   /* buffer offset of the next byte, or -1 if
                            * the pointers are outside the buffer */
    uint32_t failed_msr;
    int msr_err;
};

int rtit_stop(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
              struct rtit_stop_info *info);

struct rtit_output_summary {
    uint64_t buffer_bytes; /* size of the whole output buffer */
    uint64_t bytes;        /* valid trace bytes in the buffer */
    uint64_t oldest;       /* buffer offset of the oldest valid byte */
    bool wrapped;          /* the ring (or single range) wrapped */
    bool stopped_full;     /* stop-when-full: the last region filled */
};

/* What the buffer holds after stop. Hardware does not report a wrap, so
 * with buf (the output buffer, zeroed before start) any non-zero byte at or
 * after the write position means the ring wrapped (simple-pt's
 * clear_on_start idea); without buf a wrap cannot be seen. */
void rtit_output_summarize(const struct rtit_stop_info *stop, const struct rtit_config *cfg,
                           const uint8_t *buf, struct rtit_output_summary *out);

/* Human explanation of STATUS.Error / STATUS.Stopped, or NULL if neither
 * is set (36.2.7.4, 36.3.9). */
const char *rtit_status_explain(uint64_t status);

#endif
