/* The resident driver dispatched from a firmware volume (docs/early-boot.md):
 * `ptboot fv inject` (or a platform's FDF) puts build/ptbootdrv.efi into the
 * DXE volume as a DRIVER file (format/fv_ptboot.h), and the DXE dispatcher
 * starts it early in DXE, long before BDS would load a Driver#### option.
 *
 * Such a driver has no LoadOptions: its words are the RAW section of its
 * own firmware file, read through the volume's EFI_FIRMWARE_VOLUME2_PROTOCOL
 * (efi/platform/fv2.h) with the file GUID of its FilePath (a PIWG
 * firmware-file node). Dispatched first (APRIORI) or after a file other
 * than the CPU driver, it may also start before the CPU Architectural
 * Protocol exists, which the soft unit's #DB handler and the #GP-safe MSR
 * path need: early_when_protocol() runs the rest of the setup when it is
 * installed. */
#ifndef PTBOOT_EFI_RESIDENT_EARLY_H
#define PTBOOT_EFI_RESIDENT_EARLY_H

#include <stdbool.h>
#include <stddef.h>
#include <efi.h>

#include "format/pi_guid.h"

/* The variable `install --early WORDS` writes (non-volatile, boot-service
 * access) and `uninstall --early` deletes: the words as ASCII text, under
 * the resident tracer's GUID (efi/resident/resident.h). A driver in the
 * firmware volume takes them instead of its RAW section's when the
 * variable service is up when it starts, so the words of a firmware with
 * ptboot built in change without building it again. */
#define PTBOOT_EARLY_VARIABLE       L"PtbootEarly"
#define PTBOOT_EARLY_VARIABLE_ATTRS (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS)

/* EFI_VARIABLE_WRITE_ARCH_PROTOCOL (PI 1.8 Vol. 2, DXE Architectural
 * Protocols): installed once SetVariable works. */
#define PTB_VARIABLE_WRITE_ARCH_PROTOCOL_GUID              \
    {                                                      \
        0x6441f818, 0x6362, 0x4e44,                        \
        {                                                  \
            0xb5, 0x70, 0x7d, 0xba, 0x31, 0xdd, 0x24, 0x53 \
        }                                                  \
    }

enum early_source {
    EARLY_WORDS_NONE,         /* no words anywhere: defaults */
    EARLY_WORDS_LOAD_OPTIONS, /* a Driver#### option's OptionalData */
    EARLY_WORDS_FV,           /* the RAW section of its firmware file */
    EARLY_WORDS_VARIABLE,     /* PtbootEarly */
};

struct early_start {
    bool from_fv;                  /* loaded by the dispatcher from a volume */
    char file[PI_GUID_TEXT_BYTES]; /* its firmware file's GUID ("" if not) */
    enum early_source source;
    /* from a volume: the variable service was not up yet (the status of
     * GetVariable, which EDK2 answers EFI_UNSUPPORTED then) */
    bool variable_unavailable;
    EFI_STATUS variable_status;
};

/* Where the driver came from and its words (ASCII, NUL-terminated in
 * words[0..cap)): LoadOptions (UCS-2) when it has any; else, loaded from a
 * firmware volume, the variable PtbootEarly when there is one, else the
 * RAW section of its firmware file. */
void early_start_read(EFI_LOADED_IMAGE *li, char *words, size_t cap, struct early_start *st);
const char *early_source_name(enum early_source s);

/* Runs fn once the protocol guid is installed: now when it is (returns 1),
 * else from a protocol notify when it comes (returns 0; fn then runs at
 * TPL_CALLBACK inside the installer's InstallProtocolInterface). -1 when
 * the notify cannot be registered. At most EARLY_WAITERS waiters. */
#define EARLY_WAITERS 4
int early_when_protocol(EFI_GUID *guid, void (*fn)(void));

#endif
