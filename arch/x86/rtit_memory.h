/* Placing the ToPA tables and the output buffer inside one block of memory
 * the caller allocated. UEFI AllocatePages only guarantees 4 KiB alignment
 * while ToPA regions must be aligned to their size (SDM 36.2.6.2) and a
 * single range to its size (36.2.6.1): over-allocate and place inside, as
 * EDK2's InternalAllocateAlignedPages does (rtit.md 4.3). */
#ifndef PTBOOT_ARCH_X86_RTIT_MEMORY_H
#define PTBOOT_ARCH_X86_RTIT_MEMORY_H

#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"

struct rtit_memory_need {
    uint64_t table_bytes;  /* ToPA tables, 4 KiB each (0 for single) */
    uint64_t buffer_bytes; /* output regions / single range */
    uint64_t buffer_align; /* alignment the buffer needs */
    uint64_t block_bytes;  /* a 4 KiB-aligned block this big always
                              * holds both, whatever its address */
};

enum rtit_memory_error {
    RTIT_MEMORY_E_CONFIG = -1, /* no output memory in cfg (regions 0,
                                  * bad sizes, FabricEn) */
    RTIT_MEMORY_E_SPACE = -2,  /* the block is too small */
};

int rtit_memory_need(const struct rtit_config *cfg, const struct rtit_caps *caps,
                     struct rtit_memory_need *need);

/* Sets cfg->buffer_phys and cfg->table_phys inside [block_phys,
 * block_phys + block_bytes): the buffer at the first suitably aligned
 * address, the tables in the gap before it when they fit, else after it.
 * Memory is identity-mapped in UEFI boot services, so the physical
 * addresses are also the pointers to zero the buffer and build the tables
 * (rtit_topa_build with mem = (uint64_t *)cfg->table_phys). */
int rtit_memory_place(struct rtit_config *cfg, const struct rtit_caps *caps, uint64_t block_phys,
                      uint64_t block_bytes);

#endif
