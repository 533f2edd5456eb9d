/* EFI_STATUS codes by name, for messages: "not found", "security
 * violation", ... (UEFI 2.10 Appendix D), with what LoadImage means by
 * the ones it returns (7.4.1). */
#ifndef PTBOOT_EFI_PLATFORM_STATUS_H
#define PTBOOT_EFI_PLATFORM_STATUS_H

#include <efi.h>

/* The status's name ("not found"), or "status 0x..." for one without a
 * name (into buf). */
const char *efi_status_name(EFI_STATUS s, char *buf, size_t cap);
/* What a LoadImage status usually means for the file, or "" (a hint to
 * print after the name: "the file is not there", "Secure Boot refused
 * it: the image is not signed", ...). */
const char *efi_load_image_hint(EFI_STATUS s);

#endif
