/* Control registers and TLB of the CPU running the app (CPL 0), for the
 * software trace unit's glue, which edits the IDT and page tables while
 * it traces (efi/capture/idt_chain.c, efi/capture/soft_watch.c).
 * SDM Vol. 3A 2.5 (control registers), 4.10.4 (INVLPG, MOV to CR3). */
#ifndef PTBOOT_EFI_PLATFORM_CPU_CTL_H
#define PTBOOT_EFI_PLATFORM_CPU_CTL_H

#include <stdint.h>

/* CR0.WP (bit 16): supervisor writes honour read-only pages. */
#define X86_CR0_WP (1ull << 16)
/* RFLAGS.IF (bit 9). */
#define X86_RFLAGS_IF (1ull << 9)
/* IA32_EFER (SDM Vol. 4, MSR C000_0080H) and its NXE bit (11). */
#define X86_MSR_EFER 0xc0000080u
#define X86_EFER_NXE (1ull << 11)

static inline uint64_t cpu_read_cr0(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr0, %0" : "=r"(v));
    return v;
}

static inline void cpu_write_cr0(uint64_t v)
{
    __asm__ volatile("mov %0, %%cr0" : : "r"(v) : "memory");
}

static inline uint64_t cpu_read_cr2(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr2, %0" : "=r"(v));
    return v;
}

static inline uint64_t cpu_read_cr3(void)
{
    uint64_t v;
    __asm__ volatile("mov %%cr3, %0" : "=r"(v));
    return v;
}

/* A MOV to CR3 flushes every TLB entry that is not global. */
static inline void cpu_flush_tlb(void)
{
    __asm__ volatile("mov %%cr3, %%rax; mov %%rax, %%cr3" : : : "rax", "memory");
}

static inline void cpu_invlpg(uint64_t va)
{
    __asm__ volatile("invlpg (%0)" : : "r"(va) : "memory");
}

/* Interrupts off; returns the RFLAGS to give back to cpu_irq_restore. */
static inline uint64_t cpu_irq_save(void)
{
    uint64_t f;
    __asm__ volatile("pushfq; pop %0; cli" : "=r"(f) : : "memory");
    return f;
}

static inline void cpu_irq_restore(uint64_t f)
{
    if (f & X86_RFLAGS_IF)
        __asm__ volatile("sti" : : : "memory");
}

/* Writes to read-only pages (a read-only IDT or page tables) with CR0.WP
 * cleared: call with interrupts off; returns the CR0 to restore. */
static inline uint64_t cpu_wp_off(void)
{
    uint64_t cr0 = cpu_read_cr0();
    if (cr0 & X86_CR0_WP)
        cpu_write_cr0(cr0 & ~X86_CR0_WP);
    return cr0;
}

static inline void cpu_wp_restore(uint64_t cr0)
{
    if (cr0 & X86_CR0_WP)
        cpu_write_cr0(cr0);
}

#endif
