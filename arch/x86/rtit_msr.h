/* MSR access through an interface, so the same sequences drive the real CPU
 * (target: RDMSR/WRMSR behind a #GP-safe path) and the RTIT model in tests. */
#ifndef PTBOOT_ARCH_X86_RTIT_MSR_H
#define PTBOOT_ARCH_X86_RTIT_MSR_H

#include <stdint.h>

struct rtit_msr_ops {
    /* Return 0 on success, non-zero if the access faulted (#GP). */
    int (*rd)(void *ctx, uint32_t msr, uint64_t *value);
    int (*wr)(void *ctx, uint32_t msr, uint64_t value);
    void *ctx;
};

#endif
