/* What `ptboot flow` and `ptboot summary` say when a decode is likely to
 * be silent garbage (issue #17 "Silent garbage"): no code given at all, or
 * code given where the trace never goes (a --raw base read as decimal, as
 * ptxed reads it, when it was meant as hex). Both go to stderr and change
 * nothing else. */
#ifndef HOST_FLOW_HINTS_H
#define HOST_FLOW_HINTS_H

#include <stdint.h>
#include <stdio.h>

#include "host/flow_opts.h"

/* No code image at all (no --pages, --raw, --elf, --pe, no capture code):
 * every instruction would fail with "no memory mapped". */
void flow_hint_no_code(const struct flow_opts *fo, const char *prog, FILE *to);

/* After a decode of insns instructions: when none was decoded and none of
 * the trace's first IPs (from its TIP/FUP packets) falls in a loaded
 * section, names the sections and those IPs and the numbers' bases.
 * Returns 1 when it said so. */
int flow_hint_outside(const struct flow_opts *fo, uint64_t insns, const char *prog, FILE *to);

#endif
