/* decoder/ptd_num.c: hex digits and exact-length hex fields, as the serial
 * frame parser and the option parser take them. */
#include <setjmp.h>
#include <stdarg.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hex_digits),
        cmocka_unit_test(parse_hex_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
