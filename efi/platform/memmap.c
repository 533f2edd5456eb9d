#include <efi.h>
#include <efilib.h>

#include "efi/platform/memmap.h"

/* UEFI spec 7.2, EFI_BOOT_SERVICES.GetMemoryMap(), memory attribute
 * EFI_MEMORY_RP: read-protected. */
#define MEMORY_ATTRIBUTE_RP 0x0000000000002000ull
#define PAGE_BYTES 4096

/* Types whose contents are ordinary RAM the CPU may read: code and data of
 * loaders, boot and runtime services, free memory, ACPI tables. MMIO,
 * reserved, unusable and persistent memory are left out: reading them can
 * have side effects or fault. */
int efi_memmap_type_is_ram(UINT32 type)
{
    switch (type) {
    case EfiLoaderCode:
    case EfiLoaderData:
    case EfiBootServicesCode:
    case EfiBootServicesData:
    case EfiRuntimeServicesCode:
    case EfiRuntimeServicesData:
    case EfiConventionalMemory:
    case EfiACPIReclaimMemory:
    case EfiACPIMemoryNVS:
        return 1;
    default:
        return 0;
    }
}

EFI_STATUS efi_memmap_readable(struct mem_ranges *m, UINTN *descriptors)
{
    UINTN size = 0, key, desc_size = 0;
    UINT32 desc_version;
    *descriptors = 0;
    EFI_STATUS s = BS->GetMemoryMap(&size, NULL, &key, &desc_size, &desc_version);
    if (s != EFI_BUFFER_TOO_SMALL)
        return EFI_ERROR(s) ? s : EFI_DEVICE_ERROR;
    /* Room for the map to grow by our own allocation (and a few more). */
    size += 8 * desc_size;
    UINTN pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    EFI_PHYSICAL_ADDRESS buf = 0;
    s = BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &buf);
    if (EFI_ERROR(s))
        return s;
    size = pages * PAGE_BYTES;
    s = BS->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)(UINTN)buf, &key, &desc_size,
                         &desc_version);
    if (!EFI_ERROR(s)) {
        int full = 0;
        for (UINTN off = 0; off + desc_size <= size; off += desc_size) {
            const EFI_MEMORY_DESCRIPTOR *d = (const void *)(UINTN)(buf + off);
            (*descriptors)++;
            if (!efi_memmap_type_is_ram(d->Type) || (d->Attribute & MEMORY_ATTRIBUTE_RP))
                continue;
            if (!mem_ranges_add(m, d->PhysicalStart, d->NumberOfPages * PAGE_BYTES))
                full = 1;
        }
        mem_ranges_finish(m);
        if (full)
            s = EFI_BUFFER_TOO_SMALL;
    }
    BS->FreePages(buf, pages);
    return s;
}

EFI_STATUS efi_memmap_get(struct efi_mem_desc *out, size_t cap, size_t *n)
{
    UINTN size = 0, key, desc_size = 0;
    UINT32 desc_version;
    *n = 0;
    EFI_STATUS s = BS->GetMemoryMap(&size, NULL, &key, &desc_size, &desc_version);
    if (s != EFI_BUFFER_TOO_SMALL)
        return EFI_ERROR(s) ? s : EFI_DEVICE_ERROR;
    size += 8 * desc_size;
    UINTN pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    EFI_PHYSICAL_ADDRESS buf = 0;
    s = BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &buf);
    if (EFI_ERROR(s))
        return s;
    size = pages * PAGE_BYTES;
    s = BS->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)(UINTN)buf, &key, &desc_size,
                         &desc_version);
    if (!EFI_ERROR(s)) {
        for (UINTN off = 0; off + desc_size <= size; off += desc_size) {
            const EFI_MEMORY_DESCRIPTOR *d = (const void *)(UINTN)(buf + off);
            if (*n == cap) {
                s = EFI_BUFFER_TOO_SMALL;
                break;
            }
            out[*n].base = d->PhysicalStart;
            out[*n].pages = d->NumberOfPages;
            out[*n].type = d->Type;
            out[*n].attr = d->Attribute;
            (*n)++;
        }
    }
    BS->FreePages(buf, pages);
    return s;
}
