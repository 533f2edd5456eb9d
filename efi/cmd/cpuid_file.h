/* A CPUID dump on the boot volume (Debian's `cpuid -r -1` format, parsed by
 * arch/x86/cpuid_dump) as Intel PT capabilities: what `info --cpuid FILE`
 * and `plan --cpuid FILE` report on instead of this CPU. */
#ifndef PTBOOT_EFI_CMD_CPUID_FILE_H
#define PTBOOT_EFI_CMD_CPUID_FILE_H

#include "arch/x86/pt_caps.h"
#include "efi/app.h"

/* A CPUID dump is text of a few KiB; anything much larger is not one. */
#define PTB_CPUID_FILE_MAX_BYTES (256u << 10)

/* Loads file (a path on app's boot volume) and fills *caps from it.
 * Returns PTB_APP_OK, or PTB_APP_FAILED after a line
 * "ptboot: error: CMD: FILE[:LINE]: why" on the console. */
int efi_cpuid_file_caps(struct efi_app *app, const char *cmd, const char *file,
                        struct rtit_caps *caps);

#endif
