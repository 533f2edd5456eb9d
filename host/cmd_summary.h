/* `ptboot summary`: the on-target decode summary (decoder/ptd_sum.h) of a
 * trace on the workstation. host_summary_write is the part other commands
 * call once they have the trace, the code and the image table (the
 * sideband). */
#ifndef HOST_CMD_SUMMARY_H
#define HOST_CMD_SUMMARY_H

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

#endif
