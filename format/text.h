/* Bytes and text for the formats of format/: the few pieces of <string.h>
 * and snprintf they need, written out so that format/ stays freestanding
 * like decoder/ (stdint/stddef/stdbool only, no libc, no allocation) and
 * builds wherever the decoder does. */
#ifndef PTBOOT_FORMAT_TEXT_H
#define PTBOOT_FORMAT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void bytes_copy(void *dst, const void *src, size_t n);
/* As bytes_copy, for overlapping ranges. */
void bytes_move(void *dst, const void *src, size_t n);
void bytes_zero(void *dst, size_t n);
bool bytes_equal(const void *a, const void *b, size_t n);

size_t text_len(const char *s);
/* The n bytes at s are exactly the text want (no more, no less). */
bool text_is(const char *s, size_t n, const char *want);
/* The first c among the n bytes at s, or NULL. */
const char *text_find(const char *s, size_t n, char c);

/* Text written into a caller's buffer the way snprintf writes it: buf
 * keeps what fits, always NUL-terminated when cap > 0, and len counts
 * every character asked for, so len >= cap means the text was cut. */
struct text_out {
    char *buf;
    size_t cap, len;
};

void text_out_init(struct text_out *o, char *buf, size_t cap);
void text_out_chars(struct text_out *o, const char *s, size_t n);
void text_out_str(struct text_out *o, const char *s);
/* Unsigned decimal, as %u / %llu. */
void text_out_dec(struct text_out *o, uint64_t v);
/* Hex digits, at least min_digits (zero padded; 1 as %x), lowercase as
 * %x / %llx or uppercase as %X. No "0x": the caller writes it. */
void text_out_hex(struct text_out *o, uint64_t v, unsigned min_digits, bool upper);

#endif
