/* One capture session on the target: which trace unit (Intel PT or the
 * software unit), its checked configuration (arch/x86/capture_plan.h), the
 * output buffer, start/stop around one call, the status, the trace
 * linearised (oldest byte first, from the first PSB), the images recorded
 * while tracing and snapshots of their code, so decoding never reads an
 * image the firmware has freed since (an application's pages go when it
 * exits).
 *
 *   efi_capture_init      the unit (auto: hw when CPUID says Intel PT and
 *                         the MSR path is #GP-safe, else soft; with why)
 *   efi_capture_plan      option words + the image range(s) -> plan, buffer
 *   efi_capture_add_image record an image (and snapshot its code)
 *   efi_capture_run       trace one call (StartImage): hw start/stop around
 *                         it, or single-step it through the soft unit
 *   efi_capture_code      the code image the decoder reads (snapshots)
 *   efi_capture_final_line / efi_capture_free
 *
 * Used by `trace` (efi/cmd_trace.c) and the resident tracer. Messages go to
 * the console; functions return 0 or -1 after saying why. */
#ifndef PTBOOT_EFI_CAPTURE_H
#define PTBOOT_EFI_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_linear.h"
#include "arch/x86/rtit_seq.h"
#include "arch/x86/soft_unit.h"
#include "efi/code_image.h"
#include "efi/sideband.h"
#include "efi/soft_step.h"

#define EFI_CAPTURE_MAX_IMAGES 32
#define EFI_CAPTURE_NAME_MAX 64
#define EFI_CAPTURE_WHY_MAX 128

struct efi_capture_image {
    uint64_t base, size, entry;
    char name[EFI_CAPTURE_NAME_MAX];
    EFI_PHYSICAL_ADDRESS snapshot; /* copy of the image's pages, or 0 */
    UINTN snapshot_pages;
    uint64_t snap_base;            /* page-aligned address the copy starts at */
};

struct efi_capture {
    /* the unit and its plan */
    enum capture_unit unit;
    char why[EFI_CAPTURE_WHY_MAX];  /* why this unit */
    struct rtit_caps caps;          /* this CPU's */
    struct capture_plan plan;
    bool msr_safe;                  /* the #GP-safe MSR path is ready */
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
    /* hw unit */
    struct rtit_start_info hw_start;
    struct rtit_stop_info hw_stop;
    /* result */
    bool ran;
    uint64_t bytes;                 /* bytes the unit wrote (all laps) */
    bool wrapped, stopped;
    struct rtit_output_summary sum;
    struct rtit_linear lin;
    const uint8_t *trace;           /* linear stream: trace[0..trace_bytes) */
    uint64_t trace_bytes;
    /* images and their code */
    struct efi_capture_image images[EFI_CAPTURE_MAX_IMAGES];
    unsigned nimages;
    EFI_PHYSICAL_ADDRESS page_table;
    UINTN page_table_pages;
    struct code_image code;
    EFI_PHYSICAL_ADDRESS page_dump;  /* efi_capture_page_dump's copy */
    UINTN page_dump_pages;
};

/* want: "auto", "hw" or "soft". msr_state: efi_msr_init()'s word. Returns
 * 0, or -1 (hw asked for and impossible: said why). */
int efi_capture_init(struct efi_capture *c, const char *want, const char *msr_state);
/* Plans the capture for the images recorded so far (the FilterEn ranges)
 * with the option words, allocates and zeroes the buffer. */
int efi_capture_plan(struct efi_capture *c, const char *const *words, size_t n_words);
/* Records an image; with snapshot, copies its bytes now. Returns its index
 * or -1 (table full, no memory). */
int efi_capture_add_image(struct efi_capture *c, uint64_t base, uint64_t size, uint64_t entry,
                          const char *name, bool snapshot);
/* Traces call(arg). self_lo/self_hi: ptboot's own image (never traced by
 * the soft unit); entry_ip: the target's entry point (the soft unit steps
 * from there to its return), or 0 to step the whole call. */
int efi_capture_run(struct efi_capture *c, efi_soft_call_fn call, void *arg,
                    EFI_STATUS *call_status, uint64_t self_lo, uint64_t self_hi,
                    uint64_t entry_ip);
/* The snapshots as a code image for decoder/'s read callback. */
int efi_capture_code(struct efi_capture *c);
/* The sideband (decoder facts, configuration, trace facts, images:
 * efi/sideband.h) of the finished capture. */
void efi_capture_sideband(const struct efi_capture *c, struct sideband *sb);
/* The snapshots as one page dump (4 KiB pages + one LE u64 address per
 * page: the PREFIX.dump/PREFIX.addr pair `ptboot flow --pages` reads).
 * Pool memory, released by efi_capture_free. Returns 0 or -1. */
int efi_capture_page_dump(struct efi_capture *c, const uint8_t **dump, size_t *dump_len,
                          const uint8_t **addr, size_t *addr_len);
/* Sends trace.pt, code.dump, code.addr and sideband.txt over serial
 * (efi/serial_dump.h; `ptboot serial LOG` recovers them). */
int efi_capture_serial_dump(struct efi_capture *c);
/* The machine-readable last line of every capture. */
void efi_capture_final_line(const struct efi_capture *c, uint64_t insns, uint64_t errors);
void efi_capture_free(struct efi_capture *c);

#endif
