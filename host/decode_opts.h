/* The options `ptboot flow` and `ptboot summary` share beyond flow_opts:
 * --capture DIR (host_capture_load) and ptxed's timing options
 * (--mtc-freq, --nom-freq, --cpuid-0x15.eax, --cpuid-0x15.ebx), so both
 * commands take them with the same words, limits and messages. */
#ifndef HOST_DECODE_OPTS_H
#define HOST_DECODE_OPTS_H

#include "decoder/ptd_time.h"
#include "host/capture.h"
#include "host/flow_opts.h"

/* Looks at argv[*i]. Returns 0 if it is none of these options; 1 if it was
 * taken with its argument (*i advanced past it); or, after a message
 * "PROG: ..." on stderr, the negated exit status: -2 bad usage (missing or
 * out-of-range argument), -1 a capture directory that does not load. A
 * --capture replaces an earlier one in *cap and fills *fo and *tcfg. */
int host_decode_opts_parse(struct flow_opts *fo, struct ptd_time_config *tcfg,
                           struct host_capture *cap, int argc, char **argv, int *i,
                           const char *prog);

/* The whole input side of `ptboot flow` and `ptboot summary`: flow_opts'
 * words (--pt, --pages, --raw, --filter, --cpu, ...) then the ones above.
 * Returns 1 if argv[*i] was taken, 0 if it is none of them, or the negated
 * exit status after a message: -2 bad usage, -1 a file or capture that
 * does not load. */
int host_decode_opts_take(struct flow_opts *fo, struct ptd_time_config *tcfg,
                          struct host_capture *cap, int argc, char **argv, int *i,
                          const char *prog);

#endif
