/* Option words shared by the front ends (host CLI and UEFI app), so the same
 * command line means the same thing on the workstation and on the target.
 * Freestanding: no libc. */
#ifndef PTD_OPTS_H
#define PTD_OPTS_H

#include <stdbool.h>
#include <stdint.h>

/* ptdump's flag options (--no-pad, --raw, ...) -> PTD_FMT_* bits. Returns
 * true and sets *flag if name is one of them. */
bool ptd_opts_dump_flag(const char *name, uint32_t *flag);
/* The i-th flag option's name, NULL past the end (for usage texts). */
const char *ptd_opts_dump_flag_name(unsigned i);

/* An unsigned number as C writes it: 0x.. hex, 0.. octal, else decimal.
 * The whole string must be the number; returns false on anything else or
 * on overflow. */
bool ptd_opts_parse_u64(const char *s, uint64_t *out);

/* libipt's --cpu argument: "none", or "f/m" or "f/m/s" (numbers as
 * ptd_opts_parse_u64 takes them). Returns false on anything else; for
 * "none" *family and *model are 0. */
bool ptd_opts_parse_cpu(const char *s, unsigned *family, unsigned *model);

/* "file[:from[-to]]" as libipt's tools take it: the suffix after the last
 * ':' is a byte range only if it parses as one, so names that contain ':'
 * (fs0:\trace.pt) still work. On a range, name is cut at the ':'. */
void ptd_opts_split_range(char *name, uint64_t *from, uint64_t *to, bool *has_to);

#endif
