#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_frame.h"
#include "efi/resident_report.h"

#define PAGE_BYTES 4096ull
/* Code snapshot of the traced image: at most this many pages (4 MiB). */
#define SNAPSHOT_MAX_PAGES 1024

static char line[PTD_FRAME_LINE_MAX * 4];

static void say(resident_sink out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(resident_sink out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        out(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void resident_trace_bytes(const struct resident_header *h, const uint8_t **data, size_t *len)
{
    /* The driver's unit stops when full (never wraps): the trace is the
     * buffer's start up to the write position. */
    *data = (const uint8_t *)(uintptr_t)h->buffer;
    *len = (size_t)(h->write_pos <= h->buffer_bytes ? h->write_pos : h->buffer_bytes);
}

static const char *traced_name(const struct resident_header *h)
{
    if (h->has_target)
        return h->target.name;
    return h->image_filter[0] ? h->image_filter : "-";
}

void resident_report_status(const struct resident_header *h, resident_sink out)
{
    say(out,
        "ptboot: resident status state=%s reason=%s unit=%s image=%s buffer=0x%llx size=%llu "
        "bytes=%llu steps=%llu insns=%llu images=%u\n",
        resident_state_name(h->state), resident_stop_reason_name(h->stop_reason),
        h->unit == RESIDENT_UNIT_SOFT ? "soft" : "hw", traced_name(h),
        (unsigned long long)h->buffer, (unsigned long long)h->buffer_bytes,
        (unsigned long long)h->bytes, (unsigned long long)h->steps,
        (unsigned long long)h->insns, h->image_count);
    if (h->state == RESIDENT_FAILED)
        say(out, "ptboot: resident failed: %s\n", h->message);
}

/* Code reads only inside the images the driver recorded. */
static int read_images(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct resident_header *h = ctx;
    if (h->snapshot_taken) {
        /* the target's code as it was when tracing ended */
        uint64_t lo = h->target.base & ~(PAGE_BYTES - 1);
        if (ip >= lo && ip - lo < h->snapshot_bytes) {
            uint64_t left = lo + h->snapshot_bytes - ip;
            size_t take = size < left ? size : (size_t)left;
            memcpy(buf, (const uint8_t *)(uintptr_t)h->snapshot + (ip - lo), take);
            return (int)take;
        }
    }
    uint32_t n = h->image_count < RESIDENT_IMAGES_MAX ? h->image_count : RESIDENT_IMAGES_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const struct resident_image *im = &h->images[i];
        if (ip >= im->base && ip - im->base < im->size) {
            uint64_t left = im->base + im->size - ip;
            size_t take = size < left ? size : (size_t)left;
            memcpy(buf, (const void *)(uintptr_t)ip, take);
            return (int)take;
        }
    }
    return 0;
}

long resident_report_flow(const struct resident_header *h, resident_sink out)
{
    static struct ptd_flow flow;
    static struct ptd_flow_lines lines;
    static struct ptd_flow_config cfg;
    static char text[PTD_FMT_FLOW_LINE_MAX];
    const uint8_t *data;
    size_t len;
    resident_trace_bytes(h, &data, &len);
    memset(&cfg, 0, sizeof cfg);
    cfg.trace = data;
    cfg.size = len;
    cfg.read = read_images;
    cfg.ctx = (void *)h;
    if (h->filter_hi) {
        cfg.filter_lo[0] = h->filter_lo;
        cfg.filter_hi[0] = h->filter_hi;
        cfg.nfilter = 1;
    }
    say(out, "ptboot: flow begin trace=resident bytes=%llu pages=0 live=1\n",
        (unsigned long long)len);
    ptd_flow_init(&flow, &cfg);
    ptd_flow_lines_init(&lines, &flow, 0);
    enum ptd_flow_line_kind kind;
    int n;
    while ((n = ptd_flow_lines_next(&lines, text, sizeof text, &kind)) > 0) {
        out(text, (size_t)n);
        out("\n", 1);
    }
    say(out, "ptboot: flow end insns=%llu errors=%llu\n", (unsigned long long)lines.insns,
        (unsigned long long)lines.errors);
    return n < 0 ? -1 : (long)lines.errors;
}

static void frame_file(resident_sink out, uint32_t id, const char *name, const void *data,
                       uint64_t size, enum ptd_frame_kind kind)
{
    static struct ptd_frame_enc enc;
    if (ptd_frame_enc_init(&enc, id, name, data, size, kind, 0)) {
        say(out, "ptboot: error: serial-dump: bad file name '%s'\n", name);
        return;
    }
    size_t n;
    while ((n = ptd_frame_enc_lines(&enc, line, sizeof line)) > 0)
        out(line, n);
}

/* The serial dump: the trace, and the traced image's code as a page dump
 * (PREFIX.dump: 4 KiB pages, PREFIX.addr: one little-endian u64 address
 * per page, the format `ptboot flow --pages` reads). */
static unsigned dump_files(const struct resident_header *h, resident_sink out)
{
    static uint64_t addrs[SNAPSHOT_MAX_PAGES];
    static const char dump_name[] = "code.dump", addr_name[] = "code.addr";
    const uint8_t *data;
    size_t len;
    resident_trace_bytes(h, &data, &len);
    unsigned files = 1;
    const struct resident_image *im = NULL;
    if (h->has_target) {
        im = &h->target;
        files += 2;
    }
    if (h->sideband_text_bytes)
        files++;
    say(out, "ptboot: serial-dump begin files=%u\n", files);
    frame_file(out, 1, "trace.pt", data, len, PTD_FRAME_KIND_PT);
    if (im) {
        uint64_t base = im->base & ~(PAGE_BYTES - 1);
        uint64_t pages = (im->base + im->size - base + PAGE_BYTES - 1) / PAGE_BYTES;
        if (pages > SNAPSHOT_MAX_PAGES)
            pages = SNAPSHOT_MAX_PAGES;
        for (uint64_t i = 0; i < pages; i++)
            addrs[i] = base + i * PAGE_BYTES; /* x86: already little-endian */
        const void *code = (const void *)(uintptr_t)base;
        if (h->snapshot_taken) {
            code = (const void *)(uintptr_t)h->snapshot;
            if (pages > h->snapshot_bytes / PAGE_BYTES)
                pages = h->snapshot_bytes / PAGE_BYTES;
        }
        frame_file(out, 2, dump_name, code, pages * PAGE_BYTES, PTD_FRAME_KIND_RAW);
        frame_file(out, 3, addr_name, addrs, pages * sizeof addrs[0], PTD_FRAME_KIND_RAW);
    }
    if (h->sideband_text_bytes)
        frame_file(out, 4, "sideband.txt", (const void *)(uintptr_t)h->sideband_text,
                   h->sideband_text_bytes, PTD_FRAME_KIND_RAW);
    say(out, "ptboot: serial-dump end files=%u\n", files);
    return files;
}

void resident_report(const struct resident_header *h, resident_sink out)
{
    resident_report_status(h, out);
    uint32_t n = h->image_count < RESIDENT_IMAGES_MAX ? h->image_count : RESIDENT_IMAGES_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const struct resident_image *im = &h->images[i];
        say(out, "ptboot: resident image %u base=0x%llx size=0x%llx entry=0x%llx name=%s%s\n", i,
            (unsigned long long)im->base, (unsigned long long)im->size,
            (unsigned long long)im->entry, im->name,
            h->has_target && im->base == h->target.base ? " traced" : "");
    }
    long errors = 0;
    /* The soft unit's trace is one image's run: decode it here. A hardware
     * trace of the whole boot is megabytes: the host decodes the dump. */
    if (h->has_target && h->unit == RESIDENT_UNIT_SOFT)
        errors = resident_report_flow(h, out);
    dump_files(h, out);
    say(out, "ptboot: trace unit=%s cpu=0 bytes=%llu wrapped=%u stopped=%u insns=%llu errors=%ld "
             "images=%u\n",
        h->unit == RESIDENT_UNIT_SOFT ? "soft" : "hw", (unsigned long long)h->bytes,
        h->wrapped ? 1u : 0u, h->state == RESIDENT_STOPPED ? 1u : 0u,
        (unsigned long long)h->insns, errors < 0 ? 1 : errors, h->image_count);
}

const char *resident_state_name(uint32_t state)
{
    switch (state) {
    case RESIDENT_STARTING: return "starting";
    case RESIDENT_ARMED: return "armed";
    case RESIDENT_TRACING: return "tracing";
    case RESIDENT_STOPPED: return "stopped";
    case RESIDENT_FAILED: return "failed";
    }
    return "unknown";
}

const char *resident_stop_reason_name(uint32_t reason)
{
    switch (reason) {
    case RESIDENT_STOP_NONE: return "none";
    case RESIDENT_STOP_EBS: return "exit-boot-services";
    case RESIDENT_STOP_COMMAND: return "command";
    case RESIDENT_STOP_UNIT: return "unit";
    case RESIDENT_STOP_RETURNED: return "returned";
    }
    return "unknown";
}
