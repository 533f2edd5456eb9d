/* `images [--save] [--load FILE]`: every image loaded now, with its base,
 * size, entry point and name (from its debug directory, its firmware
 * file's user-interface section or the path it was loaded from): what a
 * firmware engineer needs to turn an address from an exception dump into
 * driver+offset. The same code records the images of a capture
 * (efi/capture/image_watch.h), so this command also exercises it without tracing:
 *
 *   --load FILE  while watching, LoadImage FILE from the stick (not
 *                started) and unload it again: the watcher must record it
 *                when it loads and flag it unloaded at the end;
 *   --save       write a capture directory (\ptboot\capNNN, empty trace,
 *                unit none) with the sideband and a code snapshot of this
 *                app's image (docs/capture-files.md).
 *
 * Machine lines: "ptboot: image base=0x.. size=0x.. entry=0x.. src=S
 * name=N" per image, "ptboot: images self base=0x.. size=0x..", "ptboot:
 * images count=N", and with --save "ptboot: capture dir=D ...". */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "efi/app.h"
#include "efi/capture/files.h"
#include "format/code_image.h"
#include "efi/platform/console.h"
#include "efi/platform/status.h"
#include "efi/capture/image_watch.h"
#include "format/sideband.h"

/* The snapshot of --save: this app's image and a loaded file fit. */
#define IMAGES_SNAPSHOT_BYTES (4u << 20)
#define IMAGES_PATH_MAX       128

typedef unsigned long long ull;

static int list(struct efi_app *app)
{
    EFI_HANDLE *hs = NULL;
    UINTN n = 0;
    if (EFI_ERROR(BS->LocateHandleBuffer(ByProtocol, &LoadedImageProtocol, NULL, &n, &hs)) || !hs) {
        efi_con_puts("ptboot: error: images: no handle carries EFI_LOADED_IMAGE_PROTOCOL\n");
        return PTB_APP_FAILED;
    }
    unsigned count = 0;
    for (UINTN i = 0; i < n; i++) {
        struct efi_image_desc d;
        if (efi_image_describe(hs[i], &d) < 0)
            continue;
        count++;
        efi_con_printf("ptboot: image base=0x%llx size=0x%llx entry=0x%llx src=%s name=%s\n",
                       (ull)d.base, (ull)d.size, (ull)d.entry, d.source, d.name);
        if (hs[i] == app->image)
            efi_con_printf("ptboot: images self base=0x%llx size=0x%llx entry=0x%llx name=%s\n",
                           (ull)d.base, (ull)d.size, (ull)d.entry, d.name);
    }
    FreePool(hs);
    efi_con_printf("ptboot: images count=%u\n", count);
    return PTB_APP_OK;
}

/* LoadImage of a file on the app's volume, then UnloadImage. */
static int load_and_unload(struct efi_app *app, const char *file)
{
    EFI_LOADED_IMAGE *li = NULL;
    CHAR16 wpath[IMAGES_PATH_MAX];
    size_t k = 0;
    for (; file[k] && k + 1 < IMAGES_PATH_MAX; k++)
        wpath[k] = (CHAR16)(file[k] == '/' ? '\\' : file[k]);
    wpath[k] = 0;
    if (EFI_ERROR(BS->HandleProtocol(app->image, &LoadedImageProtocol, (void **)&li)) || !li)
        return -1;
    EFI_DEVICE_PATH *dp = FileDevicePath(li->DeviceHandle, wpath);
    if (!dp)
        return -1;
    EFI_HANDLE h = NULL;
    EFI_STATUS s = BS->LoadImage(FALSE, app->image, dp, NULL, 0, &h);
    FreePool(dp);
    if (EFI_ERROR(s)) {
        char sn[32];
        const char *hint = efi_load_image_hint(s);
        efi_con_printf("ptboot: error: images: LoadImage %s: %s%s%s%s\n", file,
                       efi_status_name(s, sn, sizeof sn), hint[0] ? " (" : "", hint,
                       hint[0] ? ")" : "");
        return -1;
    }
    s = BS->UnloadImage(h);
    if (EFI_ERROR(s)) {
        char sn[32];
        efi_con_printf("ptboot: error: images: UnloadImage %s: %s\n", file,
                       efi_status_name(s, sn, sizeof sn));
    }
    return EFI_ERROR(s) ? -1 : 0;
}

static int save(struct efi_app *app, const char *load)
{
    static struct sideband sb; /* ~60 KiB: off the stack */
    static struct efi_image_watch w;
    struct rtit_caps caps;
    struct efi_image_desc self;
    char flags[64], dir[CAPTURE_FILES_DIR_MAX];
    int status = PTB_APP_OK;

    sideband_init(&sb);
    sb.unit = SIDEBAND_UNIT_NONE;
    rtit_caps_read(&caps, x86_cpuid_native, NULL);
    efi_sideband_read_cpu(&sb, &caps, NULL, 0);
    if (efi_image_watch_start(&w, &sb, IMAGES_SNAPSHOT_BYTES, PTB_IMAGE_WATCH_SNAPSHOT_NEW,
                              EfiLoaderData) < 0) {
        efi_con_puts("ptboot: error: images: cannot watch image loads (event or memory)\n");
        return PTB_APP_FAILED;
    }
    if (efi_image_describe(app->image, &self) == 0 &&
        efi_image_watch_snapshot(&w, self.base, self.size, SIDEBAND_IMG_TARGET) < 0)
        efi_con_puts("ptboot: error: images: no room to snapshot this image\n");
    if (load && load_and_unload(app, load) < 0)
        status = PTB_APP_FAILED;
    efi_image_watch_stop(&w);
    for (uint32_t i = 0; i < sb.nimages; i++)
        if (sb.images[i].flags & (SIDEBAND_IMG_WHILE | SIDEBAND_IMG_TARGET))
            efi_con_printf("ptboot: images recorded base=0x%llx size=0x%llx flags=%s name=%s\n",
                           (ull)sb.images[i].base, (ull)sb.images[i].size,
                           sideband_flags_str(sb.images[i].flags, flags, sizeof flags),
                           sb.images[i].name);
    /* the watcher's snapshot is a code dump already */
    struct capture_files_in in = {
        .sb = &sb,
        .code_dump = w.snap.pages,
        .code_dump_len = code_dump_pages_bytes(&w.snap),
        .code_addr = (const uint8_t *)w.snap.addr,
        .code_addr_len = code_dump_addr_bytes(&w.snap),
    };
    if (efi_capture_files_write(app->image, &in, "images", dir)) {
        status = PTB_APP_FAILED;
    } else {
        efi_con_printf(
            "ptboot: capture dir=%s images=%u notified=%u snapshot_pages=%u skipped=%u\n", dir,
            (unsigned)sb.nimages, w.notified, (unsigned)w.snap.count, w.snap_skipped);
    }
    efi_image_watch_free(&w);
    return status;
}

int efi_cmd_images(struct efi_app *app, int argc, char **argv)
{
    int do_save = 0;
    const char *load = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--save")) {
            do_save = 1;
        } else if (!strcmp(argv[i], "--load") && i + 1 < argc) {
            load = argv[++i];
        } else {
            efi_con_printf("ptboot: error: images: unknown argument '%s' (usage: images [--save] "
                           "[--load FILE])\n",
                           argv[i]);
            return PTB_APP_USAGE;
        }
    }
    if (load && !do_save) {
        efi_con_puts("ptboot: error: images: --load needs --save (it tests the recording)\n");
        return PTB_APP_USAGE;
    }
    int status = list(app);
    if (status == PTB_APP_OK && do_save)
        status = save(app, load);
    return status;
}
