/* Running code on every processor through EFI_MP_SERVICES_PROTOCOL (UEFI
 * PI spec, Vol. 2, 13.4), for `--cpus` (one trace buffer per CPU) and for
 * `info --cpus` (each CPU's own CPUID: hybrid parts differ per core type).
 *
 * What an AP may do: the PI spec allows APs only a few MP services
 * (WhoAmI) and no other boot services; the console is not MP-safe. So
 * functions run on APs only compute, execute CPUID and, for tracing, the
 * RDMSR/WRMSR the BSP proved safe:
 *   - efi/platform/msr_safe.c's #GP protection registers its handler through the
 *     CPU Architectural Protocol (a boot service, BSP only) and keeps its
 *     recovery state in globals; with OVMF/EDK2 the APs share the BSP's IDT
 *     and exception handler table, so two CPUs faulting at once would race
 *     on that state. It is therefore never used on APs.
 *   - Instead each AP reads its own capabilities with CPUID (no MSR, no
 *     fault possible); the BSP checks the capture configuration against
 *     those capabilities with rtit_check() (every #GP rule of the SDM), and
 *     only then does the AP issue the writes, unprotected. A CPU whose
 *     capabilities refuse the plan is skipped and reported, never written.
 *   - StartupAllAPs runs blocking with a timeout, so an AP that hangs (a
 *     #GP we did not predict ends in the firmware's dead loop on that AP)
 *     costs the timeout, not the boot: the BSP reports it and goes on. */
#ifndef PTBOOT_EFI_CAPTURE_MP_H
#define PTBOOT_EFI_CAPTURE_MP_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_seq.h"

/* Processors handled (MP services numbers 0..PTB_MP_MAX_CPUS-1). */
#define PTB_MP_MAX_CPUS 64
/* StartupAllAPs timeout: APs only run short, bounded functions. */
#define PTB_MP_TIMEOUT_US 2000000u

struct efi_mp {
    void *proto;      /* EFI_MP_SERVICES_PROTOCOL *, NULL: none */
    unsigned count;   /* logical processors (1 without the protocol) */
    unsigned enabled; /* enabled ones */
    unsigned bsp;     /* the BSP's processor number */
};

enum efi_mp_result {
    PTB_MP_OK = 0,
    PTB_MP_E_NONE = -1,    /* no MP services: only the BSP runs */
    PTB_MP_E_TIMEOUT = -2, /* some AP did not finish in time */
    PTB_MP_E_FAILED = -3,  /* StartupAllAPs failed otherwise */
};

/* Locates the protocol and counts processors. Without it (a firmware
 * without CpuDxe MP support, a single CPU), count = enabled = 1 and
 * PTB_MP_E_NONE is returned; everything below still works on the BSP. */
int efi_mp_init(struct efi_mp *mp, EFI_BOOT_SERVICES *bs);

/* fn(ctx, cpu, on_ap) on every enabled AP (in parallel, blocking, with
 * PTB_MP_TIMEOUT_US) and then on the BSP when bsp_too. cpu is the MP
 * services processor number. fn on an AP: no boot services, no console,
 * no efi_msr_* (see above). Returns an efi_mp_result (E_NONE: ran on the
 * BSP only). */
typedef void (*efi_mp_fn)(void *ctx, unsigned cpu, bool on_ap);
int efi_mp_run_all(const struct efi_mp *mp, efi_mp_fn fn, void *ctx, bool bsp_too);

const char *efi_mp_result_name(int r);

/* Per-CPU capabilities, each read by CPUID on that CPU. caps[cpu] for
 * cpu < max; seen[cpu] tells which CPUs reported. */
int efi_mp_read_caps(const struct efi_mp *mp, struct rtit_caps *caps, bool *seen, unsigned max);

/* One CPU's part of a multi-CPU hardware capture. */
struct efi_mp_trace_cpu {
    bool used;              /* traced (enabled, reported, plan fits) */
    bool seen;              /* its CPUID was read */
    struct rtit_caps caps;  /* as that CPU reports them */
    enum rtit_rule rule;    /* why not used: the rule its caps refuse */
    struct rtit_config cfg; /* the plan's, with this CPU's own buffer */
    EFI_PHYSICAL_ADDRESS block;
    UINTN pages;
    int start_rc, stop_rc;
    struct rtit_start_info start;
    struct rtit_stop_info stop;
    struct rtit_output_summary sum;
};

struct efi_mp_trace {
    struct efi_mp mp;
    const struct capture_plan *plan;
    unsigned cpus; /* CPUs wanted (plan->cpus resolved) */
    struct efi_mp_trace_cpu cpu[PTB_MP_MAX_CPUS];
};

/* Reads every CPU's caps, allocates and places one buffer per CPU
 * (EfiReservedMemoryType when plan->reserved_memory, else EfiLoaderData),
 * builds its ToPA tables, zeroes it, and marks which CPUs the plan fits.
 * The BSP is always cpu[mp->bsp]. Returns 0, or an EFI error status of
 * AllocatePages (what was allocated is freed). */
EFI_STATUS efi_mp_trace_prepare(struct efi_mp_trace *t, EFI_BOOT_SERVICES *bs,
                                const struct capture_plan *plan);
/* Starts (rtit_start) on every used CPU: APs through raw RDMSR/WRMSR,
 * the BSP through the #GP-safe path. */
int efi_mp_trace_start(struct efi_mp_trace *t);
/* Stops on every used CPU and summarises each buffer. */
int efi_mp_trace_stop(struct efi_mp_trace *t);
void efi_mp_trace_free(struct efi_mp_trace *t, EFI_BOOT_SERVICES *bs);

/* `info --cpus` (efi/capture/mp_info.c): one line per processor with Intel PT as
 * that processor reports it through CPUID on itself:
 *   ptboot: cpu n=<n> bsp=<0|1> pt=<yes|no> reason=<word> ebx14=0x.. ecx14=0x..
 *           ranges=<n> core=<core|atom|-> family=0x.. model=0x..
 * then "ptboot: cpus count=<n> enabled=<n> reported=<n> same=<0|1> mp=<result>"
 * (same: every CPU's leaf 14h equals the BSP's). */
struct efi_app;
int efi_mp_info_cpus(struct efi_app *app);

/* After efi_mp_trace_stop (efi/capture/mp_info.c): one line per wanted CPU,
 *   ptboot: trace-cpu n=<n> bsp=<0|1> used=<0|1> rule=<rule> start=<rc>
 *           bytes=<n> wrapped=<0|1> stopped=<0|1>
 * (rule: why a CPU was skipped, "ok" when used; start: rtit_start's
 * result, 0 ok). Returns the number of CPUs traced. */
unsigned efi_mp_trace_report(const struct efi_mp_trace *t);

#endif
