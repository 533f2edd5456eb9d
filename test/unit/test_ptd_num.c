/* decoder/ptd_num.c: hex digits and exact-length hex fields, as the serial
 * frame parser and the option parser take them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/ptd_num.h"

static void hex_digits(void **state)
{
    (void)state;
    const char *digits = "0123456789abcdef", *upper = "ABCDEF";
    for (int i = 0; i < 16; i++)
        assert_int_equal(ptd_num_hex_digit(digits[i]), i);
    for (int i = 0; i < 6; i++)
        assert_int_equal(ptd_num_hex_digit(upper[i]), 10 + i);
    /* the neighbours of each range in ASCII */
    const char *not_hex = "/:@G`g xX-\0";
    for (size_t i = 0; i < strlen(not_hex) + 1; i++)
        assert_int_equal(ptd_num_hex_digit(not_hex[i]), -1);
}

static void parse_hex_fields(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_true(ptd_num_parse_hex("0", 1, 16, &v));
    assert_int_equal(v, 0);
    assert_true(ptd_num_parse_hex("DeadBeef", 8, 8, &v));
    assert_int_equal(v, 0xdeadbeefu);
    assert_true(ptd_num_parse_hex("ffffffffffffffff", 16, 16, &v));
    assert_true(v == UINT64_MAX);
    /* only s[0..len) counts: the rest of a line is not read */
    assert_true(ptd_num_parse_hex("12 zz", 2, 16, &v));
    assert_int_equal(v, 0x12);

    v = 7;
    assert_false(ptd_num_parse_hex("", 0, 16, &v));
    assert_false(ptd_num_parse_hex("123456789", 9, 8, &v));           /* over maxdigits */
    assert_false(ptd_num_parse_hex("10000000000000000", 17, 17, &v)); /* would overflow */
    assert_false(ptd_num_parse_hex("0x10", 4, 16, &v));               /* no prefix */
    assert_false(ptd_num_parse_hex("-1", 2, 16, &v));
    assert_false(ptd_num_parse_hex("1g", 2, 16, &v));
    assert_int_equal(v, 7); /* untouched on failure */
}

/* the one parser of every command's numbers: bases and K/M/G everywhere */
static void one_number_parser(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        enum ptd_num_base base;
        bool ok;
        uint64_t v;
    } cases[] = {
        { "64M", PTD_NUM_AUTO, true, 64ull << 20 },    /* --arena 64M */
        { "64m", PTD_NUM_DEC_HEX, true, 64ull << 20 }, /* buffer=64m */
        { "4K", PTD_NUM_AUTO, true, 4096 },
        { "1G", PTD_NUM_AUTO, true, 1ull << 30 },
        { "0x10K", PTD_NUM_AUTO, true, 16ull << 10 },
        { "400000", PTD_NUM_AUTO, true, 400000 },  /* ptxed: --raw FILE:400000 is decimal */
        { "400000", PTD_NUM_HEX, true, 0x400000 }, /* --filter, --module */
        { "0x400000", PTD_NUM_HEX, true, 0x400000 },
        { "010", PTD_NUM_AUTO, true, 8 },     /* strtoull's base 0 */
        { "010", PTD_NUM_DEC_HEX, true, 10 }, /* option words */
        { "0", PTD_NUM_AUTO, true, 0 },
        { "0K", PTD_NUM_AUTO, true, 0 },
        { "18446744073709551615", PTD_NUM_AUTO, true, UINT64_MAX },
        { "18446744073709551616", PTD_NUM_AUTO, false, 0 },
        { "17179869184G", PTD_NUM_AUTO, false, 0 }, /* 2^34 GiB overflows */
        { "17179869183G", PTD_NUM_AUTO, true, 17179869183ull << 30 },
        { "", PTD_NUM_AUTO, false, 0 },
        { "0x", PTD_NUM_AUTO, false, 0 },
        { "K", PTD_NUM_AUTO, false, 0 },
        { "1KB", PTD_NUM_AUTO, false, 0 },
        { "1T", PTD_NUM_AUTO, false, 0 },
        { "-1", PTD_NUM_AUTO, false, 0 },
        { " 1", PTD_NUM_AUTO, false, 0 },
        { "08", PTD_NUM_AUTO, false, 0 }, /* not octal */
        { "12g3", PTD_NUM_AUTO, false, 0 },
        { "abc", PTD_NUM_DEC_HEX, false, 0 },
        { "abc", PTD_NUM_HEX, true, 0xabc },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        bool ok = ptd_num_parse(cases[i].s, cases[i].base, &v);
        if (ok != cases[i].ok || (ok && v != cases[i].v))
            fail_msg("'%s' (base %d): %d %llu", cases[i].s, cases[i].base, ok,
                     (unsigned long long)v);
    }
    /* exactly len bytes: a field inside a longer text */
    uint64_t v;
    assert_true(ptd_num_parse_u64("400000:1000:name", 6, PTD_NUM_HEX, &v));
    assert_true(v == 0x400000);
    assert_false(ptd_num_parse(NULL, PTD_NUM_AUTO, &v));
}

/* "A:B" pairs (--module BASE:SIZE:NAME, memmap --mark --also BASE:SIZE) */
static void number_pairs(void **state)
{
    (void)state;
    uint64_t a = 0, b = 0;
    const char *rest = NULL;
    assert_true(ptd_num_parse_pair("0x1000:4K", PTD_NUM_AUTO, &a, &b, &rest));
    assert_true(a == 0x1000 && b == 4096 && *rest == 0);
    assert_true(ptd_num_parse_pair("1000:200:name:x", PTD_NUM_HEX, &a, &b, &rest));
    assert_true(a == 0x1000 && b == 0x200 && !strcmp(rest, ":name:x"));
    assert_true(ptd_num_parse_pair("10:010", PTD_NUM_AUTO, &a, &b, NULL));
    assert_true(a == 10 && b == 8); /* strtoull's base 0: a leading 0 is octal */
    /* what strtoull took silently: trailing junk, a missing number, a sign,
     * overflow, no colon */
    assert_false(ptd_num_parse_pair("0x1000x:10", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("0x1000:", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair(":10", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("-1:10", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("1: 10", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("1:0x10000000000000000", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("4096", PTD_NUM_AUTO, &a, &b, &rest));
    assert_false(ptd_num_parse_pair("zz:10", PTD_NUM_HEX, &a, &b, &rest));
    assert_false(ptd_num_parse_pair(NULL, PTD_NUM_HEX, &a, &b, &rest));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hex_digits),
        cmocka_unit_test(parse_hex_fields),
        cmocka_unit_test(one_number_parser),
        cmocka_unit_test(number_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
