/* format/code_image.c: code pages and gated live memory for on-target flow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/code_image.h"

#define PG CODE_PAGE_BYTES

static void put_le64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t dump[3 * PG];
static uint8_t addrs[3 * 8];

static void setup_dump(void)
{
    for (int i = 0; i < 3 * PG; i++)
        dump[i] = (uint8_t)(i / PG * 0x40 + i % 0x3f);
    /* out of order: page 2 then 0 then 1; 0x1000 and 0x2000 adjacent */
    put_le64(addrs + 0, 0x2000);
    put_le64(addrs + 8, 0x1000);
    put_le64(addrs + 16, 0x9000);
}

static void reads_across_adjacent_pages(void **state)
{
    (void)state;
    struct code_page st[4];
    struct code_image ci;
    uint8_t buf[64];
    setup_dump();
    code_image_init(&ci, st, 4);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump, addrs, sizeof addrs), 0);
    assert_int_equal(code_image_finish(&ci), 0);
    /* 16 bytes from 8 before the end of 0x1000's page: 8 from dump page 1,
     * 8 from dump page 0 (mapped at 0x2000) */
    assert_int_equal(code_image_read(&ci, 0x1ff8, buf, 16), 16);
    assert_memory_equal(buf, dump + PG + PG - 8, 8);
    assert_memory_equal(buf + 8, dump, 8);
    /* 0x3000 is not mapped: the read stops at 0x2fff */
    assert_int_equal(code_image_read(&ci, 0x2ff0, buf, 64), 16);
    assert_int_equal(code_image_read(&ci, 0x3000, buf, 64), 0);
    assert_int_equal(code_image_read(&ci, 0x9abc, buf, 4), 4);
    assert_memory_equal(buf, dump + 2 * PG + 0xabc, 4);
    assert_int_equal(code_image_read(&ci, 0x0, buf, 4), 0);
    assert_int_equal(code_image_read(&ci, UINT64_MAX - 3, buf, 4), 0);
}

/* the map callback: runs of pages adjacent in both the address space and
 * the dump, in place; other pages on their own; nothing outside */
static void maps_runs_in_place(void **state)
{
    (void)state;
    struct code_page st[4];
    struct code_image ci;
    uint64_t base = 0;
    size_t size = 0;
    setup_dump();
    code_image_init(&ci, st, 4);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump, addrs, sizeof addrs), 0);
    assert_int_equal(code_image_finish(&ci), 0);
    /* 0x1000 (dump page 1) and 0x2000 (dump page 0) are adjacent in the
     * address space but not in the dump: one page each */
    assert_ptr_equal(code_image_map(&ci, 0x1ff8, &base, &size), dump + PG);
    assert_int_equal(base, 0x1000);
    assert_int_equal(size, PG);
    assert_ptr_equal(code_image_map(&ci, 0x2000, &base, &size), dump);
    assert_int_equal(base, 0x2000);
    assert_int_equal(size, PG);
    assert_null(code_image_map(&ci, 0x3000, &base, &size));
    assert_null(code_image_map(&ci, 0xfff, &base, &size));
    /* in order: 0x1000, 0x2000 from dump pages 0, 1 form one run; 0x9000
     * (page 2, next in the dump but not in addresses) is its own */
    put_le64(addrs + 0, 0x1000);
    put_le64(addrs + 8, 0x2000);
    code_image_init(&ci, st, 4);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump, addrs, sizeof addrs), 0);
    assert_int_equal(code_image_finish(&ci), 0);
    for (uint64_t ip = 0x1000; ip < 0x3000; ip += 0x7ff) {
        assert_ptr_equal(code_image_map(&ci, ip, &base, &size), dump);
        assert_int_equal(base, 0x1000);
        assert_int_equal(size, 2 * PG);
    }
    assert_ptr_equal(code_image_map(&ci, 0x9fff, &base, &size), dump + 2 * PG);
    assert_int_equal(base, 0x9000);
    assert_int_equal(size, PG);
    /* what map gives equals what read copies */
    uint8_t buf[32];
    assert_int_equal(code_image_read(&ci, 0x1ff0, buf, 32), 32);
    const uint8_t *m = code_image_map(&ci, 0x1ff0, &base, &size);
    assert_memory_equal(buf, m + (0x1ff0 - base), 32);
}

static void bad_dumps(void **state)
{
    (void)state;
    struct code_page st[2];
    struct code_image ci;
    setup_dump();
    code_image_init(&ci, st, 2);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump - 1, addrs, sizeof addrs),
                     CODE_IMAGE_E_SIZES);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump, addrs, sizeof addrs - 4),
                     CODE_IMAGE_E_SIZES);
    assert_int_equal(code_image_add_dump(&ci, dump, sizeof dump, addrs, sizeof addrs),
                     CODE_IMAGE_E_FULL);
    put_le64(addrs + 8, 0x1001);
    code_image_init(&ci, st, 2);
    assert_int_equal(code_image_add_dump(&ci, dump, 2 * PG, addrs, 16), CODE_IMAGE_E_ALIGN);
    put_le64(addrs + 8, 0x2000);
    code_image_init(&ci, st, 2);
    assert_int_equal(code_image_add_dump(&ci, dump, 2 * PG, addrs, 16), 0);
    assert_int_equal(code_image_finish(&ci), CODE_IMAGE_E_DUP);
    /* an address list of zeros: said as such */
    put_le64(addrs, 0);
    put_le64(addrs + 8, 0);
    code_image_init(&ci, st, 2);
    assert_int_equal(code_image_add_dump(&ci, dump, 2 * PG, addrs, 16), CODE_IMAGE_E_ZERO);
    code_image_init(&ci, st, 2);
    assert_int_equal(code_image_add_dump(&ci, dump, PG, addrs, 8), CODE_IMAGE_E_ZERO);
}

static void live_memory_only_inside_ranges(void **state)
{
    (void)state;
    static uint8_t ram[256];
    for (int i = 0; i < 256; i++)
        ram[i] = (uint8_t)(255 - i);
    struct mem_range rs[2];
    struct mem_ranges live;
    mem_ranges_init(&live, rs, 2);
    mem_ranges_add(&live, (uint64_t)(uintptr_t)ram, 128); /* only the first half */
    mem_ranges_finish(&live);
    struct code_image ci;
    code_image_init(&ci, NULL, 0);
    ci.live = &live;
    uint8_t buf[64];
    uint64_t base = (uint64_t)(uintptr_t)ram;
    assert_int_equal(code_image_read(&ci, base + 100, buf, 64), 28); /* stops at the range end */
    assert_memory_equal(buf, ram + 100, 28);
    assert_int_equal(code_image_read(&ci, base + 128, buf, 64), 0); /* outside: refused */
    assert_int_equal(code_image_read(&ci, 0xfee00000, buf, 16), 0);
    /* live memory is never mapped in place */
    uint64_t mb = 0;
    size_t ms = 0;
    assert_null(code_image_map(&ci, base + 100, &mb, &ms));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_across_adjacent_pages),
        cmocka_unit_test(maps_runs_in_place),
        cmocka_unit_test(bad_dumps),
        cmocka_unit_test(live_memory_only_inside_ranges),
    };
    return cmocka_run_group_tests_name("efi_code_image", tests, NULL, NULL);
}
