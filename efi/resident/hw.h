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
#include <stdint.h>

#include "efi/resident/resident.h"

/* True when this CPU has usable Intel PT and the MSR path is ready. */
bool resident_hw_available(void);
/* Plans with the option words (capture_plan.h's, e.g. buffer=8M): *block_bytes
 * the memory it needs (buffer and ToPA tables, alignment slack included).
 * Returns 0, or -1 with a message in err. */
int resident_hw_plan(const char *const *words, size_t n, uint64_t *block_bytes, char *err,
                     size_t err_len);
/* Places the plan in [block, block + block_bytes) (block 0: allocates it,
 * EfiReservedMemoryType) and starts. Returns 0, or -1 with a message in
 * err. Boot services only. */
int resident_hw_start(struct resident_header *h, uint64_t block, uint64_t block_bytes, char *err,
                      size_t err_len);
/* Where the plan put things, for the recorder's header. */
struct resident_hw_layout {
    uint64_t buffer, buffer_bytes, tables, table_bytes, ctl;
    unsigned regions, region_code, psb_freq;
};
void resident_hw_layout(struct resident_hw_layout *l);
/* The periodic save (arch/x86/rtit_recorder.h): pause, position, zero
 * band, resume. *pos: the buffer offset. False when not tracing. No boot
 * services (a timer event). */
bool resident_hw_save(uint64_t *pos);
/* Tracing again into the zeroed buffer from its start (after a hang report
 * stopped it). Returns 0 or -1. */
int resident_hw_restart(void);
/* The CPU facts and the configuration into sb (after a start). */
struct sideband;
void resident_hw_sideband(struct sideband *sb);
/* Stops and describes the buffer in h (no boot services used). */
void resident_hw_stop(uint32_t reason);

#endif
