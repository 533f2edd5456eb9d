#include "arch/x86/rtit_filter.h"

#include "arch/x86/x86_paging.h"

int rtit_filter_add(struct rtit_config *cfg, const struct rtit_caps *caps, unsigned kind,
                    uint64_t start, uint64_t end)
{
    if (kind != RTIT_ADDR_CFG_FILTER && kind != RTIT_ADDR_CFG_STOP)
        return RTIT_FILTER_E_KIND;
    if (end < start)
        return RTIT_FILTER_E_EMPTY;
    /* ADDRn MSRs #GP on non-canonical values (36.2.7.5); beyond the
	 * paging mode's width no code runs (rtit_config.h) */
    unsigned bits = rtit_ip_linear_bits(caps);
    if (!x86_canonical(start, bits) || !x86_canonical(end, bits))
        return RTIT_FILTER_E_NONCANONICAL;
    for (unsigned n = 0; n < caps->num_ranges && n < RTIT_MAX_RANGES; n++) {
        if (cfg->range[n].cfg != RTIT_ADDR_CFG_OFF)
            continue;
        cfg->range[n].cfg = kind;
        cfg->range[n].start = start;
        cfg->range[n].end = end;
        return (int)n;
    }
    return RTIT_FILTER_E_FULL;
}

int rtit_filter_add_image(struct rtit_config *cfg, const struct rtit_caps *caps, uint64_t base,
                          uint64_t size)
{
    if (size == 0 || base + (size - 1) < base)
        return RTIT_FILTER_E_EMPTY;
    return rtit_filter_add(cfg, caps, RTIT_ADDR_CFG_FILTER, base, base + (size - 1));
}

const char *rtit_filter_strerror(int err)
{
    switch (err) {
    case RTIT_FILTER_E_FULL: return "no free address range (CPUID.(14h,1).EAX[2:0] ranges in use)";
    case RTIT_FILTER_E_EMPTY: return "empty address range (end before start)";
    case RTIT_FILTER_E_NONCANONICAL:
        return "address not canonical in the paging mode the code runs with";
    case RTIT_FILTER_E_KIND: return "range kind must be filter (1) or trace-stop (2)";
    }
    return err >= 0 ? "ok" : "unknown error";
}
