#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/memmap.h"
#include "efi/platform/nvvar.h"
#include "efi/platform/uart.h"
#include "efi/resident/previous.h"
#include "efi/resident/recover.h"

#define PAGE_BYTES 4096ull
#define MAP_MAX    512

static struct efi_mem_desc map[MAP_MAX];
static struct sideband sb;

int resident_region_readable(uint64_t phys, uint64_t bytes)
{
    size_t n;
    if (EFI_ERROR(efi_memmap_get(map, MAP_MAX, &n)))
        return -1;
    uint64_t covered = 0;
    bool touched = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = map[i].base, hi = map[i].base + map[i].pages * PAGE_BYTES;
        if (hi <= phys || lo >= phys + bytes)
            continue;
        touched = true;
        if (!efi_memmap_type_is_ram(map[i].type))
            return -1;
        uint64_t a = lo > phys ? lo : phys, b = hi < phys + bytes ? hi : phys + bytes;
        covered += b - a;
    }
    return !touched ? 0 : covered == bytes ? 1 : -1;
}

static UINTN pages_of(uint64_t bytes)
{
    return (UINTN)((bytes + PAGE_BYTES - 1) / PAGE_BYTES);
}

static void *alloc(uint64_t bytes)
{
    EFI_PHYSICAL_ADDRESS a;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiBootServicesData, pages_of(bytes), &a)))
        return NULL;
    return (void *)(UINTN)a;
}

static void release(void *p, uint64_t bytes)
{
    if (p)
        BS->FreePages((EFI_PHYSICAL_ADDRESS)(UINTN)p, pages_of(bytes));
}

void resident_previous(void *arena)
{
    struct recorder_var v;
    uint8_t raw[sizeof v];
    size_t len;
    EFI_STATUS s = efi_nvvar_get(RECORDER_VAR_NAME, raw, sizeof raw, &len);
    if (s == EFI_NOT_FOUND)
        return;
    if (EFI_ERROR(s) && s != EFI_BUFFER_TOO_SMALL) {
        /* a driver dispatched from a firmware volume before the variable
         * service (docs/early-boot.md) */
        efi_uart_printf(
            "ptboot: recover none reason=the variable service is not up yet (status 0x%llx): "
            "the previous boot's recorder cannot be looked for\n",
            (unsigned long long)s);
        return;
    }
    if (EFI_ERROR(s) || recorder_var_decode(raw, len, &v)) {
        efi_uart_printf("ptboot: recover none reason=the variable %s is damaged\n",
                        RECORDER_VAR_NAME);
        return;
    }
    if (resident_region_readable(v.region_phys, v.region_bytes) < 0) {
        efi_uart_printf("ptboot: recover none at=0x%llx reason=the region is not RAM in this "
                        "boot's memory map\n",
                        (unsigned long long)v.region_phys);
        return;
    }
    /* a copy: the region is about to hold this boot's trace */
    uint8_t *copy = alloc(v.region_bytes);
    struct resident_kept *k = alloc(sizeof *k);
    if (!copy || !k) {
        efi_uart_printf(
            "ptboot: recover none at=0x%llx reason=no memory for a copy of %llu bytes\n",
            (unsigned long long)v.region_phys, (unsigned long long)v.region_bytes);
        release(copy, v.region_bytes);
        release(k, sizeof *k);
        return;
    }
    memcpy(copy, (const void *)(UINTN)v.region_phys, (size_t)v.region_bytes);
    struct resident_recover r;
    memset(&r, 0, sizeof r);
    r.mem = copy;
    r.bytes = v.region_bytes;
    r.phys = v.region_phys;
    r.msr_pos = -1;
    struct recorder_view pre;
    if (recorder_check(copy, v.region_bytes, v.region_phys, &pre) == RECORDER_OK)
        r.msr_pos = resident_recover_msr_pos(&pre.fixed);
    uint64_t cap = pre.fixed.trace_bytes;
    uint8_t *out = cap ? alloc(cap) : NULL, *scratch = cap ? alloc(cap) : NULL;
    if (resident_recover_open(&r, out, out ? (size_t)cap : 0, scratch, &sb)) {
        efi_uart_printf("ptboot: recover none at=0x%llx generation=%llu reason=%s\n",
                        (unsigned long long)v.region_phys, (unsigned long long)v.generation,
                        r.check != RECORDER_OK ? recorder_strerror(r.check)
                                               : "no memory for the trace");
        release(out, cap);
        release(scratch, cap);
        release(copy, v.region_bytes);
        release(k, sizeof *k);
        return;
    }
    efi_uart_printf("ptboot: resident previous boot's recorder (kept for `ptboot.efi recover`):\n");
    uint64_t index_bytes = (r.pages + 1) * sizeof(struct code_page);
    struct code_page *pages = alloc(index_bytes);
    if (!pages)
        r.pages = 0;
    resident_recover_report(&r, efi_uart_write, arena, pages);
    resident_recover_final(&r, efi_uart_write);
    release(pages, index_bytes);
    release(out, cap);
    release(scratch, cap);
    k->magic = RESIDENT_KEPT_MAGIC;
    k->phys = v.region_phys;
    k->copy = (uint64_t)(UINTN)copy;
    k->bytes = v.region_bytes;
    k->self_pages = pages_of(sizeof *k);
    k->msr_pos = r.msr_pos;
    EFI_GUID guid = PTBOOT_RECORDER_KEPT_GUID_INIT;
    if (EFI_ERROR(BS->InstallConfigurationTable(&guid, k))) {
        release(copy, v.region_bytes);
        release(k, sizeof *k);
    }
}

struct resident_kept *resident_kept_find(EFI_SYSTEM_TABLE *st)
{
    EFI_GUID guid = PTBOOT_RECORDER_KEPT_GUID_INIT;
    for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];
        if (!CompareGuid(&t->VendorGuid, &guid)) {
            struct resident_kept *k = t->VendorTable;
            return k && k->magic == RESIDENT_KEPT_MAGIC ? k : NULL;
        }
    }
    return NULL;
}

void resident_kept_release(struct resident_kept *k)
{
    EFI_GUID guid = PTBOOT_RECORDER_KEPT_GUID_INIT;
    BS->InstallConfigurationTable(&guid, NULL);
    release((void *)(UINTN)k->copy, k->bytes);
    k->magic = 0;
    BS->FreePages((EFI_PHYSICAL_ADDRESS)(UINTN)k, (UINTN)k->self_pages);
}
