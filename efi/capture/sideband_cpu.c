/* The sideband's CPU facts and configuration: see sideband_cpu.h. */
#include <string.h>

#include "arch/x86/rtit_regs.h"
#include "arch/x86/soft_unit.h"
#include "efi/capture/sideband_cpu.h"

void sideband_set_cpu(struct sideband *sb, const struct rtit_caps *caps,
                      const struct rtit_decode_params *p)
{
    struct sideband_cpu *c = &sb->cpu;
    if (caps) {
        memcpy(c->vendor, caps->vendor, sizeof(c->vendor));
        c->vendor[sizeof(c->vendor) - 1] = '\0';
        c->family = caps->family;
        c->model = caps->model;
        c->stepping = caps->stepping;
        if (caps->has_leaf15) {
            c->cpuid15_eax = caps->tsc_denominator;
            c->cpuid15_ebx = caps->tsc_numerator;
            c->cpuid15_ecx = caps->crystal_hz;
        }
        if (caps->has_leaf14) {
            c->cpuid14_eax = caps->leaf14_0.eax;
            c->cpuid14_ebx = caps->leaf14_0.ebx;
            c->cpuid14_ecx = caps->leaf14_0.ecx;
        }
    }
    if (p) {
        c->nom_freq_valid = p->nom_freq_valid;
        c->nom_freq = p->nom_freq;
        sb->config.ctl = p->ctl;
    }
}

void sideband_set_config(struct sideband *sb, const struct rtit_config *cfg, uint64_t buffer_bytes)
{
    struct sideband_config *k = &sb->config;
    k->buffer_bytes = buffer_bytes;
    if (!cfg)
        return;
    k->tsc = cfg->tsc_en;
    k->mtc = cfg->mtc_en;
    k->cyc = cfg->cyc_en;
    k->mtc_freq = cfg->mtc_freq;
    k->cyc_thresh = cfg->cyc_thresh;
    k->psb_freq = cfg->psb_freq;
    k->ring = cfg->when_full == RTIT_FULL_RING;
    k->nfilter = 0;
    for (unsigned i = 0; i < RTIT_MAX_RANGES && i < SIDEBAND_MAX_FILTERS; i++) {
        if (cfg->range[i].cfg == RTIT_ADDR_CFG_OFF)
            continue;
        k->filter[k->nfilter].kind = cfg->range[i].cfg;
        k->filter[k->nfilter].a = cfg->range[i].start;
        k->filter[k->nfilter].b = cfg->range[i].end;
        k->nfilter++;
    }
}

void sideband_set_soft_unit(struct sideband *sb)
{
    sb->unit = SIDEBAND_UNIT_SOFT;
    sb->cpu.cpuid15_eax = SOFT_UNIT_CPUID15_EAX;
    sb->cpu.cpuid15_ebx = SOFT_UNIT_CPUID15_EBX;
    sb->cpu.cpuid15_ecx = 0;
}
