/* `recover` and the automatic recovery at the start of a run
 * (efi/cmd/recover.c, docs/hang.md). */
#ifndef PTBOOT_EFI_CMD_RECOVER_H
#define PTBOOT_EFI_CMD_RECOVER_H

#include "efi/app.h"

/* At the start of a run: recovers a recorder found from before a reset
 * (as `recover` does), unless the run has a `recover` command itself;
 * says nothing when there is none. */
void efi_recover_auto(struct efi_app *app);

#endif
