#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/app.h"
#include "efi/cmd/memsurvey.h"
#include "efi/platform/console.h"
#include "efi/platform/memmap.h"
#include "efi/platform/nvvar.h"

#define PAGE_BYTES        4096ull
#define SURVEY_VAR        "PtbootMark"
#define SURVEY_MAGIC      0x314b52414d425450ull /* "PTBMARK1" */
#define SURVEY_CHECK      0x9e3779b97f4a7c15ull
#define SURVEY_MAX_RANGES 96
#define SURVEY_MAX_DESCS  512
/* Pages below 1 MiB are the legacy BIOS area and real-mode stacks: not
 * candidates for anything, left alone. */
#define SURVEY_LOW_LIMIT 0x100000ull
/* At most this many run lines (the summary line counts them all). */
#define SURVEY_MAX_LINES 64

struct survey_tag {
    uint64_t magic, addr, nonce, check;
};

struct survey_var {
    uint64_t nonce;
    uint32_t count, reserved;
    struct {
        uint64_t base, pages;
    } r[SURVEY_MAX_RANGES];
};

static struct efi_mem_desc descs[SURVEY_MAX_DESCS];
static struct survey_var var;

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* Tags every page of [base, base + pages * 4 KiB). */
static void tag_pages(uint64_t base, uint64_t pages)
{
    for (uint64_t p = 0; p < pages; p++) {
        uint64_t at = base + p * PAGE_BYTES;
        struct survey_tag *t = (struct survey_tag *)(UINTN)at;
        t->magic = SURVEY_MAGIC;
        t->addr = at;
        t->nonce = var.nonce;
        t->check = SURVEY_MAGIC ^ at ^ var.nonce ^ SURVEY_CHECK;
    }
}

/* Does [base, base + bytes) overlap any descriptor of the map? */
static bool in_map(uint64_t base, uint64_t bytes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (base < descs[i].base + descs[i].pages * PAGE_BYTES && descs[i].base < base + bytes)
            return true;
    return false;
}

int efi_memsurvey_mark(uint64_t also_base, uint64_t also_bytes)
{
    size_t n;
    EFI_STATUS s = efi_memmap_get(descs, SURVEY_MAX_DESCS, &n);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: memmap --mark: GetMemoryMap: status 0x%llx\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    memset(&var, 0, sizeof var);
    var.nonce = rdtsc() ^ SURVEY_CHECK;
    uint64_t pages = 0;
    for (size_t i = 0; i < n && var.count < SURVEY_MAX_RANGES; i++) {
        uint64_t base = descs[i].base, np = descs[i].pages;
        if (descs[i].type != EfiConventionalMemory)
            continue;
        if (base < SURVEY_LOW_LIMIT) {
            uint64_t cut = (SURVEY_LOW_LIMIT - base) / PAGE_BYTES;
            if (cut >= np)
                continue;
            base += cut * PAGE_BYTES;
            np -= cut;
        }
        EFI_PHYSICAL_ADDRESS a = base;
        /* ours while the tags go in: nobody else writes them meanwhile */
        if (EFI_ERROR(BS->AllocatePages(AllocateAddress, EfiLoaderData, np, &a)))
            continue;
        tag_pages(base, np);
        BS->FreePages(a, np);
        var.r[var.count].base = base;
        var.r[var.count++].pages = np;
        pages += np;
    }
    if (also_bytes) {
        /* memory the firmware does not manage (not in its map at all, e.g.
         * QEMU's pc-dimm or RAM the platform hides): only there, since
         * anything in the map belongs to someone */
        if ((also_base | also_bytes) & (PAGE_BYTES - 1) || in_map(also_base, also_bytes, n) ||
            var.count == SURVEY_MAX_RANGES) {
            efi_con_printf(
                "ptboot: error: memmap --mark --also: 0x%llx+0x%llx is not page-aligned memory "
                "outside the firmware's map\n",
                (unsigned long long)also_base, (unsigned long long)also_bytes);
            return PTB_APP_USAGE;
        }
        tag_pages(also_base, also_bytes / PAGE_BYTES);
        var.r[var.count].base = also_base;
        var.r[var.count++].pages = also_bytes / PAGE_BYTES;
        pages += also_bytes / PAGE_BYTES;
    }
    size_t len = sizeof var - (SURVEY_MAX_RANGES - var.count) * sizeof var.r[0];
    s = efi_nvvar_set(SURVEY_VAR, &var, len);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: memmap --mark: SetVariable %s: status 0x%llx\n", SURVEY_VAR,
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    efi_con_printf("ptboot: memmap mark pages=%llu ranges=%u nonce=0x%llx\n",
                   (unsigned long long)pages, var.count, (unsigned long long)var.nonce);
    return PTB_APP_OK;
}

/* The type of addr in this boot's map (descs[0..n)), or -1 if not mapped. */
static int type_now(uint64_t addr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (addr >= descs[i].base && addr - descs[i].base < descs[i].pages * PAGE_BYTES)
            return (int)descs[i].type;
    return -1;
}

static const char *type_name(int t)
{
    switch (t) {
    case EfiReservedMemoryType: return "reserved";
    case EfiLoaderCode: return "loader-code";
    case EfiLoaderData: return "loader-data";
    case EfiBootServicesCode: return "bs-code";
    case EfiBootServicesData: return "bs-data";
    case EfiRuntimeServicesCode: return "rt-code";
    case EfiRuntimeServicesData: return "rt-data";
    case EfiConventionalMemory: return "free";
    case EfiACPIReclaimMemory: return "acpi";
    case EfiACPIMemoryNVS: return "acpi-nvs";
    case -1: return "unmapped";
    }
    return "other";
}

int efi_memsurvey_survived(void)
{
    size_t len;
    memset(&var, 0, sizeof var);
    EFI_STATUS s = efi_nvvar_get(SURVEY_VAR, &var, sizeof var, &len);
    if (EFI_ERROR(s) || len < 16 || var.count > SURVEY_MAX_RANGES ||
        len != sizeof var - (SURVEY_MAX_RANGES - var.count) * sizeof var.r[0]) {
        efi_con_printf(
            "ptboot: error: memmap --survived: no marks (run `memmap --mark`, then reset)\n");
        return PTB_APP_FAILED;
    }
    size_t n;
    s = efi_memmap_get(descs, SURVEY_MAX_DESCS, &n);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: memmap --survived: GetMemoryMap: status 0x%llx\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    uint64_t marked = 0, kept = 0, free_now = 0, best_base = 0, best_pages = 0;
    unsigned lines = 0, runs = 0;
    for (uint32_t i = 0; i < var.count; i++) {
        uint64_t run_base = 0, run_pages = 0, free_base = 0, free_pages = 0;
        int run_kept = -1, run_type = -2;
        for (uint64_t p = 0; p <= var.r[i].pages; p++) {
            bool end = p == var.r[i].pages;
            uint64_t at = var.r[i].base + p * PAGE_BYTES;
            int t = -2, k = -1;
            if (!end) {
                t = type_now(at, n);
                /* only RAM is read: what the map calls RAM, or what is
                 * outside the map (marked with --also: the user named it) */
                if ((t >= 0 && efi_memmap_type_is_ram((UINT32)t)) || t == -1) {
                    const volatile struct survey_tag *g =
                        (const volatile struct survey_tag *)(UINTN)at;
                    k = g->magic == SURVEY_MAGIC && g->addr == at && g->nonce == var.nonce &&
                        g->check == (SURVEY_MAGIC ^ at ^ var.nonce ^ SURVEY_CHECK);
                } else {
                    k = 0;
                }
                marked++;
                kept += (uint64_t)k;
                bool fk = k && t == EfiConventionalMemory;
                if (fk) {
                    free_now++;
                    if (!free_pages)
                        free_base = at;
                    free_pages++;
                }
                if (!fk || p + 1 == var.r[i].pages) {
                    if (free_pages > best_pages) {
                        best_base = free_base;
                        best_pages = free_pages;
                    }
                    if (!fk)
                        free_pages = 0;
                }
            }
            if (end || k != run_kept || t != run_type) {
                if (run_pages) {
                    runs++;
                    if (lines++ < SURVEY_MAX_LINES)
                        efi_con_printf("ptboot: memmap run base=0x%llx pages=%llu kept=%d now=%s\n",
                                       (unsigned long long)run_base, (unsigned long long)run_pages,
                                       run_kept, type_name(run_type));
                }
                run_base = at;
                run_pages = 0;
                run_kept = k;
                run_type = t;
            }
            run_pages++;
        }
    }
    if (lines > SURVEY_MAX_LINES)
        efi_con_printf("ptboot: memmap runs-cut printed=%u of=%u\n", SURVEY_MAX_LINES, runs);
    efi_nvvar_set(SURVEY_VAR, NULL, 0);
    efi_con_printf(
        "ptboot: memmap survived pages=%llu of=%llu free_now=%llu largest_free=0x%llx+0x%llx\n",
        (unsigned long long)kept, (unsigned long long)marked, (unsigned long long)free_now,
        (unsigned long long)best_base, (unsigned long long)(best_pages * PAGE_BYTES));
    return PTB_APP_OK;
}
