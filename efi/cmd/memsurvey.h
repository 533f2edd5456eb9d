/* `memmap --mark` and `memmap --survived`: which RAM keeps its contents
 * across a reset and the next boot's firmware, measured on the machine at
 * hand, for placing the hang recorder (docs/hang.md "Where the recorder
 * lives").
 *
 *   --mark      takes every free page (EfiConventionalMemory) with
 *               AllocatePages(AllocateAddress), writes a 32-byte tag at its
 *               start (magic, its own address, a nonce from the TSC, a
 *               check word), gives the pages back, and stores the nonce and
 *               the marked ranges in the variable PtbootMark; with
 *               --also BASE:SIZE it marks that range too, which must lie
 *               outside the firmware's map (memory the firmware does not
 *               manage: QEMU's pc-dimm, RAM the platform keeps for itself);
 *   (reset: the reset button, a watchdog, QEMU's `system_reset`)
 *   --survived  reads PtbootMark, checks every marked page's tag and prints
 *               the runs of pages that kept it and that lost it, with the
 *               type the page has in this boot's memory map (a page the
 *               firmware holds now may still be overwritten later), then
 *               deletes the variable.
 *
 * Lines:
 *   ptboot: memmap mark pages=<n> ranges=<k> nonce=0x<x>
 *   ptboot: memmap run base=0x<a> pages=<n> kept=<0|1> now=<type>
 *   ptboot: memmap survived pages=<n> of=<marked> free_now=<n> largest_free=0x<a>+0x<size>
 */
#ifndef PTBOOT_EFI_CMD_MEMSURVEY_H
#define PTBOOT_EFI_CMD_MEMSURVEY_H

#include <stdint.h>

/* also_bytes > 0: mark [also_base, +also_bytes) too, memory outside the
 * firmware's map (`--also BASE:SIZE`). */
int efi_memsurvey_mark(uint64_t also_base, uint64_t also_bytes);
int efi_memsurvey_survived(void);

#endif
