/* The software trace unit's landing watch on the target: the FilterEn and
 * TraceStop ranges made non-executable while the glue lets other code run
 * free (arch/x86/x86_nx_watch.h over this CPU's live page tables), so the
 * first fetch from them is a #PF the glue catches (efi/capture/idt_chain.h)
 * and turns into a step: the place where a CPU's FilterEn would see the
 * flow land. Without it, code run free (interrupt handlers, calls out of
 * the ranges) could enter the ranges unseen.
 *
 *   efi_soft_watch_prepare  boot services: memory for the page list and
 *                           the spare tables of large-page splits; the
 *                           walk and the splits (interrupts off, CR0.WP
 *                           lifted, TLB flushed). Needs IA32_EFER.NXE.
 *   efi_soft_watch_arm/disarm  XD on/off (any context, no firmware call)
 *   efi_soft_watch_release  the splits undone, every entry as it was (any
 *                           context); efi_soft_watch_free gives the memory
 *                           back (boot services).
 */
#ifndef PTBOOT_EFI_CAPTURE_SOFT_WATCH_H
#define PTBOOT_EFI_CAPTURE_SOFT_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/x86/x86_nx_watch.h"

/* The ranges are refused beyond this many pages (64 MiB). */
#define PTB_SOFT_WATCH_MAX_PAGES 16384u

enum efi_soft_watch_error {
    PTB_SOFT_WATCH_E_NXE = -20,    /* IA32_EFER.NXE is 0: no XD bit */
    PTB_SOFT_WATCH_E_MEMORY = -21, /* no memory for the page list or spares */
    PTB_SOFT_WATCH_E_SELF = -22,   /* the ranges hold ptboot's own code */
    PTB_SOFT_WATCH_E_SIZE = -23,   /* more than PTB_SOFT_WATCH_MAX_PAGES */
};

/* Prepares the watch over [lo[i], hi[i]] (inclusive) unless they touch
 * [self_lo, self_hi) (the glue's own code must stay executable). Returns
 * the number of pages, or a negative x86_nx_watch or efi_soft_watch error. */
long efi_soft_watch_prepare(const uint64_t *lo, const uint64_t *hi, unsigned n, uint64_t self_lo,
                            uint64_t self_hi);
bool efi_soft_watch_ready(void);
/* Pages made non-executable / executable again by the last call. */
unsigned efi_soft_watch_arm(void);
unsigned efi_soft_watch_disarm(void);
bool efi_soft_watch_armed(void);
/* A fetch fault at va is the watch's. */
bool efi_soft_watch_owns(uint64_t va);
/* va is on a watched page. */
bool efi_soft_watch_covers(uint64_t va);
/* Disarms, undoes the splits; the watch is no longer ready. Returns the
 * splits undone (*kept: left in place because someone changed them). */
unsigned efi_soft_watch_release(unsigned *kept);
/* Frees what prepare allocated (boot services; after release). */
void efi_soft_watch_free(void);
/* The splits the last prepare made (0: the ranges were in 4 KiB pages). */
unsigned efi_soft_watch_splits(void);
const char *efi_soft_watch_strerror(long err);

#endif
