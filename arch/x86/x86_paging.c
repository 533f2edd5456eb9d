#include "arch/x86/x86_paging.h"

bool x86_paging_la57_native(void)
{
#if defined(PTBOOT_EFI) && defined(__x86_64__)
    uint64_t cr4;
    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    return (cr4 & X86_CR4_LA57) != 0;
#else
    return false;
#endif
}

bool x86_canonical(uint64_t v, unsigned bits)
{
    if (bits == 0 || bits >= 64)
        return true;
    uint64_t top = v >> (bits - 1);
    return top == 0 || top == (UINT64_MAX >> (bits - 1));
}
