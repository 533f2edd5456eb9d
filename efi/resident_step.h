/* The resident driver's #DB glue for the software trace unit: unlike
 * efi/soft_step.c (which single-steps one call the app makes), nothing of
 * ours is on the stack when the traced image runs, so stepping is armed
 * and left behind: DR0 waits at the image's entry point; from there every
 * single-step trap goes to the unit; a SKIP_CALL answer (the image called
 * out of its range, e.g. into boot services) runs free until DR0 hits the
 * return address; tracing ends when the entry point returns (DR1 at its
 * return address), when the unit stops, or when resident_step_stop() is
 * called (the ExitBootServices notify, `resident stop`).
 *
 * SDM Vol. 3B 17.2 (DR0-DR7), 17.3.1.1 (instruction breakpoints are
 * faults: RF), 17.3.1.4 (single-step trap after the instruction). */
#ifndef PTBOOT_EFI_RESIDENT_STEP_H
#define PTBOOT_EFI_RESIDENT_STEP_H

#include <stdint.h>
#include <efi.h>

#include "arch/x86/soft_unit.h"
#include "efi/resident.h"

/* Registers the #DB handler (CPU Architectural Protocol). Returns
 * EFI_SUCCESS, EFI_NOT_FOUND (no protocol) or EFI_ALREADY_STARTED (the
 * vector is taken, e.g. by a debug agent). Boot services only. */
EFI_STATUS resident_step_init(struct resident_header *h, struct soft_unit *unit,
                              void (*on_end)(void));
/* Arms DR0 at entry; h->state becomes RESIDENT_TRACING when it is hit. */
void resident_step_arm(uint64_t entry);
/* on_end runs whenever tracing ends (exception context included: it may
 * not use boot services). */
/* Ends tracing now (no boot services used: fine at ExitBootServices):
 * clears the breakpoints, closes the unit's packet stream at ip, marks h
 * STOPPED with reason (if it was armed or tracing). */
void resident_step_stop(uint32_t reason);

#endif
