#include <efi.h>
#include <efilib.h>

#include "efi/platform/nvvar.h"

#define NAME_CHARS 64

static EFI_GUID vendor = PTBOOT_VENDOR_GUID_INIT;

static void wide(const char *s, CHAR16 *w)
{
    size_t i = 0;
    for (; s[i] && i + 1 < NAME_CHARS; i++)
        w[i] = (CHAR16)s[i];
    w[i] = 0;
}

EFI_STATUS efi_nvvar_get(const char *name, void *buf, size_t cap, size_t *len)
{
    CHAR16 w[NAME_CHARS];
    wide(name, w);
    UINTN size = cap;
    EFI_STATUS s = RT->GetVariable(w, &vendor, NULL, &size, buf);
    *len = EFI_ERROR(s) ? 0 : size;
    return s;
}

EFI_STATUS efi_nvvar_set(const char *name, const void *data, size_t len)
{
    CHAR16 w[NAME_CHARS];
    wide(name, w);
    EFI_STATUS s = RT->SetVariable(w, &vendor, PTB_NVVAR_ATTRS, len, (void *)data);
    /* deleting what is not there is no error for us */
    return len == 0 && s == EFI_NOT_FOUND ? EFI_SUCCESS : s;
}
