#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/fv2.h"

struct pi_fv2;
typedef EFI_STATUS(EFIAPI *pi_fv2_read_section)(struct pi_fv2 *self, const EFI_GUID *name,
                                                UINT8 type, UINTN instance, VOID **buffer,
                                                UINTN *size, UINT32 *auth);
struct pi_fv2 {
    VOID *get_volume_attributes, *set_volume_attributes, *read_file;
    pi_fv2_read_section read_section;
    /* WriteFile, GetNextFile, KeySize, ParentHandle, GetInfo, SetInfo follow */
};

const EFI_GUID *efi_fv_file_of(EFI_DEVICE_PATH *dp)
{
    for (int n = 0; dp && n < 64 && !IsDevicePathEndType(dp); n++) {
        UINTN len = DevicePathNodeLength(dp);
        if (len < sizeof(EFI_DEVICE_PATH))
            break;
        if (DevicePathType(dp) == MEDIA_DEVICE_PATH &&
            DevicePathSubType(dp) == MEDIA_PIWG_FW_FILE_DP &&
            len >= sizeof(MEDIA_FW_VOL_FILEPATH_DEVICE_PATH))
            return &((MEDIA_FW_VOL_FILEPATH_DEVICE_PATH *)dp)->FvFileName;
        dp = NextDevicePathNode(dp);
    }
    return NULL;
}

int efi_fv_read_section(EFI_HANDLE device, const EFI_GUID *file, UINT8 type, UINTN instance,
                        void *out, size_t cap, size_t *len)
{
    static EFI_GUID fv2_guid = PTB_FV2_PROTOCOL_GUID;
    struct pi_fv2 *fv = NULL;
    VOID *buf = out;
    UINTN size = cap;
    UINT32 auth = 0;
    *len = 0;
    if (!device || !file || EFI_ERROR(BS->HandleProtocol(device, &fv2_guid, (void **)&fv)) || !fv)
        return -1;
    EFI_STATUS s = fv->read_section(fv, file, type, instance, &buf, &size, &auth);
    /* EFI_WARN_BUFFER_TOO_SMALL (a warning: not EFI_ERROR) cut it to cap */
    if (EFI_ERROR(s) || buf != out)
        return -1;
    *len = size < cap ? size : cap;
    return 0;
}
