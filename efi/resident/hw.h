/* The resident driver's hardware path: Intel PT over the rest of the boot.
 * The plan is arch/x86/capture_plan.h's CAPTURE_RESIDENT (filters off
 * unless words ask for them: everything the CPU runs is traced; buffer
 * default 4 MiB, ToPA ring where enumerated), placed in one
 * EfiReservedMemoryType block (the CPU may write it after
 * ExitBootServices), started at driver load through the #GP-safe MSR path
 * and stopped at ExitBootServices, or by `resident stop`, with plain
 * RDMSR/WRMSR (the start proved those MSRs exist; no boot service may be
 * used then). The buffer is then linearised in place (oldest byte first,
 * from the first PSB: arch/x86/rtit_linear.h), so the header describes a
 * stream that starts at the buffer's first byte, like the soft unit's. */
#ifndef PTBOOT_EFI_RESIDENT_HW_H
#define PTBOOT_EFI_RESIDENT_HW_H

#include <stdbool.h>
#include <stddef.h>

#include "efi/resident/resident.h"

/* True when this CPU has usable Intel PT and the MSR path is ready. */
bool resident_hw_available(void);
/* Plans with the option words (capture_plan.h's, e.g. buffer=8M), allocates,
 * starts. Returns 0, or -1 with a message in err. Boot services only. */
int resident_hw_start(struct resident_header *h, const char *const *words, size_t n,
                      char *err, size_t err_len);
/* The CPU facts and the configuration into sb (after a start). */
struct sideband;
void resident_hw_sideband(struct sideband *sb);
/* Stops and describes the buffer in h (no boot services used). */
void resident_hw_stop(uint32_t reason);

#endif
