/* EFI_FIRMWARE_VOLUME2_PROTOCOL (PI 1.8 Vol. 3 section 3.4.1), through
 * which the DXE dispatcher reads the drivers of a firmware volume, and the
 * PIWG firmware-file device-path node (UEFI 2.10 section 10.3.5.6) that
 * names the file an image was loaded from. gnu-efi declares neither; only
 * ReadSection is called, the other members are kept as opaque pointers so
 * the layout stays right.
 *
 * Used to name drivers by their USER_INTERFACE section
 * (efi/capture/image_watch.c) and by ptboot's own driver to read its words
 * from the RAW section of its firmware file (efi/resident/early.c). */
#ifndef PTBOOT_EFI_PLATFORM_FV2_H
#define PTBOOT_EFI_PLATFORM_FV2_H

#include <stddef.h>
#include <efi.h>

#define PTB_FV2_PROTOCOL_GUID                              \
    {                                                      \
        0x220e73b6, 0x6bdb, 0x4413,                        \
        {                                                  \
            0x84, 0x05, 0xb9, 0x74, 0xb1, 0x08, 0x61, 0x9a \
        }                                                  \
    }

/* The firmware file GUID of a device path's PIWG firmware-file node (the
 * FilePath of an image the dispatcher loaded from a volume), or NULL.
 * Walks at most 64 nodes. */
const EFI_GUID *efi_fv_file_of(EFI_DEVICE_PATH *dp);

/* Copies the data of section instance `instance` of type `type` of file
 * `file` in the volume behind `device` into out[0..cap) (ReadSection
 * copies into a buffer it is given, truncating with a warning, so nothing
 * is allocated). *len gets the bytes copied. 0, or -1 when the volume, the
 * file or the section is not there. */
int efi_fv_read_section(EFI_HANDLE device, const EFI_GUID *file, UINT8 type, UINTN instance,
                        void *out, size_t cap, size_t *len);

#endif
