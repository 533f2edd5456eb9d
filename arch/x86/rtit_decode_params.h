/* What a decoder must know about a capture, recorded next to the trace
 * (libipt doc/howto_capture.md; rtit.md 4.5): the CPU (errata are keyed by
 * family/model/stepping), CPUID 15h (TSC:crystal ratio for MTC/CYC time),
 * the nominal ratio from MSR_PLATFORM_INFO (CBR to time), the MTC period
 * and the CTL value used, MAXPHYADDR, LIP vs RIP, the address ranges. */
#ifndef PTBOOT_ARCH_X86_RTIT_DECODE_PARAMS_H
#define PTBOOT_ARCH_X86_RTIT_DECODE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_msr.h"

struct rtit_decode_params {
    uint32_t family, model, stepping;
    uint32_t cpuid15_eax, cpuid15_ebx; /* 0 when leaf 15h is absent */
    uint32_t crystal_hz;
    bool mtc_en;
    unsigned mtc_freq;
    bool nom_freq_valid; /* MSR_PLATFORM_INFO was readable */
    unsigned nom_freq;
    uint64_t ctl; /* IA32_RTIT_CTL with TraceEn */
    unsigned maxphyaddr;
    bool lip;
    struct rtit_addr_range range[RTIT_MAX_RANGES];
};

/* msrs may be NULL (no nominal ratio then); only MSR_PLATFORM_INFO is
 * read, and only on Intel family 6 where it exists. */
void rtit_decode_params_fill(struct rtit_decode_params *p, const struct rtit_caps *caps,
                             const struct rtit_config *cfg, const struct rtit_msr_ops *msrs);

/* The same as options of libipt's ptdump/ptxed, e.g.
 * "--cpu 6/94/3 --mtc-freq 3 --nom-freq 40 --cpuid-0x15.eax 2
 *  --cpuid-0x15.ebx 334" (family/model/stepping in decimal, as libipt
 * parses them). Returns snprintf's count. */
int rtit_decode_params_libipt_args(const struct rtit_decode_params *p, char *buf, size_t size);

#endif
