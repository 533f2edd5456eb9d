#include "arch/x86/rtit_config.h"

#include <string.h>

#include "arch/x86/rtit_topa.h"
#include "arch/x86/x86_paging.h"

struct rule_info {
    const char *name;
    enum rtit_rule_kind kind;
    const char *text;
};

/* One row per rule: short name, what the CPU does, and why (SDM 2016 ed.
 * ch. 36 section, or the erratum). */
static const struct rule_info rules[RTIT_RULE_COUNT] = {
    [RTIT_RULE_OK] = { "ok", RTIT_KIND_NONE, "configuration accepted" },
    [RTIT_RULE_PT_ABSENT] = { "pt-absent", RTIT_KIND_GP,
                              "Intel PT not enumerated (CPUID.(7,0).EBX[25], leaf 14h): every RTIT "
                              "MSR access #GPs (36.3.1)" },
    [RTIT_RULE_TOPA_UNSUPPORTED] = { "topa-unsupported", RTIT_KIND_GP,
                                     "ToPA output needs CPUID.(14h,0).ECX[0]; CTL.ToPA is reserved "
                                     "otherwise (36.2.7.2)" },
    [RTIT_RULE_SINGLE_UNSUPPORTED] = { "single-range-unsupported", RTIT_KIND_GP,
                                       "TraceEn with ToPA=0 and FabricEn=0 #GPs without "
                                       "CPUID.(14h,0).ECX[2] (36.2.7.2)" },
    [RTIT_RULE_FABRIC_UNSUPPORTED] = { "fabric-unsupported", RTIT_KIND_GP,
                                       "FabricEn needs CPUID.(14h,0).ECX[3] (36.2.7.2)" },
    [RTIT_RULE_CYC_UNSUPPORTED] = { "cyc-unsupported", RTIT_KIND_GP,
                                    "CYCEn and CycThresh need CPUID.(14h,0).EBX[1] (36.2.7.2)" },
    [RTIT_RULE_PSB_FREQ_UNSUPPORTED] = { "psb-freq-unsupported", RTIT_KIND_GP,
                                         "a non-zero PSBFreq needs CPUID.(14h,0).EBX[1] "
                                         "(36.2.7.2)" },
    [RTIT_RULE_CYC_THRESH_ENCODING] = { "cyc-thresh-encoding", RTIT_KIND_GP,
                                        "CycThresh must be an encoding set in "
                                        "CPUID.(14h,1).EBX[15:0] (36.2.7.2)" },
    [RTIT_RULE_PSB_FREQ_ENCODING] = { "psb-freq-encoding", RTIT_KIND_GP,
                                      "PSBFreq must be an encoding set in CPUID.(14h,1).EBX[31:16] "
                                      "(36.2.7.2)" },
    [RTIT_RULE_MTC_UNSUPPORTED] = { "mtc-unsupported", RTIT_KIND_GP,
                                    "MTCEn and MTCFreq need CPUID.(14h,0).EBX[3] (36.2.7.2)" },
    [RTIT_RULE_MTC_FREQ_ENCODING] = { "mtc-freq-encoding", RTIT_KIND_GP,
                                      "MTCFreq must be an encoding set in CPUID.(14h,1).EAX[31:16] "
                                      "(36.2.7.2)" },
    [RTIT_RULE_BRANCHEN_BDM106] = { "branchen-bdm106", RTIT_KIND_GP,
                                    "Broadwell: TraceEn with BranchEn=0 #GPs (erratum BDM106, "
                                    "Broadwell MSR table)" },
    [RTIT_RULE_BRANCHEN_FIXED] = { "branchen-fixed", RTIT_KIND_GP,
                                   "BranchEn=0 (COFI suppression) needs CPUID.(14h,0).EBX[3] "
                                   "(36.2.7.2)" },
    [RTIT_RULE_PTW_UNSUPPORTED] = { "ptwrite-unsupported", RTIT_KIND_GP,
                                    "PTWEn and FUPonPTW need CPUID.(14h,0).EBX[4] (36.2.7.2)" },
    [RTIT_RULE_PWR_EVT_UNSUPPORTED] = { "power-events-unsupported", RTIT_KIND_GP,
                                        "PwrEvtEn needs CPUID.(14h,0).EBX[5] (36.2.7.2)" },
    [RTIT_RULE_INJECT_UNSUPPORTED] = { "inject-psb-pmi-unsupported", RTIT_KIND_GP,
                                       "InjectPsbPmiOnEnable needs CPUID.(14h,0).EBX[6] (newer "
                                       "SDM)" },
    [RTIT_RULE_EVENT_UNSUPPORTED] = { "event-trace-unsupported", RTIT_KIND_GP,
                                      "EventEn needs CPUID.(14h,0).EBX[7] (newer SDM)" },
    [RTIT_RULE_DISTNT_UNSUPPORTED] = { "distnt-unsupported", RTIT_KIND_GP,
                                       "DisTNT needs CPUID.(14h,0).EBX[8] (newer SDM)" },
    [RTIT_RULE_CR3_UNSUPPORTED] = { "cr3-filter-unsupported", RTIT_KIND_GP,
                                    "CR3Filter and IA32_RTIT_CR3_MATCH need CPUID.(14h,0).EBX[0] "
                                    "(36.2.7.6)" },
    [RTIT_RULE_CR3_RESERVED] = { "cr3-reserved-bits", RTIT_KIND_GP,
                                 "IA32_RTIT_CR3_MATCH bits 4:0 are reserved (36.2.7.6)" },
    [RTIT_RULE_RANGE_UNSUPPORTED] = { "range-unsupported", RTIT_KIND_GP,
                                      "address range n needs n < CPUID.(14h,1).EAX[2:0]; ADDRn "
                                      "MSRs and ADDRn_CFG beyond it #GP (36.2.7.5)" },
    [RTIT_RULE_RANGE_CFG_RESERVED] = { "range-cfg-reserved", RTIT_KIND_GP,
                                       "ADDRn_CFG encodings 3..15 are reserved (36.2.7.2)" },
    [RTIT_RULE_RANGE_NONCANONICAL] = { "range-noncanonical", RTIT_KIND_GP,
                                       "IA32_RTIT_ADDRn_A/B must be canonical at the CPU's "
                                       "linear-address width: 57 bits with 5-level paging "
                                       "(CPUID.(7,0).ECX[16]), else 48 (36.2.7.5)" },
    [RTIT_RULE_REGIONS_INVALID] = { "regions-invalid", RTIT_KIND_INVALID,
                                    "ToPA needs 1 or more regions of Size code 0..15 (4 KiB..128 "
                                    "MiB) (36.2.6.2)" },
    [RTIT_RULE_TOPA_SINGLE_ENTRY] = { "topa-single-entry", RTIT_KIND_OPERROR,
                                      "without CPUID.(14h,0).ECX[1] a ToPA table holds one region "
                                      "then END to itself (36.2.6.2)" },
    [RTIT_RULE_OUTPUT_BASE_RESERVED] = { "output-base-reserved", RTIT_KIND_GP,
                                         "IA32_RTIT_OUTPUT_BASE bits 6:0 are reserved: the ToPA "
                                         "table or single range base must be 128-byte aligned "
                                         "(36.2.7.7)" },
    [RTIT_RULE_TOPA_ABOVE_MAXPHYADDR] = { "topa-above-maxphyaddr", RTIT_KIND_OPERROR,
                                          "a ToPA output region or chained table lies above "
                                          "MAXPHYADDR (CPUID.80000008h:EAX[7:0]) (36.2.6.2, ToPA "
                                          "errors)" },
    [RTIT_RULE_TOPA_TABLE_ALIGN] = { "topa-table-align", RTIT_KIND_OPERROR,
                                     "ToPA tables must be 4 KiB aligned (36.2.6.2, ToPA errors)" },
    [RTIT_RULE_REGION_BASE_4K] = { "region-base-4k", RTIT_KIND_INVALID,
                                   "a ToPA entry holds only address bits 12 and up: region bases "
                                   "must be 4 KiB aligned (36.2.6.2, Table 36-3)" },
    [RTIT_RULE_REGION_ALIGN] = { "region-align", RTIT_KIND_OPERROR,
                                 "a ToPA output region must be aligned to its size (36.2.6.2, ToPA "
                                 "errors)" },
    [RTIT_RULE_SINGLE_SIZE] = { "single-range-size", RTIT_KIND_OPERROR,
                                "single-range size must be a power of two: the mask in "
                                "MASK_PTRS[31:0] must be contiguous (36.2.6.1)" },
    [RTIT_RULE_SINGLE_SIZE_RANGE] = { "single-range-size-range", RTIT_KIND_INVALID,
                                      "single-range size must be 128 bytes (MASK_PTRS[6:0] are "
                                      "always 1) to 4 GiB (a 32-bit mask) (36.2.6.1)" },
    [RTIT_RULE_SINGLE_ALIGN] = { "single-range-align", RTIT_KIND_OPERROR,
                                 "single-range base must be aligned to the range size (base may "
                                 "not overlap the mask, 36.2.6.1)" },
    [RTIT_RULE_ABOVE_MAXPHYADDR] = { "above-maxphyaddr", RTIT_KIND_GP,
                                     "IA32_RTIT_OUTPUT_BASE (ToPA table or single range base) "
                                     "above MAXPHYADDR (CPUID.80000008h:EAX[7:0]): reserved bits "
                                     "(36.2.7.7)" },
    [RTIT_RULE_RANGE_BEYOND_PAGING] = { "range-beyond-paging", RTIT_KIND_UNHONOURED,
                                        "with 4-level paging (CR4.LA57=0) code runs only at 48-bit "
                                        "canonical addresses: a range end beyond them never "
                                        "matches as asked (SDM Vol. 3A 4.5, 36.2.4.3); on the "
                                        "host, `plan --la57` says the firmware runs 5-level "
                                        "paging" },
    [RTIT_RULE_RANGE_EMPTY] = { "range-empty", RTIT_KIND_UNHONOURED,
                                "ADDRn_A is above ADDRn_B: the inclusive range [A, B] holds no "
                                "address, so a FilterEn range never traces and a TraceStop range "
                                "never stops (36.2.4.3, 36.2.5.5); give the lower address first" },
    [RTIT_RULE_TOPA_TABLE_OVERLAP] = { "topa-table-overlap", RTIT_KIND_UNHONOURED,
                                       "a ToPA table lies inside the output regions: the CPU would "
                                       "write trace over the entries it then follows (tables must "
                                       "not change while TraceEn=1, 36.2.6.2); put the tables "
                                       "outside the buffer" },
    [RTIT_RULE_SINGLE_RANGE_STOP] = { "single-range-stop", RTIT_KIND_UNHONOURED,
                                      "stop-when-full needs ToPA (the STOP bit of an entry, "
                                      "36.2.6.2): single-range output always wraps (36.2.6.1); use "
                                      "ToPA output or the ring mode" },
    [RTIT_RULE_SINGLE_ERRATUM] = { "single-range-erratum", RTIT_KIND_UNSAFE,
                                   "single range larger than 4 KiB may record wrong data on this "
                                   "CPU (errata TGL052/ADL037/RPL017; later client parts as a "
                                   "precaution, as Linux ce0d998be927 does for all)" },
};

const char *rtit_rule_name(enum rtit_rule r)
{
    return (unsigned)r < RTIT_RULE_COUNT ? rules[r].name : "unknown";
}

const char *rtit_rule_text(enum rtit_rule r)
{
    return (unsigned)r < RTIT_RULE_COUNT ? rules[r].text : "unknown rule";
}

enum rtit_rule_kind rtit_rule_kind(enum rtit_rule r)
{
    return (unsigned)r < RTIT_RULE_COUNT ? rules[r].kind : RTIT_KIND_INVALID;
}

const char *rtit_rule_kind_name(enum rtit_rule_kind k)
{
    switch (k) {
    case RTIT_KIND_NONE: return "none";
    case RTIT_KIND_GP: return "#GP";
    case RTIT_KIND_OPERROR: return "operational error";
    case RTIT_KIND_UNSAFE: return "erratum";
    case RTIT_KIND_INVALID: return "invalid";
    case RTIT_KIND_UNHONOURED: return "unhonoured";
    }
    return "?";
}

/* WRMSR checks linear addresses in MSRs at the width the CPU supports, not
 * the one CR4.LA57 selects: 57 bits on CPUs with 5-level paging (SDM Vol.
 * 3A 4.5; Linux KVM's is_noncanonical_msr_address() models exactly this
 * "static" check for MSRs holding linear addresses). */
unsigned rtit_msr_linear_bits(const struct rtit_caps *k)
{
    return k->la57 ? 57u : 48u;
}

unsigned rtit_ip_linear_bits(const struct rtit_caps *k)
{
    return k->la57 && k->paging_la57 ? 57u : 48u;
}

bool rtit_topa_tables_overlap_output(const struct rtit_config *c, const struct rtit_caps *k)
{
    if (c->output != RTIT_OUTPUT_TOPA || c->regions == 0 || c->regions > RTIT_TOPA_MAX_REGIONS ||
        c->region_size_code > RTIT_TOPA_MAX_SIZE_CODE)
        return false;
    /* [t0, t1) and [b0, b1) as closed-open intervals; both lengths are
	 * below 2^48 (RTIT_TOPA_MAX_REGIONS regions of at most 128 MiB), so
	 * the ends saturate rather than wrap */
    uint64_t tables = rtit_topa_tables_needed(c->regions, k->topa_multi_entry);
    uint64_t tlen = tables * RTIT_TOPA_TABLE_ALIGN;
    uint64_t blen = (uint64_t)c->regions * RTIT_TOPA_REGION_BYTES(c->region_size_code);
    uint64_t t0 = c->table_phys, b0 = c->buffer_phys;
    uint64_t t1 = t0 > UINT64_MAX - tlen ? UINT64_MAX : t0 + tlen;
    uint64_t b1 = b0 > UINT64_MAX - blen ? UINT64_MAX : b0 + blen;
    return t0 < b1 && b0 < t1;
}

static bool is_pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

static unsigned lowest_bit(unsigned bitmap)
{
    for (unsigned n = 0; n < 16; n++)
        if (bitmap & (1u << n))
            return n;
    return 0;
}

void rtit_config_default(struct rtit_config *cfg, const struct rtit_caps *caps)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->output = caps->topa || !caps->single_range ? RTIT_OUTPUT_TOPA : RTIT_OUTPUT_SINGLE;
    cfg->when_full = RTIT_FULL_RING;
    cfg->regions = 1;
    cfg->region_size_code = 0;
    cfg->single_size = RTIT_TOPA_REGION_BYTES(0);
    cfg->os = true;
    cfg->branch_en = true;
    cfg->tsc_en = true;
    if (caps->psb_cyc) {
        cfg->psb_freq = lowest_bit(caps->psb_periods);
        cfg->cyc_thresh = lowest_bit(caps->cyc_thresholds);
    }
    /* MTCFreq is checked against the bitmap even with MTCEn=0 (KVM's
	 * vmx_rtit_ctl_check does the same), so pick an allowed one; 3 is
	 * Linux's default MTC period. */
    if (caps->mtc)
        cfg->mtc_freq = (caps->mtc_periods & (1u << 3)) ? 3 : lowest_bit(caps->mtc_periods);
}

uint64_t rtit_config_ctl(const struct rtit_config *c, bool trace_en)
{
    uint64_t v = 0;
    if (trace_en)
        v |= RTIT_CTL_TRACEEN;
    if (c->cyc_en)
        v |= RTIT_CTL_CYCEN;
    if (c->os)
        v |= RTIT_CTL_OS;
    if (c->user)
        v |= RTIT_CTL_USER;
    if (c->pwr_evt_en)
        v |= RTIT_CTL_PWREVTEN;
    if (c->fup_on_ptw)
        v |= RTIT_CTL_FUPONPTW;
    if (c->fabric_en)
        v |= RTIT_CTL_FABRICEN;
    if (c->cr3_filter)
        v |= RTIT_CTL_CR3FILTER;
    if (c->output == RTIT_OUTPUT_TOPA)
        v |= RTIT_CTL_TOPA;
    if (c->mtc_en)
        v |= RTIT_CTL_MTCEN;
    if (c->tsc_en)
        v |= RTIT_CTL_TSCEN;
    if (c->dis_retc)
        v |= RTIT_CTL_DISRETC;
    if (c->ptw_en)
        v |= RTIT_CTL_PTWEN;
    if (c->branch_en)
        v |= RTIT_CTL_BRANCHEN;
    v |= ((uint64_t)c->mtc_freq << RTIT_CTL_MTCFREQ_SHIFT) & RTIT_CTL_MTCFREQ_MASK;
    v |= ((uint64_t)c->cyc_thresh << RTIT_CTL_CYCTHRESH_SHIFT) & RTIT_CTL_CYCTHRESH_MASK;
    v |= ((uint64_t)c->psb_freq << RTIT_CTL_PSBFREQ_SHIFT) & RTIT_CTL_PSBFREQ_MASK;
    if (c->event_en)
        v |= RTIT_CTL_EVENTEN;
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++)
        v |= ((uint64_t)c->range[n].cfg << RTIT_CTL_ADDR_CFG_SHIFT(n)) & RTIT_CTL_ADDR_CFG_MASK(n);
    if (c->dis_tnt)
        v |= RTIT_CTL_DISTNT;
    if (c->inject_psb_pmi)
        v |= RTIT_CTL_INJECTPSBPMI;
    return v;
}

uint64_t rtit_config_buffer_bytes(const struct rtit_config *c)
{
    if (c->output == RTIT_OUTPUT_SINGLE)
        return c->single_size;
    if (c->region_size_code > RTIT_TOPA_MAX_SIZE_CODE)
        return 0;
    return (uint64_t)c->regions * RTIT_TOPA_REGION_BYTES(c->region_size_code);
}

/* [base, base + bytes) within the physical address width? */
static bool fits_phys(uint64_t base, uint64_t bytes, unsigned maxphyaddr)
{
    uint64_t limit = maxphyaddr >= 64 ? UINT64_MAX : ((uint64_t)1 << maxphyaddr) - 1;
    if (bytes == 0)
        return base <= limit;
    return base <= limit && bytes - 1 <= limit - base;
}

#define FAIL(r, i)          \
    do {                    \
        if (v) {            \
            v->rule = (r);  \
            v->index = (i); \
        }                   \
        return (r);         \
    } while (0)

/* Phase 1: the start writes in the order rtit_plan_start() issues them
 * (STATUS, OUTPUT_BASE, OUTPUT_MASK_PTRS, CR3_MATCH, ADDRn_A/B, CTL), each
 * #GP rule at the write that would fault, so the rule named is the fault a
 * real CPU raises first. */
static enum rtit_rule check_writes(const struct rtit_config *c, const struct rtit_caps *k,
                                   struct rtit_violation *v)
{
    bool topa = c->output == RTIT_OUTPUT_TOPA;

    /* OUTPUT_BASE / OUTPUT_MASK_PTRS exist only with ToPA or single
	 * range (36.2.7.7). */
    if (!c->fabric_en) {
        if (!k->topa && !k->single_range)
            FAIL(topa ? RTIT_RULE_TOPA_UNSUPPORTED : RTIT_RULE_SINGLE_UNSUPPORTED, -1);
        uint64_t base = topa ? c->table_phys : c->buffer_phys;
        if (base & RTIT_MASK_LOWER)
            FAIL(RTIT_RULE_OUTPUT_BASE_RESERVED, -1);
        if (!fits_phys(base, 1, k->maxphyaddr))
            FAIL(RTIT_RULE_ABOVE_MAXPHYADDR, -1);
    }
    /* CR3_MATCH (36.2.7.6) */
    if (c->cr3_filter && !k->cr3_filter)
        FAIL(RTIT_RULE_CR3_UNSUPPORTED, -1);
    if (c->cr3_filter && (c->cr3 & 0x1f))
        FAIL(RTIT_RULE_CR3_RESERVED, -1);
    /* ADDRn_A/B (36.2.7.5) */
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        const struct rtit_addr_range *r = &c->range[n];
        if (r->cfg == RTIT_ADDR_CFG_OFF)
            continue;
        if (n >= k->num_ranges)
            FAIL(RTIT_RULE_RANGE_UNSUPPORTED, (int)n);
        unsigned bits = rtit_msr_linear_bits(k);
        if (!x86_canonical(r->start, bits) || !x86_canonical(r->end, bits))
            FAIL(RTIT_RULE_RANGE_NONCANONICAL, (int)n);
    }

    /* CTL (36.2.7.2): bits reserved for this CPU ... */
    if (c->fabric_en && !k->trace_transport)
        FAIL(RTIT_RULE_FABRIC_UNSUPPORTED, -1);
    if (topa && !k->topa)
        FAIL(RTIT_RULE_TOPA_UNSUPPORTED, -1);
    if ((c->cyc_en || c->cyc_thresh) && !k->psb_cyc)
        FAIL(RTIT_RULE_CYC_UNSUPPORTED, -1);
    if (c->psb_freq && !k->psb_cyc)
        FAIL(RTIT_RULE_PSB_FREQ_UNSUPPORTED, -1);
    if ((c->mtc_en || c->mtc_freq) && !k->mtc)
        FAIL(RTIT_RULE_MTC_UNSUPPORTED, -1);
    if ((c->ptw_en || c->fup_on_ptw) && !k->ptwrite)
        FAIL(RTIT_RULE_PTW_UNSUPPORTED, -1);
    if (c->pwr_evt_en && !k->power_events)
        FAIL(RTIT_RULE_PWR_EVT_UNSUPPORTED, -1);
    if (c->inject_psb_pmi && !k->psb_pmi_preserve)
        FAIL(RTIT_RULE_INJECT_UNSUPPORTED, -1);
    if (c->event_en && !k->event_trace)
        FAIL(RTIT_RULE_EVENT_UNSUPPORTED, -1);
    if (c->dis_tnt && !k->tnt_disable)
        FAIL(RTIT_RULE_DISTNT_UNSUPPORTED, -1);
    /* ... encodings outside the CPUID.(14h,1) bitmaps, checked whatever
	 * MTCEn/CYCEn say (KVM vmx_rtit_ctl_check does the same) ... */
    if (k->mtc && (c->mtc_freq > 15 || !(k->mtc_periods & (1u << c->mtc_freq))))
        FAIL(RTIT_RULE_MTC_FREQ_ENCODING, -1);
    if (k->psb_cyc && (c->cyc_thresh > 15 || !(k->cyc_thresholds & (1u << c->cyc_thresh))))
        FAIL(RTIT_RULE_CYC_THRESH_ENCODING, -1);
    if (k->psb_cyc && (c->psb_freq > 15 || !(k->psb_periods & (1u << c->psb_freq))))
        FAIL(RTIT_RULE_PSB_FREQ_ENCODING, -1);
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++)
        if (c->range[n].cfg > RTIT_ADDR_CFG_STOP)
            FAIL(RTIT_RULE_RANGE_CFG_RESERVED, (int)n);
    /* ... and what setting TraceEn requires. */
    if (!topa && !c->fabric_en && !k->single_range)
        FAIL(RTIT_RULE_SINGLE_UNSUPPORTED, -1);
    if (!c->branch_en && (k->quirks & RTIT_QUIRK_BRANCHEN_REQUIRED))
        FAIL(RTIT_RULE_BRANCHEN_BDM106, -1);
    if (!c->branch_en && !k->mtc)
        FAIL(RTIT_RULE_BRANCHEN_FIXED, -1);
    return RTIT_RULE_OK;
}

/* Phase 2: output memory. Not expressible first, then what the CPU reports
 * as operational errors once tracing (36.2.6, 36.3.9), then errata. */
static enum rtit_rule check_output(const struct rtit_config *c, const struct rtit_caps *k,
                                   struct rtit_violation *v)
{
    if (c->fabric_en)
        return RTIT_RULE_OK; /* output goes to the Trace Hub */

    if (c->output == RTIT_OUTPUT_SINGLE) {
        uint64_t s = c->single_size;
        if (s < 128 || s > ((uint64_t)1 << 32))
            FAIL(RTIT_RULE_SINGLE_SIZE_RANGE, -1);
        if (!is_pow2(s))
            FAIL(RTIT_RULE_SINGLE_SIZE, -1);
        if (c->buffer_phys & (s - 1))
            FAIL(RTIT_RULE_SINGLE_ALIGN, -1);
        /* aligned to a power of two <= 4 GiB and below MAXPHYADDR
		 * (>= 36 bits): the whole range fits */
        return RTIT_RULE_OK;
    }

    if (c->regions == 0 || c->region_size_code > RTIT_TOPA_MAX_SIZE_CODE ||
        c->regions > RTIT_TOPA_MAX_REGIONS)
        FAIL(RTIT_RULE_REGIONS_INVALID, -1);
    if (c->buffer_phys & (RTIT_TOPA_TABLE_ALIGN - 1))
        FAIL(RTIT_RULE_REGION_BASE_4K, -1);
    /* Operational errors in the order the CPU meets them: the table
	 * base, then entry 0 (reserved address bits, alignment, end of the
	 * region, the single-entry layout), then later entries and tables. */
    uint64_t size = RTIT_TOPA_REGION_BYTES(c->region_size_code);
    if (c->table_phys & (RTIT_TOPA_TABLE_ALIGN - 1))
        FAIL(RTIT_RULE_TOPA_TABLE_ALIGN, -1);
    if (!fits_phys(c->buffer_phys, 1, k->maxphyaddr))
        FAIL(RTIT_RULE_TOPA_ABOVE_MAXPHYADDR, -1);
    if (c->buffer_phys & (size - 1))
        FAIL(RTIT_RULE_REGION_ALIGN, -1);
    if (!fits_phys(c->buffer_phys, size, k->maxphyaddr))
        FAIL(RTIT_RULE_TOPA_ABOVE_MAXPHYADDR, -1);
    if (c->regions > 1 && !k->topa_multi_entry)
        FAIL(RTIT_RULE_TOPA_SINGLE_ENTRY, -1);
    uint64_t tables = rtit_topa_tables_needed(c->regions, k->topa_multi_entry);
    if (!fits_phys(c->table_phys, tables * RTIT_TOPA_TABLE_ALIGN, k->maxphyaddr) ||
        !fits_phys(c->buffer_phys, c->regions * size, k->maxphyaddr))
        FAIL(RTIT_RULE_TOPA_ABOVE_MAXPHYADDR, -1);
    return RTIT_RULE_OK;
}

/* Phase 3: what the CPU accepts without complaint but would not do as
 * asked. Each of these once went through silently (issue #18). */
static enum rtit_rule check_requests(const struct rtit_config *c, const struct rtit_caps *k,
                                     struct rtit_violation *v)
{
    unsigned ip_bits = rtit_ip_linear_bits(k);

    if (!c->fabric_en) {
        /* The output first: trace written over a table sends the CPU
		 * through whatever it wrote (the worst of these). */
        if (rtit_topa_tables_overlap_output(c, k))
            FAIL(RTIT_RULE_TOPA_TABLE_OVERLAP, -1);
        /* A single range has no STOP: it wraps silently (36.2.6.1). */
        if (c->output == RTIT_OUTPUT_SINGLE && c->when_full == RTIT_FULL_STOP)
            FAIL(RTIT_RULE_SINGLE_RANGE_STOP, -1);
    }
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        const struct rtit_addr_range *r = &c->range[n];
        if (r->cfg == RTIT_ADDR_CFG_OFF)
            continue;
        /* Canonical for WRMSR (phase 1), but beyond the paging mode
		 * the code runs with: no IP is ever there (SDM Vol. 3A 4.5). */
        if (!x86_canonical(r->start, ip_bits) || !x86_canonical(r->end, ip_bits))
            FAIL(RTIT_RULE_RANGE_BEYOND_PAGING, (int)n);
        /* The range is IP >= ADDRn_A and IP <= ADDRn_B (36.2.4.3):
		 * empty when A > B. Refused rather than swapped: the other
		 * reading (a typo in either address) is as likely. */
        if (r->start > r->end)
            FAIL(RTIT_RULE_RANGE_EMPTY, (int)n);
    }
    return RTIT_RULE_OK;
}

/* Phase 4: errata (policy: the CPU accepts these). */
static enum rtit_rule check_errata(const struct rtit_config *c, const struct rtit_caps *k,
                                   struct rtit_violation *v)
{
    if (!c->fabric_en && c->output == RTIT_OUTPUT_SINGLE &&
        (k->quirks & RTIT_QUIRK_SINGLE_RANGE_4K) && c->single_size > 4096)
        FAIL(RTIT_RULE_SINGLE_ERRATUM, -1);
    return RTIT_RULE_OK;
}

enum rtit_rule rtit_check(const struct rtit_config *c, const struct rtit_caps *k,
                          struct rtit_violation *v)
{
    enum rtit_rule r;

    if (v) {
        v->rule = RTIT_RULE_OK;
        v->index = -1;
    }
    if (!k->leaf7_pt || !k->has_leaf14)
        FAIL(RTIT_RULE_PT_ABSENT, -1);
    r = check_writes(c, k, v);
    if (r != RTIT_RULE_OK)
        return r;
    r = check_output(c, k, v);
    if (r != RTIT_RULE_OK)
        return r;
    r = check_requests(c, k, v);
    if (r != RTIT_RULE_OK)
        return r;
    return check_errata(c, k, v);
}
