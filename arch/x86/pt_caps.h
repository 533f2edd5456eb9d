/* Intel PT capabilities, read once from CPUID (leaves 0, 1, 7.0, 14h.0,
 * 14h.1, 15h, 80000000h, 80000008h) into one table, like Linux's pt_caps[]:
 * every later decision (configuration checks, ToPA layout, reports) reads
 * this struct, never CPUID again. */
#ifndef PTBOOT_ARCH_X86_PT_CAPS_H
#define PTBOOT_ARCH_X86_PT_CAPS_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86/cpuid.h"

/* Why PT is (not) usable; rtit_pt_reason_name() gives the one-word form. */
enum rtit_pt_reason {
    RTIT_PT_OK = 0,    /* "ok" */
    RTIT_PT_NO_LEAF7,  /* "no-leaf7": max basic leaf < 7 */
    RTIT_PT_NO_PT_BIT, /* "no-pt-bit": CPUID.(7,0).EBX[25] = 0 */
    RTIT_PT_NO_LEAF14, /* "no-leaf14": max basic leaf < 14h; leaf 14h data
                          * would be the highest basic leaf (e.g. QEMU) */
    RTIT_PT_NO_OUTPUT, /* "no-output": neither ToPA nor single range, so
                          * no trace into memory (Trace Transport only) */
};

const char *rtit_pt_reason_name(enum rtit_pt_reason r);

/* Model-specific behaviour, as flags in rtit_caps.quirks. */
enum rtit_quirk {
    /* Broadwell (06_3D, 06_47, 06_4F, 06_56): BranchEn must be 1 when
	 * setting TraceEn, else #GP (erratum BDM106; Linux
	 * branch_en_always_on). */
    RTIT_QUIRK_BRANCHEN_REQUIRED = 1u << 0,
    /* Goldmont / Goldmont Plus (06_5C, 06_5F, 06_7A): RTIT MSRs are core
	 * scoped (SDM MSR table for Goldmont; EDK2 ProcTrace programs thread 0
	 * of each core only). */
    RTIT_QUIRK_CORE_SCOPED_MSRS = 1u << 1,
    /* Single-range output larger than 4 KiB may hold incorrect data:
	 * errata TGL052, ADL037, RPL017 on Tiger/Alder/Raptor Lake, and by
	 * precaution on the later client parts (Alder Lake-N, Meteor, Arrow,
	 * Lunar, Panther Lake); the list and its sources are
	 * rtit_single_range_erratum_models in pt_caps.c. */
    RTIT_QUIRK_SINGLE_RANGE_4K = 1u << 2,
};

struct rtit_caps {
    /* CPU identification */
    char vendor[13];                  /* CPUID.0 EBX,EDX,ECX, NUL-terminated */
    uint32_t max_basic_leaf;          /* CPUID.0:EAX */
    uint32_t max_ext_leaf;            /* CPUID.80000000h:EAX, 0 if no ext leaves */
    uint32_t signature;               /* CPUID.1:EAX */
    uint32_t family, model, stepping; /* display values (SDM Vol. 2A) */
    bool hypervisor;                  /* CPUID.1:ECX[31] */
    bool leaf7_pt;                    /* CPUID.(7,0):EBX[25] */
    bool hybrid;                      /* CPUID.(7,0):EDX[15] on Intel: core
                                         * types differ, so do their PT caps */
    uint32_t leaf7_ecx;               /* raw CPUID.(7,0):ECX */
    bool la57;                        /* CPUID.(7,0):ECX[16]: 5-level paging; then
                                         * linear addresses in MSRs are checked for
                                         * 57-bit canonical form (rtit_config.h) */
    /* Not CPUID: CR4.LA57 of the code being traced, i.e. whether the
	 * firmware runs with 5-level paging. rtit_caps_read() reads CR4 only
	 * in the UEFI app for the CPU it runs on (x86_paging.h); elsewhere it
	 * is false (4-level) and a caller that knows better sets it (the
	 * host's `ptboot plan --la57`). Only meaningful with la57. */
    bool paging_la57;

    /* verdict */
    bool pt; /* PT usable for tracing into memory */
    enum rtit_pt_reason reason;

    /* raw leaf 14h (zero unless max basic leaf >= 14h and EBX[25]=1) */
    bool has_leaf14;
    x86_cpuid_regs leaf14_0;
    bool has_leaf14_1; /* only read when 14h.0.EAX >= 1 */
    x86_cpuid_regs leaf14_1;

    /* 14h.0 EBX */
    bool cr3_filter, psb_cyc, ip_filter, mtc, ptwrite, power_events, psb_pmi_preserve, event_trace,
        tnt_disable;
    /* 14h.0 ECX */
    bool topa, topa_multi_entry, single_range, trace_transport, lip;
    /* 14h.1 */
    unsigned num_ranges;     /* EAX[2:0] */
    uint16_t mtc_periods;    /* EAX[31:16]: allowed MTCFreq encodings */
    uint16_t cyc_thresholds; /* EBX[15:0]: allowed CycThresh encodings */
    uint16_t psb_periods;    /* EBX[31:16]: allowed PSBFreq encodings */

    /* physical address width */
    unsigned maxphyaddr;
    bool maxphyaddr_enumerated; /* false: default 36, leaf 80000008h absent */

    /* leaf 15h: TSC = crystal * numerator / denominator */
    bool has_leaf15;
    uint32_t tsc_denominator, tsc_numerator, crystal_hz;

    unsigned quirks; /* enum rtit_quirk flags */
};

/* Fills *caps from fn(ctx, ...). Returns 0 (also when PT is absent: see
 * caps->pt and caps->reason), or -1 for NULL arguments. */
int rtit_caps_read(struct rtit_caps *caps, x86_cpuid_fn fn, void *ctx);

/* Why single-range output above 4 KiB is not trusted on family/model
 * (an erratum or "precaution"), or NULL when it is. */
const char *rtit_single_range_4k_reason(uint32_t family, uint32_t model);

/* Display family/model from CPUID.1:EAX (SDM Vol. 2A, CPUID, "Processor
 * Version Information"). */
uint32_t x86_display_family(uint32_t signature);
uint32_t x86_display_model(uint32_t signature);

#endif
