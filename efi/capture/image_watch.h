/* The images of a capture (the sideband's image table, format/sideband.h):
 * those already loaded when tracing starts (LocateHandleBuffer on
 * EFI_LOADED_IMAGE_PROTOCOL) and every image loaded while tracing, recorded
 * when it is loaded (RegisterProtocolNotify on the same protocol, UEFI 2.10
 * section 7.3), with optional snapshots of their pages, so the trace still
 * decodes after an image is unloaded (an application's image is freed as
 * soon as StartImage returns).
 *
 * Use (the `trace` command and the resident tracer):
 *
 *     static struct sideband sb;          // ~60 KiB: never on the stack
 *     static struct efi_image_watch w;
 *     sideband_init(&sb);
 *     efi_sideband_read_cpu(&sb, &caps, &cfg, buffer_bytes);
 *     efi_image_watch_start(&w, &sb, 16u << 20, PTB_IMAGE_WATCH_SNAPSHOT_NEW, EfiLoaderData);
 *     LoadImage(target) ...                // recorded by the watcher
 *     efi_image_watch_snapshot(&w, base, size, SIDEBAND_IMG_TARGET);  // before StartImage
 *     ... trace ...
 *     efi_image_watch_stop(&w);           // images gone now are flagged "unloaded"
 *     efi_capture_files_write(...)        // efi/capture/files.h: w.snap (a code dump)
 *     efi_image_watch_free(&w);
 *
 * Why the snapshot memory is taken once, up front: the notify function runs
 * at TPL_CALLBACK inside the firmware's LoadImage. The UEFI spec allows
 * AllocatePages there (boot services table of TPL restrictions: memory
 * allocation services up to TPL_NOTIFY), but allocating while tracing
 * changes the memory map under the traced code, takes time in the middle
 * of the boot being measured, can fail at the worst moment, and cannot be
 * bounded. So the notify function only copies into pages reserved at
 * start (of the memory type the caller asks, EfiReservedMemoryType for
 * buffers that must survive ExitBootServices); when they are full, later
 * images are recorded without a snapshot and counted. */
#ifndef PTBOOT_EFI_CAPTURE_IMAGE_WATCH_H
#define PTBOOT_EFI_CAPTURE_IMAGE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <efi.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "format/code_image.h"
#include "format/sideband.h"

/* flags of efi_image_watch_start */
enum {
    /* snapshot each image loaded while watching, when it is loaded */
    PTB_IMAGE_WATCH_SNAPSHOT_NEW = 1u << 0,
};

struct efi_image_watch {
    struct sideband *sb;
    uint32_t flags;
    EFI_EVENT event;
    void *registration;
    bool active;
    /* the handle of each sideband row (for the unload check at stop) */
    EFI_HANDLE handle[SIDEBAND_MAX_IMAGES];
    /* the code snapshot, a code dump (format/code_image.h) */
    struct code_dump snap;
    EFI_PHYSICAL_ADDRESS snap_mem;
    UINTN snap_mem_pages;
    uint64_t range_lo[SIDEBAND_MAX_IMAGES], range_hi[SIDEBAND_MAX_IMAGES]; /* snapshotted */
    size_t nranges;
    unsigned snap_skipped; /* images that did not fit */
    unsigned notified;     /* images the notify function saw */
};

/* What the firmware and the image itself say about one loaded image. */
struct efi_image_desc {
    uint64_t base, size, entry;
    char name[SIDEBAND_NAME_MAX];
    /* where the name came from: "pdb" (the image's debug directory), "ui"
     * (the user-interface section of its firmware file), "path" (the
     * FilePath it was loaded from), "fv" (only the firmware file's GUID
     * was known), "none" */
    const char *source;
    /* The image's CodeView record (format/pe_info.h), which names its debug
     * file: SIDEBAND_CV_* (NONE when it has none), GUID/signature, age,
     * path. */
    uint32_t cv, cv_age;
    uint8_t cv_guid[SIDEBAND_GUID_BYTES];
    char cv_path[SIDEBAND_PATH_MAX];
};

/* Fills d for a handle carrying EFI_LOADED_IMAGE_PROTOCOL; -1 if none. */
int efi_image_describe(EFI_HANDLE handle, struct efi_image_desc *d);

/* Records every image loaded now (flag "before"), reserves snapshot_bytes
 * (rounded up to pages; 0: no snapshots) of mem_type, and starts watching
 * for new images (flag "while"). Returns 0, or -1 when the notification
 * could not be registered or the memory not reserved (nothing is left
 * registered then). */
int efi_image_watch_start(struct efi_image_watch *w, struct sideband *sb, size_t snapshot_bytes,
                          uint32_t flags, EFI_MEMORY_TYPE mem_type);
/* Copies the pages of [base, base+size) into the snapshot and sets
 * SIDEBAND_IMG_SNAPSHOT | extra_flags on the image's row (recorded now if
 * it has none). Returns the pages copied, or -1 when they do not fit. */
int efi_image_watch_snapshot(struct efi_image_watch *w, uint64_t base, uint64_t size,
                             uint32_t extra_flags);
/* Stops watching; images whose handle lost the protocol are flagged
 * "unloaded". The table and snapshot stay until efi_image_watch_free. */
void efi_image_watch_stop(struct efi_image_watch *w);
void efi_image_watch_free(struct efi_image_watch *w);

/* CPU facts into the sideband: CPUID (arch/x86/pt_caps.h) and the nominal
 * ratio from MSR_PLATFORM_INFO through the #GP-safe path (efi/platform/msr_safe.h;
 * only when efi_msr_init said "ready"), plus the configuration used
 * (cfg may be NULL) and the buffer size. */
void efi_sideband_read_cpu(struct sideband *sb, const struct rtit_caps *caps,
                           const struct rtit_config *cfg, uint64_t buffer_bytes);

#endif
