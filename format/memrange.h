/* Sets of readable address ranges, built from the UEFI memory map, so that
 * on-target decoding reads live memory only where the map says RAM is (a
 * corrupt trace must never steer the decoder into MMIO or unmapped space).
 * Pure C, no UEFI types: the host unit tests run this exact code. */
#ifndef PTBOOT_FORMAT_MEMRANGE_H
#define PTBOOT_FORMAT_MEMRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mem_range {
    uint64_t base;
    uint64_t size;
};

struct mem_ranges {
    struct mem_range *r; /* caller's storage */
    size_t count;
    size_t capacity;
};

void mem_ranges_init(struct mem_ranges *m, struct mem_range *storage, size_t capacity);
/* Adds [base, base+size); returns false when storage is full (the range is
 * then left out: reads there are refused, never allowed by mistake). */
bool mem_ranges_add(struct mem_ranges *m, uint64_t base, uint64_t size);
/* Sorts and merges overlapping or adjacent ranges; call after the adds. */
void mem_ranges_finish(struct mem_ranges *m);
/* True if all of [addr, addr+size) lies inside one merged range (size 0:
 * addr itself). Binary search: O(log n). */
bool mem_ranges_contains(const struct mem_ranges *m, uint64_t addr, uint64_t size);
/* How many bytes from addr are readable (0 if addr is not). */
uint64_t mem_ranges_readable_from(const struct mem_ranges *m, uint64_t addr);

#endif
