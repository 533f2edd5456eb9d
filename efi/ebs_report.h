/* The report of a capture that ends at ExitBootServices, shared by the
 * resident driver (efi/resident_driver.c, efi/resident_report.c) and
 * `trace` of an OS loader (efi/capture.c): after ExitBootServices neither
 * the files on the boot volume nor the console exist any more, so what was
 * captured goes out in the notify function itself, to a sink (COM1 with
 * port I/O there: efi/resident_uart.h; the console when `resident report`
 * runs it with boot services):
 *
 *   ptboot: flow begin trace=<name> bytes=<n> pages=<n> live=<0|1>
 *   <ptxed --no-inst lines of the trace>               (when decode is set)
 *   ptboot: flow end insns=<n> errors=<n>
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
 * code is read by the caller's callback from memory the caller owns, and
 * the sink is the caller's. Not reentrant (one report at a time). */
#ifndef PTBOOT_EFI_EBS_REPORT_H
#define PTBOOT_EFI_EBS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_flow.h"

typedef void (*ebs_report_sink)(const char *s, size_t len);

#define EBS_REPORT_FILTERS 4
/* The code dump: at most this many pages (4 MiB). */
#define EBS_REPORT_CODE_PAGES_MAX 1024

struct ebs_report {
    const char *unit;               /* "soft" or "hw" */
    const char *trace_name;         /* the flow begin line's trace= word */
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
    uint64_t pages;                 /* the flow begin line's pages= */
    bool live;                      /* and live= */
    /* the files, framed, when files is set */
    bool files;
    /* the code as a page dump: code_pages 4 KiB pages at code; their
     * addresses at code_addr, or (code_addr NULL) code_base + 4096 * i */
    const void *code;
    const uint64_t *code_addr;
    uint64_t code_base;
    size_t code_pages;
    const char *sideband;           /* sideband.txt (0 bytes: not sent) */
    size_t sideband_bytes;
    /* the trace line: bytes, insns (decoded_insns: the flow's count when
     * the flow ran, else insns), wrapped, stopped, images */
    uint64_t bytes, insns;
    bool decoded_insns;
    bool wrapped, stopped;
    uint32_t images;
};

/* printf to the sink, through the report's static line buffer. */
void ebs_report_say(ebs_report_sink out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The flow lines between the begin/end markers; returns the decode errors,
 * or -1 when the trace could not be decoded at all; *insns (may be NULL)
 * gets the instructions decoded. */
long ebs_report_flow(const struct ebs_report *r, ebs_report_sink out, uint64_t *insns);
/* The flow (if r->decode), the serial dump (if r->files) and the trace
 * line. */
void ebs_report_write(const struct ebs_report *r, ebs_report_sink out);

#endif
