/* Bytes and text for format/: see text.h. */
#include "format/text.h"

void bytes_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    for (size_t i = 0; i < n; i++)
        d[i] = s[i];
}

void bytes_move(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s) {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    } else {
        for (size_t i = n; i-- > 0;)
            d[i] = s[i];
    }
}

void bytes_zero(void *dst, size_t n)
{
    unsigned char *d = dst;
    for (size_t i = 0; i < n; i++)
        d[i] = 0;
}

bool bytes_equal(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return false;
    return true;
}

size_t text_len(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

bool text_is(const char *s, size_t n, const char *want)
{
    for (size_t i = 0; i < n; i++)
        if (want[i] != s[i] || !want[i])
            return false;
    return want[n] == '\0';
}

const char *text_find(const char *s, size_t n, char c)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == c)
            return s + i;
    return NULL;
}

void text_out_init(struct text_out *o, char *buf, size_t cap)
{
    o->buf = buf;
    o->cap = cap;
    o->len = 0;
    if (cap)
        buf[0] = '\0';
}

void text_out_chars(struct text_out *o, const char *s, size_t n)
{
    if (o->len + 1 < o->cap) {
        size_t room = o->cap - o->len - 1;
        size_t k = n < room ? n : room;
        bytes_copy(o->buf + o->len, s, k);
        o->buf[o->len + k] = '\0';
    }
    o->len += n;
}

void text_out_str(struct text_out *o, const char *s)
{
    text_out_chars(o, s, text_len(s));
}

void text_out_dec(struct text_out *o, uint64_t v)
{
    char d[20];
    size_t n = 0;
    do {
        d[sizeof d - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    text_out_chars(o, d + sizeof d - n, n);
}

void text_out_hex(struct text_out *o, uint64_t v, unsigned min_digits, bool upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char d[16];
    size_t n = 0;
    do {
        d[sizeof d - 1 - n++] = digits[v & 15];
        v >>= 4;
    } while (v);
    for (; n < min_digits && n < sizeof d; n++)
        d[sizeof d - 1 - n] = '0';
    text_out_chars(o, d + sizeof d - n, n);
}
