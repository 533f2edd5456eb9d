#include "format/memrange.h"

void mem_ranges_init(struct mem_ranges *m, struct mem_range *storage, size_t capacity)
{
    m->r = storage;
    m->count = 0;
    m->capacity = capacity;
}

bool mem_ranges_add(struct mem_ranges *m, uint64_t base, uint64_t size)
{
    if (size == 0)
        return true;
    if (m->count == m->capacity)
        return false;
    if (base + size < base) /* clip at the top of the address space */
        size = UINT64_MAX - base + 1;
    m->r[m->count].base = base;
    m->r[m->count].size = size;
    m->count++;
    return true;
}

/* Insertion sort: memory maps hold tens to a few hundred entries, almost
 * sorted already (firmware returns them by address). */
static void sort_by_base(struct mem_range *r, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        struct mem_range x = r[i];
        size_t j = i;
        while (j > 0 && r[j - 1].base > x.base) {
            r[j] = r[j - 1];
            j--;
        }
        r[j] = x;
    }
}

/* End of a range, saturating (a range may reach the top of memory). */
static uint64_t range_end(const struct mem_range *r)
{
    return r->base + r->size < r->base ? UINT64_MAX : r->base + r->size;
}

void mem_ranges_finish(struct mem_ranges *m)
{
    if (m->count == 0)
        return;
    sort_by_base(m->r, m->count);
    size_t out = 0;
    for (size_t i = 1; i < m->count; i++) {
        uint64_t end = range_end(&m->r[out]);
        if (m->r[i].base <= end) {
            uint64_t e2 = range_end(&m->r[i]);
            if (e2 > end)
                m->r[out].size = e2 - m->r[out].base;
        } else {
            m->r[++out] = m->r[i];
        }
    }
    m->count = out + 1;
}

/* The merged range holding addr, or NULL. */
static const struct mem_range *find(const struct mem_ranges *m, uint64_t addr)
{
    size_t lo = 0, hi = m->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct mem_range *r = &m->r[mid];
        if (addr < r->base)
            hi = mid;
        else if (addr - r->base >= r->size)
            lo = mid + 1;
        else
            return r;
    }
    return NULL;
}

bool mem_ranges_contains(const struct mem_ranges *m, uint64_t addr, uint64_t size)
{
    const struct mem_range *r = find(m, addr);
    if (!r)
        return false;
    return size <= r->size - (addr - r->base);
}

uint64_t mem_ranges_readable_from(const struct mem_ranges *m, uint64_t addr)
{
    const struct mem_range *r = find(m, addr);
    return r ? r->size - (addr - r->base) : 0;
}
