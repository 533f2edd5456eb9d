/* Loaded images into the sideband, at start and as they load: see
 * image_watch.h. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/rtit_decode_params.h"
#include "format/code_image.h"
#include "efi/capture/image_watch.h"
#include "efi/platform/fv2.h"
#include "efi/platform/msr_safe.h"
#include "format/ffs.h"
#include "format/pi_guid.h"
#include "format/pe_info.h"
#include "efi/capture/sideband_cpu.h"

/* ---- naming one image ---------------------------------------------------- */

/* The last file-path node of a device path as ASCII ("\\EFI\\BOOT\\X.EFI"),
 * or the GUID of a firmware-volume file (UEFI 2.10 10.3.5.6/10.3.5.7, PIWG
 * firmware file). Returns "path", "fv" or NULL. Walks at most 64 nodes and
 * stops at a node whose length is impossible. */
static const char *name_from_device_path(EFI_DEVICE_PATH *dp, char *out, size_t cap)
{
    const char *kind = NULL;
    for (int n = 0; dp && n < 64 && !IsDevicePathEndType(dp); n++) {
        UINTN len = DevicePathNodeLength(dp);
        if (len < sizeof(EFI_DEVICE_PATH))
            break;
        if (DevicePathType(dp) == MEDIA_DEVICE_PATH && DevicePathSubType(dp) == MEDIA_FILEPATH_DP) {
            const CHAR16 *w = ((FILEPATH_DEVICE_PATH *)dp)->PathName;
            size_t chars = (len - SIZE_OF_FILEPATH_DEVICE_PATH) / sizeof(CHAR16), k = 0;
            for (size_t i = 0; i < chars && w[i] && k + 1 < cap; i++)
                out[k++] = (w[i] >= 0x20 && w[i] < 0x7f) ? (char)w[i] : '_';
            out[k] = '\0';
            kind = "path";
        } else if (DevicePathType(dp) == MEDIA_DEVICE_PATH &&
                   DevicePathSubType(dp) == MEDIA_PIWG_FW_FILE_DP &&
                   len >= sizeof(MEDIA_FW_VOL_FILEPATH_DEVICE_PATH) && cap > 36) {
            /* the GUID in its registry form, e.g. 8f644fa9-e850-4db1-...
             * (EFI_GUID in memory is the stored form format/pi_guid.h reads) */
            struct pi_guid g;
            char text[PI_GUID_TEXT_BYTES];
            memcpy(g.b, &((MEDIA_FW_VOL_FILEPATH_DEVICE_PATH *)dp)->FvFileName, PI_GUID_BYTES);
            pi_guid_format(&g, text);
            memcpy(out, text, PI_GUID_TEXT_BYTES);
            kind = "fv";
        }
        dp = NextDevicePathNode(dp);
    }
    return kind;
}

/* The user-interface section of the firmware file an image was loaded
 * from: the name its build gave it ("PcRtc", "PciBusDxe"), as EDK2's own
 * tools show drivers (efi/platform/fv2.h: nothing is allocated). */
static int name_from_fv(EFI_HANDLE device, const EFI_GUID *file, char *out, size_t cap)
{
    CHAR16 ui[SIDEBAND_NAME_MAX];
    size_t size;
    memset(ui, 0, sizeof ui);
    if (efi_fv_read_section(device, file, FFS_SECTION_USER_INTERFACE, 0, ui,
                            sizeof ui - sizeof(CHAR16), &size))
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < size / sizeof(CHAR16) && ui[i] && k + 1 < cap; i++)
        out[k++] = (ui[i] > 0x20 && ui[i] < 0x7f) ? (char)ui[i] : '_';
    out[k] = '\0';
    return k ? 0 : -1;
}

int efi_image_describe(EFI_HANDLE handle, struct efi_image_desc *d)
{
    EFI_LOADED_IMAGE *li = NULL;
    memset(d, 0, sizeof(*d));
    d->source = "none";
    if (EFI_ERROR(BS->HandleProtocol(handle, &LoadedImageProtocol, (void **)&li)) || !li)
        return -1;
    d->base = (uint64_t)(UINTN)li->ImageBase;
    d->size = li->ImageSize;
    /* The image's own headers (PE/COFF as loaded: UEFI 2.10 2.1.1), read
     * only within ImageSize. */
    struct pe_info pi;
    if (d->base && d->size &&
        pe_info_parse((const uint8_t *)(UINTN)d->base, (size_t)d->size, PE_LAYOUT_MEMORY, &pi) ==
            0) {
        if (pi.entry_rva && pi.entry_rva < d->size)
            d->entry = d->base + pi.entry_rva;
        if (pi.codeview) {
            /* what the host's --symbols finds the debug file by */
            d->cv = pi.codeview == PE_CV_RSDS ? SIDEBAND_CV_RSDS : SIDEBAND_CV_NB10;
            d->cv_age = pi.cv_age;
            memcpy(d->cv_guid, pi.cv_guid, sizeof d->cv_guid);
            memcpy(d->cv_path, pi.pdb_path, sizeof d->cv_path);
            d->cv_path[sizeof d->cv_path - 1] = '\0';
        }
        if (pi.name[0]) {
            memcpy(d->name, pi.name,
                   sizeof d->name < sizeof pi.name ? sizeof d->name : sizeof pi.name);
            d->name[sizeof d->name - 1] = '\0';
            d->source = "pdb";
            return 0;
        }
    }
    const EFI_GUID *file = efi_fv_file_of(li->FilePath);
    if (file && name_from_fv(li->DeviceHandle, file, d->name, sizeof d->name) == 0) {
        d->source = "ui";
        return 0;
    }
    char path[SIDEBAND_NAME_MAX * 2];
    const char *kind = name_from_device_path(li->FilePath, path, sizeof path);
    if (kind && !strcmp(kind, "path")) {
        pe_info_basename(path, d->name, sizeof d->name);
        d->source = "path";
    } else if (kind) {
        memcpy(d->name, path, sizeof d->name - 1);
        d->name[sizeof d->name - 1] = '\0';
        d->source = "fv";
    } else {
        memcpy(d->name, "?", 2);
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------ */

/* The time stamp counter: the clock of the trace's TSC packets (SDM
 * 33.3.7), so a load time lines up with the trace on a timeline. */
static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static void record(struct efi_image_watch *w, EFI_HANDLE handle, uint32_t flags)
{
    struct efi_image_desc d;
    uint64_t now = rdtsc();
    if (efi_image_describe(handle, &d) < 0 || d.size == 0)
        return;
    int row = sideband_add_image(w->sb, d.base, d.size, d.entry, d.name, flags);
    if (row < 0)
        return;
    if (d.cv != SIDEBAND_CV_NONE)
        sideband_set_debug(w->sb, row, d.cv, d.cv_guid, d.cv_age, d.cv_path);
    if (flags & SIDEBAND_IMG_WHILE)
        w->sb->images[row].load_tsc = now;
    w->handle[row] = handle;
    if ((flags & SIDEBAND_IMG_WHILE) && (w->flags & PTB_IMAGE_WATCH_SNAPSHOT_NEW))
        efi_image_watch_snapshot(w, d.base, d.size, 0);
}

int efi_image_watch_snapshot(struct efi_image_watch *w, uint64_t base, uint64_t size,
                             uint32_t extra_flags)
{
    uint64_t first = base & ~(uint64_t)(CODE_PAGE_BYTES - 1);
    uint64_t end = base + size;
    if (size == 0 || end < base)
        return -1;
    size_t pages = (size_t)((end - first + CODE_PAGE_BYTES - 1) / CODE_PAGE_BYTES);
    if (pages > w->snap.cap - w->snap.count || w->nranges >= SIDEBAND_MAX_IMAGES) {
        w->snap_skipped++;
        return -1;
    }
    /* Pages already in the snapshot (an image snapshotted twice, or sharing
     * a page with its neighbour) are not copied again: the page dump
     * format wants each address once. The check runs over the ranges
     * snapshotted so far (one per image), not over every page, so the
     * notify function stays short while the firmware waits for it. */
    size_t copied = 0;
    for (size_t i = 0; i < pages; i++) {
        uint64_t a = first + (uint64_t)i * CODE_PAGE_BYTES;
        size_t k;
        for (k = 0; k < w->nranges; k++)
            if (a >= w->range_lo[k] && a < w->range_hi[k])
                break;
        if (k < w->nranges)
            continue;
        if (code_dump_add(&w->snap, a, (const uint8_t *)(UINTN)a) != CODE_IMAGE_OK)
            break; /* cannot happen: aligned, and the room was checked */
        copied++;
    }
    w->range_lo[w->nranges] = first;
    w->range_hi[w->nranges] = first + (uint64_t)pages * CODE_PAGE_BYTES;
    w->nranges++;
    int row = -1;
    for (uint32_t i = 0; i < w->sb->nimages; i++)
        if (w->sb->images[i].base == base)
            row = (int)i;
    if (row < 0) {
        char name[] = "?";
        row = sideband_add_image(w->sb, base, size, 0, name, 0);
    }
    if (row >= 0)
        w->sb->images[row].flags |= SIDEBAND_IMG_SNAPSHOT | extra_flags;
    return (int)copied;
}

/* ---- the notification ------------------------------------------------------ */

static bool known(const struct efi_image_watch *w, EFI_HANDLE h)
{
    for (uint32_t i = 0; i < w->sb->nimages; i++)
        if (w->handle[i] == h)
            return true;
    return false;
}

/* Runs at TPL_CALLBACK each time a handle gets EFI_LOADED_IMAGE_PROTOCOL
 * (LoadImage installs it after loading and relocating the image, so the
 * pages copied here hold the code that will run). LocateHandle with
 * ByRegisterNotify hands out each new handle once (UEFI 2.10 7.3,
 * RegisterProtocolNotify / LocateHandle). Boot services used here are all
 * allowed at TPL_CALLBACK; no memory is allocated. */
static VOID EFIAPI on_image(EFI_EVENT event, VOID *ctx)
{
    struct efi_image_watch *w = ctx;
    (void)event;
    if (!w || !w->active)
        return;
    for (unsigned n = 0; n < SIDEBAND_MAX_IMAGES; n++) {
        EFI_HANDLE h = NULL;
        UINTN size = sizeof h;
        if (EFI_ERROR(BS->LocateHandle(ByRegisterNotify, NULL, w->registration, &size, &h)) || !h)
            break;
        w->notified++;
        if (!known(w, h))
            record(w, h, SIDEBAND_IMG_WHILE);
    }
}

int efi_image_watch_start(struct efi_image_watch *w, struct sideband *sb, size_t snapshot_bytes,
                          uint32_t flags, EFI_MEMORY_TYPE mem_type)
{
    memset(w, 0, sizeof(*w));
    w->sb = sb;
    w->flags = flags;
    if (snapshot_bytes) {
        size_t pages = (snapshot_bytes + CODE_PAGE_BYTES - 1) / CODE_PAGE_BYTES;
        size_t addr_pages = (pages * sizeof(uint64_t) + CODE_PAGE_BYTES - 1) / CODE_PAGE_BYTES;
        w->snap_mem_pages = pages + addr_pages;
        if (EFI_ERROR(
                BS->AllocatePages(AllocateAnyPages, mem_type, w->snap_mem_pages, &w->snap_mem)))
            return -1;
        code_dump_init(&w->snap, (uint8_t *)(UINTN)w->snap_mem,
                       (uint64_t *)(UINTN)(w->snap_mem + pages * CODE_PAGE_BYTES), pages);
    }

    /* The images there already. */
    EFI_HANDLE *hs = NULL;
    UINTN n = 0;
    if (!EFI_ERROR(BS->LocateHandleBuffer(ByProtocol, &LoadedImageProtocol, NULL, &n, &hs)) && hs) {
        for (UINTN i = 0; i < n; i++)
            record(w, hs[i], SIDEBAND_IMG_BEFORE);
        FreePool(hs);
    }

    /* Then every new one. */
    if (EFI_ERROR(BS->CreateEvent(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, on_image, w, &w->event))) {
        efi_image_watch_free(w);
        return -1;
    }
    if (EFI_ERROR(BS->RegisterProtocolNotify(&LoadedImageProtocol, w->event, &w->registration))) {
        efi_image_watch_free(w);
        return -1;
    }
    /* EDK2's LocateHandle(ByRegisterNotify) walks the protocol's whole
     * handle list from a fresh registration, existing handles included
     * (drivers rely on it through EfiCreateProtocolNotifyEvent); the spec
     * speaks only of new ones. Drain it now, so the notify function sees
     * only images loaded from here on; a handle not in the table yet was
     * loaded between the two steps and counts as loaded while watching. */
    for (unsigned k = 0; k < 4 * SIDEBAND_MAX_IMAGES; k++) {
        EFI_HANDLE h = NULL;
        UINTN size = sizeof h;
        if (EFI_ERROR(BS->LocateHandle(ByRegisterNotify, NULL, w->registration, &size, &h)) || !h)
            break;
        if (!known(w, h))
            record(w, h, SIDEBAND_IMG_WHILE);
    }
    w->active = true;
    return 0;
}

void efi_image_watch_stop(struct efi_image_watch *w)
{
    if (w->event) {
        /* CloseEvent also ends the protocol notification registered with
         * it (UEFI 2.10 7.1 CloseEvent, 7.3 RegisterProtocolNotify). */
        BS->CloseEvent(w->event);
        w->event = NULL;
    }
    w->active = false;
    for (uint32_t i = 0; i < w->sb->nimages; i++) {
        void *li = NULL;
        if (w->handle[i] && EFI_ERROR(BS->HandleProtocol(w->handle[i], &LoadedImageProtocol, &li)))
            w->sb->images[i].flags |= SIDEBAND_IMG_UNLOADED;
    }
}

void efi_image_watch_free(struct efi_image_watch *w)
{
    if (w->event)
        efi_image_watch_stop(w);
    if (w->snap_mem)
        BS->FreePages(w->snap_mem, w->snap_mem_pages);
    w->snap_mem = 0;
    code_dump_init(&w->snap, NULL, NULL, 0);
}

/* ---- CPU facts -------------------------------------------------------------- */

void efi_sideband_read_cpu(struct sideband *sb, const struct rtit_caps *caps,
                           const struct rtit_config *cfg, uint64_t buffer_bytes)
{
    static const struct rtit_config none;
    struct rtit_decode_params p;
    /* MSR_PLATFORM_INFO is read (Intel family 6 only) through the #GP-safe
     * path: an MSR the CPU lacks is an error code, not a dead-loop. */
    rtit_decode_params_fill(&p, caps, cfg ? cfg : &none, &efi_msr_safe_ops);
    sideband_set_cpu(sb, caps, &p);
    sideband_set_config(sb, cfg, buffer_bytes);
    if (!cfg)
        sb->config.ctl = 0;
}
