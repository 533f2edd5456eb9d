/* The RTIT MSRs as found before ptboot touches anything: firmware (EDK2
 * ProcTrace, FSP, a DCI debugger) may already be tracing (rtit.md 4.5). */
#ifndef PTBOOT_ARCH_X86_RTIT_MSR_SNAPSHOT_H
#define PTBOOT_ARCH_X86_RTIT_MSR_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_msr.h"

struct rtit_msr_value {
    bool ok;        /* read succeeded; value is valid */
    bool fault;     /* read was attempted and failed (#GP, or no safe path) */
    int err;        /* the reader's non-zero result when fault is set */
    uint64_t value; /* neither ok nor fault: not read (CPUID says absent) */
};

struct rtit_msr_snapshot {
    struct rtit_msr_value ctl;              /* IA32_RTIT_CTL 0x570 */
    struct rtit_msr_value status;           /* IA32_RTIT_STATUS 0x571 */
    struct rtit_msr_value output_base;      /* IA32_RTIT_OUTPUT_BASE 0x560 */
    struct rtit_msr_value output_mask_ptrs; /* IA32_RTIT_OUTPUT_MASK_PTRS 0x561 */
};

/* Reads only the MSRs CPUID promises: CTL/STATUS need 7.0.EBX[25] (and a
 * real leaf 14h), OUTPUT_* need ToPA or single range (rtit.md 0.1). Touching
 * any other would #GP. */
void rtit_msr_snapshot_take(struct rtit_msr_snapshot *s, const struct rtit_caps *caps,
                            const struct rtit_msr_ops *ops);

/* True if the snapshot shows CTL.TraceEn=1: someone else owns PT. */
bool rtit_msr_snapshot_tracing(const struct rtit_msr_snapshot *s);

#endif
