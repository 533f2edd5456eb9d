/* The code pages a soft-unit session ran (efi/resident/touched.h). */
#include <stddef.h>

#include "efi/resident/touched.h"

#define PAGE_MASK (~(uint64_t)(TOUCHED_PAGE_BYTES - 1))

void touched_init(struct touched_pages *t, uint64_t *slots, uint64_t *addr, uint8_t *pages,
                  uint32_t cap)
{
    t->slots = slots;
    t->nslots = 2 * cap;
    t->addr = addr;
    t->pages = pages;
    t->cap = cap;
    t->marked = t->dropped = t->n = 0;
    t->last = 0;
    for (uint32_t i = 0; i < t->nslots; i++)
        slots[i] = 0;
}

/* Fibonacci hashing of the page number into the slots, linear probing. */
static void add_page(struct touched_pages *t, uint64_t page)
{
    if (!t->nslots)
        return;
    uint64_t key = page + 1;
    uint32_t i = (uint32_t)(((page >> 12) * 0x9e3779b97f4a7c15ull) >> 32) % t->nslots;
    for (uint32_t probes = 0; probes < t->nslots; probes++) {
        if (t->slots[i] == key)
            return;
        if (!t->slots[i]) {
            if (t->marked == t->cap) {
                t->dropped++;
                return;
            }
            t->slots[i] = key;
            t->marked++;
            return;
        }
        i = i + 1 == t->nslots ? 0 : i + 1;
    }
}

void touched_mark(struct touched_pages *t, uint64_t ip)
{
    uint64_t page = ip & PAGE_MASK;
    uint64_t end = (ip + TOUCHED_INSN_MAX - 1) & PAGE_MASK;
    if (page + 1 != t->last) {
        add_page(t, page);
        t->last = page + 1;
    }
    if (end != page)
        add_page(t, end);
}

uint32_t touched_copy(struct touched_pages *t, touched_read_fn read, void *ctx)
{
    /* the addresses first, sorted (insertion sort: at most cap of them,
     * once per session), then the pages in that order */
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->nslots && n < t->cap; i++) {
        if (!t->slots[i])
            continue;
        uint64_t a = t->slots[i] - 1;
        uint32_t j = n++;
        while (j > 0 && t->addr[j - 1] > a) {
            t->addr[j] = t->addr[j - 1];
            j--;
        }
        t->addr[j] = a;
    }
    t->n = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (read(ctx, t->addr[i], t->pages + (uint64_t)t->n * TOUCHED_PAGE_BYTES))
            continue;
        t->addr[t->n++] = t->addr[i];
    }
    return t->n;
}

const uint8_t *touched_find(const struct touched_pages *t, uint64_t a)
{
    uint64_t page = a & PAGE_MASK;
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->addr[mid] < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n && t->addr[lo] == page ? t->pages + (uint64_t)lo * TOUCHED_PAGE_BYTES : NULL;
}
