/* A landing watch from execute-disable pages: while code outside some
 * address ranges runs without single-stepping, the pages of the ranges
 * are made non-executable, so the first instruction fetched from them
 * faults (#PF with the I/D bit, SDM Vol. 3A 4.7 "Page-Fault Exceptions")
 * instead of running unseen. The software trace unit's glue
 * (efi/capture/soft_step.c) uses it to learn where execution enters the
 * FilterEn and TraceStop ranges again after an interrupt handler, a call
 * out of the ranges or a return out of them, as a CPU's FilterEn does
 * where a branch or an event lands.
 *
 * This file only edits page-table entries, through pointers it is handed
 * (the tables as the caller maps them; identity in UEFI): 4-level or
 * 5-level paging with IA32_EFER.NXE = 1 (SDM Vol. 3A 4.5, Tables 4-14 to
 * 4-20: XD is bit 63 of every entry; without NXE it is reserved). The
 * caller flushes the TLB (INVLPG or a CR3 reload) after each call that
 * says so, and lifts CR0.WP around them if the tables are read-only.
 *
 *   x86_nx_watch_prepare  walks the tables for each page of the ranges,
 *                         splits 2 MiB and 1 GiB pages that hold one into
 *                         4 KiB pages (spare tables from the caller, with
 *                         the same translation and attributes), and
 *                         records each page's entry;
 *   x86_nx_watch_arm      sets XD on the pages that do not have it now;
 *   x86_nx_watch_disarm   clears XD on exactly those again;
 *   x86_nx_watch_owns     whether a fetch fault at an address is the
 *                         watch's (an armed page it set XD on);
 *   x86_nx_watch_release  disarms and puts every split entry back as it
 *                         was, unless someone changed the split table
 *                         meanwhile (then the split stays: it maps the
 *                         same, and the other writer's changes are kept).
 *
 * No allocation, no globals: the caller owns the state and the storage. */
#ifndef PTBOOT_ARCH_X86_X86_NX_WATCH_H
#define PTBOOT_ARCH_X86_X86_NX_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define X86_NX_WATCH_MAX_RANGES 8
#define X86_NX_WATCH_MAX_SPLITS 8
#define X86_PAGE_BYTES          4096u
/* Entries per paging-structure table (SDM Vol. 3A 4.5: 512 x 8 bytes). */
#define X86_PT_ENTRIES 512u

/* Maps a physical address of a paging structure to a pointer the code
 * can write through (identity in UEFI; a buffer in tests). NULL: not
 * reachable. */
typedef uint64_t *(*x86_nx_watch_map_fn)(void *ctx, uint64_t phys);

/* One watched 4 KiB page. */
struct x86_nx_watch_page {
    uint64_t va;   /* page address */
    uint64_t *pte; /* its 4 KiB entry */
    bool set;      /* XD was set by the last arm (not there before) */
};

/* A large page split into a table of smaller ones. */
struct x86_nx_watch_split {
    uint64_t *entry; /* the entry that mapped the large page */
    uint64_t orig;   /* its value before */
    uint64_t *table; /* the spare table it points to now */
    uint64_t table_phys;
    unsigned level; /* 3: a 1 GiB page, 2: a 2 MiB page */
};

struct x86_nx_watch {
    struct x86_nx_watch_page *pages; /* caller storage, ascending va */
    size_t npages, cap;
    struct x86_nx_watch_split split[X86_NX_WATCH_MAX_SPLITS];
    unsigned nsplit;
    uint64_t lo[X86_NX_WATCH_MAX_RANGES], hi[X86_NX_WATCH_MAX_RANGES]; /* page-rounded, inclusive */
    unsigned nranges;
    bool armed;
    unsigned kept_splits; /* release: splits left in place */
};

/* A spare 4 KiB table for splits (zeroed or not: it is filled). */
struct x86_nx_watch_spare {
    uint64_t *table;
    uint64_t phys;
};

enum x86_nx_watch_error {
    X86_NX_WATCH_E_INVALID = -1,  /* no ranges, a range with lo > hi, NULL storage */
    X86_NX_WATCH_E_UNMAPPED = -2, /* a page of the ranges is not present */
    X86_NX_WATCH_E_PAGES = -3,    /* more pages than the storage holds */
    X86_NX_WATCH_E_SPLITS = -4,   /* more large pages to split than spares */
    X86_NX_WATCH_E_TABLE = -5,    /* a paging structure the map cannot reach */
    X86_NX_WATCH_E_RANGES = -6,   /* more than X86_NX_WATCH_MAX_RANGES ranges */
};

/* Pages [lo, hi] rounded out to 4 KiB, merged where they touch. Walks the
 * tables from cr3 (levels 4 or 5) and records each page's entry, splitting
 * large pages into the spares. Returns the number of pages, or a negative
 * error; on an error nothing stays changed. After a split the caller
 * flushes the whole TLB (a CR3 reload). */
long x86_nx_watch_prepare(struct x86_nx_watch *w, uint64_t cr3, unsigned levels, const uint64_t *lo,
                          const uint64_t *hi, unsigned nranges, struct x86_nx_watch_page *storage,
                          size_t cap, const struct x86_nx_watch_spare *spares, unsigned nspares,
                          x86_nx_watch_map_fn map, void *map_ctx);
/* Counts the 4 KiB pages of the ranges (rounded out and merged), for
 * sizing the storage; 0 on bad ranges. */
size_t x86_nx_watch_count(const uint64_t *lo, const uint64_t *hi, unsigned nranges);
/* Sets XD on each page that has it clear now. Returns how many it set
 * (the caller invalidates those pages' TLB entries). */
size_t x86_nx_watch_arm(struct x86_nx_watch *w);
/* Clears XD where the last arm set it. Returns how many. */
size_t x86_nx_watch_disarm(struct x86_nx_watch *w);
/* va is on a page of the watch that the last arm made non-executable,
 * and the watch is armed: a fetch fault there is the watch's. */
bool x86_nx_watch_owns(const struct x86_nx_watch *w, uint64_t va);
/* va is on a page of the watch (armed or not). */
bool x86_nx_watch_covers(const struct x86_nx_watch *w, uint64_t va);
/* Disarms and undoes the splits (see above); the caller flushes the TLB.
 * Returns the number of splits undone. */
unsigned x86_nx_watch_release(struct x86_nx_watch *w);
const char *x86_nx_watch_strerror(long err);

#endif
