/* The start plan as text, for `ptboot plan` on the host and the UEFI info
 * command on the target:
 *
 *   topa <table> <index> 0x<entry>     every used ToPA entry, table order
 *   wrmsr 0x<msr> 0x<value>            the writes of rtit_start(), in order
 *
 * or, when rtit_check() refuses the configuration:
 *
 *   refused <rule-name> kind=<#GP|operational-error|erratum|invalid> [range=<n>]
 *   why: <sentence citing the SDM>
 */
#ifndef PTBOOT_ARCH_X86_RTIT_PLAN_REPORT_H
#define PTBOOT_ARCH_X86_RTIT_PLAN_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"

/* Addresses a plan uses when none are given (`ptboot plan`, and the UEFI
 * info command's plan for the running CPU): illustrative, aligned up to
 * 1 GiB for the buffer, the first table 1 MiB below it. */
#define RTIT_PLAN_DEFAULT_BUFFER 0x40000000ull
#define RTIT_PLAN_DEFAULT_TABLE  0x3ff00000ull

/* table_mem: room for table_capacity ToPA tables (512 entries each) where
 * the tables are built (they are not needed for single range). Returns
 * RTIT_RULE_OK (0) when the plan was emitted, the refusing rule (> 0), or
 * a negative rtit_topa_error when table_mem is too small. */
int rtit_plan_report(const struct rtit_config *cfg, const struct rtit_caps *caps,
		     uint64_t *table_mem, size_t table_capacity,
		     void (*emit)(void *ctx, const char *line), void *ctx);

/* The plan of rtit_config_default() for caps at the default addresses
 * (one 4 KiB region: one table, kept on the stack). Same return values. */
int rtit_plan_report_default(const struct rtit_caps *caps,
			     void (*emit)(void *ctx, const char *line), void *ctx);

#endif
