/* One capture session on the target: which trace unit (Intel PT or the
 * software unit), its checked configuration (arch/x86/capture_plan.h), the
 * output buffer, start/stop around one call, the status, the trace
 * linearised (oldest byte first, from the first PSB), the images loaded
 * before and while tracing (efi/capture/image_watch.h: the sideband's image table)
 * and snapshots of their code, so decoding never reads an image the
 * firmware has freed since (an application's pages go when it exits).
 *
 *   efi_capture_init      the unit (auto: hw when CPUID says Intel PT and
 *                         the MSR path is #GP-safe, else soft; with why)
 *   efi_capture_watch     start recording images (before LoadImage)
 *   efi_capture_add_target  the image to trace: a filter range, snapshot
 *   efi_capture_plan      option words + the target range(s) -> plan, buffer
 *   efi_capture_run       trace one call (StartImage): hw start/stop around
 *                         it, or single-step it through the soft unit
 *   efi_capture_code      the code image the decoder reads (snapshots)
 *   efi_capture_write_files / efi_capture_serial_dump
 *   efi_capture_use_cpu   with --cpus: which CPU's trace is decoded
 *   efi_capture_final_line / efi_capture_cpu_lines / efi_capture_free
 *
 * Used by `trace` (efi/cmd/trace.c) and the resident tracer. Messages go to
 * the console; functions return 0 or -1 after saying why. */
#ifndef PTBOOT_EFI_CAPTURE_CAPTURE_H
#define PTBOOT_EFI_CAPTURE_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_seq.h"
#include "arch/x86/soft_unit.h"
#include "format/code_image.h"
#include "efi/capture/image_watch.h"
#include "efi/capture/mp.h"
#include "format/sideband.h"
#include "efi/capture/soft_step.h"

#define PTB_CAPTURE_MAX_TARGETS 4 /* FilterEn ranges: RTIT_MAX_RANGES */
#define PTB_CAPTURE_WHY_MAX     128
/* Snapshot memory reserved up front for the target and the images loaded
 * while tracing (efi/capture/image_watch.h says why up front). */
#define PTB_CAPTURE_SNAPSHOT_DEFAULT (8u << 20)
/* --hang-timeout: at most a day */
#define PTB_CAPTURE_HANG_MAX_S 86400u

/* One processor of a multi-CPU capture (`trace --cpus`): cpu[0] is the
 * BSP, then the APs in processor-number order, as many as were asked for
 * (CAPTURE_CPUS_ALL: every one MP services counts). */
struct efi_capture_cpu {
    unsigned n; /* MP services processor number */
    bool bsp;
    bool traced;                   /* its unit ran and its trace is here */
    char why[PTB_CAPTURE_WHY_MAX]; /* not traced: why (one word, no spaces) */
    const uint8_t *trace;          /* linear, from its first PSB */
    uint64_t trace_bytes;
    bool wrapped, stopped;
    uint64_t insns, errors; /* filled by the caller's decode */
};

struct efi_capture {
    /* the unit and its plan */
    enum capture_unit unit;
    char why[PTB_CAPTURE_WHY_MAX]; /* why this unit */
    struct rtit_caps caps;         /* this CPU's */
    struct capture_plan plan;
    bool msr_safe; /* the #GP-safe MSR path is ready */
    /* memory: the plan's block (hw: buffer + ToPA tables) or the buffer */
    EFI_PHYSICAL_ADDRESS block;
    UINTN block_pages;
    uint8_t *buffer;
    uint64_t buffer_bytes;
    /* soft unit */
    struct soft_unit soft;
    struct efi_soft_step_config step_cfg;
    struct efi_soft_step_stats step;
    bool step_all;
    uint64_t max_steps;
    /* processors: cpus_req as asked for (--cpus, or the word cpus=...;
     * 0 or 1: the BSP only); ncpus > 0 only when more than one was asked
     * for. multi: the hardware unit runs on every cpu[] through efi/capture/mp.h
     * (one buffer each; block/buffer then are the BSP's from there). */
    unsigned cpus_req;
    unsigned ncpus;
    unsigned cur; /* cpu[cur]'s trace is in use */
    struct efi_capture_cpu cpu[PTB_MP_MAX_CPUS];
    bool multi;
    int mp_result; /* efi_mp_result of the last MP call */
    /* hw unit */
    struct rtit_start_info hw_start;
    struct rtit_stop_info hw_stop;
    /* result */
    bool ran;
    uint64_t bytes; /* bytes the unit wrote (all laps) */
    bool wrapped, stopped;
    struct rtit_output_summary sum;
    struct rtit_linear lin;
    const uint8_t *trace; /* linear stream: trace[0..trace_bytes) */
    uint64_t trace_bytes;
    /* images: the sideband's table, filled by the watcher */
    struct sideband sb;
    struct efi_image_watch watch;
    bool watching;
    struct capture_image targets[PTB_CAPTURE_MAX_TARGETS];
    unsigned ntargets;
    /* ExitBootServices while tracing (an OS loader as the target): the
     * notify stops the unit and reports over COM1 (efi/capture/ebs_report.h),
     * decoding the flow and the summaries when ebs_decode (the summaries
     * unless ebs_no_summary; ebs_last: their last-N transitions, 0: the
     * default), sending the files when ebs_files (all set by the caller);
     * ebs_reported: that happened, boot services are gone (nothing of the
     * firmware may be called after). ebs_arena: the summaries' tables,
     * EBS_REPORT_SUM_ARENA bytes taken by efi_capture_run before tracing
     * (the notify may not allocate), 0 when there is none. */
    bool ebs_decode, ebs_files, ebs_reported, ebs_no_summary;
    /* payload bytes per serial-dump data line, here and at ExitBootServices
     * (trace --line-bytes; 0: PTD_FRAME_PAYLOAD_DEFAULT) */
    uint32_t serial_line_bytes;
    unsigned ebs_last;
    /* --hang-timeout (docs/hang.md): when the target has not returned (nor
     * exited boot services) hang_timeout_s after tracing began, a timer
     * event (efi/capture/hang.h) stops the unit and reports over COM1 as at
     * ExitBootServices, without the flow, between "ptboot: hang report
     * begin" and "end" lines; hang_repeat: then traces on into the zeroed
     * buffer. 0: none. Set by the caller. */
    uint32_t hang_timeout_s;
    bool hang_repeat;
    EFI_PHYSICAL_ADDRESS ebs_arena;
    UINTN ebs_arena_pages;
    /* When the soft unit finds the #DB vector taken: the holder's release
     * (efi/resident/capture.h's resident_release_db, set by the caller;
     * NULL: nobody to ask). Returns true when it gave the vector back,
     * false when it keeps it (*said: it said why). */
    bool (*db_release)(bool *said);
    /* the decoder's view of the snapshot */
    EFI_PHYSICAL_ADDRESS page_table;
    UINTN page_table_pages;
    struct code_image code;
};

/* want: "auto", "hw" or "soft". msr_state: efi_msr_init()'s word. Returns
 * 0, or -1 (hw asked for and impossible: said why). */
int efi_capture_init(struct efi_capture *c, const char *want, const char *msr_state);
/* Records the images loaded now and watches for new ones (snapshotting
 * them into snapshot_bytes reserved now). Before LoadImage of the target. */
int efi_capture_watch(struct efi_capture *c, size_t snapshot_bytes);
/* The image to trace: its range becomes a FilterEn range (unless option
 * words say otherwise) and its pages are snapshotted now. Returns 0 or -1
 * (too many targets, no room in the snapshot: said). */
int efi_capture_add_target(struct efi_capture *c, uint64_t base, uint64_t size);
/* The trace bytes the capture efi_capture_plan would make could write
 * (every processor's buffer), without allocating or saying anything.
 * Returns 0, or -1 when the plan is refused (efi_capture_plan says why). */
int efi_capture_plan_bytes(const struct efi_capture *c, const char *const *words, size_t n_words,
                           uint64_t *trace_bytes);
/* Plans the capture for the targets with the option words, allocates and
 * zeroes the buffer. */
int efi_capture_plan(struct efi_capture *c, const char *const *words, size_t n_words);
/* Traces call(arg). self_lo/self_hi: ptboot's own image (never traced by
 * the soft unit); entry_ip: the target's entry point (the soft unit steps
 * from there to its return), or 0 to step the whole call. When the call
 * exits boot services the capture is reported from the notify (see
 * ebs_decode above; docs/trace.md "Tracing an OS loader") and, should the
 * call ever come back, this returns 0 at once with c->ebs_reported set:
 * the caller may then call no boot service (nor the console). */
int efi_capture_run(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                    EFI_STATUS *call_status, uint64_t self_lo, uint64_t self_hi, uint64_t entry_ip);
/* The snapshots as a code image for decoder/'s read callback. */
int efi_capture_code(struct efi_capture *c);
/* The module containing ip (the sideband's image table), or NULL. */
const struct sideband_image *efi_capture_module(const struct efi_capture *c, uint64_t ip);
/* Writes trace.pt, sideband.txt, code.dump, code.addr into a new
 * \ptboot\capNNN on the boot volume (efi/capture/files.h). */
int efi_capture_write_files(struct efi_capture *c, EFI_HANDLE image);
/* Sends the same four files over serial (efi/capture/serial_dump.h; `ptboot
 * serial LOG` recovers them). */
int efi_capture_serial_dump(struct efi_capture *c);
/* Makes cpu[i]'s trace the one decoded and dumped (c->trace, trace_bytes,
 * wrapped, stopped); i = 0 is the BSP's. Returns 0, or -1 when cpu i was
 * not traced. */
int efi_capture_use_cpu(struct efi_capture *c, unsigned i);
/* The machine-readable last line of every capture:
 *   ptboot: trace unit=<hw|soft> cpu=<n> bytes=<n> wrapped=<0|1>
 *           stopped=<0|1> insns=<n> errors=<n> images=<n>
 * for the trace in use (efi_capture_use_cpu; the BSP's by default). */
void efi_capture_final_line(const struct efi_capture *c, uint64_t insns, uint64_t errors);
/* With --cpus: one line per processor asked for, the BSP's last, so the
 * capture still ends with the BSP's final line: traced ones as above
 * (with their own insns/errors), the others
 *   ptboot: trace unit=<hw|soft> cpu=<n> traced=0 reason=<word>
 * Then c->trace is the BSP's again. Without --cpus, the final line. */
void efi_capture_cpu_lines(struct efi_capture *c, uint64_t insns, uint64_t errors);
void efi_capture_free(struct efi_capture *c);

#endif
