/* The hang recorder's memory format (docs/hang.md): the resident tracer's
 * buffer placed where the next boot can find it after a reset, described
 * twice so that neither copy has to be trusted alone:
 *
 *   the variable PtbootRecorder (non-volatile, ptboot's vendor GUID):
 *       struct recorder_var: where the region is, how big, which unit,
 *       which generation (one more every installed boot), CRC-32;
 *   the region itself, one block of physical memory:
 *       [0, 4 KiB)   header page: struct recorder_fixed at 0 (written and
 *                    sealed once: layout, unit, generation, its own
 *                    address, CRC-32), and two struct recorder_live slots
 *                    at RECORDER_LIVE_OFF0/1 (where the unit writes now,
 *                    state, the sideband's length and CRC, the code
 *                    pages' count and CRCs), written in turn: the newest
 *                    slot whose CRC holds wins, so a reset in the middle of
 *                    an update leaves the one before intact;
 *       sideband     format/sideband.h's text form, rewritten as images
 *                    load (its length and CRC in the live slot);
 *       code.addr    one little-endian u64 page address per code page;
 *       code.dump    4 KiB pages of the traced image(s), copied as they load
 *                    (format/code_image.h's page dump: what decoding needs
 *                    once the images are gone);
 *       trace        the trace unit's output: regions of 4 KiB << code back
 *                    to back (hw: the ToPA tables in their own area).
 *
 * Nothing read back is trusted before recorder_check(): magic, version,
 * the fixed part's CRC, the address the header says it lives at (a header
 * found elsewhere, or in a copy, says where it was written), every area
 * inside the region and apart from the others, page alignment, sizes in
 * range, a live slot with a good CRC and a write position inside the trace
 * area; the sideband and the code are used only when their CRCs hold.
 * The trace bytes themselves carry no CRC (the unit writes them
 * continuously): the decoder trusts them only from a PSB on and resyncs
 * at the next one after any error.
 *
 * Fixed-width little-endian fields only (the target is x86-64 and so are
 * the hosts that read dumps of it). Pure C, no allocation, no globals:
 * the driver writes it, `recover` and the host tests read it. */
#ifndef PTBOOT_FORMAT_RECORDER_H
#define PTBOOT_FORMAT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECORDER_MAGIC        0x3144434552425450ull /* "PTBRECD1" little-endian */
#define RECORDER_VERSION      1
#define RECORDER_PAGE         4096u
#define RECORDER_HEADER_BYTES RECORDER_PAGE
#define RECORDER_LIVE_OFF0    1024u
#define RECORDER_LIVE_OFF1    2048u
/* A region larger than this is not one we wrote (1 GiB of trace is the
 * resident tracer's limit, plus code and sideband). */
#define RECORDER_MAX_REGION (2ull << 30)

#define RECORDER_VAR_NAME  "PtbootRecorder"
#define RECORDER_VAR_MAGIC 0x5241564452435450ull /* "PTCRDVAR" */

enum recorder_unit {
    RECORDER_UNIT_HW = 0,
    RECORDER_UNIT_SOFT = 1
};

/* recorder_fixed.flags */
enum {
    RECORDER_RING = 1u << 0, /* the output wraps (else stops when full) */
};

/* recorder_live.state: the resident tracer's states (efi/resident/resident.h) */
enum recorder_state {
    RECORDER_STARTING = 0,
    RECORDER_ARMED = 1,
    RECORDER_TRACING = 2,
    RECORDER_STOPPED = 3,
    RECORDER_FAILED = 4,
};

/* recorder_live.pos_source: how write_pos was learnt */
enum recorder_pos_source {
    RECORDER_POS_NONE = 0,    /* nothing written yet */
    RECORDER_POS_UNIT = 1,    /* the software unit, after every step: exact */
    RECORDER_POS_SAVED = 2,   /* hw: IA32_RTIT_OUTPUT_MASK_PTRS read by the
                                 * periodic save (bytes written since are
                                 * not counted: recovery looks past it) */
    RECORDER_POS_STOPPED = 3, /* hw: read with tracing stopped for good */
};

/* Written once by the driver and sealed (crc). */
struct recorder_fixed {
    uint64_t magic;
    uint32_t version;
    uint32_t fixed_bytes; /* sizeof(struct recorder_fixed) */
    uint64_t generation;  /* counts installed boots (the variable's) */
    uint64_t region_phys; /* where this header was written */
    uint64_t region_bytes;
    uint32_t unit;  /* enum recorder_unit */
    uint32_t flags; /* RECORDER_RING ... */
    /* areas, as offsets from the region's start (page aligned) */
    uint64_t sideband_off, sideband_cap;
    uint64_t addr_off, addr_cap; /* code.addr: 8 bytes a page */
    uint64_t code_off, code_cap; /* code.dump: 4 KiB pages */
    uint64_t trace_off, trace_bytes;
    uint64_t table_off, table_bytes; /* hw: the ToPA tables (0/0: none) */
    /* the output layout: regions of 4 KiB << region_code back to back in
     * the trace area (one region for the soft unit) */
    uint32_t regions, region_code;
    uint64_t rtit_ctl;       /* the control word programmed (hw) */
    uint32_t psb_freq;       /* CTL.PSBFreq: a PSB every 2 KiB << this */
    uint32_t hang_timeout_s; /* --hang-timeout, 0: none */
    uint64_t start_tsc;
    char options[160]; /* the driver's words */
    char image[64];    /* --image NAME */
    uint32_t reserved;
    uint32_t crc; /* CRC-32 of this struct with crc = 0 */
};

/* One of the two live slots. */
struct recorder_live {
    uint64_t seq;         /* 0: never written; newer slots count up */
    uint32_t state;       /* enum recorder_state */
    uint32_t stop_reason; /* efi/resident/resident.h's, RECORDER_STOP_HANG */
    uint64_t write_pos;   /* offset of the next byte in the trace area */
    uint64_t bytes;       /* bytes written, all laps (soft unit) */
    uint32_t wrapped;     /* the output wrapped at least once */
    uint32_t linear;      /* the area holds [0, write_pos) oldest first
                             * (after an in-place report) */
    uint32_t pos_source;  /* enum recorder_pos_source */
    uint32_t hang_reports;
    uint64_t insns, steps;   /* soft unit counters */
    uint64_t save_tsc;       /* TSC at this update */
    uint64_t saves;          /* updates so far */
    uint64_t sideband_bytes; /* text in the sideband area */
    uint32_t sideband_crc;
    uint32_t code_pages;         /* pages in code.dump / addresses in code.addr */
    uint32_t code_crc, addr_crc; /* of code_pages pages / addresses */
    uint32_t reserved;
    uint32_t crc; /* CRC-32 of this struct with crc = 0 */
};

/* The stop reason a hang report leaves (the resident header's reasons are
 * 0..4). */
#define RECORDER_STOP_HANG 5

/* The non-volatile variable. */
struct recorder_var {
    uint64_t magic; /* RECORDER_VAR_MAGIC */
    uint32_t version, unit;
    uint64_t generation;
    uint64_t region_phys, region_bytes;
    uint32_t reserved;
    uint32_t crc;
};

/* Sizes the driver asks for; recorder_plan() lays the region out. */
struct recorder_request {
    uint64_t sideband_cap; /* bytes (rounded up to pages) */
    uint64_t code_pages;   /* 0: no code area */
    uint64_t trace_bytes;  /* the output area */
    uint64_t table_bytes;  /* hw ToPA tables, 0 for soft */
    uint64_t trace_align;  /* alignment of the trace area (hw: the
                              * region size, SDM 36.2.6.2), 0/1: a page */
};

/* Fills f's layout fields for a region at phys (header first, then
 * sideband, code.addr, code.dump, tables, trace). Returns the region's
 * size, or 0 when the request does not fit RECORDER_MAX_REGION. */
uint64_t recorder_plan(struct recorder_fixed *f, uint64_t phys, const struct recorder_request *r);
/* Seals the fixed part (magic, version, sizes and crc). */
void recorder_seal(struct recorder_fixed *f);

/* The writer's state: which slot comes next. */
struct recorder_writer {
    uint8_t *region; /* the region's first byte */
    uint64_t seq;    /* of the slot written last */
};
/* Writes the fixed part at region[0] and clears both slots. */
void recorder_writer_init(struct recorder_writer *w, uint8_t *region,
                          const struct recorder_fixed *f);
/* Writes live into the older slot with the next sequence number and its
 * CRC (the other slot keeps the previous update). */
void recorder_write_live(struct recorder_writer *w, const struct recorder_live *live);

/* What recorder_check() found. */
enum recorder_result {
    RECORDER_OK = 0,
    RECORDER_E_NONE = -1,    /* no magic: no recorder here */
    RECORDER_E_VERSION = -2, /* another version of the format */
    RECORDER_E_CRC = -3,     /* the fixed part's CRC does not hold */
    RECORDER_E_PLACE = -4,   /* it says it was written elsewhere */
    RECORDER_E_LAYOUT = -5,  /* areas outside the region, overlapping,
                                * misaligned, or sizes out of range */
    RECORDER_E_LIVE = -6,    /* no live slot with a good CRC */
    RECORDER_E_POS = -7,     /* the write position or counts make no sense */
    RECORDER_E_SHORT = -8,   /* fewer bytes readable than the region */
};

struct recorder_view {
    struct recorder_fixed fixed; /* copies: checked, not re-read */
    struct recorder_live live;   /* the newest good slot */
    unsigned slot;               /* which one (0 or 1) */
    bool other_slot_ok;          /* the older slot's CRC held too */
};

/* Checks the region at mem (avail bytes readable there) that should have
 * been written at phys. Returns RECORDER_OK with v filled, or an enum
 * recorder_result. Reads only inside [mem, mem + avail). */
int recorder_check(const uint8_t *mem, uint64_t avail, uint64_t phys, struct recorder_view *v);
/* The sideband text, if its length and CRC hold; NULL otherwise. */
const char *recorder_sideband(const uint8_t *mem, const struct recorder_view *v, size_t *len);
/* The code pages and their addresses, if their CRCs hold and every address
 * is page aligned; false otherwise (*pages 0). */
bool recorder_code(const uint8_t *mem, const struct recorder_view *v, const uint8_t **dump,
                   const uint8_t **addr, size_t *pages);
const char *recorder_strerror(int err);

/* The variable: encode (computes the CRC) and decode (checks magic,
 * version, CRC, page alignment and size; 0 or -1). */
void recorder_var_encode(struct recorder_var *out, uint32_t unit, uint64_t generation,
                         uint64_t phys, uint64_t bytes);
int recorder_var_decode(const void *data, size_t len, struct recorder_var *out);

const char *recorder_state_name(uint32_t state);
const char *recorder_pos_source_name(uint32_t source);

#endif
