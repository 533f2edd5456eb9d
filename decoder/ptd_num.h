/* Numbers in text: the decoder's parsers (serial frames, option words) and,
 * through the digit value, arch/x86's CPUID dump and option parsers and the
 * app's sideband parser. Freestanding: no libc. */
#ifndef PTD_NUM_H
#define PTD_NUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of a hex digit (either case), -1 for any other character. */
int ptd_num_hex_digit(char c);

/* Exactly the hex digits s[0..len) (no prefix, no sign, either case), 1 to
 * maxdigits of them (maxdigits <= 16, so no overflow). Returns false on
 * anything else. s need not be NUL-terminated. */
bool ptd_num_parse_hex(const char *s, size_t len, size_t maxdigits, uint64_t *out);

/* The one parser of numbers on command lines and in option words (the
 * app's and the host's commands alike): an unsigned integer in base
 *   PTD_NUM_AUTO     0x hex, a leading 0 octal, else decimal (strtoull's
 *                    base 0: what libipt's ptdump/ptxed take)
 *   PTD_NUM_DEC_HEX  0x hex, else decimal (leading zeros too)
 *   PTD_NUM_HEX      hex, 0x optional (addresses given as hex)
 * and an optional size suffix K, M or G (either case: 2^10, 2^20, 2^30),
 * so `--arena 64M` and `buffer=64M` read alike. Exactly s[0..len) (no
 * sign, no blanks); false on anything else or on overflow. */
enum ptd_num_base {
    PTD_NUM_AUTO,
    PTD_NUM_DEC_HEX,
    PTD_NUM_HEX,
};
bool ptd_num_parse_u64(const char *s, size_t len, enum ptd_num_base base, uint64_t *out);
/* The same for a NUL-terminated string. */
bool ptd_num_parse(const char *s, enum ptd_num_base base, uint64_t *out);

/* "A:B" at the start of s, both numbers as ptd_num_parse_u64 reads them,
 * ended by the string's end or another ':' (`--module BASE:SIZE:NAME`,
 * `memmap --mark --also BASE:SIZE`): *rest then points there (to "" or to
 * ":NAME"). False when either number is missing or bad. */
bool ptd_num_parse_pair(const char *s, enum ptd_num_base base, uint64_t *a, uint64_t *b,
                        const char **rest);

#endif
