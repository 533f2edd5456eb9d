/* The sideband's CPU facts and configuration (format/sideband.h) from
 * arch/x86's tables: the capture path has them anyway, and the sideband
 * format itself knows nothing of arch/. Pure C, no UEFI types: the host
 * unit tests run this code too. */
#ifndef PTBOOT_EFI_CAPTURE_SIDEBAND_CPU_H
#define PTBOOT_EFI_CAPTURE_SIDEBAND_CPU_H

#include <stdint.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_decode_params.h"
#include "format/sideband.h"

/* The CPU facts and the configuration from arch/x86's tables (the capture
 * path has them anyway): caps as read from CPUID, p from
 * rtit_decode_params_fill() (MSR_PLATFORM_INFO read there), cfg as
 * programmed. Any may be NULL. */
void sideband_set_cpu(struct sideband *sb, const struct rtit_caps *caps,
                      const struct rtit_decode_params *p);
void sideband_set_config(struct sideband *sb, const struct rtit_config *cfg, uint64_t buffer_bytes);
/* A software trace unit's capture: unit soft, and cpu.cpuid15 the soft
 * unit's crystal-clock ratio (arch/x86/soft_unit.h), which is what turns
 * its MTCs into TSC ticks, not the CPU's leaf 15h. */
void sideband_set_soft_unit(struct sideband *sb);

#endif
