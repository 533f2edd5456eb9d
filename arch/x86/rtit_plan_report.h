/* The start plan as text, for `ptboot plan` on the host and the UEFI info
 * command on the target:
 *
 *   topa <table> <index> 0x<entry>     every used ToPA entry, table order
 *   wrmsr 0x<msr> 0x<value>            the writes of rtit_start(), in order
 *
 * or, when rtit_check() refuses the configuration:
 *
 *   refused <rule-name> kind=<#GP|operational-error|unhonoured|erratum|invalid> [range=<n>]
 *   why: <sentence citing the SDM>
 */
#ifndef PTBOOT_ARCH_X86_RTIT_PLAN_REPORT_H
#define PTBOOT_ARCH_X86_RTIT_PLAN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"

/* Addresses a plan uses when none are given (`ptboot plan`, and the UEFI
 * info command's plan for the running CPU): illustrative, aligned up to
 * 1 GiB for the buffer, the first table 1 MiB below it. */
#define RTIT_PLAN_DEFAULT_BUFFER 0x40000000ull
#define RTIT_PLAN_DEFAULT_TABLE  0x3ff00000ull

/* The first ToPA table's address when none was given: RTIT_PLAN_DEFAULT_TABLE
 * while the tables there stay clear of the output regions (up to 256
 * tables with the default buffer); else directly below the buffer, or
 * right after it when there is no room below, so a default never puts a
 * table inside the output (topa-table-overlap refuses that for addresses
 * someone gave). *moved is set when it is not RTIT_PLAN_DEFAULT_TABLE: say
 * so (rtit_plan_default_table_note). cfg->buffer_phys must be set. */
uint64_t rtit_plan_default_table(const struct rtit_config *cfg, const struct rtit_caps *caps,
                                 bool *moved);

/* "table-base 0x... (N ToPA tables would overlap the output at the default
 * 0x3ff00000; placed below the buffer)" into buf. */
void rtit_plan_default_table_note(char *buf, size_t len, const struct rtit_config *cfg,
                                  const struct rtit_caps *caps);

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
