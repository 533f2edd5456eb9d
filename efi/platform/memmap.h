/* The RAM the firmware's memory map describes, as readable ranges
 * (format/memrange.h). Taken once before decoding live memory. */
#ifndef PTBOOT_EFI_PLATFORM_MEMMAP_H
#define PTBOOT_EFI_PLATFORM_MEMMAP_H

#include <efi.h>
#include "format/memrange.h"

/* Fills m (storage from the caller) with the RAM ranges of the current
 * memory map. Returns EFI_SUCCESS, or the firmware's error; on
 * EFI_BUFFER_TOO_SMALL the map had more RAM ranges than storage (the extra
 * ones are refused, never allowed). descriptors counts all map entries. */
EFI_STATUS efi_memmap_readable(struct mem_ranges *m, UINTN *descriptors);

#endif
