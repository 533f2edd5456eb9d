#include <stdbool.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/memmap.h"

/* UEFI spec 7.2, EFI_BOOT_SERVICES.GetMemoryMap(), memory attribute
 * EFI_MEMORY_RP: read-protected. */
#define MEMORY_ATTRIBUTE_RP 0x0000000000002000ull
#define PAGE_BYTES          4096

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
    case EfiACPIMemoryNVS: return 1;
    default: return 0;
    }
}

/* Calls visit for every descriptor of the current memory map, read into
 * pages of our own (UEFI spec 7.2: the first call sizes the map; room for
 * it to grow by that very allocation, and a few more). visit returns false
 * to stop (the map did not fit its caller: EFI_BUFFER_TOO_SMALL). */
typedef bool (*memmap_visit)(const EFI_MEMORY_DESCRIPTOR *d, void *ctx);

static EFI_STATUS memmap_each(memmap_visit visit, void *ctx)
{
    UINTN size = 0, key, desc_size = 0;
    UINT32 desc_version;
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
    for (UINTN off = 0; !EFI_ERROR(s) && off + desc_size <= size; off += desc_size) {
        if (!visit((const void *)(UINTN)(buf + off), ctx))
            s = EFI_BUFFER_TOO_SMALL;
    }
    BS->FreePages(buf, pages);
    return s;
}

struct readable_ctx {
    struct mem_ranges *m;
    UINTN *descriptors;
    bool full;
};

static bool add_readable(const EFI_MEMORY_DESCRIPTOR *d, void *ctx)
{
    struct readable_ctx *c = ctx;
    (*c->descriptors)++;
    if (efi_memmap_type_is_ram(d->Type) && !(d->Attribute & MEMORY_ATTRIBUTE_RP) &&
        !mem_ranges_add(c->m, d->PhysicalStart, d->NumberOfPages * PAGE_BYTES))
        c->full = true; /* counted on: the map is whole, the ranges are not */
    return true;
}

EFI_STATUS efi_memmap_readable(struct mem_ranges *m, UINTN *descriptors)
{
    struct readable_ctx c = { .m = m, .descriptors = descriptors };
    *descriptors = 0;
    EFI_STATUS s = memmap_each(add_readable, &c);
    if (!EFI_ERROR(s)) {
        mem_ranges_finish(m);
        if (c.full)
            s = EFI_BUFFER_TOO_SMALL;
    }
    return s;
}

struct get_ctx {
    struct efi_mem_desc *out;
    size_t cap;
    size_t *n;
};

static bool add_desc(const EFI_MEMORY_DESCRIPTOR *d, void *ctx)
{
    struct get_ctx *c = ctx;
    if (*c->n == c->cap)
        return false;
    struct efi_mem_desc *o = &c->out[(*c->n)++];
    o->base = d->PhysicalStart;
    o->pages = d->NumberOfPages;
    o->type = d->Type;
    o->attr = d->Attribute;
    return true;
}

EFI_STATUS efi_memmap_get(struct efi_mem_desc *out, size_t cap, size_t *n)
{
    struct get_ctx c = { .out = out, .cap = cap, .n = n };
    *n = 0;
    return memmap_each(add_desc, &c);
}
