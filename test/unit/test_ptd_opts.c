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
    assert_int_equal(n, 17);
    assert_true(ptd_opts_dump_flag("--libipt-pwre", &f));
    assert_int_equal(f, PTD_FMT_LIBIPT_PWRE);
    assert_true(ptd_opts_dump_flag("--libipt-2.0", &f));
    assert_int_equal(f, PTD_FMT_LIBIPT20);
    assert_true(ptd_opts_dump_flag("--time", &f));
    assert_int_equal(f, PTD_FMT_TIME);
    assert_true(ptd_opts_dump_flag("--keep-tcal-on-ovf", &f));
    assert_int_equal(f, PTD_FMT_KEEP_TCAL_ON_OVF);
}

/* ptdump's timing options with a number, --cpu's timing errata, and
 * --time with --tcal. */
static void dump_time_options(void **state)
{
    (void)state;
    struct ptd_fmt_options o = { 0 };
    const char *why = NULL;
    assert_int_equal(ptd_opts_dump_value("--mtc-freq", "3", &o, &why), 1);
    assert_int_equal(o.time.mtc_freq, 3);
    assert_int_equal(ptd_opts_dump_value("--nom-freq", "0x18", &o, &why), 1);
    assert_int_equal(o.time.nom_freq, 24);
    assert_int_equal(ptd_opts_dump_value("--cpuid-0x15.eax", "2", &o, &why), 1);
    assert_int_equal(ptd_opts_dump_value("--cpuid-0x15.ebx", "4294967295", &o, &why), 1);
    assert_int_equal(o.time.cpuid_0x15_eax, 2);
    assert_int_equal(o.time.cpuid_0x15_ebx, 0xffffffffu);
    assert_int_equal(ptd_opts_dump_value("--raw", "3", &o, &why), 0);
    assert_int_equal(ptd_opts_dump_value("--mtc-freq", "16", &o, &why), -1);
    assert_string_equal(why, "value too big");
    assert_int_equal(ptd_opts_dump_value("--nom-freq", "256", &o, &why), -1);
    assert_int_equal(ptd_opts_dump_value("--nom-freq", "x", &o, &why), -1);
    assert_string_equal(why, "bad argument");
    assert_int_equal(ptd_opts_dump_value("--nom-freq", NULL, &o, &why), -1);
    assert_string_equal(why, "missing argument");
    assert_int_equal(ptd_opts_dump_value("--nom-freq", "--time", &o, &why), -1);
    assert_string_equal(ptd_opts_dump_value_name(0), "--mtc-freq");
    assert_null(ptd_opts_dump_value_name(4));
    ptd_opts_dump_cpu(&o, true, 6, 0x4e);
    assert_int_equal(o.has_cpu, 1);
    assert_int_equal(o.cpu_family, 6);
    assert_int_equal(o.cpu_model, 0x4e);
    ptd_opts_dump_cpu(&o, false, 0, 0);
    assert_int_equal(o.has_cpu, 0);
    assert_int_equal(o.time.errata | o.errata, 0);
    assert_null(ptd_opts_dump_check(&o));
    o.flags = PTD_FMT_TIME | PTD_FMT_TCAL;
    assert_string_equal(ptd_opts_dump_check(&o), "specify either --time or --tcal.");
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
    bool has = false;
    assert_true(ptd_opts_parse_cpu("6/94", &has, &f, &m));
    assert_true(has);
    assert_int_equal(f, 6);
    assert_int_equal(m, 94);
    assert_true(ptd_opts_parse_cpu("6/0x5c/9", &has, &f, &m));
    assert_int_equal(m, 0x5c);
    assert_true(ptd_opts_parse_cpu("19/1", &has, &f, &m));
    assert_int_equal(f, 19);
    assert_true(ptd_opts_parse_cpu("none", &has, &f, &m));
    assert_false(has);
    assert_int_equal(f, 0);
    assert_int_equal(m, 0);
    /* 0/0 is a CPU (libipt's tools report that they do not know it) */
    assert_true(ptd_opts_parse_cpu("0/0", &has, &f, &m));
    assert_true(has);
    assert_false(ptd_opts_parse_cpu("auto", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("6", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("6/", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("/6", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("6/94/1/2", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("6/x", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("6/256", &has, &f, &m));
    assert_false(ptd_opts_parse_cpu("", &has, &f, &m));
}

static void filters(void **state)
{
    (void)state;
    uint64_t lo = 1, hi = 1;
    assert_true(ptd_opts_parse_filter("400000-427000", &lo, &hi));
    assert_int_equal(lo, 0x400000);
    assert_int_equal(hi, 0x427000);
    assert_true(ptd_opts_parse_filter("0x7ffff7819000-0x7ffff79ca000", &lo, &hi));
    assert_true(hi == 0x7ffff79ca000ull);
    assert_true(ptd_opts_parse_filter("0-ffffffffffffffff", &lo, &hi));
    assert_true(hi == UINT64_MAX);
    assert_false(ptd_opts_parse_filter("5-4", &lo, &hi));
    assert_false(ptd_opts_parse_filter("400000", &lo, &hi));
    assert_false(ptd_opts_parse_filter("-4", &lo, &hi));
    assert_false(ptd_opts_parse_filter("4-", &lo, &hi));
    assert_false(ptd_opts_parse_filter("4-g", &lo, &hi));
    assert_false(ptd_opts_parse_filter("1-10000000000000000", &lo, &hi));
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
        cmocka_unit_test(dump_time_options),
        cmocka_unit_test(numbers),
        cmocka_unit_test(cpus),
        cmocka_unit_test(filters),
        cmocka_unit_test(ranges),
    };
    return cmocka_run_group_tests_name("ptd_opts", tests, NULL, NULL);
}
