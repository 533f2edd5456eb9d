#include "arch/x86/cpuid.h"

void x86_cpuid_native(void *ctx, uint32_t leaf, uint32_t subleaf, x86_cpuid_regs *out)
{
    (void)ctx;
#if defined(__x86_64__) || defined(__i386__)
    uint32_t a, b, c, d;
    /* ECX is an input for sub-leaf indexed leaves (4, 7, 0Bh, 0Dh, 14h...)
	 * and ignored by the others, so always pass it (SDM Vol. 2A, CPUID). */
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(leaf), "c"(subleaf));
    out->eax = a;
    out->ebx = b;
    out->ecx = c;
    out->edx = d;
#else
    (void)leaf;
    (void)subleaf;
    out->eax = out->ebx = out->ecx = out->edx = 0;
#endif
}
