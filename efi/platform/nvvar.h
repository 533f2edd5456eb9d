/* ptboot's own UEFI variables (UEFI 2.10 section 8.2, GetVariable /
 * SetVariable), all under one vendor GUID so they never collide with the
 * spec's or another vendor's names: the hang recorder's description
 * (efi/resident/recorder.h) and the memory survey's marks (`memmap
 * --mark`). Names are ASCII here, UCS-2 for the firmware. */
#ifndef PTBOOT_EFI_PLATFORM_NVVAR_H
#define PTBOOT_EFI_PLATFORM_NVVAR_H

#include <stddef.h>
#include <efi.h>

/* ptboot's vendor GUID for its variables: 6d377d7f-6086-40a1-ac72-4c94061c9615. */
#define PTBOOT_VENDOR_GUID_INIT                            \
    {                                                      \
        0x6d377d7f, 0x6086, 0x40a1,                        \
        {                                                  \
            0xac, 0x72, 0x4c, 0x94, 0x06, 0x1c, 0x96, 0x15 \
        }                                                  \
    }

/* Non-volatile, boot-service access only: an OS has no business with them. */
#define PTB_NVVAR_ATTRS (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS)

/* Reads ptboot's variable name into buf (cap bytes); *len its size.
 * Returns the firmware's status (EFI_NOT_FOUND when there is none). */
EFI_STATUS efi_nvvar_get(const char *name, void *buf, size_t cap, size_t *len);
/* Writes it (non-volatile); len 0 deletes it. */
EFI_STATUS efi_nvvar_set(const char *name, const void *data, size_t len);

#endif
