/* The resident boot tracer's driver entry (efi/resident/resident.h). */
#ifndef PTBOOT_EFI_RESIDENT_DRIVER_H
#define PTBOOT_EFI_RESIDENT_DRIVER_H

#include <efi.h>

/* True when image was loaded as a boot-service driver: LoadImage gives a
 * driver's code the type EfiBootServicesCode and an application's
 * EfiLoaderCode (UEFI 2.10 section 7.4.1 and EFI_LOADED_IMAGE_PROTOCOL,
 * section 9.1), so one binary built twice with different PE subsystems
 * knows which it is. */
BOOLEAN efi_resident_is_driver(EFI_HANDLE image);
/* The driver's whole life at load time; returns EFI_SUCCESS to stay
 * resident (after a failure too, so that the header can say why). */
EFI_STATUS efi_resident_driver_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st);

#endif
