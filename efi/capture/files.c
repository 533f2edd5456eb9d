/* A capture as files on the boot volume: see files.h. */
#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/capture/files.h"
#include "format/code_image.h"

/* Finds the first unused \ptboot\capNNN and creates it. */
static enum efi_volume_result new_dir(EFI_HANDLE image, char dir[CAPTURE_FILES_DIR_MAX])
{
    enum efi_volume_result r = efi_volume_mkdir(image, CAPTURE_FILES_ROOT);
    if (r != PTB_VOLUME_OK)
        return r;
    for (unsigned n = 1; n <= CAPTURE_FILES_MAX; n++) {
        snprintf(dir, CAPTURE_FILES_DIR_MAX, "%s\\cap%03u", CAPTURE_FILES_ROOT, n);
        int e = efi_volume_exists(image, dir);
        if (e < 0)
            return PTB_VOLUME_IO;
        if (e == 0)
            return efi_volume_mkdir(image, dir);
    }
    return PTB_VOLUME_IO; /* 999 captures on the stick: make room */
}

static enum efi_volume_result put(EFI_HANDLE image, const char *dir, const char *name,
                                  const void *data, size_t len, const char **failed)
{
    char path[CAPTURE_FILES_DIR_MAX + 16];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    enum efi_volume_result r = efi_volume_write(image, path, data, len);
    if (r != PTB_VOLUME_OK && failed)
        *failed = name;
    return r;
}

#define PAGE 4096

enum efi_volume_result efi_capture_files_write(EFI_HANDLE image, const struct capture_files_in *in,
                                               char dir[CAPTURE_FILES_DIR_MAX],
                                               const char **failed)
{
    const char *dummy;
    if (!failed)
        failed = &dummy;
    *failed = "directory";
    dir[0] = '\0';
    enum efi_volume_result r = new_dir(image, dir);
    if (r != PTB_VOLUME_OK)
        return r;

    r = put(image, dir, "trace.pt", in->trace, in->trace_len, failed);
    if (r != PTB_VOLUME_OK)
        return r;

    /* The sideband's text: its size first, then pages from the firmware
     * for it (never newlib's heap), freed right after writing. */
    size_t need = sideband_write(in->sb, NULL, 0) + 1;
    UINTN pages = (need + PAGE - 1) / PAGE;
    EFI_PHYSICAL_ADDRESS mem = 0;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &mem))) {
        *failed = "sideband.txt";
        return PTB_VOLUME_NO_MEMORY;
    }
    char *text = (char *)(UINTN)mem;
    size_t len = sideband_write(in->sb, text, need);
    r = put(image, dir, "sideband.txt", text, len, failed);
    BS->FreePages(mem, pages);
    if (r != PTB_VOLUME_OK)
        return r;

    /* pages and addresses must pair up, or the host refuses both */
    if (in->code_addr_len % 8 || in->code_dump_len != in->code_addr_len / 8 * CODE_PAGE_BYTES) {
        *failed = "code.dump";
        return PTB_VOLUME_BAD_INPUT;
    }
    r = put(image, dir, "code.dump", in->code_dump, in->code_dump_len, failed);
    if (r != PTB_VOLUME_OK)
        return r;
    r = put(image, dir, "code.addr", in->code_addr, in->code_addr_len, failed);
    if (r != PTB_VOLUME_OK)
        return r;

    char last[CAPTURE_FILES_DIR_MAX + 1];
    int n = snprintf(last, sizeof last, "%s\n", dir + sizeof CAPTURE_FILES_ROOT);
    r = put(image, CAPTURE_FILES_ROOT, "last.txt", last, (size_t)n, failed);
    if (r == PTB_VOLUME_OK)
        *failed = NULL;
    return r;
}
