#include "arch/x86/rtit_topa.h"

#include <string.h>

#include "arch/x86/rtit_config.h"

size_t rtit_topa_tables_needed(unsigned regions, bool multi_entry)
{
    if (!multi_entry || regions <= 1)
        return 1;
    return (regions + RTIT_TOPA_OUTPUTS_PER_TABLE - 1) / RTIT_TOPA_OUTPUTS_PER_TABLE;
}

uint64_t rtit_topa_entry(uint64_t phys, unsigned size_code, uint64_t flags)
{
    uint64_t base = phys & ~(uint64_t)(RTIT_TOPA_TABLE_ALIGN - 1);
    return base | ((uint64_t)size_code << RTIT_TOPA_SIZE_SHIFT & RTIT_TOPA_SIZE_MASK) |
           (flags & (RTIT_TOPA_END | RTIT_TOPA_INT | RTIT_TOPA_STOP));
}

int rtit_topa_layout(struct rtit_topa_layout *l, const struct rtit_config *c)
{
    memset(l, 0, sizeof(*l));
    if (c->output != RTIT_OUTPUT_TOPA || c->regions == 0 || c->regions > RTIT_TOPA_MAX_REGIONS ||
        c->region_size_code > RTIT_TOPA_MAX_SIZE_CODE)
        return RTIT_TOPA_E_CONFIG;
    l->table_phys = c->table_phys;
    /* Multi-entry layout whatever the CPU says: with one region it is
	 * the single-entry layout; with more on a CPU without MENTRY,
	 * rtit_check() has already refused (topa-single-entry). */
    l->tables = rtit_topa_tables_needed(c->regions, true);
    l->regions = c->regions;
    l->size_code = c->region_size_code;
    l->region_bytes = RTIT_TOPA_REGION_BYTES(c->region_size_code);
    l->buffer_phys = c->buffer_phys;
    return RTIT_TOPA_OK;
}

void rtit_topa_region_slot(const struct rtit_topa_layout *l, unsigned r, size_t *table,
                           unsigned *index)
{
    (void)l;
    *table = r / RTIT_TOPA_OUTPUTS_PER_TABLE;
    *index = r % RTIT_TOPA_OUTPUTS_PER_TABLE;
}

int rtit_topa_build(struct rtit_topa_layout *l, const struct rtit_config *c, uint64_t *mem,
                    size_t capacity_tables)
{
    int err = rtit_topa_layout(l, c);
    if (err)
        return err;
    if (!mem || capacity_tables < l->tables)
        return RTIT_TOPA_E_CAPACITY;
    memset(mem, 0, l->tables * RTIT_TOPA_ENTRIES_PER_TABLE * sizeof(*mem));

    for (unsigned r = 0; r < l->regions; r++) {
        size_t t;
        unsigned i;
        rtit_topa_region_slot(l, r, &t, &i);
        uint64_t flags = 0;
        /* STOP on the last region: Stopped is set and tracing ends
		 * when it fills (36.2.6.2, "ToPA STOP"). */
        if (c->when_full == RTIT_FULL_STOP && r + 1 == l->regions)
            flags |= RTIT_TOPA_STOP;
        mem[t * RTIT_TOPA_ENTRIES_PER_TABLE + i] =
            rtit_topa_entry(l->buffer_phys + (uint64_t)r * l->region_bytes, l->size_code, flags);
    }
    for (size_t t = 0; t < l->tables; t++) {
        /* END after the table's last region: to the next table, or
		 * from the last table back to the first (ring; with STOP it
		 * is never reached). END carries no Size/INT/STOP. */
        unsigned used = t + 1 < l->tables ? RTIT_TOPA_OUTPUTS_PER_TABLE
                                          : l->regions - (unsigned)t * RTIT_TOPA_OUTPUTS_PER_TABLE;
        uint64_t next = t + 1 < l->tables
                            ? l->table_phys + (t + 1) * (uint64_t)RTIT_TOPA_TABLE_ALIGN
                            : l->table_phys;
        mem[t * RTIT_TOPA_ENTRIES_PER_TABLE + used] = rtit_topa_entry(next, 0, RTIT_TOPA_END);
    }
    return RTIT_TOPA_OK;
}

int64_t rtit_topa_position(const struct rtit_topa_layout *l, uint64_t output_base,
                           uint64_t mask_ptrs)
{
    if (output_base < l->table_phys || (output_base - l->table_phys) % RTIT_TOPA_TABLE_ALIGN)
        return -1;
    uint64_t t = (output_base - l->table_phys) / RTIT_TOPA_TABLE_ALIGN;
    if (t >= l->tables)
        return -1;
    uint64_t idx = (mask_ptrs & RTIT_MASK_TABLE_MASK) >> RTIT_MASK_TABLE_SHIFT;
    uint64_t off = mask_ptrs >> RTIT_MASK_OFFSET_SHIFT;
    uint64_t r = t * RTIT_TOPA_OUTPUTS_PER_TABLE + idx;
    if (idx > RTIT_TOPA_OUTPUTS_PER_TABLE || r > l->regions || off > l->region_bytes)
        return -1;
    if (idx == RTIT_TOPA_OUTPUTS_PER_TABLE && off)
        return -1;       /* an END entry has no output offset */
    if (r == l->regions) /* on the final END: wrapped to region 0 */
        return off ? -1 : 0;
    return (int64_t)(r * l->region_bytes + off);
}
