/* IP filtering with the address ranges (IA32_RTIT_ADDRn_A/B and
 * IA32_RTIT_CTL.ADDRn_CFG; SDM 36.2.4.3 "Filtering by IP", 36.2.5.5
 * "TraceStop"): a FilterEn range traces only while the IP is inside
 * [start, end]; a TraceStop range stops tracing (STATUS.Stopped) when a
 * branch or event enters it - e.g. the firmware's assert or dead-loop
 * handler, to keep the last branches before a hang. Ranges are compared as
 * linear addresses (LIP) or RIP per CPUID.(14h,0).ECX[31]; with the 64-bit
 * UEFI CS base of 0 both are the same. */
#ifndef PTBOOT_ARCH_X86_RTIT_FILTER_H
#define PTBOOT_ARCH_X86_RTIT_FILTER_H

#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"

enum rtit_filter_error {
    RTIT_FILTER_E_FULL = -1,         /* every enumerated range is in use */
    RTIT_FILTER_E_EMPTY = -2,        /* end < start, or size 0 */
    RTIT_FILTER_E_NONCANONICAL = -3, /* start or end not canonical */
    RTIT_FILTER_E_KIND = -4,         /* not RTIT_ADDR_CFG_FILTER / _STOP */
};

/* Puts [start, end] (inclusive) into the first free range n below
 * CPUID.(14h,1).EAX[2:0] with ADDRn_CFG = kind. Returns n, or a negative
 * rtit_filter_error (cfg unchanged). Linux programs an empty range as 0/0
 * ("produces no data"); here it is refused so a mistake is visible. */
int rtit_filter_add(struct rtit_config *cfg, const struct rtit_caps *caps, unsigned kind,
                    uint64_t start, uint64_t end);

/* The image [base, base + size) as a FilterEn range: trace only it. */
int rtit_filter_add_image(struct rtit_config *cfg, const struct rtit_caps *caps, uint64_t base,
                          uint64_t size);

const char *rtit_filter_strerror(int err);

#endif
