/* The sideband of one capture: everything besides the trace bytes and the
 * code that a decoder needs, or that a reader wants to name what the trace
 * shows (docs/capture-files.md). Which trace unit wrote the trace, the CPU
 * facts (errata are keyed by family/model; CPUID 15h and the nominal ratio
 * from MSR_PLATFORM_INFO turn MTC/CYC/CBR into time), the configuration
 * used (filters, buffer, ring or stop), what happened to the trace (bytes,
 * wrapped, stopped) and a fixed-capacity table of the images loaded before
 * and while tracing.
 *
 * Pure C over caller storage, no UEFI types, no allocation: the target
 * fills it (efi/capture/image_watch.c), writes it as text to the stick
 * (efi/capture/files.c); the host reads it back (host/capture.c); the unit
 * tests run this very code. */
#ifndef PTBOOT_FORMAT_SIDEBAND_H
#define PTBOOT_FORMAT_SIDEBAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_time.h"

/* First line of the text form: "ptboot-sideband 2". A new key means a
 * new version; the reader takes every version up to its own (version 1
 * has no image.debug and image.loaded lines) and refuses newer ones. */
#define SIDEBAND_MAGIC       "ptboot-sideband"
#define SIDEBAND_VERSION     2
#define SIDEBAND_VERSION_MIN 1

#define SIDEBAND_MAX_IMAGES  512
#define SIDEBAND_NAME_MAX    72  /* bytes of a name, NUL included */
#define SIDEBAND_PATH_MAX    128 /* bytes of a CodeView path, NUL included (the tail is kept) */
#define SIDEBAND_GUID_BYTES  16
#define SIDEBAND_MAX_FILTERS 4 /* IA32_RTIT_ADDR0..3 (RTIT_MAX_RANGES) */
/* Longest line the writer emits or the parser accepts. */
#define SIDEBAND_LINE_MAX 256
/* Longest text sideband_write can produce: up to three lines per image
 * (image, image.loaded, image.debug) and the fixed keys and filters. */
#define SIDEBAND_TEXT_MAX ((3u * SIDEBAND_MAX_IMAGES + 64u) * SIDEBAND_LINE_MAX)

enum sideband_unit {
    SIDEBAND_UNIT_NONE = 0, /* "none": no trace (e.g. the `images` command) */
    SIDEBAND_UNIT_HW,       /* "hw": the CPU's Intel PT */
    SIDEBAND_UNIT_SOFT,     /* "soft": the software trace unit (arch/x86/soft_unit.h) */
};

/* Filter kinds: IA32_RTIT_CTL.ADDRn_CFG encodings (SDM 33.2.7.2). */
enum sideband_filter_kind {
    SIDEBAND_FILTER_OFF = 0,
    SIDEBAND_FILTER_EN = 1,   /* "filter": trace only inside */
    SIDEBAND_FILTER_STOP = 2, /* "stop": TraceStop when reached */
};

/* struct sideband_image.flags */
enum {
    SIDEBAND_IMG_BEFORE = 1u << 0,   /* "before": already loaded when tracing began */
    SIDEBAND_IMG_WHILE = 1u << 1,    /* "while": loaded while tracing */
    SIDEBAND_IMG_UNLOADED = 1u << 2, /* "unloaded": gone when tracing ended */
    SIDEBAND_IMG_SNAPSHOT = 1u << 3, /* "snapshot": its pages are in the code snapshot */
    SIDEBAND_IMG_TARGET = 1u << 4,   /* "target": the image the capture was about */
};

/* struct sideband_image.cv: the image's CodeView debug record (Microsoft
 * PE format, "Debug Type"; format/pe_info.h reads it) */
enum sideband_cv {
    SIDEBAND_CV_NONE = 0,
    SIDEBAND_CV_RSDS, /* "rsds": PDB 7.0 record, a GUID and an age */
    SIDEBAND_CV_NB10, /* "nb10": PDB 2.0 record (EDK2's GenFw), a 32-bit signature and an age */
};

struct sideband_image {
    uint64_t base, size, entry; /* entry: absolute, 0 if unknown */
    uint32_t flags;
    char name[SIDEBAND_NAME_MAX]; /* printable ASCII, no spaces at ends */
    /* Version 2: when it was loaded (TSC, 0 if not known: images there
     * before tracing began) and what names its debug file (the host's
     * --symbols finds the file by these). */
    uint64_t load_tsc;
    uint32_t cv; /* enum sideband_cv */
    uint32_t cv_age;
    uint8_t cv_guid[SIDEBAND_GUID_BYTES]; /* RSDS: GUID as stored; NB10: signature in 0..3 */
    char cv_path[SIDEBAND_PATH_MAX];      /* printable ASCII, no blanks at ends */
};

struct sideband_filter {
    uint32_t kind; /* enum sideband_filter_kind */
    uint64_t a, b; /* IA32_RTIT_ADDRn_A/B: inclusive */
};

struct sideband_cpu {
    char vendor[13];
    uint32_t family, model, stepping;               /* display values */
    uint32_t cpuid15_eax, cpuid15_ebx, cpuid15_ecx; /* 0: leaf absent */
    uint32_t cpuid14_eax, cpuid14_ebx, cpuid14_ecx; /* leaf 14h.0 */
    bool nom_freq_valid;
    uint32_t nom_freq; /* MSR_PLATFORM_INFO[15:8]: ptxed's --nom-freq */
};

struct sideband_config {
    uint64_t ctl;       /* IA32_RTIT_CTL as programmed (TraceEn set) */
    bool tsc, mtc, cyc; /* TSCEn, MTCEn, CYCEn */
    uint32_t mtc_freq;  /* CTL.MTCFreq encoding: ptxed's --mtc-freq */
    uint32_t cyc_thresh, psb_freq;
    uint64_t buffer_bytes; /* output buffer size */
    bool ring;             /* 1: ring (wraps), 0: stop when full */
    uint32_t nfilter;
    struct sideband_filter filter[SIDEBAND_MAX_FILTERS];
};

struct sideband_trace {
    uint64_t bytes;        /* bytes in trace.pt */
    bool wrapped, stopped; /* the ring wrapped; tracing stopped (full / TraceStop) */
};

struct sideband {
    enum sideband_unit unit;
    struct sideband_cpu cpu;
    struct sideband_config config;
    struct sideband_trace trace;
    uint32_t nimages;
    uint32_t images_dropped; /* images seen with the table full */
    struct sideband_image images[SIDEBAND_MAX_IMAGES];
};

void sideband_init(struct sideband *sb);

/* Records an image; name is copied (made printable, cut to fit). Returns
 * its index, or -1 when the table is full (images_dropped counts it). If
 * an image with the same base is already there, that entry is updated
 * (an image unloaded and another loaded at the same place keeps one row). */
int sideband_add_image(struct sideband *sb, uint64_t base, uint64_t size, uint64_t entry,
                       const char *name, uint32_t flags);
/* Sets the CodeView facts of image row: guid is 16 bytes (RSDS) or 4
 * (NB10: the signature), may be NULL; path is copied as names are, its
 * tail kept when long); cv SIDEBAND_CV_NONE clears them. */
void sideband_set_debug(struct sideband *sb, int row, uint32_t cv, const uint8_t *guid,
                        uint32_t age, const char *path);
/* The image containing addr, or NULL. */
const struct sideband_image *sideband_find_image(const struct sideband *sb, uint64_t addr);

/* Writes the text form into buf (cap bytes, NUL-terminated when cap > 0).
 * Returns the length the whole text needs (without the NUL), as snprintf:
 * the output is complete only if the result < cap. */
size_t sideband_write(const struct sideband *sb, char *buf, size_t cap);

struct sideband_error {
    unsigned line; /* 1-based line of the error, 0 for the whole text */
    const char *msg;
};

/* Parses the text form (len bytes, need not be NUL-terminated). Returns 0,
 * or -1 with err filled (the line and what was wrong with it). */
int sideband_parse(struct sideband *sb, const char *text, size_t len, struct sideband_error *err);

const char *sideband_unit_name(enum sideband_unit u);
/* What a decoder needs to turn the trace's timing packets into time:
 * MTCFreq when MTC was on, the nominal ratio when known, CPUID 15h's
 * ratio (for a soft capture, the software unit's crystal clock); the rest
 * of *t is left as it was. */
void sideband_time_config(const struct sideband *sb, struct ptd_time_config *t);
/* "before,while,snapshot" into buf; returns buf. */
const char *sideband_flags_str(uint32_t flags, char *buf, size_t cap);

#endif
