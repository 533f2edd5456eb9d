/* libFuzzer target over the sideband text (format/sideband.h): arbitrary text
 * through sideband_parse() must end in 0 or an error naming a line inside
 * the text, never an out-of-bounds access (ASan/UBSan). A text that parses
 * is written back with sideband_write() (the target's writer); that text
 * parses again to the very same sideband, and writing it once more gives
 * the same text (the writer and the parser agree on every field). */
#include <stdlib.h>
#include <string.h>

#include "format/sideband.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 512 images of at most ~160 characters, the header lines besides */
#define TEXT_MAX SIDEBAND_TEXT_MAX

/* Bytes after a string's NUL are not part of it (a key given twice leaves
 * the longer first value's tail there): cleared before comparing. */
static void clear_tail(char *s, size_t cap)
{
    size_t n = strnlen(s, cap);
    if (n < cap)
        memset(s + n, 0, cap - n);
}

static void normalize(struct sideband *sb)
{
    clear_tail(sb->cpu.vendor, sizeof sb->cpu.vendor);
    for (uint32_t i = 0; i < sb->nimages; i++)
        clear_tail(sb->images[i].name, sizeof sb->images[i].name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct sideband a, b;
    static char t1[TEXT_MAX], t2[TEXT_MAX];
    struct sideband_error err;
    unsigned lines = 1;

    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    if (sideband_parse(&a, (const char *)data, size, &err) < 0) {
        if (!err.msg || err.line > lines)
            abort();
        return 0;
    }
    if (a.nimages > SIDEBAND_MAX_IMAGES || a.config.nfilter > SIDEBAND_MAX_FILTERS)
        abort();
    for (uint32_t i = 0; i < a.nimages; i++)
        if (!memchr(a.images[i].name, 0, SIDEBAND_NAME_MAX))
            abort();
    size_t n1 = sideband_write(&a, t1, sizeof t1);
    if (n1 >= sizeof t1 || strlen(t1) != n1)
        abort();
    if (sideband_parse(&b, t1, n1, &err) < 0)
        abort(); /* the writer's own text is refused: err.line, err.msg say why */
    normalize(&a);
    normalize(&b);
    if (memcmp(&a, &b, sizeof a))
        abort();
    size_t n2 = sideband_write(&b, t2, sizeof t2);
    if (n2 != n1 || memcmp(t1, t2, n1))
        abort();
    return 0;
}
