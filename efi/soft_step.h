/* Single-stepping a call with the trap flag and a #DB handler, for the
 * software trace unit (arch/x86/soft_unit.h).
 *
 * efi_soft_step_run() registers a #DB handler (vector 1) with the CPU
 * Architectural Protocol, sets EFLAGS.TF right before the call and clears
 * it when the call returns. Each single-step trap (DR6.BS) hands the IP of
 * the instruction about to execute to the step callback, with the
 * execution mode (from CS's descriptor) and the TSC. The callback answers
 * with an enum soft_unit_action:
 *   CONTINUE   keep TF set in the saved RFLAGS;
 *   SKIP_CALL  clear TF and arm DR0 as an execute breakpoint at the
 *              resume callback's IP; when it hits (DR6.B0) DR0/DR7 are
 *              cleared, that IP is reported and stepping goes on (RF set so
 *              the instruction runs instead of faulting again);
 *   STOPPED    clear TF: the rest of the call runs free.
 * Steps inside ptboot's own image (the glue around the call) are not
 * reported unless step_all is set.
 *
 * With entry_ip set, TF stays clear until the traced image's entry point
 * runs: DR0 waits there (an execute breakpoint), and when it hits, DR1 is
 * armed at the return address on the stack; stepping ends when execution
 * gets back there. So the firmware's own work in StartImage before the
 * entry point and after the image returned (relocation, memory
 * protection, unloading: millions of instructions) runs at full speed.
 *
 * SDM Vol. 3B 17.2 (debug registers DR0-DR7), 17.3.1.1 (instruction
 * breakpoints are faults: RF), 17.3.1.4 (single-step trap). */
#ifndef PTBOOT_EFI_SOFT_STEP_H
#define PTBOOT_EFI_SOFT_STEP_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

typedef int (*efi_soft_step_fn)(void *ctx, uint64_t ip, unsigned exec_mode, uint64_t tsc);
typedef uint64_t (*efi_soft_resume_fn)(void *ctx);
/* The call to single-step (e.g. a wrapper around StartImage). */
typedef EFI_STATUS (*efi_soft_call_fn)(void *arg);

struct efi_soft_step_config {
    efi_soft_step_fn step;      /* NULL: only count steps */
    efi_soft_resume_fn resume;  /* needed when step may answer SKIP_CALL */
    void *ctx;
    uint64_t self_lo, self_hi;  /* ptboot's image [lo, hi): not reported */
    bool step_all;              /* report ptboot's own steps too */
    uint64_t max_steps;         /* 0: no bound; else stop stepping after */
    uint64_t entry_ip;          /* 0: step from the call on; else from here
                                 * until its return (see above) */
};

struct efi_soft_step_stats {
    uint64_t traps;         /* #DB entries */
    uint64_t reported;      /* steps handed to the callback */
    uint64_t skipped_self;  /* steps inside ptboot's image */
    uint64_t skips;         /* SKIP_CALL answers (free runs) */
    uint64_t breakpoints;   /* DR0 hits that resumed stepping */
    uint64_t unexpected;    /* #DB that was neither BS nor B0 */
    uint64_t last_ip;       /* last IP reported */
    uint64_t return_ip;     /* entry_ip mode: where the entry returns to */
    bool entered;           /* entry_ip mode: the entry point ran */
    bool returned;          /* entry_ip mode: it came back to return_ip */
    bool stopped;           /* the callback answered STOPPED */
    bool bounded;           /* max_steps reached */
};

enum efi_soft_step_result {
    EFI_SOFT_STEP_OK = 0,
    EFI_SOFT_STEP_NO_CPU_ARCH = -1,  /* no CPU Architectural Protocol */
    EFI_SOFT_STEP_BUSY = -2,         /* a #DB handler is already registered */
};

/* Single-steps call(arg); *call_status gets its return value. Returns an
 * enum efi_soft_step_result (the call did not run unless OK). */
int efi_soft_step_run(const struct efi_soft_step_config *cfg, efi_soft_call_fn call, void *arg,
                      EFI_STATUS *call_status, struct efi_soft_step_stats *stats);
const char *efi_soft_step_strerror(int err);

#endif
