#include "arch/x86/rtit_memory.h"

#include <string.h>

#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

int rtit_memory_need(const struct rtit_config *cfg, const struct rtit_caps *caps,
                     struct rtit_memory_need *n)
{
    memset(n, 0, sizeof(*n));
    if (cfg->fabric_en)
        return RTIT_MEMORY_E_CONFIG;
    if (cfg->output == RTIT_OUTPUT_TOPA) {
        if (cfg->regions == 0 || cfg->regions > RTIT_TOPA_MAX_REGIONS ||
            cfg->region_size_code > RTIT_TOPA_MAX_SIZE_CODE)
            return RTIT_MEMORY_E_CONFIG;
        n->table_bytes = rtit_topa_tables_needed(cfg->regions, caps->topa_multi_entry) *
                         (uint64_t)RTIT_TOPA_TABLE_ALIGN;
        n->buffer_align = RTIT_TOPA_REGION_BYTES(cfg->region_size_code);
    } else {
        uint64_t s = cfg->single_size;
        if (s < 128 || s > ((uint64_t)1 << 32) || (s & (s - 1)))
            return RTIT_MEMORY_E_CONFIG;
        n->buffer_align = s;
    }
    n->buffer_bytes = rtit_config_buffer_bytes(cfg);
    /* a 4 KiB-aligned block wastes at most align - 4 KiB before the
	 * buffer; the tables go there or after the buffer */
    uint64_t slack =
        n->buffer_align > RTIT_TOPA_TABLE_ALIGN ? n->buffer_align - RTIT_TOPA_TABLE_ALIGN : 0;
    n->block_bytes = n->buffer_bytes + slack + n->table_bytes;
    if (n->block_bytes % RTIT_TOPA_TABLE_ALIGN)
        n->block_bytes = align_up(n->block_bytes, RTIT_TOPA_TABLE_ALIGN);
    return 0;
}

int rtit_memory_place(struct rtit_config *cfg, const struct rtit_caps *caps, uint64_t block_phys,
                      uint64_t block_bytes)
{
    struct rtit_memory_need n;
    int err = rtit_memory_need(cfg, caps, &n);
    if (err)
        return err;
    uint64_t end = block_phys + block_bytes;
    if (end < block_phys)
        return RTIT_MEMORY_E_SPACE;
    uint64_t align =
        n.buffer_align < RTIT_TOPA_TABLE_ALIGN ? RTIT_TOPA_TABLE_ALIGN : n.buffer_align;
    uint64_t buf = align_up(block_phys, align);
    if (buf < block_phys || buf > end || n.buffer_bytes > end - buf)
        return RTIT_MEMORY_E_SPACE;
    uint64_t tab = align_up(block_phys, RTIT_TOPA_TABLE_ALIGN);
    if (n.table_bytes && (tab > buf || buf - tab < n.table_bytes)) {
        tab = buf + n.buffer_bytes; /* after the buffer: 4 KiB aligned */
        if (tab > end || n.table_bytes > end - tab)
            return RTIT_MEMORY_E_SPACE;
    }
    cfg->buffer_phys = buf;
    if (n.table_bytes)
        cfg->table_phys = tab;
    return 0;
}
