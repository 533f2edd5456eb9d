/* #GP-safe MSR access on the target. Every RDMSR/WRMSR of the app goes
 * through here: while the access runs, a #GP handler is registered through
 * the firmware's CPU Architectural Protocol, so an MSR the CPU does not have
 * (or a value it refuses) gives an error code instead of the firmware's
 * "!!!! X64 Exception Type - 0D(#GP" dead-loop. */
#ifndef PTBOOT_EFI_PLATFORM_MSR_SAFE_H
#define PTBOOT_EFI_PLATFORM_MSR_SAFE_H

#include <stdint.h>
#include <efi.h>

#include "arch/x86/rtit_msr.h"

enum efi_msr_result {
    PTB_MSR_OK = 0,
    PTB_MSR_GP = -1,          /* the access raised #GP and was skipped */
    PTB_MSR_UNPROTECTED = -2, /* no #GP handler could be installed: not tried */
};

/* Finds the CPU Architectural Protocol. Returns a word for reports:
 * "ready", or why MSR access will be refused ("no-cpu-arch"). */
const char *efi_msr_init(EFI_BOOT_SERVICES *bs);
enum efi_msr_result efi_msr_read(uint32_t msr, uint64_t *value);
enum efi_msr_result efi_msr_write(uint32_t msr, uint64_t value);
/* Number of #GPs caught so far (for reports and the self-test). */
unsigned efi_msr_faults(void);
const char *efi_msr_result_name(enum efi_msr_result r);

/* The same accesses as arch/x86's struct rtit_msr_ops (rd/wr return non-zero
 * for any result but PTB_MSR_OK), for rtit_start, capture_seq_*, snapshots
 * and decode parameters: the one ops table every command uses on the BSP. */
extern const struct rtit_msr_ops efi_msr_safe_ops;

/* The bare RDMSR/WRMSR of msr_insn.S: 0 ok, 1 #GP caught, which can only
 * happen while this file's handler is registered (never on an AP: the
 * firmware's CPU Architectural Protocol is the BSP's). For APs, and only for
 * accesses already checked against that CPU's own capabilities. */
int efi_msr_rdmsr_raw(uint32_t msr, uint64_t *value);
int efi_msr_wrmsr_raw(uint32_t msr, uint64_t value);
/* efi_msr_rdmsr_raw/efi_msr_wrmsr_raw as struct rtit_msr_ops. */
extern const struct rtit_msr_ops efi_msr_raw_ops;

#endif
