/* `resident [ACTION...]`: the resident boot tracer seen from later in the
 * same boot (docs/resident.md). The driver published its header under
 * PTBOOT_RESIDENT_GUID in the system table's configuration table
 * (UEFI 2.10 section 4.6); the actions run left to right:
 *   status            one status line (the default)
 *   stop              stop tracing now (the driver's own stop function)
 *   flow              the trace's instruction flow, code read from the
 *                     images the driver recorded (stops tracing first)
 *   dump              its packets: `dump --resident` (stops first)
 *   report            status, images, flow, serial dump, trace line: what
 *                     the driver prints at ExitBootServices
 *   save              the capture as files on the boot volume, the
 *                     directory `ptboot flow --capture` reads
 *                     (efi/capture/files.h: \ptboot\capNNN\trace.pt,
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

#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/platform/watchdog.h"
#include "efi/platform/status.h"
#include "efi/capture/files.h"
#include "format/load_option.h"
#include "format/sideband.h"
#include "efi/resident/resident.h"
#include "efi/resident/capture.h"
#include "efi/resident/report.h"

#define CHAIN_PATH_CHARS 256
#define CHAIN_ARGS_CHARS 256
#define PAGE_BYTES       4096ull

static int save(struct efi_app *app, const struct resident_header *h)
{
    static struct sideband sb;
    struct resident_capture rc;
    if (resident_capture_sideband(h, &sb, "resident: save") ||
        resident_capture_open(&rc, h, "resident: save"))
        return PTB_APP_FAILED;
    struct capture_files_in in = {
        .sb = &sb,
        .trace = rc.trace,
        .trace_len = rc.trace_len,
        .code_dump = rc.code_dump,
        .code_dump_len = rc.pages * PAGE_BYTES,
        .code_addr = (const uint8_t *)rc.code_addr,
        .code_addr_len = rc.pages * sizeof *rc.code_addr,
    };
    char dir[CAPTURE_FILES_DIR_MAX];
    int r = efi_capture_files_write(app->image, &in, "resident: save", dir);
    size_t len = rc.trace_len, pages = rc.pages;
    resident_capture_close(&rc);
    if (r)
        return PTB_APP_FAILED;
    efi_con_printf("ptboot: resident saved dir=%s trace=%llu code-pages=%llu\n", dir,
                   (unsigned long long)len, (unsigned long long)pages);
    return PTB_APP_OK;
}

static int chain(struct efi_app *app, const char *path, const char *args)
{
    static CHAR16 wpath[CHAIN_PATH_CHARS];
    static uint8_t wargs[2 * CHAIN_ARGS_CHARS];
    size_t n = strlen(path);
    if (n >= CHAIN_PATH_CHARS) {
        efi_con_printf("ptboot: error: resident: chain: path too long\n");
        return PTB_APP_USAGE;
    }
    for (size_t i = 0; i <= n; i++)
        wpath[i] = (CHAR16)(path[i] == '/' ? '\\' : path[i]);
    long args_bytes = 0;
    if (args && (args_bytes = ucs2_from_ascii(wargs, sizeof wargs, args)) < 0) {
        efi_con_printf("ptboot: error: resident: chain: --args: %s\n",
                       load_option_strerror((int)args_bytes));
        return PTB_APP_USAGE;
    }
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&li)) || !li)
        return PTB_APP_FAILED;
    EFI_DEVICE_PATH *dp = FileDevicePath(li->DeviceHandle, wpath);
    EFI_HANDLE child = NULL;
    EFI_STATUS s =
        dp ? BS->LoadImage(FALSE, app->image, dp, NULL, 0, &child) : EFI_OUT_OF_RESOURCES;
    if (dp)
        FreePool(dp);
    if (EFI_ERROR(s)) {
        char sn[32];
        const char *hint = efi_load_image_hint(s);
        efi_con_printf("ptboot: error: resident: chain: LoadImage %s: %s%s%s%s\n", path,
                       efi_status_name(s, sn, sizeof sn), hint[0] ? " (" : "", hint,
                       hint[0] ? ")" : "");
        return PTB_APP_FAILED;
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
    /* as the boot manager starts an image: under its 5-minute watchdog
     * (efi/platform/watchdog.h), off again for ptboot's own work after */
    efi_watchdog_boot_manager();
    s = BS->StartImage(child, NULL, NULL);
    efi_watchdog_off();
    efi_con_printf("ptboot: resident chain returned %s status=0x%llx\n", path,
                   (unsigned long long)s);
    return EFI_ERROR(s) ? PTB_APP_FAILED : PTB_APP_OK;
}

int efi_cmd_resident(struct efi_app *app, int argc, char **argv)
{
    int status = PTB_APP_OK;
    if (argc == 0) {
        static char *def[] = { "status" };
        argv = def;
        argc = 1;
    }
    for (int i = 0; i < argc && status == PTB_APP_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "chain")) {
            if (i + 1 == argc) {
                efi_con_puts("ptboot: error: resident: chain needs a FILE\n");
                return PTB_APP_USAGE;
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
                           "dump, report, save, chain FILE)\n",
                           a);
            return PTB_APP_USAGE;
        }
        struct resident_header *h = resident_find(app->st);
        if (!h) {
            /* a fact for `status`, a failure for what needs a trace */
            efi_con_puts(
                "ptboot: resident none (no resident tracer in this boot; see `install`)\n");
            return strcmp(a, "status") ? PTB_APP_FAILED : PTB_APP_OK;
        }
        if (!strcmp(a, "status")) {
            resident_report_status(h, efi_con_write);
        } else if (!strcmp(a, "stop")) {
            resident_stop_if_tracing(h);
            resident_report_status(h, efi_con_write);
        } else if (!strcmp(a, "flow")) {
            resident_stop_if_tracing(h);
            status = resident_report_flow(h, efi_con_write) < 0 ? PTB_APP_FAILED : PTB_APP_OK;
        } else if (!strcmp(a, "dump")) {
            static char *words[] = { "--resident" };
            status = efi_cmd_dump(app, 1, words); /* stops tracing first */
        } else if (!strcmp(a, "save")) {
            resident_stop_if_tracing(h);
            status = save(app, h);
        } else {
            resident_stop_if_tracing(h);
            resident_report(h, efi_con_write);
        }
    }
    return status;
}
