#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_frame.h"
#include "decoder/ptd_time.h"
#include "efi/capture/ebs_report.h"
#include "format/code_image.h"

#define PAGE_BYTES 4096ull

/* Static, not on the stack: the notify runs on the firmware's stack. */
static char line[PTD_FRAME_LINE_MAX * 4];
/* The decoder, for the flow and then the summary (one at a time). */
static struct ptd_flow flow;
static struct ptd_flow_config cfg;

/* The flow configuration of r over trace[from..): its code reader and
 * filter ranges. */
static void flow_start(const struct ebs_report *r, size_t from)
{
    memset(&cfg, 0, sizeof cfg);
    cfg.trace = r->trace + from;
    cfg.size = r->trace_bytes - from;
    cfg.read = r->read;
    cfg.ctx = r->ctx;
    for (unsigned i = 0; i < r->nfilter && i < EBS_REPORT_FILTERS; i++) {
        cfg.filter_lo[i] = r->filter_lo[i];
        cfg.filter_hi[i] = r->filter_hi[i];
        cfg.nfilter = (uint8_t)(i + 1);
    }
}

void ebs_report_say(ebs_report_sink out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        out(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

long ebs_report_flow(const struct ebs_report *r, ebs_report_sink out, uint64_t *insns)
{
    static struct ptd_flow_lines lines;
    static char text[PTD_FMT_FLOW_LINE_MAX];
    flow_start(r, 0);
    ebs_report_say(out, "ptboot: flow begin trace=%s bytes=%llu pages=%llu live=%u\n",
                   r->trace_name, (unsigned long long)r->trace_bytes, (unsigned long long)r->pages,
                   r->live ? 1u : 0u);
    ptd_flow_init(&flow, &cfg);
    ptd_flow_lines_init(&lines, &flow, 0);
    enum ptd_flow_line_kind kind;
    int n;
    uint64_t printed = 0;
    while ((n = ptd_flow_lines_next(&lines, text, sizeof text, &kind)) > 0) {
        /* Past the line bound the decode goes on (the counts stay whole)
         * but nothing more is printed: the files and the summary carry the
         * rest. */
        if (printed++ < EBS_REPORT_FLOW_LINES) {
            out(text, (size_t)n);
            out("\n", 1);
        }
    }
    if (printed > EBS_REPORT_FLOW_LINES)
        ebs_report_say(out, "ptboot: flow cut printed=%llu of=%llu lines\n",
                       (unsigned long long)EBS_REPORT_FLOW_LINES, (unsigned long long)printed);
    ebs_report_say(out, "ptboot: flow end insns=%llu errors=%llu\n",
                   (unsigned long long)lines.insns, (unsigned long long)lines.errors);
    if (insns)
        *insns = lines.insns;
    return n < 0 ? -1 : (long)lines.errors;
}

struct sum_sink {
    ebs_report_sink out;
};

/* ptd_sum's lines come without their newline. */
static void sum_line(void *ctx, const char *text, size_t len)
{
    const struct sum_sink *k = ctx;
    k->out(text, len);
    k->out("\n", 1);
}

long ebs_report_summary(const struct ebs_report *r, ebs_report_sink out)
{
    static struct ptd_sum sum;
    /* time from the timing packets with the ratios the caller gives (the
     * sideband's, as efi_capture_summary), else from TSC packets alone */
    static struct ptd_time_config tcfg;
    if (!r->sum_arena)
        return 0;
    struct sum_sink k = { out };
    /* the last EBS_REPORT_SUM_WINDOW bytes (ebs_report.h: a bound on the
     * notify's time); the flow syncs at the first PSB in them */
    size_t from =
        r->trace_bytes > EBS_REPORT_SUM_WINDOW ? r->trace_bytes - EBS_REPORT_SUM_WINDOW : 0;
    if (from)
        ebs_report_say(out, "ptboot: trace summary window from=%llu bytes=%llu of=%llu\n",
                       (unsigned long long)from, (unsigned long long)(r->trace_bytes - from),
                       (unsigned long long)r->trace_bytes);
    flow_start(r, from);
    memset(&tcfg, 0, sizeof tcfg);
    if (r->time)
        tcfg = *r->time;
    cfg.time = &tcfg;
    cfg.mode = 64; /* UEFI x64; MODE.Exec in PSB+ says it anyway */
    ptd_flow_init(&flow, &cfg);
    struct ptd_sum_config sc;
    memset(&sc, 0, sizeof sc);
    sc.modules = r->modules;
    sc.nmodules = r->nmodules;
    sc.arena = r->sum_arena;
    sc.arena_size = r->sum_arena_bytes;
    sc.line = sum_line;
    sc.ctx = &k;
    sc.last = r->sum_last;
    if (r->sum_tail)
        sc.flags |= PTD_SUM_F_TAIL;
    ebs_report_say(out, "ptboot: trace summary begin\n");
    ptd_sum_init(&sum, &sc);
    int more = ptd_sum_decode(&sum, &flow, EBS_REPORT_SUM_BUDGET);
    ptd_sum_print(&sum);
    const struct ptd_sum_stats *st = ptd_sum_stats(&sum);
    ebs_report_say(out, "ptboot: trace summary end lines=%llu insns=%llu errors=%llu\n",
                   (unsigned long long)st->lines, (unsigned long long)st->insns,
                   (unsigned long long)st->errors);
    if (more)
        ebs_report_say(out, "ptboot: trace summary cut budget=%llu offset=%llu\n",
                       (unsigned long long)EBS_REPORT_SUM_BUDGET,
                       (unsigned long long)(from + ptd_flow_offset(&flow)));
    return (long)st->errors;
}

static void frame_file(ebs_report_sink out, uint32_t id, const char *name, const void *data,
                       uint64_t size, enum ptd_frame_kind kind, uint32_t payload)
{
    static struct ptd_frame_enc enc;
    if (ptd_frame_enc_init(&enc, id, name, data, size, kind, payload)) {
        ebs_report_say(out, "ptboot: error: serial-dump: bad file name '%s'\n", name);
        return;
    }
    size_t n;
    while ((n = ptd_frame_enc_lines(&enc, line, sizeof line)) > 0)
        out(line, n);
}

/* The serial dump: the trace, the code as a page dump (code.dump: 4 KiB
 * pages, code.addr: one little-endian u64 address per page, the format
 * `ptboot flow --pages` reads) and the sideband text. */
static void dump_files(const struct ebs_report *r, ebs_report_sink out)
{
    static uint64_t addrs[EBS_REPORT_CODE_PAGES_MAX];
    size_t pages = r->code ? r->code_pages : 0;
    if (pages > EBS_REPORT_CODE_PAGES_MAX)
        pages = EBS_REPORT_CODE_PAGES_MAX;
    unsigned files = 1 + (pages ? 2 : 0) + (r->sideband_bytes ? 1 : 0);
    ebs_report_say(out, "ptboot: serial-dump begin files=%u\n", files);
    frame_file(out, 1, "trace.pt", r->trace, r->trace_bytes, PTD_FRAME_KIND_PT, r->payload);
    if (pages) {
        const uint64_t *a = r->code_addr;
        if (!a) {
            for (size_t i = 0; i < pages; i++)
                code_dump_set_addr(addrs, i, r->code_base + i * PAGE_BYTES);
            a = addrs;
        }
        frame_file(out, 2, "code.dump", r->code, pages * PAGE_BYTES, PTD_FRAME_KIND_RAW,
                   r->payload);
        frame_file(out, 3, "code.addr", a, pages * sizeof a[0], PTD_FRAME_KIND_RAW, r->payload);
    }
    if (r->sideband_bytes)
        frame_file(out, 4, "sideband.txt", r->sideband, r->sideband_bytes, PTD_FRAME_KIND_RAW,
                   r->payload);
    ebs_report_say(out, "ptboot: serial-dump end files=%u\n", files);
}

void ebs_report_write(const struct ebs_report *r, ebs_report_sink out)
{
    long errors = 0;
    uint64_t insns = r->insns, decoded = 0;
    if (r->decode) {
        errors = ebs_report_flow(r, out, &decoded);
        if (r->decoded_insns)
            insns = decoded;
    }
    if (r->sum_arena) {
        long e = ebs_report_summary(r, out);
        if (!r->decode)
            errors = e; /* else the flow's, as before */
    }
    if (r->files)
        dump_files(r, out);
    ebs_report_say(
        out,
        "ptboot: trace unit=%s cpu=0 bytes=%llu wrapped=%u stopped=%u insns=%llu errors=%ld "
        "images=%u\n",
        r->unit, (unsigned long long)r->bytes, r->wrapped ? 1u : 0u, r->stopped ? 1u : 0u,
        (unsigned long long)insns, errors < 0 ? 1 : errors, r->images);
}
