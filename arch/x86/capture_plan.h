/* What a capture programs: one function turns (capabilities, option words,
 * the target's image range(s), the mode, the CPU count) into a checked
 * struct rtit_config plus the memory it needs, with defaults that work on
 * any PT-capable CPU and a one-line note for every decision and downgrade.
 * The same function plans for the software trace unit (soft_unit.h) with
 * the capability set that unit models, so one option set drives both units
 * and what a unit cannot do is refused by name before anything is written.
 *
 * Option words are rtit_options.h's (name or name=value), plus:
 *   buffer=SIZE       bytes of trace output per CPU (default: trace 1M,
 *                     resident 4M); sizes the regions / single range
 *   no-mtc            no MTC packets (default: MTC on where enumerated)
 *   no-filter         trace everything, not only the image range(s)
 *   cpus=N|all        trace N CPUs (BSP first) or all (the `--cpus`
 *                     option); default 1, the BSP
 *   unit=hw|soft      which trace unit (normally chosen by the caller)
 *
 * Defaults (docs/capture-plan.md has the reasoning):
 *   output   ToPA ring when enumerated; else single range (4 KiB on parts
 *            with the single-range erratum); never Trace Transport.
 *   regions  multi-entry ToPA: 64 KiB regions; single-entry ToPA (e.g.
 *            Broadwell): one region as large as the buffer.
 *   filter   `trace`: FilterEn ranges over the image range(s) when the CPU
 *            has enough address ranges, else everything is traced (said in
 *            a note; the decoder still gets the image); `resident`: off.
 *   packets  OS=1 (UEFI runs at CPL0), BranchEn=1, TSCEn=1, DisRETC=0,
 *            MTCEn=1 with MTCFreq 3 (or the lowest allowed) when MTC is
 *            enumerated, CYC off, the lowest allowed PSBFreq.
 *   resident the buffer must be EfiReservedMemoryType: the CPU may write
 *            it after ExitBootServices (plan->reserved_memory).
 *
 * Freestanding like the rest of arch/x86: no allocation, no globals. */
#ifndef PTBOOT_ARCH_X86_CAPTURE_PLAN_H
#define PTBOOT_ARCH_X86_CAPTURE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_memory.h"

enum capture_mode {
    CAPTURE_TRACE = 0, /* `trace`: around one StartImage */
    CAPTURE_RESIDENT,  /* the resident boot tracer, to ExitBootServices */
};

enum capture_unit {
    CAPTURE_UNIT_HW = 0, /* Intel PT (the RTIT MSRs) */
    CAPTURE_UNIT_SOFT,   /* the software trace unit (soft_unit.h) */
};

/* An image to trace: [base, base + size). */
struct capture_image {
    uint64_t base, size;
};

/* Defaults (bytes of trace output per CPU). */
#define CAPTURE_DEFAULT_BUFFER_TRACE    (1ull << 20)
#define CAPTURE_DEFAULT_BUFFER_RESIDENT (4ull << 20)
/* Region size on multi-entry ToPA: 64 KiB (Size code 4) keeps the
 * alignment slack small (rtit_memory.h) and one table holds 32 MiB. */
#define CAPTURE_DEFAULT_REGION_CODE 4u
/* cpus=all: every enabled processor, counted by the caller */
#define CAPTURE_CPUS_ALL 0xffffffffu

#define CAPTURE_MAX_NOTES 16
#define CAPTURE_NOTE_LEN  128

struct capture_request {
    enum capture_mode mode;
    enum capture_unit unit;             /* the word unit=... overrides it */
    const struct capture_image *images; /* the target's range(s); may be 0 */
    size_t n_images;
    const char *const *words; /* option words, "name" or "name=value" */
    size_t n_words;
    unsigned cpus; /* CPUs requested by the caller (0 or 1:
                      * the BSP, CAPTURE_CPUS_ALL: all); the
                      * word cpus=... wins */
};

enum capture_plan_status {
    CAPTURE_PLAN_OK = 0,
    CAPTURE_PLAN_E_WORD = -1, /* bad option word: see plan->error */
    CAPTURE_PLAN_E_RULE = -2, /* the unit cannot do it: plan->rule_name */
    CAPTURE_PLAN_E_ARG = -3,  /* NULL or inconsistent arguments */
};

struct capture_plan {
    int status; /* enum capture_plan_status */
    enum capture_mode mode;
    enum capture_unit unit;
    unsigned cpus;                /* CPUs to trace (CAPTURE_CPUS_ALL = all) */
    struct rtit_config cfg;       /* checked; addresses at illustrative
                                     * defaults until capture_plan_place() */
    struct rtit_memory_need need; /* per CPU */
    uint64_t buffer_bytes;        /* trace output per CPU */
    bool reserved_memory;         /* EfiReservedMemoryType (resident) */
    bool filtered;                /* FilterEn range(s) over the images */
    bool addresses_given;         /* buffer-base/table-base words used */
    /* refusal (status E_RULE): a name as in `ptboot plan --rules`, or a
	 * soft-unit rule "soft-..."; the hardware rule when hw refused */
    struct rtit_violation violation;
    const char *rule_name;
    const char *rule_kind; /* "#GP", "operational error", ...,
                              * "soft-unit" */
    const char *rule_text;
    char error[160]; /* E_WORD: "mtc=x: expected a number" */
    /* one line per decision or downgrade, in the order taken */
    size_t n_notes;
    char notes[CAPTURE_MAX_NOTES][CAPTURE_NOTE_LEN];
};

/* The capability set the software trace unit models, as a struct rtit_caps
 * (vendor "soft"): ToPA with multiple entries (ring or stop) and single
 * range, 4 address ranges (FilterEn and TraceStop), TSC, RET compression,
 * PSBFreq; no MTC, CYC, PTWRITE, power/event trace, CR3 filter, Trace
 * Transport. */
void capture_soft_caps(struct rtit_caps *caps);

/* Plans a capture. caps is the CPU's (rtit_caps_read) for both units: the
 * soft unit's own set replaces it for checking. Returns plan->status. Every
 * refusal comes before any MSR write: callers program only a plan with
 * status CAPTURE_PLAN_OK. */
int capture_plan_make(struct capture_plan *plan, const struct rtit_caps *caps,
                      const struct capture_request *req);

/* Places the buffer and the ToPA tables of the plan inside the caller's
 * block [block_phys, block_phys + block_bytes) (block_bytes >=
 * plan->need.block_bytes) and checks the result again. Returns 0, or
 * CAPTURE_PLAN_E_RULE / a negative rtit_memory_error. */
int capture_plan_place(struct capture_plan *plan, const struct rtit_caps *caps, uint64_t block_phys,
                       uint64_t block_bytes);

/* The caps the plan was checked against: caps itself, or the soft set in
 * *soft_storage. */
const struct rtit_caps *capture_plan_caps(const struct capture_plan *plan,
                                          const struct rtit_caps *caps,
                                          struct rtit_caps *soft_storage);

/* 1 if `name` is a capture word (buffer, no-mtc, ...) or an rtit option,
 * with *takes_value set; 0 if unknown. For command-line parsers. */
int capture_word_known(const char *name, bool *takes_value);

const char *capture_mode_name(enum capture_mode m); /* "trace", "resident" */
const char *capture_unit_name(enum capture_unit u); /* "hw", "soft" */

/* The plan as text, the same on host (`ptboot plan --capture`) and target
 * (`plan`):
 *
 *   capture mode=<trace|resident> unit=<hw|soft> cpus=<n|all>
 *           output=<topa|single> when-full=<ring|stop> buffer=<bytes>
 *           regions=<n> region=<bytes> memory=<boot|reserved>
 *           block=<bytes per CPU> filter=<image|off|words>
 *   note: <decision>                    one per decision/downgrade
 *   topa ... / wrmsr ...                rtit_plan_report (hw only)
 *
 * or "refused <rule> kind=<kind> [range=<n>]" and "why: <text>" after the
 * notes. table_mem holds table_capacity ToPA tables for the report. */
int capture_plan_report(const struct capture_plan *plan, const struct rtit_caps *caps,
                        uint64_t *table_mem, size_t table_capacity,
                        void (*emit)(void *ctx, const char *line), void *ctx);

#endif
