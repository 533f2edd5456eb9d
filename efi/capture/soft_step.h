/* The #DB glue of the software trace unit (arch/x86/soft_unit.h): one
 * handler for vector 1, registered with the CPU Architectural Protocol,
 * that single-steps traced code with EFLAGS.TF and hands each step to a
 * callback. Two callers use it:
 *
 *   `trace` (efi/capture/capture.c)  efi_soft_step_run() steps one call the app
 *                            makes (a wrapper around StartImage) and takes
 *                            the vector back when the call returns;
 *   the resident driver      efi_soft_step_hold() takes the vector for
 *   (efi/resident/driver.c)  good, efi_soft_step_arm() arms at an image's
 *                            entry when it loads (nothing of ours is on
 *                            the stack then), and the session runs on its
 *                            own until the image returns, the unit stops,
 *                            or efi_soft_step_end_now() (ExitBootServices,
 *                            `resident stop`); efi_soft_step_release()
 *                            gives the vector back.
 *
 * Each single-step trap (DR6.BS) hands the IP of the instruction about to
 * execute to the step callback, with the execution mode (from CS's
 * descriptor) and the TSC. The callback answers with an enum
 * soft_unit_action:
 *   CONTINUE   keep TF set in the saved RFLAGS;
 *   SKIP_CALL  clear TF and arm DR0 as an execute breakpoint at the
 *              resume callback's IP; when it hits (DR6.B0) DR0 is
 *              disarmed, that IP is reported and stepping goes on (RF set
 *              so the instruction runs instead of faulting again); a
 *              leftover RF is cleared before the free run, so a resume IP
 *              that is the very next instruction still hits;
 *   STOPPED    clear TF: the rest runs free (the session is over).
 * Steps inside [self_lo, self_hi) (ptboot's own glue around the call) are
 * not reported unless step_all is set.
 *
 * With entry_ip set, TF stays clear until the traced image's entry point
 * runs: DR0 waits there (an execute breakpoint), and when it hits, DR1 is
 * armed at the return address on the stack; the session ends when
 * execution gets back there. So the firmware's own work before the entry
 * point and after the image returned (relocation, memory protection,
 * unloading: millions of instructions) runs at full speed. After a
 * STOPPED answer DR1 stays armed, so `returned` still tells whether the
 * image came back.
 *
 * The end callback (optional) runs once when a session ends: in the #DB
 * handler's exception context (it may not use boot services) or inside
 * efi_soft_step_end_now().
 *
 * Interrupts and exceptions (with an interrupt callback): the CPU clears
 * TF when it enters a handler, so a handler is never stepped and the
 * interrupt itself would not be seen (the handler's IRET restores TF and
 * stepping goes on after the interrupted instruction). While a session is
 * armed the glue therefore chains the IDT (efi/capture/idt_chain.h): an
 * interrupt or exception whose saved RIP is the instruction just reported
 * (RFLAGS.TF set: traced code) is handed to the interrupt callback with
 * the handler's address, a software INT n/INT3/INTO/INT1 just stepped as
 * a step at the handler. The handler then runs free (also when the unit
 * would trace it: stepping the firmware's timer handler, about 3,600
 * instructions in OVMF, takes longer than the timer period, and the
 * traced code would never progress; the unseen callback then marks the
 * gap). FREE answers (packets off: a handler, a return or jump out of the
 * ranges) also run free. Where a free run ends:
 *   - with the watch (watch_lo/hi, efi/capture/soft_watch.h: the ranges'
 *     pages non-executable during free runs), at the first instruction
 *     fetched from the ranges: a #PF the glue catches and reports as a
 *     step (the landing). This catches the return from the handler, and
 *     code of the ranges the handler runs (a traced driver's own event
 *     notification), which is then stepped, nested, as a CPU traces it;
 *   - without it (no ranges, or the watch could not be prepared), a DR2
 *     breakpoint at the interrupted instruction, taken only with the RSP
 *     the interrupt saved (the same frame), and a FREE answer is stepped
 *     as CONTINUE;
 *   - in both, a single-step trap during a free run (an IRET gave traced
 *     code its TF back somewhere else) is a landing where it happens.
 * Everything is put back when the session ends: gates, page-table
 * entries, debug registers.
 *
 * SDM Vol. 3B 17.2 (debug registers DR0-DR7), 17.3.1.1 (instruction
 * breakpoints are faults: RF), 17.3.1.4 (single-step trap). */
#ifndef PTBOOT_EFI_CAPTURE_SOFT_STEP_H
#define PTBOOT_EFI_CAPTURE_SOFT_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

#include "arch/x86/rtit_config.h"

/* Why a session ended (the end callback's why). */
enum efi_soft_step_end {
    PTB_SOFT_STEP_END_RETURNED = 1, /* back at the entry's return address */
    PTB_SOFT_STEP_END_STOPPED = 2,  /* the step callback answered STOPPED */
    PTB_SOFT_STEP_END_BOUNDED = 3,  /* max_steps reached */
    PTB_SOFT_STEP_END_CALLER = 4,   /* efi_soft_step_end_now() */
};

typedef int (*efi_soft_step_fn)(void *ctx, uint64_t ip, unsigned exec_mode, uint64_t tsc);
typedef uint64_t (*efi_soft_resume_fn)(void *ctx);
/* An interrupt or exception at the instruction reported last (it has not
 * completed), whose handler's first instruction at handler is about to
 * run (soft_unit_interrupt). Returns an enum soft_unit_action. */
typedef int (*efi_soft_interrupt_fn)(void *ctx, uint64_t handler, unsigned exec_mode, uint64_t tsc);
/* The glue runs the code from the instruction reported last on without
 * reporting it, until the next step (soft_unit_unseen). Returns an enum
 * soft_unit_action. */
typedef int (*efi_soft_unseen_fn)(void *ctx, uint64_t tsc);
/* ip: where tracing ended (the IP about to run, or the resume IP of a free
 * run); why: enum efi_soft_step_end. */
typedef void (*efi_soft_end_fn)(void *ctx, uint64_t ip, uint64_t tsc, int why);
/* The call to single-step (e.g. a wrapper around StartImage). */
typedef EFI_STATUS (*efi_soft_call_fn)(void *arg);

#define PTB_SOFT_STEP_MAX_WATCH 8

struct efi_soft_step_config {
    efi_soft_step_fn step;     /* NULL: only count steps */
    efi_soft_resume_fn resume; /* needed when step may answer SKIP_CALL */
    efi_soft_end_fn end;       /* NULL: nobody to tell */
    void *ctx;
    uint64_t self_lo, self_hi;       /* ptboot's image [lo, hi): not reported */
    bool step_all;                   /* report ptboot's own steps too */
    uint64_t max_steps;              /* 0: no bound; else stop stepping after */
    uint64_t entry_ip;               /* 0: step from the call on (run only);
                                        * else from here until its return */
    efi_soft_interrupt_fn interrupt; /* NULL: interrupts not seen */
    efi_soft_unseen_fn unseen;       /* needed with interrupt and for FREE */
    /* The ranges whose entry ends a free run (FilterEn and TraceStop
     * ranges, inclusive); none: no watch. */
    unsigned nwatch;
    uint64_t watch_lo[PTB_SOFT_STEP_MAX_WATCH], watch_hi[PTB_SOFT_STEP_MAX_WATCH];
};

struct efi_soft_step_stats {
    uint64_t traps;        /* #DB entries */
    uint64_t reported;     /* steps handed to the callback */
    uint64_t skipped_self; /* steps inside ptboot's image */
    uint64_t skips;        /* SKIP_CALL answers (free runs) */
    uint64_t breakpoints;  /* DR0 hits that resumed stepping */
    uint64_t unexpected;   /* #DB that was none of ours */
    uint64_t last_ip;      /* last IP reported */
    uint64_t return_ip;    /* entry_ip mode: where the entry returns to */
    bool entered;          /* entry_ip mode: the entry point ran */
    bool returned;         /* entry_ip mode: it came back to return_ip */
    bool stopped;          /* the callback answered STOPPED */
    bool bounded;          /* max_steps reached */
    /* interrupts and free runs */
    int vectors;          /* IDT gates chained (-1: could not) */
    long watch;           /* pages watched, or the prepare error (< 0) */
    unsigned splits;      /* large pages split for the watch */
    unsigned splits_kept; /* splits left in place at the end */
    uint64_t interrupts;  /* interrupts/exceptions at a traced instruction */
    uint64_t soft_ints;   /* INT n / INT3 / INTO / INT1 stepped */
    uint64_t unseen_runs; /* runs unseen but SKIP_CALL's (handlers, FREE) */
    uint64_t landings;    /* free runs ended by a watched page's #PF */
    uint64_t irq_returns; /* free runs ended by the DR2 breakpoint */
    uint64_t tf_returns;  /* free runs ended by a single-step trap */
};

enum efi_soft_step_result {
    PTB_SOFT_STEP_OK = 0,
    PTB_SOFT_STEP_NO_CPU_ARCH = -1, /* no CPU Architectural Protocol */
    PTB_SOFT_STEP_BUSY = -2,        /* a #DB handler is already registered */
    PTB_SOFT_STEP_STATE = -3,       /* not held, or a session is on */
};

/* Single-steps call(arg) (holding the vector for its duration); *call_status
 * gets its return value. Returns an enum efi_soft_step_result (the call did
 * not run unless OK). */
int efi_soft_step_run(const struct efi_soft_step_config *cfg, efi_soft_call_fn call, void *arg,
                      EFI_STATUS *call_status, struct efi_soft_step_stats *stats);

/* Registers the #DB handler and keeps it (boot services). */
int efi_soft_step_hold(void);
/* Arms a session at cfg->entry_ip (required) with the vector held; cfg and
 * stats must stay valid until the session ends. */
int efi_soft_step_arm(const struct efi_soft_step_config *cfg, struct efi_soft_step_stats *stats);
/* Ends the session now, from outside the traced code (no boot services
 * used: fine in an ExitBootServices notify): breakpoints cleared, the end
 * callback told (why CALLER) unless the session had ended already.
 * Returns true when a session was armed or running. */
bool efi_soft_step_end_now(void);
/* Gives the vector back when no session is armed or running (boot
 * services). Returns true when it was held and is now free. */
bool efi_soft_step_release(void);

const char *efi_soft_step_strerror(int err);

/* cfg's watch: the FilterEn and TraceStop ranges of rc, when it has a
 * FilterEn range (with none, everything is inside: nothing to watch). */
void efi_soft_step_watch_ranges(struct efi_soft_step_config *cfg, const struct rtit_config *rc);
/* One line about the session's interrupts and free runs:
 * "ptboot: trace: soft unit events interrupts=N soft_ints=N unseen_runs=N
 *  landings=N irq_returns=N tf_returns=N vectors=N watch=N|error splits=N
 *  splits_kept=N". */
void efi_soft_step_say_events(const struct efi_soft_step_stats *st,
                              void (*say)(const char *fmt, ...)
                                  __attribute__((format(printf, 1, 2))));

#endif
