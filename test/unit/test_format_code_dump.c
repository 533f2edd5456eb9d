/* format/code_image.c: the code dump writer, read back by its reader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/code_image.h"

#define PG CODE_PAGE_BYTES

static uint8_t src[3 * PG];
static uint8_t pages[4 * PG];
static uint64_t addr[4];

/* the .addr bytes are little-endian u64s whatever the host's order */
static void addresses_are_little_endian(void **state)
{
    (void)state;
    uint8_t b[16];
    code_dump_set_addr(b, 1, 0x1122334455667000ull);
    const uint8_t want[8] = { 0x00, 0x70, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 };
    assert_memory_equal(b + 8, want, 8);
    assert_true(code_dump_addr(b, 1) == 0x1122334455667000ull);
}

/* pages written by the writer are the pages the reader serves */
static void written_dump_reads_back(void **state)
{
    (void)state;
    struct code_dump d;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(i * 7 + i / PG);
    code_dump_init(&d, pages, addr, 4);
    assert_int_equal(code_dump_add(&d, 0x7000, src + PG), CODE_IMAGE_OK);
    assert_int_equal(code_dump_add(&d, 0x5000, src), CODE_IMAGE_OK);
    assert_int_equal(code_dump_add(&d, 0x6000, src + 2 * PG), CODE_IMAGE_OK);
    assert_int_equal(code_dump_find(&d, 0x6000), 2);
    assert_int_equal(code_dump_find(&d, 0x8000), 3); /* not there: count */
    assert_int_equal(code_dump_pages_bytes(&d), 3 * PG);
    assert_int_equal(code_dump_addr_bytes(&d), 3 * 8);

    struct code_page st[3];
    struct code_image ci;
    code_image_init(&ci, st, 3);
    assert_int_equal(code_image_add_dump(&ci, d.pages, code_dump_pages_bytes(&d),
                                         (const uint8_t *)d.addr, code_dump_addr_bytes(&d)),
                     CODE_IMAGE_OK);
    assert_int_equal(code_image_finish(&ci), CODE_IMAGE_OK);
    uint8_t got[3 * PG];
    assert_int_equal(code_image_read(&ci, 0x5000, got, sizeof got), sizeof got);
    assert_memory_equal(got, src, PG);               /* 0x5000 */
    assert_memory_equal(got + PG, src + 2 * PG, PG); /* 0x6000 */
    assert_memory_equal(got + 2 * PG, src + PG, PG); /* 0x7000 */
}

/* what the format forbids, the writer refuses */
static void writer_refuses(void **state)
{
    (void)state;
    struct code_dump d;
    code_dump_init(&d, pages, addr, 2);
    assert_int_equal(code_dump_add(&d, 0x5008, src), CODE_IMAGE_E_ALIGN);
    assert_int_equal(d.count, 0);
    assert_int_equal(code_dump_add(&d, 0x5000, src), CODE_IMAGE_OK);
    assert_int_equal(code_dump_add(&d, 0x9000, src), CODE_IMAGE_OK);
    assert_int_equal(code_dump_add(&d, 0xa000, src), CODE_IMAGE_E_FULL);
    assert_int_equal(d.count, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(addresses_are_little_endian),
        cmocka_unit_test(written_dump_reads_back),
        cmocka_unit_test(writer_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
