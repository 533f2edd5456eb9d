/* #GP-safe MSR access on the target. Every RDMSR/WRMSR of the app goes
 * through here: while the access runs, a #GP handler is registered through
 * the firmware's CPU Architectural Protocol, so an MSR the CPU does not have
 * (or a value it refuses) gives an error code instead of the firmware's
 * "!!!! X64 Exception Type - 0D(#GP" dead-loop. */
#ifndef PTBOOT_EFI_MSR_SAFE_H
#define PTBOOT_EFI_MSR_SAFE_H

#include <stdint.h>
#include <efi.h>

enum efi_msr_result {
    EFI_MSR_OK = 0,
    EFI_MSR_GP = -1,          /* the access raised #GP and was skipped */
    EFI_MSR_UNPROTECTED = -2, /* no #GP handler could be installed: not tried */
};

/* Finds the CPU Architectural Protocol. Returns a word for reports:
 * "ready", or why MSR access will be refused ("no-cpu-arch"). */
const char *efi_msr_init(EFI_BOOT_SERVICES *bs);
enum efi_msr_result efi_msr_read(uint32_t msr, uint64_t *value);
enum efi_msr_result efi_msr_write(uint32_t msr, uint64_t value);
/* Number of #GPs caught so far (for reports and the self-test). */
unsigned efi_msr_faults(void);
const char *efi_msr_result_name(enum efi_msr_result r);

#endif
