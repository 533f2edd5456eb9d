/* The report of a capture that ends at ExitBootServices, shared by the
 * resident driver (efi/resident/driver.c, efi/resident/report.c) and
 * `trace` of an OS loader (efi/capture/capture.c): after ExitBootServices neither
 * the files on the boot volume nor the console exist any more, so what was
 * captured goes out in the notify function itself, to a sink (COM1 with
 * port I/O there: efi/platform/uart.h; the console when `resident report`
 * runs it with boot services):
 *
 *   ptboot: flow begin trace=<name> bytes=<n> pages=<n> live=<0|1>
 *   <ptxed --no-inst lines of the trace>               (when decode is set)
 *   ptboot: flow cut printed=<n> of=<n> lines          (past the line bound)
 *   ptboot: flow end insns=<n> errors=<n>
 *   ptboot: trace summary window from=<n> bytes=<n> of=<n>  (a long trace)
 *   ptboot: trace summary begin                        (when sum_arena is set)
 *   <decoder/ptd_sum.h's lines: call tree, images, functions, hot blocks
 *    and edges, last transitions, errors; docs/summary.md>
 *   ptboot: trace summary end lines=<n> insns=<n> errors=<n>
 *   ptboot: trace summary cut budget=<n> offset=<n>    (budget spent)
 *   ptboot: serial-dump begin files=<n>                (when files is set)
 *   @PTF1 ...  trace.pt, code.dump + code.addr (the page dump of the
 *              code, the --pages format), sideband.txt (decoder/ptd_frame.h,
 *              docs/serial.md; `ptboot serial LOG --out DIR` recovers them)
 *   ptboot: serial-dump end files=<n>
 *   ptboot: trace unit=<hw|soft> cpu=0 bytes=<n> wrapped=<0|1> stopped=<0|1>
 *           insns=<n> errors=<n> images=<n>
 *
 * Why this is safe in an EVT_SIGNAL_EXIT_BOOT_SERVICES notify (UEFI 2.10
 * section 7.4.6: no memory allocation, no boot service): nothing here
 * allocates or calls firmware. The decoder (decoder/, freestanding) works
 * in static state, the frames and lines are formatted into static buffers
 * with newlib's vsnprintf (integer and string formats only: no heap), the
 * code is read by the caller's callback from memory the caller owns, the
 * summary's tables live in the arena the caller allocated before tracing
 * began, and the sink is the caller's. Not reentrant (one report at a
 * time).
 *
 * The summary's work is bounded, because a notify that takes minutes
 * holds up the OS (and looks like a hang): it decodes at most the last
 * EBS_REPORT_SUM_WINDOW bytes of the trace (from the first PSB in them:
 * the end is what tells what ran before a hang; the window line says
 * where it began, and counts then cover only that part), in at most
 * EBS_REPORT_SUM_BUDGET decoder steps (ptd_sum_decode; the cut line says
 * where it stopped), and its text is at most ptd_sum_text_bound() bytes
 * (105,216 with the defaults: 9.1 s at 115200 baud). The flow prints at
 * most EBS_REPORT_FLOW_LINES lines (about 30 s at 115200 baud): a hardware
 * trace of the rest of the boot is millions of instructions, hours of
 * serial; past the bound it is still decoded to the end, for the counts. */
#ifndef PTBOOT_EFI_CAPTURE_EBS_REPORT_H
#define PTBOOT_EFI_CAPTURE_EBS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flow lines printed at most (see above). */
#define EBS_REPORT_FLOW_LINES 20000u

#include "decoder/ptd_flow.h"
#include "decoder/ptd_sum.h"

typedef void (*ebs_report_sink)(const char *s, size_t len);

#define EBS_REPORT_FILTERS 4
/* The code dump: at most this many pages (4 MiB). */
#define EBS_REPORT_CODE_PAGES_MAX 1024
/* The summary's arena: the size the normal `trace` uses
 * (efi/capture/decode.c). */
#define EBS_REPORT_SUM_ARENA PTD_SUM_ARENA_SUGGESTED
/* The summary decodes at most the trace's last 1 MiB (the goal:
 * the summaries of a 1 MiB trace in under 30 s at 115200 baud; the host
 * decodes that in well under a second, docs/summary.md) ... */
#define EBS_REPORT_SUM_WINDOW (1u << 20)
/* ... in at most this many steps (a step is a basic block, an event or a
 * sync). 1 MiB of TNT packets holds at most about 6 M taken/not-taken
 * bits (6 a byte), but direct jumps and calls end blocks without any
 * packet, so the bytes alone do not bound the blocks: this does, and cuts
 * only a pathological trace (not measured on target hardware; on the
 * host, the window over two real traces back to back, mruby twice: 618,101
 * blocks, 7.7 M instructions, 0.17 s, and the same lines as `ptboot
 * summary` of those 1 MiB). */
#define EBS_REPORT_SUM_BUDGET (1u << 23)

struct ebs_report {
    const char *unit; /* "soft" or "hw" */
    /* the summary's time: MTCFreq and ratios (NULL: TSC packets only) */
    const struct ptd_time_config *time;
    const char *trace_name; /* the flow begin line's trace= word */
    /* the trace, linear from its first PSB */
    const uint8_t *trace;
    size_t trace_bytes;
    /* the flow: decoded when decode is set, code read through read/ctx
     * (no reads outside what the caller knows to be mapped) */
    bool decode;
    ptd_read_fn read;
    void *ctx;
    uint64_t filter_lo[EBS_REPORT_FILTERS], filter_hi[EBS_REPORT_FILTERS];
    unsigned nfilter;
    uint64_t pages; /* the flow begin line's pages= */
    bool live;      /* and live= */
    /* the files, framed, when files is set; payload bytes per data line
     * (0: PTD_FRAME_PAYLOAD_DEFAULT) */
    bool files;
    uint32_t payload;
    /* the code as a page dump: code_pages 4 KiB pages at code; their
     * addresses at code_addr, or (code_addr NULL) code_base + 4096 * i */
    const void *code;
    const uint64_t *code_addr;
    uint64_t code_base;
    size_t code_pages;
    const char *sideband; /* sideband.txt (0 bytes: not sent) */
    size_t sideband_bytes;
    /* the summaries (ptd_sum), when sum_arena is set: their tables in
     * sum_arena (EBS_REPORT_SUM_ARENA bytes, taken before tracing began:
     * nothing may be allocated in the notify), the images as modules
     * (module+offset names), the last sum_last transitions (0: the
     * default, as the host's `ptboot summary`) */
    void *sum_arena;
    size_t sum_arena_bytes;
    const struct ptd_sum_module *modules;
    size_t nmodules;
    unsigned sum_last;
    /* the static tail after the trace's end (PTD_SUM_F_TAIL,
     * decoder/ptd_tail.h): closes the last transitions and says where it
     * ends ("spins at module+offset"); on in hang and recovery reports */
    bool sum_tail;
    /* the trace line: bytes, insns (decoded_insns: the flow's count when
     * the flow ran, else insns), wrapped, stopped, images; its errors are
     * the flow's, else the summary's (0 when neither ran) */
    uint64_t bytes, insns;
    bool decoded_insns;
    bool wrapped, stopped;
    uint32_t images;
};

/* printf to the sink, through the report's static line buffer. */
void ebs_report_say(ebs_report_sink out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The flow lines between the begin/end markers; returns the decode errors,
 * or -1 when the trace could not be decoded at all; *insns (may be NULL)
 * gets the instructions decoded. */
long ebs_report_flow(const struct ebs_report *r, ebs_report_sink out, uint64_t *insns);
/* The summary lines between the begin/end markers (nothing when
 * r->sum_arena is NULL); returns the decode errors. */
long ebs_report_summary(const struct ebs_report *r, ebs_report_sink out);
/* The flow (if r->decode), the summary (if r->sum_arena), the serial dump
 * (if r->files) and the trace line. */
void ebs_report_write(const struct ebs_report *r, ebs_report_sink out);

#endif
