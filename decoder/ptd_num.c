#include "decoder/ptd_num.h"

int ptd_num_hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

bool ptd_num_parse_hex(const char *s, size_t len, size_t maxdigits, uint64_t *out)
{
    if (len == 0 || len > maxdigits || maxdigits > 16)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        int d = ptd_num_hex_digit(s[i]);
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return true;
}
