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

bool ptd_num_parse_u64(const char *s, size_t len, enum ptd_num_base base, uint64_t *out)
{
    unsigned b = base == PTD_NUM_HEX ? 16 : 10;
    size_t i = 0;
    if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        b = 16;
        i = 2;
    } else if (base == PTD_NUM_AUTO && len >= 2 && s[0] == '0' && s[1] >= '0' && s[1] <= '9') {
        b = 8;
        i = 1;
    }
    uint64_t v = 0;
    size_t digits = 0;
    for (; i < len; i++, digits++) {
        int d = ptd_num_hex_digit(s[i]);
        if (d < 0 || d >= (int)b)
            break;
        if (v > (UINT64_MAX - (uint64_t)d) / b)
            return false;
        v = v * b + (uint64_t)d;
    }
    if (!digits)
        return false;
    if (i < len) {
        unsigned shift;
        switch (s[i]) {
        case 'k':
        case 'K': shift = 10; break;
        case 'm':
        case 'M': shift = 20; break;
        case 'g':
        case 'G': shift = 30; break;
        default: return false;
        }
        if (i + 1 != len || v > (UINT64_MAX >> shift))
            return false;
        v <<= shift;
    }
    *out = v;
    return true;
}

bool ptd_num_parse(const char *s, enum ptd_num_base base, uint64_t *out)
{
    size_t n = 0;
    if (!s)
        return false;
    while (s[n])
        n++;
    return ptd_num_parse_u64(s, n, base, out);
}

bool ptd_num_parse_pair(const char *s, enum ptd_num_base base, uint64_t *a, uint64_t *b,
                        const char **rest)
{
    size_t i = 0, j;
    if (!s)
        return false;
    while (s[i] && s[i] != ':')
        i++;
    if (s[i] != ':' || !ptd_num_parse_u64(s, i, base, a))
        return false;
    for (j = i + 1; s[j] && s[j] != ':'; j++)
        ;
    if (!ptd_num_parse_u64(s + i + 1, j - i - 1, base, b))
        return false;
    if (rest)
        *rest = s + j;
    return true;
}
