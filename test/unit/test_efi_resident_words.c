/* The resident driver's words (efi/resident/words.c), the parser both
 * `install` (checking now) and the driver (reading its LoadOptions) run:
 * defaults, every word with good and bad values, the hang recorder's
 * words and their rules (--hang-timeout implies a ring, --hang-repeat
 * needs a timeout), capture words passed on, unknown words refused with
 * the word named. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "efi/resident/words.h"

static struct resident_words w;
static char err[256];

static int parse(int n, ...)
{
    static char *v[32];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        v[i] = va_arg(ap, char *);
    va_end(ap);
    err[0] = 0;
    return resident_words_parse(&w, v, n, err, sizeof err);
}

static void test_defaults(void **state)
{
    (void)state;
    assert_int_equal(parse(0), 0);
    assert_int_equal(w.buffer_bytes, RESIDENT_BUFFER_DEFAULT);
    assert_int_equal(w.recorder_code, RESIDENT_RECORDER_CODE_DEFAULT);
    assert_int_equal(w.unit, RESIDENT_CHOOSE_AUTO);
    assert_false(w.ring || w.no_recorder || w.recorder_at_given || w.hang_repeat || w.verbose);
    assert_int_equal(w.hang_timeout_s, 0);
    assert_string_equal(w.image, "");
}

static void test_words(void **state)
{
    (void)state;
    assert_int_equal(parse(12, "--image", "ptbhang.efi", "--hang-timeout", "5", "--hang-repeat",
                           "--buffer", "16384", "--recorder-at", "0x100000000", "--unit", "soft",
                           "--verbose"),
                     0);
    assert_string_equal(w.image, "ptbhang.efi");
    assert_int_equal(w.hang_timeout_s, 5);
    assert_true(w.hang_repeat);
    assert_true(w.ring); /* implied */
    assert_int_equal(w.buffer_bytes, 16384);
    assert_true(w.recorder_at_given);
    assert_int_equal(w.recorder_at, 0x100000000ull);
    assert_int_equal(w.unit, RESIDENT_CHOOSE_SOFT);
    assert_true(w.verbose);
    assert_int_equal(parse(5, "--ring", "--no-recorder", "--recorder-code", "8192", "--trace-stop"),
                     -1);
    assert_string_equal(err, "--trace-stop needs a value");
    assert_int_equal(
        parse(6, "--ring", "--no-recorder", "--recorder-code", "8192", "--trace-stop", "1a0"), 0);
    assert_true(w.ring && w.no_recorder && w.have_trace_stop);
    assert_int_equal(w.recorder_code, 8192);
    assert_int_equal(w.trace_stop_offset, 0x1a0);
    assert_int_equal(parse(3, "buffer=8M", "no-mtc", "--unit"), -1);
    assert_int_equal(parse(3, "buffer=8M", "no-mtc", "--unit=hw"), -1);
    assert_int_equal(parse(2, "buffer=8M", "no-mtc"), 0);
    assert_int_equal(w.n_plan_words, 2);
    assert_string_equal(w.plan_words[0], "buffer=8M");
}

/* The early driver's words (docs/early-boot.md): --follow with its
 * default bound, --max-insns, several --image names. */
static void test_early_words(void **state)
{
    (void)state;
    assert_int_equal(parse(3, "--image", "PciBusDxe", "--follow"), 0);
    assert_true(w.follow);
    assert_int_equal(w.max_insns, RESIDENT_FOLLOW_MAX_INSNS);
    assert_int_equal(
        parse(6, "--follow", "--max-insns", "0x100000", "--image", "A.efi", "--verbose"), 0);
    assert_int_equal(w.max_insns, 0x100000);
    assert_string_equal(w.image, "A.efi");
    assert_int_equal(parse(2, "--max-insns", "5000"), 0);
    assert_false(w.follow);
    assert_int_equal(w.max_insns, 5000);
    assert_int_equal(parse(4, "--image", "SmbiosPlatformDxe", "--image", "PciBusDxe"), 0);
    assert_string_equal(w.image, "SmbiosPlatformDxe,PciBusDxe");
    /* 63 characters in all, and one more */
    assert_int_equal(parse(4, "--image", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "--image",
                           "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
                     0);
    assert_int_equal(strlen(w.image), 63);
    assert_int_equal(parse(4, "--image", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "--image",
                           "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"),
                     -1);
    assert_string_equal(
        err, "--image bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb: the names take more than 63 characters");
    assert_int_equal(parse(1, "--max-insns"), -1);
    assert_string_equal(err, "--max-insns needs a value");
    /* the capture words the soft unit takes too: its MTCs */
    assert_int_equal(parse(0), 0);
    assert_false(w.no_mtc);
    assert_int_equal(w.mtc_freq, -1);
    assert_int_equal(parse(3, "buffer=8M", "no-mtc", "mtc=12"), 0);
    assert_true(w.no_mtc);
    assert_int_equal(w.mtc_freq, 12);
    assert_int_equal(w.n_plan_words, 3);
    assert_int_equal(w.n_soft_words, 2);
    assert_int_equal(parse(1, "mtc=16"), -1);
    assert_string_equal(err, "mtc=16: mtc=N wants an MTC frequency from 0 to 15");
    assert_int_equal(parse(1, "mtc"), -1);
    assert_string_equal(err, "mtc: mtc=N wants an MTC frequency from 0 to 15");
}

static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *o, *v, *msg;
    } bad[] = {
        { "--hang-timeout", "0", "--hang-timeout 0: seconds, 1 to 86400" },
        { "--hang-timeout", "86401", "--hang-timeout 86401: seconds, 1 to 86400" },
        { "--hang-timeout", "5s", "--hang-timeout 5s: seconds, 1 to 86400" },
        { "--hang-timeout", "-1", "--hang-timeout -1: seconds, 1 to 86400" },
        { "--recorder-at", "0x1001", "--recorder-at 0x1001: a page-aligned physical address" },
        { "--recorder-at", "0", "--recorder-at 0: a page-aligned physical address" },
        { "--recorder-code", "4097",
          "--recorder-code 4097: bytes, a multiple of 4096, at most 64 MiB" },
        { "--recorder-code", "0x8000000",
          "--recorder-code 0x8000000: bytes, a multiple of 4096, at most 64 MiB" },
        { "--buffer", "12288", "--buffer 12288: a power of two from 4096 to 1 GiB" },
        { "--buffer", "2048", "--buffer 2048: a power of two from 4096 to 1 GiB" },
        { "--unit", "pt", "--unit pt: hw, soft or auto" },
        { "--trace-stop", "xyz", "--trace-stop xyz: a hex offset into the --image" },
        { "--max-insns", "0", "--max-insns 0: a number of instructions (> 0)" },
        { "--max-insns", "1e6", "--max-insns 1e6: a number of instructions (> 0)" },
        { "--image", "a,b", "--image a,b: a file or module name (one per --image)" },
        { "--image", "", "--image : a file or module name (one per --image)" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(parse(2, bad[i].o, bad[i].v), -1);
        assert_string_equal(err, bad[i].msg);
    }
    assert_int_equal(parse(1, "--hang-repeat"), -1);
    assert_string_equal(err, "--hang-repeat needs --hang-timeout");
    assert_int_equal(parse(1, "--bogus"), -1);
    assert_non_null(strstr(err, "unknown option '--bogus'"));
    assert_int_equal(parse(1, "bogusword=1"), -1);
    assert_string_equal(err, "unknown capture word 'bogusword=1'");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_early_words),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
