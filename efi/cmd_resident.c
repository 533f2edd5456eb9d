/* `resident [ACTION...]`: the resident boot tracer seen from later in the
 * same boot (docs/resident.md). The driver published its header under
 * PTBOOT_RESIDENT_GUID in the system table's configuration table
 * (UEFI 2.10 section 4.6); the actions run left to right:
 *   status            one status line (the default)
 *   stop              stop tracing now (the driver's own stop function)
 *   flow              the trace's instruction flow, code read from the
 *                     images the driver recorded (stops tracing first)
 *   dump              its packets, as `dump` prints a file (stops first)
 *   report            status, images, flow, serial dump, trace line: what
 *                     the driver prints at ExitBootServices
 *   save              the capture as files on the boot volume, the
 *                     directory `ptboot flow --capture` reads
 *                     (efi/capture_files.h: \ptboot\capNNN\trace.pt,
 *                     sideband.txt, code.dump/.addr), stops first; the code
 *                     is the target's snapshot and, for the hardware unit,
 *                     every recorded image still in memory
 *   chain FILE [--args TEXT]
 *                     LoadImage + StartImage FILE from the boot volume
 *                     (e.g. the loader the driver waits for), with TEXT
 *                     as its LoadOptions */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_fmt.h"
#include "efi/app.h"
#include "efi/console.h"
#include "efi/capture_files.h"
#include "efi/load_option.h"
#include "efi/sideband.h"
#include "efi/resident.h"
#include "efi/resident_report.h"

#define CHAIN_PATH_CHARS 256
#define CHAIN_ARGS_CHARS 256
#define PAGE_BYTES 4096ull
/* At most this much code goes into a saved capture. */
#define SAVE_MAX_CODE_BYTES (64ull << 20)

static struct resident_header *find_header(EFI_SYSTEM_TABLE *st)
{
    EFI_GUID guid = PTBOOT_RESIDENT_GUID_INIT;
    for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];
        if (!CompareGuid(&t->VendorGuid, &guid)) {
            struct resident_header *h = t->VendorTable;
            if (h && h->magic == RESIDENT_MAGIC && h->version == RESIDENT_VERSION &&
                h->header_bytes == sizeof *h)
                return h;
            efi_con_puts("ptboot: error: resident: the table has a header of another version\n");
            return NULL;
        }
    }
    return NULL;
}

static void stop_if_tracing(struct resident_header *h)
{
    if ((h->state == RESIDENT_ARMED || h->state == RESIDENT_TRACING) && h->stop) {
        h->stop(h);
        efi_con_printf("ptboot: resident stopped state=%s reason=%s\n",
                       resident_state_name(h->state), resident_stop_reason_name(h->stop_reason));
    }
}

static int dump(struct resident_header *h)
{
    static struct ptd_dump d;
    struct ptd_fmt_options opt = { .flags = 0 };
    const uint8_t *data;
    size_t len;
    char text[PTD_FMT_LINE_MAX];
    int n;
    resident_trace_bytes(h, &data, &len);
    efi_con_printf("ptboot: dump begin file=resident bytes=%llu from=0x0\n", (unsigned long long)len);
    ptd_dump_init(&d, &opt);
    ptd_dump_feed(&d, data, len);
    while ((n = ptd_dump_line(&d, text, sizeof text)) > 0) {
        efi_con_write(text, (size_t)n);
        efi_con_write("\n", 1);
    }
    efi_con_printf("ptboot: dump end packets=%llu errors=%llu skipped=%llu\n",
                   (unsigned long long)d.packets, (unsigned long long)d.errors,
                   (unsigned long long)d.skipped);
    return n < 0 ? EFI_APP_FAILED : EFI_APP_OK;
}

/* An image row whose memory still holds that image: its PE headers say
 * the same size (an unloaded application's pages are freed and reused). */
static bool still_loaded(const struct resident_image *im)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)im->base;
    if (!im->base || im->size < 0x40 || p[0] != 'M' || p[1] != 'Z')
        return false;
    uint32_t lfanew, size_of_image;
    memcpy(&lfanew, p + 0x3c, 4);
    if ((uint64_t)lfanew + 24 + 60 > im->size || memcmp(p + lfanew, "PE\0\0", 4))
        return false;
    /* SizeOfImage: optional header + 56 (PE format) */
    memcpy(&size_of_image, p + lfanew + 24 + 56, 4);
    return size_of_image == im->size;
}

/* Appends [lo, lo + bytes) (page aligned) from src to the page dump. */
static void add_pages(uint8_t *dump, uint64_t *addr, size_t *pages, size_t cap, uint64_t lo,
                      const uint8_t *src, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes && *pages < cap; off += PAGE_BYTES) {
        bool dup = false;
        for (size_t i = 0; i < *pages && !dup; i++)
            dup = addr[i] == lo + off;
        if (dup)
            continue;
        memcpy(dump + *pages * PAGE_BYTES, src + off, PAGE_BYTES);
        addr[*pages] = lo + off;
        (*pages)++;
    }
}

static int save(struct efi_app *app, const struct resident_header *h)
{
    static struct sideband sb;
    struct sideband_error serr;
    if (!h->sideband_text_bytes ||
        sideband_parse(&sb, (const char *)(uintptr_t)h->sideband_text, h->sideband_text_bytes, &serr)) {
        efi_con_puts("ptboot: error: resident: save: no sideband from the driver\n");
        return EFI_APP_FAILED;
    }
    /* the code: the target's snapshot first, then (hw) live images */
    uint64_t want = h->snapshot_taken ? h->snapshot_bytes : 0;
    uint32_t n = h->image_count < RESIDENT_IMAGES_MAX ? h->image_count : RESIDENT_IMAGES_MAX;
    if (h->unit == RESIDENT_UNIT_HW)
        for (uint32_t i = 0; i < n; i++)
            want += (h->images[i].size + 2 * PAGE_BYTES) & ~(PAGE_BYTES - 1);
    if (want > SAVE_MAX_CODE_BYTES)
        want = SAVE_MAX_CODE_BYTES;
    size_t cap = (size_t)(want / PAGE_BYTES);
    EFI_PHYSICAL_ADDRESS mem = 0;
    UINTN mem_pages = cap ? cap + (cap * 8 + PAGE_BYTES - 1) / PAGE_BYTES : 0;
    if (mem_pages && EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, mem_pages, &mem))) {
        efi_con_puts("ptboot: error: resident: save: no memory for the code snapshot\n");
        return EFI_APP_FAILED;
    }
    uint8_t *dump = (uint8_t *)(uintptr_t)mem;
    uint64_t *addr = (uint64_t *)(uintptr_t)(mem + cap * PAGE_BYTES);
    size_t pages = 0;
    if (h->snapshot_taken)
        add_pages(dump, addr, &pages, cap, h->target.base & ~(PAGE_BYTES - 1),
                  (const uint8_t *)(uintptr_t)h->snapshot, h->snapshot_bytes);
    if (h->unit == RESIDENT_UNIT_HW)
        for (uint32_t i = 0; i < n; i++) {
            const struct resident_image *im = &h->images[i];
            if (!still_loaded(im))
                continue;
            uint64_t lo = im->base & ~(PAGE_BYTES - 1);
            uint64_t bytes = (im->base + im->size - lo + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
            add_pages(dump, addr, &pages, cap, lo, (const uint8_t *)(uintptr_t)lo, bytes);
        }
    const uint8_t *data;
    size_t len;
    resident_trace_bytes(h, &data, &len);
    struct capture_files_in in = {
        .sb = &sb, .trace = data, .trace_len = len,
        .code_dump = dump, .code_dump_len = pages * PAGE_BYTES,
        .code_addr = (const uint8_t *)addr, .code_addr_len = pages * sizeof *addr,
    };
    char dir[CAPTURE_FILES_DIR_MAX];
    const char *failed = "";
    enum efi_volume_result r = efi_capture_files_write(app->image, &in, dir, &failed);
    if (mem_pages)
        BS->FreePages(mem, mem_pages);
    if (r != EFI_VOLUME_OK) {
        efi_con_printf("ptboot: error: resident: save: %s: %s\n", failed, efi_volume_result_name(r));
        return EFI_APP_FAILED;
    }
    efi_con_printf("ptboot: resident saved dir=%s trace=%llu code-pages=%llu\n", dir,
                   (unsigned long long)len, (unsigned long long)pages);
    return EFI_APP_OK;
}

static int chain(struct efi_app *app, const char *path, const char *args)
{
    static CHAR16 wpath[CHAIN_PATH_CHARS];
    static uint8_t wargs[2 * CHAIN_ARGS_CHARS];
    size_t n = strlen(path);
    if (n >= CHAIN_PATH_CHARS) {
        efi_con_printf("ptboot: error: resident: chain: path too long\n");
        return EFI_APP_USAGE;
    }
    for (size_t i = 0; i <= n; i++)
        wpath[i] = (CHAR16)(path[i] == '/' ? '\\' : path[i]);
    long args_bytes = 0;
    if (args && (args_bytes = efi_ucs2_from_ascii(wargs, sizeof wargs, args)) < 0) {
        efi_con_printf("ptboot: error: resident: chain: --args: %s\n",
                       efi_load_option_strerror((int)args_bytes));
        return EFI_APP_USAGE;
    }
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&li)) || !li)
        return EFI_APP_FAILED;
    EFI_DEVICE_PATH *dp = FileDevicePath(li->DeviceHandle, wpath);
    EFI_HANDLE child = NULL;
    EFI_STATUS s = dp ? BS->LoadImage(FALSE, app->image, dp, NULL, 0, &child) : EFI_OUT_OF_RESOURCES;
    if (dp)
        FreePool(dp);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: error: resident: chain: LoadImage %s: status 0x%llx\n", path,
                       (unsigned long long)s);
        return EFI_APP_FAILED;
    }
    if (args_bytes) {
        EFI_LOADED_IMAGE *cli = NULL;
        if (!EFI_ERROR(BS->HandleProtocol(child, &LoadedImageProtocol, (void **)&cli)) && cli) {
            cli->LoadOptions = wargs;
            cli->LoadOptionsSize = (UINT32)args_bytes;
        }
    }
    efi_con_printf("ptboot: resident chain start %s\n", path);
    efi_con_flush();
    s = BS->StartImage(child, NULL, NULL);
    efi_con_printf("ptboot: resident chain returned %s status=0x%llx\n", path, (unsigned long long)s);
    return EFI_ERROR(s) ? EFI_APP_FAILED : EFI_APP_OK;
}

int efi_cmd_resident(struct efi_app *app, int argc, char **argv)
{
    int status = EFI_APP_OK;
    if (argc == 0) {
        static char *def[] = { "status" };
        argv = def;
        argc = 1;
    }
    for (int i = 0; i < argc && status == EFI_APP_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "chain")) {
            if (i + 1 == argc) {
                efi_con_puts("ptboot: error: resident: chain needs a FILE\n");
                return EFI_APP_USAGE;
            }
            const char *file = argv[++i], *args = NULL;
            if (i + 2 < argc && !strcmp(argv[i + 1], "--args")) {
                args = argv[i + 2];
                i += 2;
            }
            status = chain(app, file, args);
            continue;
        }
        if (strcmp(a, "status") && strcmp(a, "stop") && strcmp(a, "flow") && strcmp(a, "dump") &&
            strcmp(a, "report") && strcmp(a, "save")) {
            efi_con_printf("ptboot: error: resident: unknown action '%s' (status, stop, flow, "
                           "dump, report, save, chain FILE)\n", a);
            return EFI_APP_USAGE;
        }
        struct resident_header *h = find_header(app->st);
        if (!h) {
            /* a fact for `status`, a failure for what needs a trace */
            efi_con_puts("ptboot: resident none (no resident tracer in this boot; see `install`)\n");
            return strcmp(a, "status") ? EFI_APP_FAILED : EFI_APP_OK;
        }
        if (!strcmp(a, "status")) {
            resident_report_status(h, efi_con_write);
        } else if (!strcmp(a, "stop")) {
            stop_if_tracing(h);
            resident_report_status(h, efi_con_write);
        } else if (!strcmp(a, "flow")) {
            stop_if_tracing(h);
            status = resident_report_flow(h, efi_con_write) < 0 ? EFI_APP_FAILED : EFI_APP_OK;
        } else if (!strcmp(a, "dump")) {
            stop_if_tracing(h);
            status = dump(h);
        } else if (!strcmp(a, "save")) {
            stop_if_tracing(h);
            status = save(app, h);
        } else {
            stop_if_tracing(h);
            resident_report(h, efi_con_write);
        }
    }
    return status;
}
