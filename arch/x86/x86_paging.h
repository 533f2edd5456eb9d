/* The paging mode the code runs with, as far as Intel PT filters care:
 * with 5-level paging (CR4.LA57 = 1, SDM Vol. 3A 4.5 "4-Level Paging and
 * 5-Level Paging") linear addresses have 57 significant bits, else 48, so
 * an IP filter range beyond 48 bits can only ever match with LA57 on. */
#ifndef PTBOOT_ARCH_X86_X86_PAGING_H
#define PTBOOT_ARCH_X86_X86_PAGING_H

#include <stdbool.h>
#include <stdint.h>

/* CR4.LA57 (bit 12, SDM Vol. 3A 2.5 "Control Registers"). */
#define X86_CR4_LA57 ((uint64_t)1 << 12)

/* CR4.LA57 of the CPU running this code. Reading CR4 needs CPL 0, so only
 * the UEFI app (PTBOOT_EFI) reads it; hosted builds run at CPL 3 and
 * return false (the host's plans take the paging mode as an option). */
bool x86_paging_la57_native(void);

/* v is canonical with `bits` significant linear-address bits (48 or 57):
 * bits 63 down to bits-1 are all equal (SDM Vol. 1 3.3.7.1). */
bool x86_canonical(uint64_t v, unsigned bits);

#endif
