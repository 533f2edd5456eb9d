/* ptboot's boot-service driver as a file of a firmware volume
 * (docs/early-boot.md): the names `ptboot fv inject` writes and the
 * driver and `ptboot fv list` read, defined once.
 *
 * The file (type DRIVER) holds a DXE_DEPEX section, the PE32 image of
 * build/ptbootdrv.efi, a USER_INTERFACE section "ptboot" and a RAW section
 * with the driver's words as ASCII text (the words a Driver#### option
 * carries as its LoadOptions: docs/resident.md). An EDK2 platform build
 * names the same GUID in its FDF, so the driver finds its words the same
 * way there. */
#ifndef PTBOOT_FORMAT_FV_PTBOOT_H
#define PTBOOT_FORMAT_FV_PTBOOT_H

#include "format/pi_guid.h"

/* 92517505-2f67-4548-93dd-1e1d648d7531 */
#define PTBOOT_FV_FILE_GUID_INIT                                                                \
    {                                                                                           \
        {                                                                                       \
            0x05, 0x75, 0x51, 0x92, 0x67, 0x2f, 0x48, 0x45, 0x93, 0xdd, 0x1e, 0x1d, 0x64, 0x8d, \
                0x75, 0x31                                                                      \
        }                                                                                       \
    }
#define PTBOOT_FV_FILE_GUID_TEXT "92517505-2f67-4548-93dd-1e1d648d7531"
#define PTBOOT_FV_UI_NAME        "ptboot"
/* The words' longest text (the driver keeps 160 bytes of words with their
 * NUL: RESIDENT_TEXT_BYTES). */
#define PTBOOT_FV_CONFIG_MAX 159

#endif
