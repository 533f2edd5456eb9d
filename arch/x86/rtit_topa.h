/* ToPA (Table of Physical Addresses) output tables, built in memory the
 * caller provides (SDM 36.2.6.2). Layout, for R regions of one size:
 *
 *   table 0: region 0 .. region 510, END -> table 1
 *   table 1: region 511 .. ,          END -> table 2
 *   last   : remaining regions,       END -> table 0 (ring)
 *
 * Stop-when-full puts STOP on the last region. With one region this is
 * "region, END -> same table", the only layout valid on CPUs without
 * multiple-entry ToPA (CPUID.(14h,0).ECX[1]=0, e.g. Broadwell). No INT
 * bits: a UEFI app has no PMI handler. */
#ifndef PTBOOT_ARCH_X86_RTIT_TOPA_H
#define PTBOOT_ARCH_X86_RTIT_TOPA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/rtit_regs.h"

struct rtit_config;
struct rtit_caps;

/* Output entries per 4 KiB table; the 512th slot holds the END entry. */
#define RTIT_TOPA_OUTPUTS_PER_TABLE (RTIT_TOPA_ENTRIES_PER_TABLE - 1u)
/* A bound that keeps every size computation far from overflow. */
#define RTIT_TOPA_MAX_REGIONS 0x100000u

/* Tables (4 KiB each) needed for `regions` regions. */
size_t rtit_topa_tables_needed(unsigned regions, bool multi_entry);

/* One ToPA entry: base (aligned), Size code and END/INT/STOP flags. */
uint64_t rtit_topa_entry(uint64_t phys, unsigned size_code, uint64_t flags);

struct rtit_topa_layout {
    uint64_t table_phys; /* physical address of table 0 */
    size_t tables;       /* tables used, back to back from table_phys */
    unsigned regions;
    unsigned size_code;
    uint64_t region_bytes;
    uint64_t buffer_phys; /* region r at buffer_phys + r * region_bytes */
};

enum rtit_topa_error {
    RTIT_TOPA_OK = 0,
    RTIT_TOPA_E_CONFIG = -1,   /* not a ToPA configuration / 0 regions */
    RTIT_TOPA_E_CAPACITY = -2, /* the caller's memory holds too few tables */
};

/* Fills the layout from cfg without writing any table. */
int rtit_topa_layout(struct rtit_topa_layout *l, const struct rtit_config *cfg);

/* Writes the tables into mem (the CPU sees them at cfg->table_phys; on the
 * target mem == table_phys, identity-mapped): capacity_tables pages of 512
 * entries each, 4 KiB aligned for the CPU. Unused slots are zeroed. Run
 * rtit_check() first: this only lays out entries. */
int rtit_topa_build(struct rtit_topa_layout *l, const struct rtit_config *cfg, uint64_t *mem,
                    size_t capacity_tables);

/* Table and index of region r. */
void rtit_topa_region_slot(const struct rtit_topa_layout *l, unsigned r, size_t *table,
                           unsigned *index);

/* Byte offset into the buffer (region r * size + offset) of the output
 * pointers OUTPUT_BASE (current table) and MASK_PTRS (entry index,
 * OutputOffset), or -1 if they do not point into the layout. An index on
 * an END entry means the next table's first region. */
int64_t rtit_topa_position(const struct rtit_topa_layout *l, uint64_t output_base,
                           uint64_t mask_ptrs);

#endif
