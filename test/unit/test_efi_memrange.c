/* format/memrange.c: the readable-memory check behind on-target decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "format/memrange.h"

static void merges_and_finds(void **state)
{
    (void)state;
    struct mem_range st[8];
    struct mem_ranges m;
    mem_ranges_init(&m, st, 8);
    /* out of order, overlapping, adjacent, and one apart */
    assert_true(mem_ranges_add(&m, 0x3000, 0x1000));
    assert_true(mem_ranges_add(&m, 0x1000, 0x1000));
    assert_true(mem_ranges_add(&m, 0x2000, 0x1000)); /* adjacent: merges */
    assert_true(mem_ranges_add(&m, 0x1800, 0x100));  /* inside */
    assert_true(mem_ranges_add(&m, 0x10000, 0x1000));
    assert_true(mem_ranges_add(&m, 0x5000, 0)); /* empty: ignored */
    mem_ranges_finish(&m);
    assert_int_equal(m.count, 2);
    assert_int_equal(st[0].base, 0x1000);
    assert_int_equal(st[0].size, 0x3000);

    assert_true(mem_ranges_contains(&m, 0x1000, 0x3000));
    assert_true(mem_ranges_contains(&m, 0x3fff, 1));
    assert_false(mem_ranges_contains(&m, 0x3fff, 2)); /* runs off the end */
    assert_false(mem_ranges_contains(&m, 0xfff, 1));  /* just below */
    assert_false(mem_ranges_contains(&m, 0x4000, 1)); /* the gap */
    assert_true(mem_ranges_contains(&m, 0x10000, 0x1000));
    assert_false(mem_ranges_contains(&m, 0x10000, 0x1001));
    assert_false(mem_ranges_contains(&m, 0xffffffffffff0000ull, 1));
    assert_int_equal(mem_ranges_readable_from(&m, 0x3ff0), 0x10);
    assert_int_equal(mem_ranges_readable_from(&m, 0x4000), 0);
}

static void full_storage_refuses(void **state)
{
    (void)state;
    struct mem_range st[2];
    struct mem_ranges m;
    mem_ranges_init(&m, st, 2);
    assert_true(mem_ranges_add(&m, 0x1000, 0x1000));
    assert_true(mem_ranges_add(&m, 0x3000, 0x1000));
    assert_false(mem_ranges_add(&m, 0x5000, 0x1000));
    mem_ranges_finish(&m);
    assert_false(mem_ranges_contains(&m, 0x5000, 1)); /* left out: refused */
}

static void top_of_memory(void **state)
{
    (void)state;
    struct mem_range st[2];
    struct mem_ranges m;
    mem_ranges_init(&m, st, 2);
    assert_true(mem_ranges_add(&m, 0xfffffffffffff000ull, 0x2000)); /* wraps: clipped */
    mem_ranges_finish(&m);
    assert_true(mem_ranges_contains(&m, 0xffffffffffffffffull, 1));
    assert_false(mem_ranges_contains(&m, 0xfffffffffffffff0ull, 0x20));
    struct mem_ranges empty;
    mem_ranges_init(&empty, st, 2);
    mem_ranges_finish(&empty);
    assert_false(mem_ranges_contains(&empty, 0, 1));
}

static void many_ranges_binary_search(void **state)
{
    (void)state;
    enum {
        N = 300
    };
    static struct mem_range st[N];
    struct mem_ranges m;
    mem_ranges_init(&m, st, N);
    for (int i = N - 1; i >= 0; i--) /* reverse order: worst case for sorting */
        assert_true(mem_ranges_add(&m, (uint64_t)i * 0x10000, 0x8000));
    mem_ranges_finish(&m);
    assert_int_equal(m.count, N);
    for (int i = 0; i < N; i++) {
        assert_true(mem_ranges_contains(&m, (uint64_t)i * 0x10000 + 0x7fff, 1));
        assert_false(mem_ranges_contains(&m, (uint64_t)i * 0x10000 + 0x8000, 1));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(merges_and_finds),
        cmocka_unit_test(full_storage_refuses),
        cmocka_unit_test(top_of_memory),
        cmocka_unit_test(many_ranges_binary_search),
    };
    return cmocka_run_group_tests_name("efi_memrange", tests, NULL, NULL);
}
