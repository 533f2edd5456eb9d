/* Files on the volume the app was loaded from (the USB stick). */
#ifndef PTBOOT_EFI_VOLUME_H
#define PTBOOT_EFI_VOLUME_H

#include <stddef.h>
#include <efi.h>

enum efi_volume_result {
    EFI_VOLUME_OK = 0,
    EFI_VOLUME_NOT_FOUND = -1,  /* no such file */
    EFI_VOLUME_TOO_LARGE = -2,  /* file larger than the buffer */
    EFI_VOLUME_IO = -3,         /* no file system, or a read failed */
    EFI_VOLUME_NO_MEMORY = -4,  /* AllocatePages failed */
};

/* Reads the whole of path (UEFI form, e.g. "\\ptboot.cfg") into buf, NUL
 * terminated, so buf must hold the file plus one byte. */
enum efi_volume_result efi_volume_read(EFI_HANDLE image, const char *path,
                                       char *buf, size_t cap, size_t *len);
/* Loads the whole of path into fresh pages from the firmware
 * (AllocatePages, EfiLoaderData: never newlib's heap). Fails with
 * EFI_VOLUME_TOO_LARGE above max bytes, EFI_VOLUME_NO_MEMORY if the
 * firmware has no room. Release with efi_volume_free(). */
enum efi_volume_result efi_volume_load(EFI_HANDLE image, const char *path, size_t max,
                                       void **data, size_t *len);
void efi_volume_free(void *data, size_t len);
const char *efi_volume_result_name(enum efi_volume_result r);

#endif
