/* CPUID access through a callback, so capability code runs unchanged on the
 * real CPU (x86_cpuid_native), on a recorded dump (cpuid_dump.h) or on a
 * synthetic capability set in tests. */
#ifndef PTBOOT_ARCH_X86_CPUID_H
#define PTBOOT_ARCH_X86_CPUID_H

#include <stdint.h>

typedef struct x86_cpuid_regs {
    uint32_t eax, ebx, ecx, edx;
} x86_cpuid_regs;

/* Executes CPUID(leaf, subleaf) for ctx and stores the four registers. */
typedef void (*x86_cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf, x86_cpuid_regs *out);

/* The CPUID instruction on the CPU running the code; ctx is ignored.
 * On a non-x86 build it returns zeros (no leaves). */
void x86_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, x86_cpuid_regs *out);

#endif
