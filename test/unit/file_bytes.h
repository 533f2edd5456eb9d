/* A test's input file, whole, in a malloc'd buffer (one byte more, for
 * parsers that want room to spare): a cmocka failure naming the file and
 * how it is made when it cannot be read. Include after <cmocka.h>. */
#ifndef TEST_UNIT_FILE_BYTES_H
#define TEST_UNIT_FILE_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint8_t *file_bytes(const char *path, size_t *len, const char *made_by)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("%s: cannot open (%s)", path, made_by);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

#endif
