/* The UEFI watchdog timer (UEFI 2.10 section 7.5, SetWatchdogTimer): the
 * boot manager arms it with 5 minutes before it starts a boot option and
 * the platform resets when it runs out (section 3.1.2). An on-target decode
 * of a few MiB, or a serial dump at 115200 baud (1 MiB framed takes about
 * 2 minutes), runs longer than that on real hardware, so ptboot switches it
 * off while it works and arms it again as the boot manager would before it
 * starts an image (the traced one, or `resident chain`) and before it
 * returns. SetWatchdogTimer may be called up to TPL_CALLBACK (section 7.1). */
#ifndef PTBOOT_EFI_PLATFORM_WATCHDOG_H
#define PTBOOT_EFI_PLATFORM_WATCHDOG_H

#include <stdbool.h>

/* The boot manager's timeout (section 3.1.2). */
#define PTB_WATCHDOG_BOOT_SECONDS 300u

/* Off (timeout 0). Returns true when the firmware accepted it. */
bool efi_watchdog_off(void);
/* Armed with PTB_WATCHDOG_BOOT_SECONDS, as the boot manager leaves it. */
bool efi_watchdog_boot_manager(void);

#endif
