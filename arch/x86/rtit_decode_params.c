#include "arch/x86/rtit_decode_params.h"

#include <stdio.h>
#include <string.h>

#include "arch/x86/rtit_regs.h"

void rtit_decode_params_fill(struct rtit_decode_params *p, const struct rtit_caps *caps,
                             const struct rtit_config *cfg, const struct rtit_msr_ops *msrs)
{
    memset(p, 0, sizeof(*p));
    p->family = caps->family;
    p->model = caps->model;
    p->stepping = caps->stepping;
    if (caps->has_leaf15) {
        p->cpuid15_eax = caps->tsc_denominator;
        p->cpuid15_ebx = caps->tsc_numerator;
        p->crystal_hz = caps->crystal_hz;
    }
    p->mtc_en = cfg->mtc_en;
    p->mtc_freq = cfg->mtc_freq;
    p->ctl = rtit_config_ctl(cfg, true);
    p->maxphyaddr = caps->maxphyaddr;
    p->lip = caps->lip;
    memcpy(p->range, cfg->range, sizeof(p->range));
    if (msrs && msrs->rd && caps->family == 6 && strcmp(caps->vendor, "GenuineIntel") == 0) {
        uint64_t v;
        if (msrs->rd(msrs->ctx, X86_MSR_PLATFORM_INFO, &v) == 0) {
            p->nom_freq = X86_PLATFORM_INFO_NOM_RATIO(v);
            p->nom_freq_valid = true;
        }
    }
}

int rtit_decode_params_libipt_args(const struct rtit_decode_params *p, char *buf, size_t size)
{
    int n = snprintf(buf, size, "--cpu %u/%u/%u", (unsigned)p->family, (unsigned)p->model,
                     (unsigned)p->stepping);
    int total = n;
#define MORE(...)                                                  \
    do {                                                           \
        size_t used = (size_t)total < size ? (size_t)total : size; \
        n = snprintf(buf + used, size - used, __VA_ARGS__);        \
        if (n > 0)                                                 \
            total += n;                                            \
    } while (0)
    if (p->mtc_en)
        MORE(" --mtc-freq %u", p->mtc_freq);
    if (p->nom_freq_valid)
        MORE(" --nom-freq %u", p->nom_freq);
    if (p->cpuid15_eax && p->cpuid15_ebx)
        MORE(" --cpuid-0x15.eax %u --cpuid-0x15.ebx %u", (unsigned)p->cpuid15_eax,
             (unsigned)p->cpuid15_ebx);
#undef MORE
    return total;
}
