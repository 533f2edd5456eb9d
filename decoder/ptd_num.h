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

#endif
