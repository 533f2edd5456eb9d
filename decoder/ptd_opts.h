/* Option words shared by the front ends (host CLI and UEFI app), so the same
 * command line means the same thing on the workstation and on the target.
 * Freestanding: no libc. */
#ifndef PTD_OPTS_H
#define PTD_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "decoder/ptd_fmt.h"
#include "decoder/ptd_fmt_flow.h"

/* ptdump's flag options (--no-pad, --raw, ...) -> PTD_FMT_* bits. Returns
 * true and sets *flag if name is one of them. */
bool ptd_opts_dump_flag(const char *name, uint32_t *flag);
/* The i-th flag option's name, NULL past the end (for usage texts). */
const char *ptd_opts_dump_flag_name(unsigned i);

/* ptdump's options that take a number: --mtc-freq (0..15), --nom-freq
 * (0..255), --cpuid-0x15.eax, --cpuid-0x15.ebx (32 bits); they set
 * opt->time. Returns 1 if name is one of them and arg was taken (the caller
 * skips arg), 0 if name is none of them, -1 if arg is missing or bad, with
 * ptdump's words for it in *why ("missing argument", "bad argument",
 * "value too big"). */
int ptd_opts_dump_value(const char *name, const char *arg, struct ptd_fmt_options *opt,
                        const char **why);
/* The i-th numeric option's name, NULL past the end (for usage texts). */
const char *ptd_opts_dump_value_name(unsigned i);

/* --cpu: decode with that CPU's packet and timing errata (has_cpu false:
 * none; see struct ptd_fmt_options). */
void ptd_opts_dump_cpu(struct ptd_fmt_options *opt, bool has_cpu, unsigned family, unsigned model);

/* Options that cannot go together: NULL if fine, else ptdump's complaint
 * ("specify either --time or --tcal."). */
const char *ptd_opts_dump_check(const struct ptd_fmt_options *opt);

/* An unsigned number as C writes it: 0x.. hex, 0.. octal, else decimal,
 * with an optional K/M/G size suffix (decoder/ptd_num.h, the one parser).
 * The whole string must be the number; returns false on anything else or
 * on overflow. */
bool ptd_opts_parse_u64(const char *s, uint64_t *out);

/* libipt's --cpu argument: "none", or "f/m" or "f/m/s" (numbers as
 * ptd_opts_parse_u64 takes them; family up to 0xffff, model up to 0xff).
 * Returns false on anything else; *has_cpu is false for "none" (and
 * *family, *model 0). Any f/m is a CPU, 0/0 included (libipt then says it
 * does not know it). */
bool ptd_opts_parse_cpu(const char *s, bool *has_cpu, unsigned *family, unsigned *model);

/* ptxed-style "--filter LO-HI": two hex numbers (0x optional), LO <= HI,
 * both inclusive. Returns false on anything else. */
bool ptd_opts_parse_filter(const char *s, uint64_t *lo, uint64_t *hi);

/* "file[:from[-to]]" as libipt's tools take it: the suffix after the last
 * ':' is a byte range only if it parses as one, so names that contain ':'
 * (fs0:\trace.pt) still work. On a range, name is cut at the ':'. */
void ptd_opts_split_range(char *name, uint64_t *from, uint64_t *to, bool *has_to);

/* ptxed's words for the flow (no value): output (--event:ip, --offset,
 * --quiet/-q, --time, --event:time, --stat, --stat:insn, --stat:blocks,
 * --block:show-blocks), the decoder (--insn-decoder, --block-decoder,
 * --resync-on-error) and its flags (--event:tick, --event:iflags,
 * --block:end-on-call, --block:end-on-jump, --insn:keep-tcal-on-ovf,
 * --block:keep-tcal-on-ovf), ptboot's --libipt-pwre, and --check
 * (accepted: the flow layer always checks). As in ptxed, the block
 * decoder's flags apply to it only, the instruction decoder's to it. */
struct ptd_flow_opts {
    uint32_t fmt;   /* PTD_FMT_FLOW_* */
    unsigned flags; /* PTD_FLOW_F_* for either decoder */
    unsigned block_flags, insn_flags;
    uint8_t stat, stat_insn, stat_blocks;
};
/* Takes name if it is one of them (true). */
bool ptd_opts_flow_word(struct ptd_flow_opts *o, const char *name);
/* The i-th word's name, NULL past the end (for usage texts). */
const char *ptd_opts_flow_word_name(unsigned i);
/* After parsing: the PTD_FLOW_F_* flags of the decoder chosen. */
unsigned ptd_opts_flow_flags(const struct ptd_flow_opts *o);
/* The counts to print after the flow, as ptxed: --stat alone both the
 * instructions and (with the block decoder) the blocks; --stat:insn and
 * --stat:blocks only theirs. */
void ptd_opts_flow_stats(const struct ptd_flow_opts *o, bool *insn, bool *blocks);

#endif
