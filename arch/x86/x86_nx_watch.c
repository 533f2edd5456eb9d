/* Landing watch from execute-disable pages (x86_nx_watch.h).
 *
 * Paging-structure entries, SDM Vol. 3A 4.5 (Tables 4-15 to 4-20): P is
 * bit 0, R/W bit 1, U/S bit 2, A bit 5, D bit 6, PS bit 7 in a PDPTE or a
 * PDE (a 1 GiB or 2 MiB page; in a PTE bit 7 is PAT), PAT of a large page
 * bit 12, the address bits 51:12 (51:21 for 2 MiB, 51:30 for 1 GiB), XD
 * bit 63 (with IA32_EFER.NXE = 1). Access rights combine along the walk
 * (4.6: R/W and U/S must be 1 at every level, XD at any level forbids
 * fetches), so a split keeps the rights in the new leaf entries and gives
 * the entry above them R/W = U/S = 1, XD = 0. */
#include "arch/x86/x86_nx_watch.h"

#define PTE_P          (1ull << 0)
#define PTE_RW         (1ull << 1)
#define PTE_US         (1ull << 2)
#define PTE_A          (1ull << 5)
#define PTE_D          (1ull << 6)
#define PTE_PS         (1ull << 7)
#define PTE_PAT_4K     (1ull << 7)
#define PTE_PAT_LARGE  (1ull << 12)
#define PTE_XD         (1ull << 63)
#define PTE_ADDR       0x000ffffffffff000ull /* bits 51:12 */
#define PAGE_MASK      ((uint64_t)X86_PAGE_BYTES - 1)
#define LEVEL_SHIFT(l) (12u + 9u * ((l)-1u))

static unsigned index_at(uint64_t va, unsigned level)
{
    return (unsigned)((va >> LEVEL_SHIFT(level)) & (X86_PT_ENTRIES - 1));
}

/* The entries of a table made from the large-page entry e at level (3: a
 * 1 GiB page into 2 MiB pages, 2: a 2 MiB page into 4 KiB pages). */
static uint64_t split_entry(uint64_t e, unsigned level, unsigned i)
{
    uint64_t frame_mask = PTE_ADDR & ~((1ull << LEVEL_SHIFT(level)) - 1);
    uint64_t frame = e & frame_mask;
    /* reserved bits between 12 and the frame are 0 in a large entry */
    uint64_t flags = e & ~PTE_ADDR;
    uint64_t step = 1ull << LEVEL_SHIFT(level - 1);
    if (level == 2) {
        /* 4 KiB entries: no PS, PAT moves from bit 12 to bit 7 */
        flags &= ~PTE_PS;
        if (e & PTE_PAT_LARGE)
            flags |= PTE_PAT_4K;
        return (frame + (uint64_t)i * step) | flags;
    }
    return (frame + (uint64_t)i * step) | flags | (e & PTE_PAT_LARGE);
}

/* Is the table still the split of orig (A and D as the CPU may set them
 * are not counted)? *ad gets the A and D bits found. */
static bool split_intact(const struct x86_nx_watch_split *s, uint64_t *ad)
{
    *ad = 0;
    for (unsigned i = 0; i < X86_PT_ENTRIES; i++) {
        uint64_t want = split_entry(s->orig, s->level, i) & ~(PTE_A | PTE_D);
        uint64_t have = s->table[i];
        *ad |= have & (PTE_A | PTE_D);
        if ((have & ~(PTE_A | PTE_D)) != want)
            return false;
    }
    return true;
}

static void undo_split(struct x86_nx_watch *w, unsigned k)
{
    struct x86_nx_watch_split *s = &w->split[k];
    uint64_t ad;
    uint64_t pointer = s->table_phys | PTE_P | PTE_RW | PTE_US;
    if ((*s->entry & ~(PTE_A | PTE_D)) == pointer && split_intact(s, &ad))
        *s->entry = s->orig | ad;
    else
        w->kept_splits++;
}

static int split(struct x86_nx_watch *w, uint64_t *entry, unsigned level,
                 const struct x86_nx_watch_spare *spares, unsigned nspares)
{
    if (w->nsplit == X86_NX_WATCH_MAX_SPLITS || w->nsplit >= nspares || !spares[w->nsplit].table)
        return X86_NX_WATCH_E_SPLITS;
    struct x86_nx_watch_split *s = &w->split[w->nsplit];
    s->entry = entry;
    s->orig = *entry;
    s->table = spares[w->nsplit].table;
    s->table_phys = spares[w->nsplit].phys & PTE_ADDR;
    s->level = level;
    for (unsigned i = 0; i < X86_PT_ENTRIES; i++)
        s->table[i] = split_entry(s->orig, level, i);
    *entry = s->table_phys | PTE_P | PTE_RW | PTE_US | PTE_A;
    w->nsplit++;
    return 0;
}

/* The 4 KiB entry of va, splitting large pages on the way. */
static int walk(struct x86_nx_watch *w, uint64_t cr3, unsigned levels, uint64_t va,
                const struct x86_nx_watch_spare *spares, unsigned nspares, x86_nx_watch_map_fn map,
                void *ctx, uint64_t **pte)
{
    uint64_t *table = map(ctx, cr3 & PTE_ADDR);
    for (unsigned level = levels; level >= 1; level--) {
        if (!table)
            return X86_NX_WATCH_E_TABLE;
        uint64_t *e = &table[index_at(va, level)];
        if (!(*e & PTE_P))
            return X86_NX_WATCH_E_UNMAPPED;
        if (level == 1) {
            *pte = e;
            return 0;
        }
        if ((level == 2 || level == 3) && (*e & PTE_PS)) {
            int rc = split(w, e, level, spares, nspares);
            if (rc)
                return rc;
        }
        table = map(ctx, *e & PTE_ADDR);
    }
    return X86_NX_WATCH_E_TABLE;
}

/* Page-rounded ranges, sorted and merged into w->lo/hi. */
static int take_ranges(struct x86_nx_watch *w, const uint64_t *lo, const uint64_t *hi, unsigned n)
{
    w->nranges = 0;
    if (!n || !lo || !hi)
        return X86_NX_WATCH_E_INVALID;
    if (n > X86_NX_WATCH_MAX_RANGES)
        return X86_NX_WATCH_E_RANGES;
    for (unsigned i = 0; i < n; i++) {
        if (lo[i] > hi[i])
            return X86_NX_WATCH_E_INVALID;
        uint64_t a = lo[i] & ~PAGE_MASK, b = hi[i] | PAGE_MASK;
        /* insertion by start address */
        unsigned j = w->nranges;
        while (j && w->lo[j - 1] > a) {
            w->lo[j] = w->lo[j - 1];
            w->hi[j] = w->hi[j - 1];
            j--;
        }
        w->lo[j] = a;
        w->hi[j] = b;
        w->nranges++;
    }
    unsigned m = 0;
    for (unsigned i = 1; i < w->nranges; i++) {
        if (w->hi[m] != UINT64_MAX && w->lo[i] <= w->hi[m] + 1) {
            if (w->hi[i] > w->hi[m])
                w->hi[m] = w->hi[i];
        } else {
            m++;
            w->lo[m] = w->lo[i];
            w->hi[m] = w->hi[i];
        }
    }
    w->nranges = m + 1;
    return 0;
}

size_t x86_nx_watch_count(const uint64_t *lo, const uint64_t *hi, unsigned nranges)
{
    struct x86_nx_watch w;
    size_t n = 0;
    if (take_ranges(&w, lo, hi, nranges))
        return 0;
    for (unsigned i = 0; i < w.nranges; i++)
        n += (size_t)((w.hi[i] - w.lo[i]) / X86_PAGE_BYTES) + 1;
    return n;
}

long x86_nx_watch_prepare(struct x86_nx_watch *w, uint64_t cr3, unsigned levels, const uint64_t *lo,
                          const uint64_t *hi, unsigned nranges, struct x86_nx_watch_page *storage,
                          size_t cap, const struct x86_nx_watch_spare *spares, unsigned nspares,
                          x86_nx_watch_map_fn map, void *map_ctx)
{
    if (!w)
        return X86_NX_WATCH_E_INVALID;
    w->pages = storage;
    w->cap = cap;
    w->npages = 0;
    w->nsplit = 0;
    w->armed = false;
    w->kept_splits = 0;
    if (!storage || !map || (levels != 4 && levels != 5))
        return X86_NX_WATCH_E_INVALID;
    int rc = take_ranges(w, lo, hi, nranges);
    if (rc)
        return rc;
    if (x86_nx_watch_count(w->lo, w->hi, w->nranges) > cap)
        return X86_NX_WATCH_E_PAGES;
    for (unsigned r = 0; r < w->nranges && !rc; r++) {
        for (uint64_t va = w->lo[r];; va += X86_PAGE_BYTES) {
            uint64_t *pte;
            rc = walk(w, cr3, levels, va, spares, nspares, map, map_ctx, &pte);
            if (rc)
                break;
            w->pages[w->npages].va = va;
            w->pages[w->npages].pte = pte;
            w->pages[w->npages].set = false;
            w->npages++;
            if (va == (w->hi[r] & ~PAGE_MASK))
                break;
        }
    }
    if (rc) {
        while (w->nsplit)
            undo_split(w, --w->nsplit);
        w->npages = 0;
        w->kept_splits = 0;
        return rc;
    }
    return (long)w->npages;
}

size_t x86_nx_watch_arm(struct x86_nx_watch *w)
{
    size_t n = 0;
    if (!w || w->armed)
        return 0;
    for (size_t i = 0; i < w->npages; i++) {
        struct x86_nx_watch_page *p = &w->pages[i];
        p->set = !(*p->pte & PTE_XD);
        if (p->set) {
            *p->pte |= PTE_XD;
            n++;
        }
    }
    w->armed = true;
    return n;
}

size_t x86_nx_watch_disarm(struct x86_nx_watch *w)
{
    size_t n = 0;
    if (!w || !w->armed)
        return 0;
    for (size_t i = 0; i < w->npages; i++) {
        struct x86_nx_watch_page *p = &w->pages[i];
        if (p->set) {
            *p->pte &= ~PTE_XD;
            p->set = false;
            n++;
        }
    }
    w->armed = false;
    return n;
}

static const struct x86_nx_watch_page *find(const struct x86_nx_watch *w, uint64_t va)
{
    size_t a = 0, b = w->npages;
    va &= ~PAGE_MASK;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (w->pages[m].va == va)
            return &w->pages[m];
        if (w->pages[m].va < va)
            a = m + 1;
        else
            b = m;
    }
    return NULL;
}

bool x86_nx_watch_owns(const struct x86_nx_watch *w, uint64_t va)
{
    const struct x86_nx_watch_page *p;
    if (!w || !w->armed)
        return false;
    p = find(w, va);
    return p && p->set;
}

bool x86_nx_watch_covers(const struct x86_nx_watch *w, uint64_t va)
{
    return w && find(w, va) != NULL;
}

unsigned x86_nx_watch_release(struct x86_nx_watch *w)
{
    unsigned undone = 0;
    if (!w)
        return 0;
    x86_nx_watch_disarm(w);
    w->kept_splits = 0;
    /* the last split first: a 2 MiB split inside a 1 GiB one comes after it */
    while (w->nsplit) {
        unsigned kept = w->kept_splits;
        undo_split(w, --w->nsplit);
        undone += w->kept_splits == kept;
    }
    w->npages = 0;
    return undone;
}

const char *x86_nx_watch_strerror(long err)
{
    switch (err) {
    case X86_NX_WATCH_E_INVALID: return "no ranges, or a range that ends before it starts";
    case X86_NX_WATCH_E_UNMAPPED: return "a page of the ranges is not mapped";
    case X86_NX_WATCH_E_PAGES: return "more pages than the watch holds";
    case X86_NX_WATCH_E_SPLITS: return "more large pages to split than spare tables";
    case X86_NX_WATCH_E_TABLE: return "a paging structure out of reach";
    case X86_NX_WATCH_E_RANGES: return "too many ranges";
    default: return err >= 0 ? "ok" : "unknown error";
    }
}
