#include "arch/x86/pt_caps.h"

#include <string.h>

#include "arch/x86/cpuid_bits.h"
#include "arch/x86/x86_paging.h"

const char *rtit_pt_reason_name(enum rtit_pt_reason r)
{
    switch (r) {
    case RTIT_PT_OK: return "ok";
    case RTIT_PT_NO_LEAF7: return "no-leaf7";
    case RTIT_PT_NO_PT_BIT: return "no-pt-bit";
    case RTIT_PT_NO_LEAF14: return "no-leaf14";
    case RTIT_PT_NO_OUTPUT: return "no-output";
    }
    return "unknown";
}

uint32_t x86_display_family(uint32_t sig)
{
    uint32_t f = X86_CPUID1_EAX_FAMILY(sig);
    /* Extended family only counts when the base family is 0Fh. */
    if (f == 0xf)
        f += X86_CPUID1_EAX_EXT_FAMILY(sig);
    return f;
}

uint32_t x86_display_model(uint32_t sig)
{
    uint32_t f = X86_CPUID1_EAX_FAMILY(sig);
    uint32_t m = X86_CPUID1_EAX_MODEL(sig);
    /* Extended model only counts for base family 06h or 0Fh. */
    if (f == 0x6 || f == 0xf)
        m += X86_CPUID1_EAX_EXT_MODEL(sig) << 4;
    return m;
}

/* Single-range output above 4 KiB, by family 6 model. Published errata
 * "Trace May Contain Incorrect Data When Configured With Single Range
 * Output Larger Than 4KB": TGL052 (Tiger Lake), ADL037 (Alder Lake),
 * RPL017 (Raptor Lake). The later client parts have no such erratum in
 * any source we could check, but Linux stopped trusting single range above
 * 4 KiB on every CPU when it met these (ce0d998be927, Nov 2022, "Future
 * processors might also be affected"; its author, Intel's PT maintainer:
 * "a blacklist would keep expanding"), and they descend from the same
 * client designs (libipt's pt_cpu_errata() treats 0x97..0xcc as one
 * family). A false alarm costs one ToPA table (the default output); a
 * miss costs silently wrong trace, so they are listed as a precaution. */
static const struct {
    uint8_t model;
    const char *why;
} single_range_4k_models[] = {
    { 0x8c, "Tiger Lake: TGL052" },
    { 0x8d, "Tiger Lake: TGL052" },
    { 0x97, "Alder Lake: ADL037" },
    { 0x9a, "Alder Lake: ADL037" },
    { 0xb7, "Raptor Lake: RPL017" },
    { 0xba, "Raptor Lake: RPL017" },
    { 0xbf, "Raptor Lake: RPL017" },
    { 0xbe, "Alder Lake-N: precaution (an Alder Lake part; ADL037)" },
    { 0xaa, "Meteor Lake: precaution" },
    { 0xac, "Meteor Lake: precaution" },
    { 0xc5, "Arrow Lake: precaution" },
    { 0xc6, "Arrow Lake: precaution" },
    { 0xb5, "Arrow Lake: precaution" },
    { 0xbd, "Lunar Lake: precaution" },
    { 0xcc, "Panther Lake: precaution" },
};

const char *rtit_single_range_4k_reason(uint32_t family, uint32_t model)
{
    if (family != 6)
        return NULL;
    for (size_t i = 0; i < sizeof(single_range_4k_models) / sizeof(single_range_4k_models[0]); i++)
        if (single_range_4k_models[i].model == model)
            return single_range_4k_models[i].why;
    return NULL;
}

static unsigned intel_quirks(uint32_t family, uint32_t model)
{
    unsigned q = 0;
    if (family != 6)
        return 0;
    switch (model) {
    case 0x3d:
    case 0x47:
    case 0x4f:
    case 0x56: /* Broadwell */ q |= RTIT_QUIRK_BRANCHEN_REQUIRED; break;
    case 0x5c:
    case 0x5f:
    case 0x7a: /* Goldmont, Goldmont Plus */ q |= RTIT_QUIRK_CORE_SCOPED_MSRS; break;
    }
    if (rtit_single_range_4k_reason(family, model))
        q |= RTIT_QUIRK_SINGLE_RANGE_4K;
    return q;
}

static void decode_leaf14(struct rtit_caps *c)
{
    uint32_t b = c->leaf14_0.ebx, x = c->leaf14_0.ecx;

    c->cr3_filter = b & RTIT_CPUID14_EBX_CR3_FILTER;
    c->psb_cyc = b & RTIT_CPUID14_EBX_PSB_CYC;
    c->ip_filter = b & RTIT_CPUID14_EBX_IP_FILTER;
    c->mtc = b & RTIT_CPUID14_EBX_MTC;
    c->ptwrite = b & RTIT_CPUID14_EBX_PTWRITE;
    c->power_events = b & RTIT_CPUID14_EBX_POWER_EVENTS;
    c->psb_pmi_preserve = b & RTIT_CPUID14_EBX_PSB_PMI_PRESERVE;
    c->event_trace = b & RTIT_CPUID14_EBX_EVENT_TRACE;
    c->tnt_disable = b & RTIT_CPUID14_EBX_TNT_DISABLE;
    c->topa = x & RTIT_CPUID14_ECX_TOPA;
    c->topa_multi_entry = x & RTIT_CPUID14_ECX_TOPA_MENTRY;
    c->single_range = x & RTIT_CPUID14_ECX_SINGLE_RANGE;
    c->trace_transport = x & RTIT_CPUID14_ECX_TRACE_TRANSPORT;
    c->lip = x & RTIT_CPUID14_ECX_LIP;
    if (c->has_leaf14_1) {
        c->num_ranges = RTIT_CPUID14_1_EAX_RANGES(c->leaf14_1.eax);
        c->mtc_periods = (uint16_t)RTIT_CPUID14_1_EAX_MTC_BITMAP(c->leaf14_1.eax);
        c->cyc_thresholds = (uint16_t)RTIT_CPUID14_1_EBX_CYC_BITMAP(c->leaf14_1.ebx);
        c->psb_periods = (uint16_t)RTIT_CPUID14_1_EBX_PSB_BITMAP(c->leaf14_1.ebx);
    }
}

int rtit_caps_read(struct rtit_caps *c, x86_cpuid_fn fn, void *ctx)
{
    x86_cpuid_regs r;

    if (!c || !fn)
        return -1;
    memset(c, 0, sizeof(*c));

    fn(ctx, X86_CPUID_LEAF_VENDOR, 0, &r);
    c->max_basic_leaf = r.eax;
    memcpy(c->vendor + 0, &r.ebx, 4);
    memcpy(c->vendor + 4, &r.edx, 4);
    memcpy(c->vendor + 8, &r.ecx, 4);
    c->vendor[12] = '\0';

    if (c->max_basic_leaf >= X86_CPUID_LEAF_FEATURES) {
        fn(ctx, X86_CPUID_LEAF_FEATURES, 0, &r);
        c->signature = r.eax;
        c->hypervisor = r.ecx & X86_CPUID1_ECX_HYPERVISOR;
        c->family = x86_display_family(r.eax);
        c->model = x86_display_model(r.eax);
        c->stepping = X86_CPUID1_EAX_STEPPING(r.eax);
    }

    /* Extended leaves exist only if 80000000h:EAX is itself an extended
	 * leaf number; otherwise EAX holds unrelated data (on Intel, the
	 * highest basic leaf's). */
    fn(ctx, X86_CPUID_LEAF_EXT_MAX, 0, &r);
    if ((r.eax & 0xffff0000u) == X86_CPUID_EXT_BASE)
        c->max_ext_leaf = r.eax;
    c->maxphyaddr = X86_MAXPHYADDR_DEFAULT;
    if (c->max_ext_leaf >= X86_CPUID_LEAF_ADDR_SIZES) {
        fn(ctx, X86_CPUID_LEAF_ADDR_SIZES, 0, &r);
        if (X86_CPUID_ADDR_EAX_PHYS(r.eax)) {
            c->maxphyaddr = X86_CPUID_ADDR_EAX_PHYS(r.eax);
            c->maxphyaddr_enumerated = true;
        }
    }

    if (c->max_basic_leaf >= X86_CPUID_LEAF_TSC) {
        fn(ctx, X86_CPUID_LEAF_TSC, 0, &r);
        /* EBX=0 means the ratio is not enumerated (SDM Vol. 2A, 15h). */
        if (r.eax && r.ebx) {
            c->has_leaf15 = true;
            c->tsc_denominator = r.eax;
            c->tsc_numerator = r.ebx;
            c->crystal_hz = r.ecx;
        }
    }

    if (strcmp(c->vendor, "GenuineIntel") == 0)
        c->quirks = intel_quirks(c->family, c->model);

    /* PT enumeration: CPUID.(7,0).EBX[25], and leaf 14h must be a real
	 * leaf - on Intel an out-of-range leaf returns the highest basic leaf,
	 * which is why QEMU (max leaf 0Dh) shows "PT caps" at leaf 14h. */
    if (c->max_basic_leaf < X86_CPUID_LEAF_EXT_FEATURES) {
        c->reason = RTIT_PT_NO_LEAF7;
        return 0;
    }
    fn(ctx, X86_CPUID_LEAF_EXT_FEATURES, 0, &r);
    c->leaf7_pt = r.ebx & X86_CPUID7_EBX_PT;
    c->hybrid = strcmp(c->vendor, "GenuineIntel") == 0 && (r.edx & X86_CPUID7_EDX_HYBRID);
    c->leaf7_ecx = r.ecx;
    c->la57 = r.ecx & X86_CPUID7_ECX_LA57;
    /* The paging mode of the CPU running this code, when these are its
	 * capabilities (a dump describes some other machine: 4-level). */
    if (c->la57 && fn == x86_cpuid_native)
        c->paging_la57 = x86_paging_la57_native();
    if (!c->leaf7_pt) {
        c->reason = RTIT_PT_NO_PT_BIT;
        return 0;
    }
    if (c->max_basic_leaf < X86_CPUID_LEAF_PT) {
        c->reason = RTIT_PT_NO_LEAF14;
        return 0;
    }

    fn(ctx, X86_CPUID_LEAF_PT, 0, &c->leaf14_0);
    c->has_leaf14 = true;
    /* 14h.0:EAX is the maximum subleaf (36.3.1). */
    if (c->leaf14_0.eax >= 1) {
        fn(ctx, X86_CPUID_LEAF_PT, 1, &c->leaf14_1);
        c->has_leaf14_1 = true;
    }
    decode_leaf14(c);

    if (!c->topa && !c->single_range) {
        c->reason = RTIT_PT_NO_OUTPUT;
        return 0;
    }
    c->pt = true;
    c->reason = RTIT_PT_OK;
    return 0;
}
