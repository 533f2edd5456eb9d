#include "arch/x86/x86_fmt.h"

char *x86_fmt_hex64(char buf[X86_FMT_HEX64_LEN], uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[16];
    int n = 0;
    do {
        tmp[n++] = digits[v & 0xf];
        v >>= 4;
    } while (v);
    buf[0] = '0';
    buf[1] = 'x';
    for (int i = 0; i < n; i++)
        buf[2 + i] = tmp[n - 1 - i];
    buf[2 + n] = '\0';
    return buf;
}

char *x86_fmt_dec64(char buf[X86_FMT_DEC64_LEN], uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
    return buf;
}
