/* ToPA tables: single-entry layout, multi-entry ring and stop, chaining past
 * 511 entries, and the mapping of output pointers back to buffer offsets. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_memory.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_test_util.h"

#define BUF 0x40000000ull
#define TAB 0x3ff00000ull
#define EPT RTIT_TOPA_ENTRIES_PER_TABLE

static uint64_t mem[4 * EPT];

static struct rtit_config cfg(unsigned regions, unsigned code, enum rtit_when_full w)
{
    struct rtit_caps k = rtit_fixture_caps("skylake-client.txt");
    struct rtit_config c;
    rtit_config_default(&c, &k);
    c.regions = regions;
    c.region_size_code = code;
    c.when_full = w;
    c.buffer_phys = BUF;
    c.table_phys = TAB;
    return c;
}

static void test_entry_encoding(void **state)
{
    (void)state;
    assert_int_equal(rtit_topa_entry(0x40200000, 9, 0), 0x40200240);
    assert_int_equal(rtit_topa_entry(0x40200000, 9, RTIT_TOPA_STOP), 0x40200250);
    assert_int_equal(rtit_topa_entry(TAB, 0, RTIT_TOPA_END), TAB | 1);
    assert_int_equal(rtit_topa_entry(0x1234567000ull, 15, RTIT_TOPA_INT), 0x12345673c4ull);
}

static void test_single_entry_layout(void **state)
{
    (void)state;
    /* Broadwell: no MENTRY: one region, END back to the same table */
    struct rtit_caps k = rtit_fixture_caps("broadwell-client.txt");
    struct rtit_config c;
    struct rtit_topa_layout l;
    rtit_config_default(&c, &k);
    c.buffer_phys = BUF;
    c.table_phys = TAB;
    c.region_size_code = 9;
    assert_int_equal(rtit_check(&c, &k, NULL), RTIT_RULE_OK);
    memset(mem, 0xa5, sizeof(mem));
    assert_int_equal(rtit_topa_build(&l, &c, mem, 1), 0);
    assert_int_equal(l.tables, 1);
    assert_int_equal(mem[0], BUF | 9u << 6);
    assert_int_equal(mem[1], TAB | RTIT_TOPA_END);
    for (unsigned i = 2; i < EPT; i++)
        assert_int_equal(mem[i], 0);
    /* stop-when-full on the single entry */
    c.when_full = RTIT_FULL_STOP;
    assert_int_equal(rtit_topa_build(&l, &c, mem, 1), 0);
    assert_int_equal(mem[0], BUF | 9u << 6 | RTIT_TOPA_STOP);
    assert_int_equal(mem[1], TAB | RTIT_TOPA_END);
}

static void test_ring(void **state)
{
    (void)state;
    struct rtit_config c = cfg(3, 1, RTIT_FULL_RING); /* 3 x 8 KiB */
    struct rtit_topa_layout l;
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(l.tables, 1);
    assert_int_equal(l.region_bytes, 8192);
    assert_int_equal(mem[0], BUF | 1u << 6);
    assert_int_equal(mem[1], (BUF + 8192) | 1u << 6);
    assert_int_equal(mem[2], (BUF + 16384) | 1u << 6);
    assert_int_equal(mem[3], TAB | RTIT_TOPA_END);
    assert_int_equal(mem[4], 0);
}

static void test_stop(void **state)
{
    (void)state;
    struct rtit_config c = cfg(3, 0, RTIT_FULL_STOP);
    struct rtit_topa_layout l;
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(mem[0] & RTIT_TOPA_STOP, 0);
    assert_int_equal(mem[1] & RTIT_TOPA_STOP, 0);
    assert_int_equal(mem[2], (BUF + 8192) | RTIT_TOPA_STOP);
    assert_int_equal(mem[3], TAB | RTIT_TOPA_END);
}

static void test_chained(void **state)
{
    (void)state;
    struct rtit_topa_layout l;
    /* 600 regions: 511 in table 0 + END -> table 1; 89 + END -> table 0 */
    struct rtit_config c = cfg(600, 0, RTIT_FULL_STOP);
    assert_int_equal(rtit_check(&c, &(struct rtit_caps){ 0 }, NULL), RTIT_RULE_PT_ABSENT);
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(l.tables, 2);
    assert_int_equal(mem[510], (BUF + 510 * 4096ull));
    assert_int_equal(mem[511], (TAB + 4096) | RTIT_TOPA_END);
    assert_int_equal(mem[EPT + 0], BUF + 511 * 4096ull);
    assert_int_equal(mem[EPT + 88], (BUF + 599 * 4096ull) | RTIT_TOPA_STOP);
    assert_int_equal(mem[EPT + 89], TAB | RTIT_TOPA_END);
    assert_int_equal(mem[EPT + 90], 0);
    size_t t;
    unsigned i;
    rtit_topa_region_slot(&l, 599, &t, &i);
    assert_int_equal(t, 1);
    assert_int_equal(i, 88);

    /* exactly 511: one table with END at the last slot */
    c = cfg(511, 0, RTIT_FULL_RING);
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(l.tables, 1);
    assert_int_equal(mem[511], TAB | RTIT_TOPA_END);
    /* 1022: two full tables, the last END back to table 0 */
    c = cfg(1022, 0, RTIT_FULL_RING);
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(l.tables, 2);
    assert_int_equal(mem[511], (TAB + 4096) | RTIT_TOPA_END);
    assert_int_equal(mem[EPT + 511], TAB | RTIT_TOPA_END);
    /* 1534: three tables */
    c = cfg(1534, 0, RTIT_FULL_RING);
    assert_int_equal(rtit_topa_tables_needed(1534, true), 4);
    assert_int_equal(rtit_topa_tables_needed(1533, true), 3);
    assert_int_equal(rtit_topa_tables_needed(5, false), 1);
}

static void test_errors(void **state)
{
    (void)state;
    struct rtit_topa_layout l;
    struct rtit_config c = cfg(600, 0, RTIT_FULL_RING);
    assert_int_equal(rtit_topa_build(&l, &c, mem, 1), RTIT_TOPA_E_CAPACITY);
    assert_int_equal(rtit_topa_build(&l, &c, NULL, 4), RTIT_TOPA_E_CAPACITY);
    c.regions = 0;
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), RTIT_TOPA_E_CONFIG);
    c = cfg(1, 0, RTIT_FULL_RING);
    c.output = RTIT_OUTPUT_SINGLE;
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), RTIT_TOPA_E_CONFIG);
}

static uint64_t ptrs(unsigned idx, uint64_t off)
{
    return RTIT_MASK_LOWER | (uint64_t)idx << RTIT_MASK_TABLE_SHIFT | off << RTIT_MASK_OFFSET_SHIFT;
}

static void test_position(void **state)
{
    (void)state;
    struct rtit_topa_layout l;
    struct rtit_config c = cfg(600, 0, RTIT_FULL_STOP);
    assert_int_equal(rtit_topa_build(&l, &c, mem, 4), 0);
    assert_int_equal(rtit_topa_position(&l, TAB, ptrs(0, 0)), 0);
    assert_int_equal(rtit_topa_position(&l, TAB, ptrs(3, 100)), 3 * 4096 + 100);
    /* on table 0's END: next table's first region */
    assert_int_equal(rtit_topa_position(&l, TAB, ptrs(511, 0)), 511 * 4096);
    assert_int_equal(rtit_topa_position(&l, TAB + 4096, ptrs(0, 5)), 511 * 4096 + 5);
    /* stopped: STOP entry index, offset = region size -> all bytes */
    assert_int_equal(rtit_topa_position(&l, TAB + 4096, ptrs(88, 4096)), 600 * 4096);
    /* last END -> back to region 0 */
    assert_int_equal(rtit_topa_position(&l, TAB + 4096, ptrs(89, 0)), 0);
    /* not in the layout */
    assert_int_equal(rtit_topa_position(&l, TAB + 8192, ptrs(0, 0)), -1);
    assert_int_equal(rtit_topa_position(&l, TAB + 8, ptrs(0, 0)), -1);
    assert_int_equal(rtit_topa_position(&l, TAB, ptrs(3, 4097)), -1);
    assert_int_equal(rtit_topa_position(&l, TAB + 4096, ptrs(90, 0)), -1);
}

/* rtit_memory_place: for many sizes and block addresses, a block of
 * need.block_bytes holds aligned, non-overlapping buffer and tables, and
 * the placed configuration passes rtit_check. */
static void test_memory_place(void **state)
{
    (void)state;
    struct rtit_caps k = rtit_fixture_caps("skylake-client.txt");
    uint64_t x = 12345;
    for (int i = 0; i < 3000; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        struct rtit_config c;
        struct rtit_memory_need n;
        rtit_config_default(&c, &k);
        c.output = (x >> 60) & 1 ? RTIT_OUTPUT_SINGLE : RTIT_OUTPUT_TOPA;
        c.regions = 1 + (unsigned)((x >> 20) % 1100);
        c.region_size_code = (unsigned)((x >> 40) % 16);
        c.single_size = (uint64_t)128 << ((x >> 33) % 26);
        /* stop-when-full only with ToPA (single-range-stop) */
        c.when_full = c.output == RTIT_OUTPUT_TOPA ? (x >> 50) & 1 : RTIT_FULL_RING;
        assert_int_equal(rtit_memory_need(&c, &k, &n), 0);
        uint64_t block = ((x >> 8) & 0xfffff) << 12; /* 4 KiB aligned, < 4 GiB */
        assert_int_equal(rtit_memory_place(&c, &k, block, n.block_bytes), 0);
        uint64_t end = block + n.block_bytes;
        assert_true(c.buffer_phys >= block && c.buffer_phys + n.buffer_bytes <= end);
        assert_int_equal(c.buffer_phys % n.buffer_align, 0);
        if (c.output == RTIT_OUTPUT_TOPA) {
            assert_true(c.table_phys >= block && c.table_phys + n.table_bytes <= end);
            assert_true(c.table_phys + n.table_bytes <= c.buffer_phys ||
                        c.table_phys >= c.buffer_phys + n.buffer_bytes);
        }
        struct rtit_violation v;
        if (rtit_check(&c, &k, &v) != RTIT_RULE_OK)
            fail_msg("placed config refused: %s", rtit_rule_name(v.rule));
        /* one page less may not be enough, but must never overlap */
        if (rtit_memory_place(&c, &k, block, n.block_bytes - 4096) == 0)
            assert_true(c.buffer_phys + n.buffer_bytes <= block + n.block_bytes - 4096);
    }
    struct rtit_config c;
    struct rtit_memory_need n;
    rtit_config_default(&c, &k);
    c.regions = 2;
    c.region_size_code = 9; /* 2 x 2 MiB + one table */
    assert_int_equal(rtit_memory_need(&c, &k, &n), 0);
    assert_int_equal(n.table_bytes, 4096);
    assert_int_equal(n.buffer_bytes, 4u << 20);
    assert_int_equal(n.buffer_align, 2u << 20);
    assert_int_equal(n.block_bytes, (4u << 20) + (2u << 20));
    /* block at 0x1000: buffer at 2 MiB, table in the gap before it */
    assert_int_equal(rtit_memory_place(&c, &k, 0x1000, n.block_bytes), 0);
    assert_int_equal(c.buffer_phys, 2u << 20);
    assert_int_equal(c.table_phys, 0x1000);
    /* block at 2 MiB: no gap, table after the buffer */
    assert_int_equal(rtit_memory_place(&c, &k, 2u << 20, n.block_bytes), 0);
    assert_int_equal(c.buffer_phys, 2u << 20);
    assert_int_equal(c.table_phys, 6u << 20);
    assert_int_equal(rtit_memory_place(&c, &k, 0x1000, 4u << 20), RTIT_MEMORY_E_SPACE);
    c.regions = 0;
    assert_int_equal(rtit_memory_need(&c, &k, &n), RTIT_MEMORY_E_CONFIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_entry_encoding), cmocka_unit_test(test_single_entry_layout),
        cmocka_unit_test(test_ring),           cmocka_unit_test(test_stop),
        cmocka_unit_test(test_chained),        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_position),       cmocka_unit_test(test_memory_place),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
