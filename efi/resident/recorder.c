#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_frame.h"
#include "efi/platform/memmap.h"
#include "efi/platform/nvvar.h"
#include "efi/platform/uart.h"
#include "efi/resident/hw.h"
#include "efi/resident/recorder.h"
#include "efi/resident/resident.h"
#include "efi/resident/words.h"
#include "format/sideband.h"

#define PAGE_BYTES 4096ull
#define MAP_MAX    512
/* The probe's word, written and read back at each page outside the map. */
#define PROBE_WORD 0x5052424f52505450ull

static struct efi_mem_desc map[MAP_MAX];

/* How [base, base + bytes) lies against the map: 1 all free memory,
 * 0 wholly outside the map, -1 anything else (the firmware owns some). */
static int relation(uint64_t base, uint64_t bytes, size_t n)
{
    uint64_t covered = 0;
    bool touched = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t lo = map[i].base, hi = map[i].base + map[i].pages * PAGE_BYTES;
        if (hi <= base || lo >= base + bytes)
            continue;
        touched = true;
        if (map[i].type != EfiConventionalMemory)
            return -1;
        uint64_t a = lo > base ? lo : base, b = hi < base + bytes ? hi : base + bytes;
        covered += b - a;
    }
    if (!touched)
        return 0;
    return covered == bytes ? 1 : -1;
}

/* Memory outside the map answers like RAM: every page keeps what is
 * written to it. */
static bool probe(uint64_t base, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes; off += PAGE_BYTES) {
        volatile uint64_t *p = (volatile uint64_t *)(UINTN)(base + off);
        *p = PROBE_WORD ^ off;
        if (*p != (PROBE_WORD ^ off))
            return false;
        *p = 0;
    }
    return true;
}

static int take(struct resident_recorder *r, uint64_t base, const struct recorder_request *req,
                size_t n, bool fixed_place, char *err, size_t err_len)
{
    memset(&r->fixed, 0, sizeof r->fixed);
    uint64_t bytes = recorder_plan(&r->fixed, base, req);
    if (!bytes) {
        snprintf(err, err_len, "recorder: the region would exceed %llu bytes",
                 (unsigned long long)RECORDER_MAX_REGION);
        return -1;
    }
    int rel = relation(base, bytes, n);
    if (rel == 1) {
        EFI_PHYSICAL_ADDRESS a = base;
        if (EFI_ERROR(BS->AllocatePages(AllocateAddress, EfiReservedMemoryType, bytes / PAGE_BYTES,
                                        &a))) {
            snprintf(err, err_len, "recorder: AllocatePages at 0x%llx failed",
                     (unsigned long long)base);
            return -1;
        }
        r->outside_map = false;
    } else if (rel == 0 && fixed_place) {
        if (!probe(base, bytes)) {
            snprintf(err, err_len,
                     "recorder: 0x%llx+0x%llx is outside the memory map and does not hold "
                     "what is written (not RAM)",
                     (unsigned long long)base, (unsigned long long)bytes);
            return -1;
        }
        r->outside_map = true;
    } else {
        snprintf(err, err_len, "recorder: 0x%llx+0x%llx is not free (the firmware uses part of it)",
                 (unsigned long long)base, (unsigned long long)bytes);
        return -1;
    }
    r->phys = base;
    r->bytes = bytes;
    r->mem = (uint8_t *)(UINTN)base;
    r->on = true;
    return 0;
}

int resident_recorder_place(struct resident_recorder *r, const struct recorder_request *req,
                            bool at_given, uint64_t at, char *err, size_t err_len)
{
    size_t n;
    r->on = false;
    if (EFI_ERROR(efi_memmap_get(map, MAP_MAX, &n))) {
        snprintf(err, err_len, "recorder: no memory map");
        return -1;
    }
    if (at_given) {
        if (at % PAGE_BYTES) {
            snprintf(err, err_len, "recorder: --recorder-at 0x%llx is not page aligned",
                     (unsigned long long)at);
            return -1;
        }
        return take(r, at, req, n, true, err, err_len);
    }
    /* the lowest free range at or above RESIDENT_RECORDER_LOW that holds it */
    uint64_t best = 0;
    for (size_t i = 0; i < n; i++) {
        if (map[i].type != EfiConventionalMemory)
            continue;
        uint64_t lo = map[i].base < RESIDENT_RECORDER_LOW ? RESIDENT_RECORDER_LOW : map[i].base;
        uint64_t hi = map[i].base + map[i].pages * PAGE_BYTES;
        struct recorder_fixed f;
        memset(&f, 0, sizeof f);
        uint64_t bytes = lo < hi ? recorder_plan(&f, lo, req) : 0;
        if (bytes && lo + bytes <= hi && (!best || lo < best))
            best = lo;
    }
    if (!best) {
        snprintf(err, err_len, "recorder: no free range above 0x%llx holds it",
                 (unsigned long long)RESIDENT_RECORDER_LOW);
        return -1;
    }
    return take(r, best, req, n, false, err, err_len);
}

int resident_recorder_begin(struct resident_recorder *r, char *err, size_t err_len)
{
    /* the generation after the last one written (any boot's) */
    struct recorder_var old;
    uint8_t buf[sizeof old];
    size_t len;
    r->generation = 1;
    if (!EFI_ERROR(efi_nvvar_get(RECORDER_VAR_NAME, buf, sizeof buf, &len)) &&
        !recorder_var_decode(buf, len, &old))
        r->generation = old.generation + 1;
    r->fixed.generation = r->generation;
    recorder_seal(&r->fixed);
    recorder_writer_init(&r->w, r->mem, &r->fixed);
    memset(&r->live, 0, sizeof r->live);
    resident_recorder_update(r);
    struct recorder_var v;
    recorder_var_encode(&v, r->fixed.unit, r->generation, r->phys, r->bytes);
    EFI_STATUS s = efi_nvvar_set(RECORDER_VAR_NAME, &v, sizeof v);
    r->variable_pending = EFI_ERROR(s);
    if (EFI_ERROR(s)) {
        snprintf(err, err_len,
                 "recorder: SetVariable %s failed (status 0x%llx): the next boot will not find it",
                 RECORDER_VAR_NAME, (unsigned long long)s);
        return -1;
    }
    return 0;
}

int resident_recorder_begin_variable(struct resident_recorder *r, char *err, size_t err_len)
{
    struct recorder_var old;
    uint8_t buf[sizeof old];
    size_t len;
    if (!EFI_ERROR(efi_nvvar_get(RECORDER_VAR_NAME, buf, sizeof buf, &len)) &&
        !recorder_var_decode(buf, len, &old) && old.generation + 1 != r->generation) {
        uint64_t seq = r->w.seq;
        r->generation = old.generation + 1;
        r->fixed.generation = r->generation;
        recorder_seal(&r->fixed);
        recorder_writer_init(&r->w, r->mem, &r->fixed);
        r->w.seq = seq;
        resident_recorder_update(r);
    }
    struct recorder_var v;
    recorder_var_encode(&v, r->fixed.unit, r->generation, r->phys, r->bytes);
    EFI_STATUS s = efi_nvvar_set(RECORDER_VAR_NAME, &v, sizeof v);
    if (EFI_ERROR(s)) {
        snprintf(err, err_len,
                 "recorder: SetVariable %s failed again (status 0x%llx): the next boot will not "
                 "find it",
                 RECORDER_VAR_NAME, (unsigned long long)s);
        return -1;
    }
    r->variable_pending = false;
    return 0;
}

void resident_recorder_update(struct resident_recorder *r)
{
    if (!r->on)
        return;
    r->live.saves++;
    recorder_write_live(&r->w, &r->live);
}

void resident_recorder_live(struct resident_recorder *r, const struct resident_header *h,
                            uint32_t source, bool linear)
{
    if (!r->on)
        return;
    r->live.state = h->state;
    r->live.stop_reason = h->stop_reason;
    r->live.write_pos = h->write_pos;
    r->live.bytes = h->bytes;
    r->live.wrapped = h->wrapped;
    r->live.linear = linear;
    r->live.insns = h->insns;
    r->live.steps = h->steps;
    r->live.pos_source = source;
    r->live.hang_reports = h->hang_reports;
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    r->live.save_tsc = ((uint64_t)hi << 32) | lo;
    resident_recorder_update(r);
}

void resident_recorder_sideband(struct resident_recorder *r, size_t len)
{
    if (!r->on)
        return;
    if (len > r->fixed.sideband_cap)
        len = 0;
    r->live.sideband_bytes = len;
    r->live.sideband_crc = len ? ptd_crc32(0, r->mem + r->fixed.sideband_off, len) : 0;
    resident_recorder_update(r);
}

void resident_recorder_code_changed(struct resident_recorder *r)
{
    if (!r->on)
        return;
    r->live.code_pages = (uint32_t)r->code_pages;
    r->live.code_crc =
        ptd_crc32(0, r->mem + r->fixed.code_off, (size_t)(r->code_pages * PAGE_BYTES));
    r->live.addr_crc = ptd_crc32(0, r->mem + r->fixed.addr_off, (size_t)(r->code_pages * 8));
    resident_recorder_update(r);
}

uint64_t resident_recorder_add_code(struct resident_recorder *r, const void *src, uint64_t base,
                                    uint64_t pages)
{
    if (!r->on)
        return 0;
    uint64_t room = r->fixed.code_cap / PAGE_BYTES - r->code_pages;
    if (pages > room)
        pages = room;
    uint8_t *dump = r->mem + r->fixed.code_off + r->code_pages * PAGE_BYTES;
    uint8_t *addr = r->mem + r->fixed.addr_off + r->code_pages * 8;
    memcpy(dump, src, (size_t)(pages * PAGE_BYTES));
    for (uint64_t i = 0; i < pages; i++) {
        uint64_t a = base + i * PAGE_BYTES;
        memcpy(addr + i * 8, &a, 8); /* little-endian, as code.addr */
    }
    r->code_pages += pages;
    resident_recorder_code_changed(r);
    return pages;
}

/* ---- the driver's recorder ------------------------------------------------ */

#define SIDEBAND_TEXT_BYTES ((uint64_t)SIDEBAND_MAX_IMAGES * SIDEBAND_LINE_MAX)

int resident_recorder_open(struct resident_recorder *r, struct resident_header *h, bool with_text,
                           const struct resident_words *w, uint64_t trace_bytes, uint64_t align,
                           char *err, size_t err_len)
{
    struct recorder_request req = {
        .sideband_cap = SIDEBAND_TEXT_BYTES,
        .code_pages = w->recorder_code / PAGE_BYTES,
        .trace_bytes = trace_bytes,
        .trace_align = align,
    };
    if (resident_recorder_place(r, &req, w->recorder_at_given, w->recorder_at, err, err_len))
        return -1;
    if (with_text) {
        h->sideband_text = r->phys + r->fixed.sideband_off;
        h->sideband_text_cap = r->fixed.sideband_cap;
    }
    return 0;
}

/* The fixed part's words, image and timeout (both units), sealed. */
static void begin_common(struct resident_recorder *r, struct resident_header *h,
                         const struct resident_words *w)
{
    struct recorder_fixed *f = &r->fixed;
    snprintf(f->options, sizeof f->options, "%s", h->options);
    snprintf(f->image, sizeof f->image, "%s", h->image_filter);
    f->hang_timeout_s = w->hang_timeout_s;
    char err[160];
    if (resident_recorder_begin(r, err, sizeof err))
        efi_uart_printf("ptboot: resident warning: %s\n", err);
    h->recorder = r->phys;
    h->recorder_bytes = r->bytes;
    h->recorder_generation = r->generation;
}

void resident_recorder_begin_soft(struct resident_recorder *r, struct resident_header *h,
                                  const struct resident_words *w)
{
    struct recorder_fixed *f = &r->fixed;
    f->unit = RECORDER_UNIT_SOFT;
    f->flags = w->ring ? RECORDER_RING : 0;
    f->regions = 1;
    f->region_code = (uint32_t)__builtin_ctzll(h->buffer_bytes / PAGE_BYTES);
    f->psb_freq = 0; /* the soft unit's PSBFreq: a PSB every 2 KiB */
    /* the output starts zeroed (whatever the memory held before) */
    memset(r->mem + f->trace_off, 0, (size_t)f->trace_bytes);
    begin_common(r, h, w);
}

void resident_recorder_begin_hw(struct resident_recorder *r, struct resident_header *h,
                                const struct resident_words *w, const struct resident_hw_layout *l)
{
    struct recorder_fixed *f = &r->fixed;
    f->unit = RECORDER_UNIT_HW;
    f->flags = RECORDER_RING;
    f->trace_off = l->buffer - r->phys;
    f->trace_bytes = l->buffer_bytes;
    f->table_off = l->tables ? l->tables - r->phys : 0;
    f->table_bytes = l->tables ? (l->table_bytes + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1) : 0;
    f->regions = l->regions;
    f->region_code = l->region_code;
    f->psb_freq = l->psb_freq;
    f->rtit_ctl = l->ctl;
    f->start_tsc = h->start_tsc;
    /* the output was zeroed before the unit started (resident_hw_start):
     * it is the CPU's now */
    begin_common(r, h, w);
}
