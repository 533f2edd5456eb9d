#include <efi.h>
#include <efilib.h>

#include "efi/volume.h"

#define VOLUME_PATH_MAX 256

static EFI_FILE_HANDLE open_root(EFI_HANDLE image)
{
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li)) || !li)
        return NULL;
    return LibOpenRoot(li->DeviceHandle);
}

enum efi_volume_result efi_volume_read(EFI_HANDLE image, const char *path,
                                       char *buf, size_t cap, size_t *len)
{
    CHAR16 wpath[VOLUME_PATH_MAX];
    size_t n = 0;
    *len = 0;
    if (cap == 0)
        return EFI_VOLUME_TOO_LARGE;
    buf[0] = '\0';
    for (; path[n] && n + 1 < VOLUME_PATH_MAX; n++)
        wpath[n] = (CHAR16)(path[n] == '/' ? '\\' : path[n]);
    wpath[n] = 0;

    EFI_FILE_HANDLE root = open_root(image);
    if (!root)
        return EFI_VOLUME_IO;
    EFI_FILE_HANDLE fh = NULL;
    EFI_STATUS s = root->Open(root, &fh, wpath, EFI_FILE_MODE_READ, 0);
    root->Close(root);
    if (s == EFI_NOT_FOUND)
        return EFI_VOLUME_NOT_FOUND;
    if (EFI_ERROR(s))
        return EFI_VOLUME_IO;

    enum efi_volume_result r = EFI_VOLUME_OK;
    size_t total = 0;
    for (;;) {
        UINTN chunk = cap - 1 - total;
        if (chunk == 0) {
            /* Full: one more byte would mean the file does not fit. */
            char probe;
            UINTN one = 1;
            if (!EFI_ERROR(fh->Read(fh, &one, &probe)) && one)
                r = EFI_VOLUME_TOO_LARGE;
            break;
        }
        s = fh->Read(fh, &chunk, buf + total);
        if (EFI_ERROR(s)) {
            r = EFI_VOLUME_IO;
            break;
        }
        if (chunk == 0)
            break;
        total += chunk;
    }
    fh->Close(fh);
    buf[total] = '\0';
    *len = total;
    return r;
}

const char *efi_volume_result_name(enum efi_volume_result r)
{
    switch (r) {
    case EFI_VOLUME_OK: return "ok";
    case EFI_VOLUME_NOT_FOUND: return "not found";
    case EFI_VOLUME_TOO_LARGE: return "too large";
    case EFI_VOLUME_IO: return "i/o error";
    }
    return "?";
}
