/* `memmap`: the RAM ranges live-memory decoding may read, from the
 * firmware's memory map, and a check of the checker on this machine: the
 * app's own image must be readable, the local APIC's MMIO page must not. */
#include <stdlib.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_num.h"
#include "efi/app.h"
#include "efi/cmd/memsurvey.h"
#include "efi/platform/console.h"
#include "efi/platform/memmap.h"

#define MEMMAP_MAX_RANGES 512
/* SDM Vol. 3A 10.4.1: the local APIC's registers at 0xFEE00000 by default:
 * MMIO, never RAM in any memory map. */
#define LOCAL_APIC_MMIO 0xfee00000ull

int efi_cmd_memmap(struct efi_app *app, int argc, char **argv)
{
    static struct mem_range storage[MEMMAP_MAX_RANGES];
    struct mem_ranges m;
    int verbose = 0;
    if (argc >= 1 && !strcmp(argv[0], "--mark")) {
        uint64_t base = 0, size = 0;
        const char *end = NULL;
        /* BASE:SIZE through the one number parser (0x hex, else decimal;
         * K/M/G) */
        if (argc == 3 && !strcmp(argv[1], "--also") &&
            !ptd_num_parse_pair(argv[2], PTD_NUM_AUTO, &base, &size, &end))
            end = NULL;
        if (argc != 1 && (argc != 3 || !end || *end || !size)) {
            efi_con_puts("ptboot: error: memmap: --mark [--also BASE:SIZE]\n");
            return PTB_APP_USAGE;
        }
        return efi_memsurvey_mark(base, size);
    }
    if (argc == 1 && !strcmp(argv[0], "--survived"))
        return efi_memsurvey_survived();
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--ranges")) {
            verbose = 1;
        } else {
            efi_con_printf(
                "ptboot: error: memmap: unknown argument '%s' (usage: memmap [--ranges | "
                "--mark [--also BASE:SIZE] | --survived])\n",
                argv[i]);
            return PTB_APP_USAGE;
        }
    }
    mem_ranges_init(&m, storage, MEMMAP_MAX_RANGES);
    UINTN descriptors = 0;
    EFI_STATUS s = efi_memmap_readable(&m, &descriptors);
    if (EFI_ERROR(s) && s != EFI_BUFFER_TOO_SMALL) {
        efi_con_printf("ptboot: error: memmap: GetMemoryMap failed (status 0x%llx)\n",
                       (unsigned long long)s);
        return PTB_APP_FAILED;
    }
    UINT64 total = 0;
    for (size_t i = 0; i < m.count; i++) {
        total += m.r[i].size;
        if (verbose)
            efi_con_printf("  ram 0x%016llx-0x%016llx\n", (unsigned long long)m.r[i].base,
                           (unsigned long long)(m.r[i].base + m.r[i].size - 1));
    }
    EFI_LOADED_IMAGE *li = NULL;
    UINT64 image = 0, image_size = 0;
    if (!EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&li)) && li) {
        image = (UINT64)(UINTN)li->ImageBase;
        image_size = li->ImageSize;
    }
    int image_ok = image_size && mem_ranges_contains(&m, image, image_size);
    int apic_ok = mem_ranges_contains(&m, LOCAL_APIC_MMIO, 1);
    efi_con_printf("ptboot: memmap descriptors=%llu ram_ranges=%llu ram_mib=%llu%s "
                   "image=0x%llx+0x%llx image_readable=%d apic_mmio_readable=%d\n",
                   (unsigned long long)descriptors, (unsigned long long)m.count,
                   (unsigned long long)(total >> 20),
                   s == EFI_BUFFER_TOO_SMALL ? " truncated=1" : "", (unsigned long long)image,
                   (unsigned long long)image_size, image_ok, apic_ok);
    return image_ok && !apic_ok ? PTB_APP_OK : PTB_APP_FAILED;
}
