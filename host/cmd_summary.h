/* `ptboot summary`: the on-target decode summary (decoder/ptd_sum.h) of a
 * trace on the workstation. host_summary_write is the part other commands
 * call once they have the trace, the code and the image table (the
 * sideband). */
#ifndef HOST_CMD_SUMMARY_H
#define HOST_CMD_SUMMARY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/ptd_sum.h"
#include "host/flow_opts.h"

/* Summary of the trace fo describes (after flow_opts_finish), with
 * cfg's modules and limits (cfg->arena NULL: PTD_SUM_ARENA_SUGGESTED
 * bytes are allocated; cfg->line NULL: lines go to out). tcfg: timing
 * configuration or NULL. With stat, a last "summary: ..." totals line.
 * Returns 0, or 1 when memory ran out. */
int host_summary_write(struct flow_opts *fo, const struct ptd_time_config *tcfg,
                       const struct ptd_sum_config *cfg, int stat, FILE *out);

/* The host's default summary arena for a trace of trace_bytes: 16 bytes
 * per trace byte, from PTD_SUM_ARENA_SUGGESTED (the target's) to 1 GiB
 * (docs/summary.md). */
size_t host_summary_arena_bytes(uint64_t trace_bytes);

/* --module BASE:SIZE:NAME (summary and export): base and size in hex (0x
 * optional, K/M/G taken: the one parser, decoder/ptd_num.h), size not 0,
 * a name; m->name points into v. 0, or -1 on anything else. */
int host_summary_parse_module(const char *v, struct ptd_sum_module *m);

#endif
