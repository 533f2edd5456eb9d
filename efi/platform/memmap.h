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

/* One descriptor of the memory map, as the recorder's placement and the
 * `memmap --mark/--survived` survey need it. */
struct efi_mem_desc {
    UINT64 base, pages;
    UINT32 type; /* EFI_MEMORY_TYPE */
    UINT64 attr;
};
/* The current memory map into out[0..cap) (in the firmware's order,
 * which EDK2 keeps sorted by address); *n the descriptors stored. Returns
 * EFI_SUCCESS, EFI_BUFFER_TOO_SMALL (more than cap: the first cap are
 * stored) or the firmware's error. */
EFI_STATUS efi_memmap_get(struct efi_mem_desc *out, size_t cap, size_t *n);
/* True for the types whose pages are ordinary RAM the CPU may read (code
 * and data of loaders, boot and runtime services, free memory, ACPI). */
int efi_memmap_type_is_ram(UINT32 type);

#endif
