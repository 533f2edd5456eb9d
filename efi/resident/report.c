#include <stdbool.h>
#include <string.h>

#include "arch/x86/soft_unit.h"
#include "efi/resident/report.h"

#define PAGE_BYTES 4096ull

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
    ebs_report_say(
        out,
        "ptboot: resident status state=%s reason=%s unit=%s image=%s buffer=0x%llx size=%llu "
        "bytes=%llu steps=%llu insns=%llu images=%u\n",
        resident_state_name(h->state), resident_stop_reason_name(h->stop_reason),
        h->unit == RESIDENT_UNIT_SOFT ? "soft" : "hw", traced_name(h),
        (unsigned long long)h->buffer, (unsigned long long)h->buffer_bytes,
        (unsigned long long)h->bytes, (unsigned long long)h->steps, (unsigned long long)h->insns,
        h->image_count);
    if (h->state == RESIDENT_FAILED)
        ebs_report_say(out, "ptboot: resident failed: %s\n", h->message);
}

/* Code reads only inside the images the driver recorded. */
/* The --follow session's page dump (sorted: efi/resident/touched.h). */
static const uint8_t *dumped_page(const struct resident_header *h, uint64_t a)
{
    const uint64_t *addr = (const uint64_t *)(uintptr_t)h->code_addr;
    uint64_t page = a & ~(PAGE_BYTES - 1);
    uint32_t lo = 0, hi = h->code_pages;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (addr[mid] < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == h->code_pages || addr[lo] != page)
        return NULL;
    return (const uint8_t *)(uintptr_t)h->code_dump + (uint64_t)lo * PAGE_BYTES;
}

static int read_images(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct resident_header *h = ctx;
    if (h->code_pages) {
        /* the code as it ran, page by page (an instruction may cross) */
        size_t done = 0;
        while (done < size) {
            const uint8_t *p = dumped_page(h, ip + done);
            if (!p)
                break;
            uint64_t in = (ip + done) & (PAGE_BYTES - 1);
            size_t take = size - done < PAGE_BYTES - in ? size - done : (size_t)(PAGE_BYTES - in);
            memcpy(buf + done, p + in, take);
            done += take;
        }
        if (done)
            return (int)done;
    }
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

/* The shared report's view of the header (efi/capture/ebs_report.h): the trace,
 * the flow read through read_images, the target's code (its snapshot, or
 * the live image) as the code dump, the sideband text, the trace line. */
static void report_of(const struct resident_header *h, struct ebs_report *r)
{
    memset(r, 0, sizeof *r);
    r->unit = h->unit == RESIDENT_UNIT_SOFT ? "soft" : "hw";
    r->trace_name = "resident";
    resident_trace_bytes(h, &r->trace, &r->trace_bytes);
    r->read = read_images;
    r->ctx = (void *)h;
    if (h->filter_hi) {
        r->filter_lo[0] = h->filter_lo;
        r->filter_hi[0] = h->filter_hi;
        r->nfilter = 1;
    }
    r->live = true;
    /* The soft unit's trace is one image's run: decode it here. A hardware
     * trace of the whole boot is megabytes: the host decodes the dump. */
    r->decode = h->has_target && h->unit == RESIDENT_UNIT_SOFT;
    r->files = true;
    if (h->has_target) {
        const struct resident_image *im = &h->target;
        uint64_t base = im->base & ~(PAGE_BYTES - 1);
        uint64_t pages = (im->base + im->size - base + PAGE_BYTES - 1) / PAGE_BYTES;
        if (pages > EBS_REPORT_CODE_PAGES_MAX)
            pages = EBS_REPORT_CODE_PAGES_MAX;
        r->code = (const void *)(uintptr_t)base;
        if (h->snapshot_taken) {
            r->code = (const void *)(uintptr_t)h->snapshot;
            if (pages > h->snapshot_bytes / PAGE_BYTES)
                pages = h->snapshot_bytes / PAGE_BYTES;
        }
        r->code_base = base;
        r->code_pages = (size_t)pages;
    }
    if (h->code_pages) {
        /* --follow: every page the session ran, not only the target's */
        r->code = (const void *)(uintptr_t)h->code_dump;
        r->code_addr = (const uint64_t *)(uintptr_t)h->code_addr;
        r->code_pages = h->code_pages;
    }
    r->sideband = (const char *)(uintptr_t)h->sideband_text;
    r->sideband_bytes = (size_t)h->sideband_text_bytes;
    r->bytes = h->bytes;
    r->insns = h->insns;
    r->wrapped = h->wrapped;
    r->stopped = h->state == RESIDENT_STOPPED;
    r->images = h->image_count;
    /* the soft unit's MTCs count its own crystal clock (soft_unit.h) */
    static struct ptd_time_config tcfg;
    memset(&tcfg, 0, sizeof tcfg);
    if (h->unit == RESIDENT_UNIT_SOFT) {
        soft_unit_time_config(h->rtit_ctl, &tcfg);
        r->time = &tcfg;
    }
}

long resident_report_flow(const struct resident_header *h, resident_sink out)
{
    static struct ebs_report r;
    report_of(h, &r);
    return ebs_report_flow(&r, out, NULL);
}

void resident_report(const struct resident_header *h, resident_sink out)
{
    resident_report_summaries(h, NULL, 0, out);
}

static void report_all(const struct resident_header *h, void *arena, size_t arena_bytes,
                       resident_sink out, bool flow);

void resident_report_summaries(const struct resident_header *h, void *arena, size_t arena_bytes,
                               resident_sink out)
{
    report_all(h, arena, arena_bytes, out, true);
}

void resident_report_hang(const struct resident_header *h, void *arena, size_t arena_bytes,
                          resident_sink out)
{
    report_all(h, arena, arena_bytes, out, false);
}

static void report_all(const struct resident_header *h, void *arena, size_t arena_bytes,
                       resident_sink out, bool flow)
{
    static struct ebs_report r;
    /* the recorded images as the summaries' modules (names as in the
     * sideband text, so `ptboot summary --capture` names them alike) */
    static struct ptd_sum_module mods[RESIDENT_IMAGES_MAX];
    resident_report_status(h, out);
    uint32_t n = h->image_count < RESIDENT_IMAGES_MAX ? h->image_count : RESIDENT_IMAGES_MAX;
    for (uint32_t i = 0; i < n; i++) {
        const struct resident_image *im = &h->images[i];
        ebs_report_say(out,
                       "ptboot: resident image %u base=0x%llx size=0x%llx entry=0x%llx name=%s%s\n",
                       i, (unsigned long long)im->base, (unsigned long long)im->size,
                       (unsigned long long)im->entry, im->name,
                       (h->traced[i / 32] >> (i % 32)) & 1 ? " traced" : "");
    }
    report_of(h, &r);
    /* the soft unit traced its --image (nothing without one); the
     * hardware unit the whole boot: ebs_report bounds the work */
    if (arena && (h->unit == RESIDENT_UNIT_HW || h->has_target)) {
        /* newest first, as the driver's sideband text (an unloaded image
         * and one loaded over it: the first match is the newer) */
        size_t m = 0;
        for (uint32_t k = n; k-- > 0;) {
            const struct resident_image *im = &h->images[k];
            bool seen = false;
            for (size_t j = 0; j < m && !seen; j++)
                seen = mods[j].base == im->base;
            if (seen)
                continue;
            mods[m].base = im->base;
            mods[m].size = im->size;
            mods[m++].name = im->name;
        }
        r.sum_arena = arena;
        r.sum_arena_bytes = arena_bytes;
        r.modules = mods;
        r.nmodules = m;
    }
    if (!flow) {
        /* a hang report: the summaries carry the last branches, and the
         * tail where the code went after the last packet */
        r.decode = false;
        r.sum_tail = true;
    }
    ebs_report_write(&r, out);
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
    case RESIDENT_STOP_HANG: return "hang";
    case RESIDENT_STOP_BOUND: return "bound";
    }
    return "unknown";
}
