/* `--symbols PATH` for `ptboot flow`, `summary` and `export`, and the
 * modules the names come from (host/sym/names.h): the capture's images
 * (with their CodeView facts), --module BASE:SIZE:NAME, and the --elf/--pe
 * files (each its own debug file). */
#ifndef HOST_SYM_NAMES_OPTS_H
#define HOST_SYM_NAMES_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_sum.h"
#include "host/capture.h"
#include "host/flow_opts.h"
#include "host/sym/names.h"

/* argv[*i] is --symbols PATH: 1 taken (*i advanced), 0 not it; after a
 * message "PROG: ..." on stderr, -2 (no PATH) or -1 (PATH unreadable). */
int names_opts_take(struct names *n, int argc, char **argv, int *i, const char *prog);

/* Adds the modules, given ones first; -1 when memory ran out. */
int names_opts_finish(struct names *n, const struct host_capture *cap, const struct flow_opts *fo,
                      const struct ptd_sum_module *given, size_t ngiven);

/* Are there names beyond module+offset to give (--symbols, or an --elf/
 * --pe file)? Without, the commands print what they always printed. */
int names_opts_active(const struct names *n);

/* The --elf/--pe files as summary modules, appended to mods (up to max);
 * returns the new count. */
size_t names_opts_code_modules(const struct flow_opts *fo, struct ptd_sum_module *mods, size_t n,
                               size_t max);

/* `flow --sym`'s column: "  func+0xOFF" (module+0xOFF without a
 * symbol, "  ?" outside every module) appended at p, bounded by end;
 * returns the new end of the text. */
char *names_flow_column(struct names *n, uint64_t ip, char *p, char *end);

/* ptd_sum's name callback over a struct names: function+offset and line. */
size_t names_sum_name(void *ctx, uint64_t ip, char *buf, size_t cap);

#endif
