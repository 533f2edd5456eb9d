/* The landing watch over the live page tables (soft_watch.h). */
#include <efi.h>
#include <efilib.h>

#include "arch/x86/x86_paging.h"
#include "efi/capture/soft_watch.h"
#include "efi/platform/cpu_ctl.h"
#include "efi/platform/msr_safe.h"

/* Up to this many pages are invalidated one by one (INVLPG); more: a CR3
 * reload flushes them all (SDM Vol. 3A 4.10.4.1). */
#define INVLPG_MAX 64u

static struct {
    struct x86_nx_watch w;
    bool ready;
    struct x86_nx_watch_page *pages;
    UINTN pages_bytes;
    struct x86_nx_watch_spare spare[X86_NX_WATCH_MAX_SPLITS];
    unsigned splits;
} sw;

/* UEFI maps memory one to one (UEFI 2.10 section 2.3.4). */
static uint64_t *map_identity(void *ctx, uint64_t phys)
{
    (void)ctx;
    return (uint64_t *)(uintptr_t)phys;
}

static bool spares_alloc(void)
{
    for (unsigned i = 0; i < X86_NX_WATCH_MAX_SPLITS; i++) {
        if (sw.spare[i].table)
            continue;
        EFI_PHYSICAL_ADDRESS a;
        if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiBootServicesData, 1, &a)))
            return false;
        sw.spare[i].table = (uint64_t *)(uintptr_t)a;
        sw.spare[i].phys = a;
    }
    return true;
}

static bool overlaps(uint64_t lo, uint64_t hi, uint64_t a, uint64_t b)
{
    lo &= ~(uint64_t)(X86_PAGE_BYTES - 1);
    hi |= X86_PAGE_BYTES - 1;
    return a < b && lo < b && a <= hi;
}

long efi_soft_watch_prepare(const uint64_t *lo, const uint64_t *hi, unsigned n, uint64_t self_lo,
                            uint64_t self_hi)
{
    if (sw.ready)
        efi_soft_watch_release(NULL);
    for (unsigned i = 0; i < n; i++)
        if (overlaps(lo[i], hi[i], self_lo, self_hi))
            return PTB_SOFT_WATCH_E_SELF;
    size_t count = x86_nx_watch_count(lo, hi, n);
    if (!count)
        return X86_NX_WATCH_E_INVALID;
    if (count > PTB_SOFT_WATCH_MAX_PAGES)
        return PTB_SOFT_WATCH_E_SIZE;
    /* SDM Vol. 3A 4.1.4: XD exists only with IA32_EFER.NXE = 1 */
    uint64_t efer = 0;
    if (efi_msr_read(X86_MSR_EFER, &efer) != PTB_MSR_OK || !(efer & X86_EFER_NXE))
        return PTB_SOFT_WATCH_E_NXE;
    UINTN need = count * sizeof(struct x86_nx_watch_page);
    if (need > sw.pages_bytes) {
        if (sw.pages)
            BS->FreePool(sw.pages);
        sw.pages = NULL;
        sw.pages_bytes = 0;
        if (EFI_ERROR(BS->AllocatePool(EfiBootServicesData, need, (void **)&sw.pages)) || !sw.pages)
            return PTB_SOFT_WATCH_E_MEMORY;
        sw.pages_bytes = need;
    }
    if (!spares_alloc())
        return PTB_SOFT_WATCH_E_MEMORY;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    long r = x86_nx_watch_prepare(&sw.w, cpu_read_cr3(), x86_paging_la57_native() ? 5 : 4, lo, hi,
                                  n, sw.pages, count, sw.spare, X86_NX_WATCH_MAX_SPLITS,
                                  map_identity, NULL);
    sw.splits = r >= 0 ? sw.w.nsplit : 0;
    if (sw.splits)
        cpu_flush_tlb();
    cpu_wp_restore(cr0);
    cpu_irq_restore(flags);
    sw.ready = r >= 0;
    return r;
}

bool efi_soft_watch_ready(void)
{
    return sw.ready;
}

/* After XD changed on the watch's pages. */
static void flush(void)
{
    if (sw.w.npages > INVLPG_MAX) {
        cpu_flush_tlb();
        return;
    }
    for (size_t i = 0; i < sw.w.npages; i++)
        cpu_invlpg(sw.w.pages[i].va);
}

unsigned efi_soft_watch_arm(void)
{
    if (!sw.ready || sw.w.armed)
        return 0;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    size_t n = x86_nx_watch_arm(&sw.w);
    cpu_wp_restore(cr0);
    flush();
    cpu_irq_restore(flags);
    return (unsigned)n;
}

unsigned efi_soft_watch_disarm(void)
{
    if (!sw.ready || !sw.w.armed)
        return 0;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    size_t n = x86_nx_watch_disarm(&sw.w);
    cpu_wp_restore(cr0);
    flush();
    cpu_irq_restore(flags);
    return (unsigned)n;
}

bool efi_soft_watch_armed(void)
{
    return sw.ready && sw.w.armed;
}

bool efi_soft_watch_owns(uint64_t va)
{
    return sw.ready && x86_nx_watch_owns(&sw.w, va);
}

bool efi_soft_watch_covers(uint64_t va)
{
    return sw.ready && x86_nx_watch_covers(&sw.w, va);
}

unsigned efi_soft_watch_release(unsigned *kept)
{
    if (kept)
        *kept = 0;
    if (!sw.ready)
        return 0;
    efi_soft_watch_disarm();
    unsigned made = sw.w.nsplit;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    unsigned undone = x86_nx_watch_release(&sw.w);
    if (kept)
        *kept = sw.w.kept_splits;
    if (sw.splits)
        cpu_flush_tlb();
    cpu_wp_restore(cr0);
    cpu_irq_restore(flags);
    sw.ready = false;
    /* a kept split still maps through its spare table: never free it */
    for (unsigned k = 0; k < made; k++) {
        const struct x86_nx_watch_split *p = &sw.w.split[k];
        if ((*p->entry & 0x000ffffffffff000ull) != p->table_phys)
            continue;
        for (unsigned i = 0; i < X86_NX_WATCH_MAX_SPLITS; i++)
            if (sw.spare[i].phys == p->table_phys)
                sw.spare[i].table = NULL;
    }
    return undone;
}

void efi_soft_watch_free(void)
{
    if (sw.ready)
        return;
    if (sw.pages)
        BS->FreePool(sw.pages);
    sw.pages = NULL;
    sw.pages_bytes = 0;
    for (unsigned i = 0; i < X86_NX_WATCH_MAX_SPLITS; i++) {
        if (sw.spare[i].table)
            BS->FreePages(sw.spare[i].phys, 1);
        sw.spare[i].table = NULL;
    }
}

unsigned efi_soft_watch_splits(void)
{
    return sw.splits;
}

const char *efi_soft_watch_strerror(long err)
{
    switch (err) {
    case PTB_SOFT_WATCH_E_NXE: return "IA32_EFER.NXE is 0 (no execute-disable bit)";
    case PTB_SOFT_WATCH_E_MEMORY: return "no memory for the page list";
    case PTB_SOFT_WATCH_E_SELF: return "the ranges hold ptboot's own code";
    case PTB_SOFT_WATCH_E_SIZE: return "the ranges span more than 64 MiB";
    default: return x86_nx_watch_strerror(err);
    }
}
