/* One struct says how to trace; rtit_check() validates it against the
 * enumerated capabilities before any WRMSR, rejecting every configuration a
 * real CPU would fault on (#GP), flag as an operational error
 * (STATUS.Error), or take without doing what was asked (an empty range, a
 * stop that wraps, trace over the ToPA tables), and naming the rule (SDM
 * ch. "Intel Processor Trace", 36.2.4-36.2.7 and 36.3.1 in the 2016
 * edition; rtit.md section 0). */
#ifndef PTBOOT_ARCH_X86_RTIT_CONFIG_H
#define PTBOOT_ARCH_X86_RTIT_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_regs.h"

enum rtit_output {
    RTIT_OUTPUT_TOPA = 0, /* Table of Physical Addresses */
    RTIT_OUTPUT_SINGLE,   /* one contiguous, circular range */
};

enum rtit_when_full {
    RTIT_FULL_RING = 0, /* ToPA: END of the last table -> first table */
    RTIT_FULL_STOP,     /* ToPA: STOP on the last region */
};

struct rtit_addr_range {
    unsigned cfg;        /* RTIT_ADDR_CFG_OFF / _FILTER / _STOP */
    uint64_t start, end; /* ADDRn_A, ADDRn_B: inclusive, linear */
};

struct rtit_config {
    /* output */
    enum rtit_output output;
    enum rtit_when_full when_full;
    unsigned region_size_code; /* ToPA: each region is 4 KiB << code */
    unsigned regions;          /* ToPA: number of regions */
    uint64_t buffer_phys;      /* ToPA: regions back to back from here;
                                  * single range: the range base */
    uint64_t single_size;      /* single range: bytes (power of two) */
    uint64_t table_phys;       /* ToPA: first table; tables are 4 KiB
                                  * pages back to back (rtit_topa.h) */
    /* packet generation (IA32_RTIT_CTL) */
    bool os, user, branch_en, dis_retc, tsc_en;
    bool mtc_en, cyc_en, ptw_en, fup_on_ptw, pwr_evt_en, event_en;
    bool dis_tnt, inject_psb_pmi, fabric_en;
    unsigned mtc_freq, cyc_thresh, psb_freq; /* CTL field encodings */
    /* filtering */
    bool cr3_filter;
    uint64_t cr3; /* IA32_RTIT_CR3_MATCH when cr3_filter */
    struct rtit_addr_range range[RTIT_MAX_RANGES];
    /* bit n: range n was named by an option (rtit_options.h), so a
	 * second filter/trace-stop/range-cfg for it is refused, not merged */
    unsigned ranges_named;
};

/* Rules rtit_check() enforces; rtit_rule_name() gives the short name. */
enum rtit_rule {
    RTIT_RULE_OK = 0,
    RTIT_RULE_PT_ABSENT,            /* any RTIT MSR access #GPs */
    RTIT_RULE_TOPA_UNSUPPORTED,     /* CTL.ToPA needs 14.0.ECX[0] */
    RTIT_RULE_SINGLE_UNSUPPORTED,   /* ToPA=0, FabricEn=0 needs ECX[2] */
    RTIT_RULE_FABRIC_UNSUPPORTED,   /* FabricEn needs ECX[3] */
    RTIT_RULE_CYC_UNSUPPORTED,      /* CYCEn/CycThresh need EBX[1] */
    RTIT_RULE_PSB_FREQ_UNSUPPORTED, /* PSBFreq needs EBX[1] */
    RTIT_RULE_CYC_THRESH_ENCODING,  /* not in 14.1.EBX[15:0] */
    RTIT_RULE_PSB_FREQ_ENCODING,    /* not in 14.1.EBX[31:16] */
    RTIT_RULE_MTC_UNSUPPORTED,      /* MTCEn/MTCFreq need EBX[3] */
    RTIT_RULE_MTC_FREQ_ENCODING,    /* not in 14.1.EAX[31:16] */
    RTIT_RULE_BRANCHEN_BDM106,      /* Broadwell: BranchEn must be 1 */
    RTIT_RULE_BRANCHEN_FIXED,       /* BranchEn=0 needs EBX[3] */
    RTIT_RULE_PTW_UNSUPPORTED,      /* PTWEn/FUPonPTW need EBX[4] */
    RTIT_RULE_PWR_EVT_UNSUPPORTED,  /* PwrEvtEn needs EBX[5] */
    RTIT_RULE_INJECT_UNSUPPORTED,   /* InjectPsbPmiOnEnable needs EBX[6] */
    RTIT_RULE_EVENT_UNSUPPORTED,    /* EventEn needs EBX[7] */
    RTIT_RULE_DISTNT_UNSUPPORTED,   /* DisTNT needs EBX[8] */
    RTIT_RULE_CR3_UNSUPPORTED,      /* CR3Filter/CR3_MATCH need EBX[0] */
    RTIT_RULE_CR3_RESERVED,         /* CR3_MATCH bits 4:0 */
    RTIT_RULE_RANGE_UNSUPPORTED,    /* ADDRn with n >= RANGECNT */
    RTIT_RULE_RANGE_CFG_RESERVED,   /* ADDRn_CFG 3..15 */
    RTIT_RULE_RANGE_NONCANONICAL,   /* ADDRn_A/B not canonical at the
                                       * CPU's linear-address width */
    /* the output MSRs: #GP at WRMSR */
    RTIT_RULE_OUTPUT_BASE_RESERVED, /* OUTPUT_BASE bits 6:0 set */
    RTIT_RULE_ABOVE_MAXPHYADDR,     /* OUTPUT_BASE beyond MAXPHYADDR */
    /* not expressible in the MSRs / ToPA entries */
    RTIT_RULE_REGIONS_INVALID,   /* 0 regions or Size code > 15 */
    RTIT_RULE_REGION_BASE_4K,    /* region base not 4 KiB aligned */
    RTIT_RULE_SINGLE_SIZE_RANGE, /* outside 128 bytes..4 GiB */
    /* operational errors: STATUS.Error once tracing */
    RTIT_RULE_TOPA_SINGLE_ENTRY,     /* > 1 region without 14.0.ECX[1] */
    RTIT_RULE_TOPA_TABLE_ALIGN,      /* table not 4 KiB aligned */
    RTIT_RULE_REGION_ALIGN,          /* region not aligned to its size */
    RTIT_RULE_TOPA_ABOVE_MAXPHYADDR, /* a region or chained table beyond */
    RTIT_RULE_SINGLE_SIZE,           /* not a power of two */
    RTIT_RULE_SINGLE_ALIGN,          /* base overlaps the mask bits */
    /* requests the CPU takes but cannot honour */
    RTIT_RULE_RANGE_BEYOND_PAGING, /* 57-bit address, 4-level paging */
    RTIT_RULE_RANGE_EMPTY,         /* ADDRn_A > ADDRn_B */
    RTIT_RULE_TOPA_TABLE_OVERLAP,  /* a table inside the output */
    RTIT_RULE_SINGLE_RANGE_STOP,   /* stop-when-full, single range */
    /* errata */
    RTIT_RULE_SINGLE_ERRATUM, /* TGL052/ADL037/RPL017: > 4 KiB */
    RTIT_RULE_COUNT
};

/* What a real CPU does with a configuration breaking the rule. */
enum rtit_rule_kind {
    RTIT_KIND_NONE = 0,
    RTIT_KIND_GP,         /* WRMSR raises #GP */
    RTIT_KIND_OPERROR,    /* accepted, then STATUS.Error (36.3.9) */
    RTIT_KIND_UNSAFE,     /* accepted, but trace data may be wrong */
    RTIT_KIND_INVALID,    /* not expressible in the MSRs at all */
    RTIT_KIND_UNHONOURED, /* accepted, but the CPU would not do what was
                             * asked: a range that never matches, a stop
                             * that wraps, tables overwritten by trace */
};

struct rtit_violation {
    enum rtit_rule rule;
    int index; /* address range n for RANGE_* rules, else -1 */
};

/* Returns RTIT_RULE_OK or the first rule cfg breaks on a CPU with caps
 * (also in *v when v is not NULL). Rules are checked in the order a CPU
 * meets them: every #GP rule before any operational error, then requests
 * the CPU would not honour, errata last, so the rule named is the one a
 * real CPU would hit first. Nothing is adjusted: a configuration is
 * programmed exactly as given or refused. */
enum rtit_rule rtit_check(const struct rtit_config *cfg, const struct rtit_caps *caps,
                          struct rtit_violation *v);

const char *rtit_rule_name(enum rtit_rule r); /* "mtc-freq-encoding" */
const char *rtit_rule_text(enum rtit_rule r); /* sentence citing the SDM */
enum rtit_rule_kind rtit_rule_kind(enum rtit_rule r);
const char *rtit_rule_kind_name(enum rtit_rule_kind k); /* "#GP", ... */

/* A sensible configuration for caps: ToPA (or single range when there is
 * no ToPA), ring, OS=1, BranchEn=1, TSCEn=1, the lowest allowed PSBFreq,
 * MTCFreq 3 when allowed, one region of 4 KiB. Addresses are 0; set them. */
void rtit_config_default(struct rtit_config *cfg, const struct rtit_caps *caps);

/* IA32_RTIT_CTL for cfg, TraceEn as given. Mechanical: no checks. */
uint64_t rtit_config_ctl(const struct rtit_config *cfg, bool trace_en);

/* Bytes of trace output cfg describes (regions * region size, or the single
 * range size). */
uint64_t rtit_config_buffer_bytes(const struct rtit_config *cfg);

/* Linear-address width that WRMSR checks IA32_RTIT_ADDRn_A/B against
 * (#GP if not canonical): 57 on CPUs with 5-level paging, else 48, whatever
 * CR4.LA57 says (rtit_config.c, range-noncanonical). */
unsigned rtit_msr_linear_bits(const struct rtit_caps *caps);

/* Linear-address width of the code being traced: 57 with 5-level paging
 * on (caps->la57 and caps->paging_la57), else 48. An IP outside it cannot
 * exist, so a range end beyond it can never match (range-beyond-paging). */
unsigned rtit_ip_linear_bits(const struct rtit_caps *caps);

/* The ToPA tables [table_phys, +tables * 4 KiB) and the output regions
 * [buffer_phys, +regions * size) of cfg share a byte (cfg->output ToPA,
 * regions and size valid). */
bool rtit_topa_tables_overlap_output(const struct rtit_config *cfg, const struct rtit_caps *caps);

#endif
