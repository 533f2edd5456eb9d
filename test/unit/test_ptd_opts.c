/* decoder/ptd_opts.c: option words shared by the host CLI and the UEFI app. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/ptd_fmt.h"
#include "decoder/ptd_opts.h"

static void dump_flags_by_name(void **state)
{
    (void)state;
    uint32_t f = 0;
    assert_true(ptd_opts_dump_flag("--raw", &f));
    assert_int_equal(f, PTD_FMT_RAW);
    assert_true(ptd_opts_dump_flag("--no-sync", &f));
    assert_int_equal(f, PTD_FMT_NO_SYNC);
    assert_true(ptd_opts_dump_flag("--exec-mode", &f));
    assert_int_equal(f, PTD_FMT_EXEC_MODE);
    assert_false(ptd_opts_dump_flag("--ra", &f));
    assert_false(ptd_opts_dump_flag("--raw2", &f));
    assert_false(ptd_opts_dump_flag("", &f));
    unsigned n = 0;
    while (ptd_opts_dump_flag_name(n))
        n++;
    assert_int_equal(n, 10);
    assert_true(ptd_opts_dump_flag("--libipt-2.0", &f));
    assert_int_equal(f, PTD_FMT_LIBIPT20);
}

static void numbers(void **state)
{
    (void)state;
    uint64_t v = 0;
    assert_true(ptd_opts_parse_u64("0", &v));
    assert_int_equal(v, 0);
    assert_true(ptd_opts_parse_u64("4096", &v));
    assert_int_equal(v, 4096);
    assert_true(ptd_opts_parse_u64("0x1F", &v));
    assert_int_equal(v, 31);
    assert_true(ptd_opts_parse_u64("017", &v));
    assert_int_equal(v, 15);
    assert_true(ptd_opts_parse_u64("0xffffffffffffffff", &v));
    assert_true(v == UINT64_MAX);
    assert_false(ptd_opts_parse_u64("0x10000000000000000", &v));
    assert_false(ptd_opts_parse_u64("18446744073709551616", &v));
    assert_false(ptd_opts_parse_u64("", &v));
    assert_false(ptd_opts_parse_u64("0x", &v));
    assert_false(ptd_opts_parse_u64("12a", &v));
    assert_false(ptd_opts_parse_u64("08", &v));
    assert_false(ptd_opts_parse_u64("-1", &v));
}

static void cpus(void **state)
{
    (void)state;
    unsigned f = 99, m = 99;
    assert_true(ptd_opts_parse_cpu("6/94", &f, &m));
    assert_int_equal(f, 6);
    assert_int_equal(m, 94);
    assert_true(ptd_opts_parse_cpu("6/0x5c/9", &f, &m));
    assert_int_equal(m, 0x5c);
    assert_true(ptd_opts_parse_cpu("none", &f, &m));
    assert_int_equal(f, 0);
    assert_int_equal(m, 0);
    assert_false(ptd_opts_parse_cpu("6", &f, &m));
    assert_false(ptd_opts_parse_cpu("6/", &f, &m));
    assert_false(ptd_opts_parse_cpu("/6", &f, &m));
    assert_false(ptd_opts_parse_cpu("6/94/1/2", &f, &m));
    assert_false(ptd_opts_parse_cpu("6/x", &f, &m));
    assert_false(ptd_opts_parse_cpu("6/256", &f, &m));
    assert_false(ptd_opts_parse_cpu("", &f, &m));
}

static void ranges(void **state)
{
    (void)state;
    uint64_t from, to;
    bool has_to;
    char a[] = "trace.pt:0x100-0x200";
    ptd_opts_split_range(a, &from, &to, &has_to);
    assert_string_equal(a, "trace.pt");
    assert_int_equal(from, 0x100);
    assert_true(has_to);
    assert_int_equal(to, 0x200);

    char b[] = "trace.pt:64";
    ptd_opts_split_range(b, &from, &to, &has_to);
    assert_string_equal(b, "trace.pt");
    assert_int_equal(from, 64);
    assert_false(has_to);

    /* Not a range: the name keeps its colon and nothing is cut. */
    char c[] = "fs0:\\trace.pt";
    ptd_opts_split_range(c, &from, &to, &has_to);
    assert_string_equal(c, "fs0:\\trace.pt");
    assert_int_equal(from, 0);
    assert_false(has_to);

    char d[] = "trace.pt:0x10-zz";
    ptd_opts_split_range(d, &from, &to, &has_to);
    assert_string_equal(d, "trace.pt:0x10-zz");
    assert_false(has_to);

    char e[] = "trace.pt:";
    ptd_opts_split_range(e, &from, &to, &has_to);
    assert_string_equal(e, "trace.pt:");

    char f[] = "trace.pt";
    ptd_opts_split_range(f, &from, &to, &has_to);
    assert_string_equal(f, "trace.pt");
    assert_int_equal(from, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dump_flags_by_name),
        cmocka_unit_test(numbers),
        cmocka_unit_test(cpus),
        cmocka_unit_test(ranges),
    };
    return cmocka_run_group_tests_name("ptd_opts", tests, NULL, NULL);
}
