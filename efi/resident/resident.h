/* The resident boot tracer (docs/resident.md).
 *
 * `install` writes a Driver#### load option for \EFI\ptboot\ptbootdrv.efi
 * (build/ptbootdrv.efi: the same objects as ptboot.efi, linked as an
 * EFI_BOOT_SERVICE_DRIVER). On the next boot the boot manager loads it
 * early in BDS (UEFI 2.10 section 3.1.3: Driver#### options are processed
 * before any Boot#### option). It sees that it is a driver (its
 * ImageCodeType is EfiBootServicesCode; an application's is
 * EfiLoaderCode, UEFI 2.10 section 7.4.1 LoadImage), reads its words from
 * the option's OptionalData (its LoadOptions), starts or arms tracing,
 * publishes the header below with InstallConfigurationTable, hooks
 * ExitBootServices and returns EFI_SUCCESS, which keeps a boot-service
 * driver resident (section 7.4.1, StartImage/Exit).
 *
 * The header and the trace buffer are EfiReservedMemoryType: the trace
 * unit may write them after ExitBootServices, and an OS must not reuse
 * them (section 7.2, Table 7-6). Anything that runs later in the same boot
 * (ptboot.efi `resident`, a shell) finds the header through the system
 * table's configuration table under PTBOOT_RESIDENT_GUID.
 *
 * Layout rules: fixed-width fields only, version-checked, so an app built
 * later still reads a header written by an older driver. */
#ifndef PTBOOT_EFI_RESIDENT_RESIDENT_H
#define PTBOOT_EFI_RESIDENT_RESIDENT_H

#include <stdint.h>

/* The configuration-table GUID of the header (defined once, here). */
#define PTBOOT_RESIDENT_GUID_INIT                          \
    {                                                      \
        0xabde0ec3, 0xfe39, 0x48b1,                        \
        {                                                  \
            0x89, 0xb9, 0x64, 0xd2, 0xfa, 0x62, 0xce, 0xc5 \
        }                                                  \
    }

#define RESIDENT_MAGIC   0x544e444953425450ull /* "PTBSIDNT" little-endian */
#define RESIDENT_VERSION 2

/* The Driver#### option: its description (what `uninstall` recognises as
 * ours) and the driver file's default place on the boot volume. */
#define RESIDENT_DESCRIPTION "ptboot resident tracer"
#define RESIDENT_DRIVER_PATH "\\EFI\\ptboot\\ptbootdrv.efi"

enum resident_state {
    RESIDENT_STARTING = 0,
    RESIDENT_ARMED = 1, /* waiting for the --image to load / reach its entry */
    RESIDENT_TRACING = 2,
    RESIDENT_STOPPED = 3, /* stop_reason says why */
    RESIDENT_FAILED = 4,  /* could not trace: message says why */
};

enum resident_stop_reason {
    RESIDENT_STOP_NONE = 0,
    RESIDENT_STOP_EBS = 1,      /* ExitBootServices */
    RESIDENT_STOP_COMMAND = 2,  /* `resident stop` (or dump/flow) in the same boot */
    RESIDENT_STOP_UNIT = 3,     /* the unit stopped: TraceStop or stop-when-full */
    RESIDENT_STOP_RETURNED = 4, /* the traced image returned from its entry point */
    RESIDENT_STOP_HANG = 5,     /* a hang report (--hang-timeout) without --hang-repeat */
    RESIDENT_STOP_BOUND = 6,    /* --max-insns steps were traced */
};

enum resident_unit {
    RESIDENT_UNIT_HW = 0,
    RESIDENT_UNIT_SOFT = 1
};

#define RESIDENT_IMAGES_MAX    256
#define RESIDENT_NAME_BYTES    64
#define RESIDENT_TEXT_BYTES    160
#define RESIDENT_CV_PATH_BYTES 128

/* One image in memory while the tracer was resident (sideband). The first
 * notification after the driver registered reports every image already
 * loaded (EDK2 walks the protocol's whole list for a new registration),
 * then each new one as LoadImage finishes. */
struct resident_image {
    uint64_t base, size, entry;
    char name[RESIDENT_NAME_BYTES]; /* last file-path node, ASCII */
    /* version 2: its CodeView record (efi/capture/image_watch.h's
     * efi_image_desc), which the host's --symbols matches to the debug file */
    uint32_t cv, cv_age;
    uint8_t cv_guid[16];
    char cv_path[RESIDENT_CV_PATH_BYTES];
};

struct resident_header;
/* Stops tracing now (for `resident stop` later in the same boot). A
 * function of the resident driver, called across images: ms_abi like
 * every UEFI interface. */
typedef void(__attribute__((ms_abi)) * resident_stop_fn)(struct resident_header *h);

struct resident_header {
    uint64_t magic;
    uint32_t version;
    uint32_t header_bytes; /* sizeof(struct resident_header) when written */
    uint32_t unit;         /* enum resident_unit */
    uint32_t state;        /* enum resident_state */
    uint32_t stop_reason;  /* enum resident_stop_reason */
    uint32_t wrapped;      /* the ring wrapped */
    uint64_t buffer;       /* physical address of the trace buffer */
    uint64_t buffer_bytes;
    uint64_t write_pos;            /* offset of the next byte */
    uint64_t bytes;                /* bytes written (all laps) */
    uint64_t insns;                /* instructions traced (soft unit) */
    uint64_t steps;                /* single steps taken (soft unit) */
    uint64_t rtit_ctl;             /* the control word programmed (hw) */
    uint64_t filter_lo, filter_hi; /* the traced range (image filter), 0/0: none */
    uint64_t start_tsc, stop_tsc;
    uint64_t sideband; /* = &images[0]: where the sideband is */
    /* The target's pages [target.base & ~4095, + snapshot_bytes), copied
     * when tracing ends (the image is still loaded then; an application is
     * unloaded, and its pages reused, right after it returns), so that
     * decoding later in the same boot reads the code that ran. */
    uint64_t snapshot, snapshot_bytes;
    uint32_t snapshot_taken, reserved1;
    /* The capture's sideband (format/sideband.h text form: unit, CPU facts,
     * configuration, trace facts, images), written when tracing stops. */
    uint64_t sideband_text, sideband_text_cap, sideband_text_bytes;
    uint32_t image_count;    /* images recorded (at most RESIDENT_IMAGES_MAX) */
    uint32_t images_dropped; /* loaded after the table was full */
    uint32_t has_target;     /* target holds the --image match */
    uint32_t reserved0;
    resident_stop_fn stop;                  /* NULL after ExitBootServices */
    char options[RESIDENT_TEXT_BYTES];      /* the driver's words */
    char image_filter[RESIDENT_NAME_BYTES]; /* --image NAME, "" for none */
    char message[RESIDENT_TEXT_BYTES];      /* why FAILED, or a note */
    struct resident_image target;           /* the traced image (filter range, code) */
    struct resident_image images[RESIDENT_IMAGES_MAX];
    /* version 2: the hang recorder (efi/resident/recorder.h, docs/hang.md) */
    uint64_t recorder; /* physical address of the region, 0: none */
    uint64_t recorder_bytes;
    uint64_t recorder_generation;
    uint32_t hang_timeout_s; /* --hang-timeout, 0: none */
    uint32_t hang_reports;   /* hang reports sent so far */
    uint32_t ring;           /* the soft unit's buffer is a ring */
    uint32_t reserved2;
    /* --follow: the code pages the session ran, copied when it ended, as
     * a page dump sorted by address (efi/resident/touched.h): code_pages
     * pages at code_dump, their addresses at code_addr; code_dropped
     * pages did not fit. dispatched_from_fv: the DXE dispatcher loaded the
     * driver from a firmware volume (docs/early-boot.md). */
    uint64_t code_dump, code_addr;
    uint32_t code_pages, code_dropped;
    uint32_t dispatched_from_fv;
    /* the soft unit's sessions (the first --image match, then every later
     * instance of an --image name), and which rows of images[] they
     * traced (bit i of traced[i / 32]) */
    uint32_t sessions;
    uint32_t traced[RESIDENT_IMAGES_MAX / 32];
};

const char *resident_state_name(uint32_t state);
const char *resident_stop_reason_name(uint32_t reason);

#endif
