#include <efi.h>
#include <efilib.h>

#include "efi/platform/watchdog.h"

/* WatchdogCode 0: the boot manager's own code; 0x0000-0xFFFF are the
 * firmware's (section 7.5), and no data is logged with it. */
#define WATCHDOG_CODE 0

bool efi_watchdog_off(void)
{
    return !EFI_ERROR(BS->SetWatchdogTimer(0, WATCHDOG_CODE, 0, NULL));
}

bool efi_watchdog_boot_manager(void)
{
    return !EFI_ERROR(BS->SetWatchdogTimer(PTB_WATCHDOG_BOOT_SECONDS, WATCHDOG_CODE, 0, NULL));
}
