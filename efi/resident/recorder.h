/* The resident tracer's buffer as a hang recorder (docs/hang.md): one
 * region of physical memory in format/recorder.h's layout (header page,
 * sideband text, code pages and their addresses, the trace unit's output),
 * described by the non-volatile variable PtbootRecorder, so that the next
 * boot finds it after a reset.
 *
 * Where it goes (resident_recorder_place):
 *   --recorder-at ADDR  exactly there: either free memory in the firmware's
 *                       map (taken with AllocatePages(AllocateAddress)), or
 *                       memory wholly outside the map, which the firmware
 *                       does not manage (QEMU's pc-dimm, RAM a platform keeps
 *                       back), used after a write/read probe of each page;
 *                       memory the firmware owns is refused;
 *   default             the lowest free range at or above 16 MiB that holds
 *                       it (EDK2 allocates from the top down, so the next
 *                       boot's firmware reaches low memory last). Whether it
 *                       survives depends on the firmware: `memmap --mark`
 *                       / `--survived` measures it. Debian's OVMF fills all
 *                       free memory with 0xAF at DXE start (DEBUG_CLEAR_MEMORY),
 *                       so under QEMU only memory outside the map survives.
 * Always EfiReservedMemoryType when allocated: the trace unit may write it
 * after ExitBootServices and an OS must leave it alone.
 *
 * Updates (no boot services: they run in the #DB handler, the timer
 * events, ExitBootServices): the live slot (recorder_write_live) after
 * every step of the soft unit and every periodic save of the hardware
 * unit; the sideband text's length and CRC whenever it is rewritten; code
 * pages appended with their CRCs. */
#ifndef PTBOOT_EFI_RESIDENT_RECORDER_H
#define PTBOOT_EFI_RESIDENT_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/recorder.h"

/* Lowest address the default placement takes. */
#define RESIDENT_RECORDER_LOW (16ull << 20)

struct resident_recorder {
    bool on;
    bool outside_map; /* placed outside the firmware's memory map */
    uint64_t phys, bytes;
    uint8_t *mem; /* == phys (identity mapping) */
    uint64_t generation;
    struct recorder_fixed fixed;
    struct recorder_writer w;
    struct recorder_live live;
    uint64_t code_pages; /* pages appended so far */
    /* the variable could not be written at begin (a driver dispatched from
     * a firmware volume before the variable service): see
     * resident_recorder_begin_variable */
    bool variable_pending;
};

/* Finds a place for a region laid out by req (recorder_plan) and takes it:
 * at (when at_given) or the default. On success r->mem/phys/bytes/fixed
 * hold the layout (not yet written). Returns 0, or -1 with a message in
 * err. Boot services. */
int resident_recorder_place(struct resident_recorder *r, const struct recorder_request *req,
                            bool at_given, uint64_t at, char *err, size_t err_len);
/* Seals the fixed part (the caller filled unit, flags, output layout,
 * options...), writes the header and the first live slot (the output
 * area is left alone), and the variable with the next generation. Boot services (SetVariable). Returns 0
 * or -1 (the variable could not be written: the region works, but the next
 * boot will not find it; said in err). */
int resident_recorder_begin(struct resident_recorder *r, char *err, size_t err_len);
/* The variable after all, once the variable service is up (a driver
 * dispatched early, docs/early-boot.md): the generation after the last one
 * written (the header sealed again with it, the live slot kept), then the
 * variable. Returns 0, or -1 with a message in err. Boot services. */
int resident_recorder_begin_variable(struct resident_recorder *r, char *err, size_t err_len);
/* The live slot now (r->live filled by the caller). No boot services. */
void resident_recorder_update(struct resident_recorder *r);
/* The header's state and counters into the live slot and the slot written
 * (no boot services): source says where write_pos came from, linear that
 * the output holds [0, write_pos) oldest first (linearised after a stop). */
struct resident_header;
void resident_recorder_live(struct resident_recorder *r, const struct resident_header *h,
                            uint32_t source, bool linear);
/* The sideband area holds len bytes of text now: its length and CRC into
 * the live slot (and the slot written). */
void resident_recorder_sideband(struct resident_recorder *r, size_t len);
/* Appends the pages [base, base + pages * 4 KiB) from src to the code area
 * (as many as fit); returns how many went in. CRCs into the live slot. */
uint64_t resident_recorder_add_code(struct resident_recorder *r, const void *src, uint64_t base,
                                    uint64_t pages);
/* The code pages changed in place (a snapshot taken again): new CRCs. */
void resident_recorder_code_changed(struct resident_recorder *r);
struct resident_header;
struct resident_words;
struct resident_hw_layout;
/* The driver's recorder: placed (at w's --recorder-at, else the default)
 * for trace_bytes of output aligned to align; with_text: the header's
 * sideband text goes into it. Returns 0, or -1 with a message in err. */
int resident_recorder_open(struct resident_recorder *r, struct resident_header *h, bool with_text,
                           const struct resident_words *w, uint64_t trace_bytes, uint64_t align,
                           char *err, size_t err_len);
/* Describes the soft unit's output (one region, the buffer h names) or the
 * hardware unit's (as the capture plan placed it in the trace area: l),
 * then resident_recorder_begin; the header learns where the recorder is.
 * A variable that could not be written is said on COM1. */
void resident_recorder_begin_soft(struct resident_recorder *r, struct resident_header *h,
                                  const struct resident_words *w);
void resident_recorder_begin_hw(struct resident_recorder *r, struct resident_header *h,
                                const struct resident_words *w, const struct resident_hw_layout *l);
/* The region's area at offset off. */
static inline uint8_t *resident_recorder_at(const struct resident_recorder *r, uint64_t off)
{
    return r->mem + off;
}

#endif
