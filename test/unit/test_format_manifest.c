/* format/manifest.c: manifest.txt written and read back, and every kind of
 * damage refused with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/manifest.h"

static struct manifest m, r;
static char text[4096];

static int parse(const char *t, unsigned *line, const char **msg)
{
    return manifest_parse(&r, t, strlen(t), line, msg);
}

/* a whole capture: every file line, complete 1, parsed back the same */
static void complete_round_trip(void **state)
{
    (void)state;
    unsigned line;
    const char *msg;
    manifest_init(&m);
    assert_int_equal(manifest_add_file(&m, "trace.pt", 417, 0x1c291ca3), MANIFEST_OK);
    assert_int_equal(manifest_add_file(&m, "sideband.txt", 8662, 0x0a1b2c3d), MANIFEST_OK);
    assert_true(manifest_is_complete(&m));
    size_t n = manifest_write(&m, text, sizeof text);
    assert_string_equal(text, "ptboot-manifest 1\n"
                              "file trace.pt bytes=417 crc32=1c291ca3\n"
                              "file sideband.txt bytes=8662 crc32=0a1b2c3d\n"
                              "complete 1\n"
                              "end\n");
    assert_int_equal(n, strlen(text));
    assert_int_equal(parse(text, &line, &msg), MANIFEST_OK);
    assert_true(r.complete);
    assert_int_equal(r.nfiles, 2);
    const struct manifest_file *f = manifest_find(&r, "sideband.txt");
    assert_non_null(f);
    assert_true(f->present);
    assert_int_equal(f->bytes, 8662);
    assert_int_equal(f->crc32, 0x0a1b2c3d);
    assert_null(manifest_find(&r, "code.dump"));
}

/* a missing file: its reason kept, complete 0; CR LF read too */
static void missing_round_trip(void **state)
{
    (void)state;
    unsigned line;
    const char *msg;
    manifest_init(&m);
    manifest_add_file(&m, "trace.pt", 0, 0);
    assert_int_equal(
        manifest_add_missing(&m, "code.dump", 8388608, "volume full: 44 KiB free, 8.6 MiB needed"),
        MANIFEST_OK);
    assert_false(manifest_is_complete(&m));
    manifest_write(&m, text, sizeof text);
    assert_non_null(strstr(
        text, "missing code.dump bytes=8388608 why=volume full: 44 KiB free, 8.6 MiB needed\n"
              "complete 0\nend\n"));
    assert_int_equal(
        parse(
            "ptboot-manifest 1\r\nmissing code.dump bytes=5 why=i/o error\r\ncomplete 0\r\nend\r\n",
            &line, &msg),
        MANIFEST_OK);
    assert_false(r.complete);
    assert_string_equal(manifest_find(&r, "code.dump")->why, "i/o error");
}

/* names: empty, with a space, too long: refused by the writer */
static void bad_names(void **state)
{
    (void)state;
    manifest_init(&m);
    assert_int_equal(manifest_add_file(&m, "", 1, 1), MANIFEST_E_NAME);
    assert_int_equal(manifest_add_file(&m, "a b", 1, 1), MANIFEST_E_NAME);
    assert_int_equal(manifest_add_file(&m, "0123456789012345678901234567890123", 1, 1),
                     MANIFEST_E_NAME);
    for (int i = 0; i < MANIFEST_MAX_FILES; i++)
        assert_int_equal(manifest_add_file(&m, "x", 1, 1), MANIFEST_OK);
    assert_int_equal(manifest_add_file(&m, "x", 1, 1), MANIFEST_E_FULL);
    /* unprintable reasons are made printable */
    manifest_init(&m);
    manifest_add_missing(&m, "a", 1, "bad\nline");
    assert_string_equal(m.files[0].why, "bad?line");
}

/* each damage refused, naming its line */
static void damage_refused(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        unsigned line;
    } cases[] = {
        { "", 1 },
        { "ptboot-manifest 2\ncomplete 1\nend\n", 1 },
        { "sideband 1\n", 1 },
        { "ptboot-manifest 1\nfile trace.pt bytes=1 crc32=1c291ca3\ncomplete 1\n",
          4 },                                                              /* cut: no end */
        { "ptboot-manifest 1\nfile trace.pt bytes=1 crc32=1c291ca3\n", 3 }, /* cut: no complete */
        { "ptboot-manifest 1\nfile trace.pt bytes=1 crc32=1c291ca\ncomplete 1\nend\n",
          2 }, /* 7 digits */
        { "ptboot-manifest 1\nfile trace.pt bytes=x crc32=1c291ca3\ncomplete 1\nend\n", 2 },
        { "ptboot-manifest 1\nfile trace.pt bytes=1 crc32=1c291ca3\ncomplete 0\nend\n",
          3 }, /* disagrees */
        { "ptboot-manifest 1\nmissing a bytes=1 why=x\ncomplete 1\nend\n", 3 },
        { "ptboot-manifest 1\nmissing a bytes=1\ncomplete 0\nend\n", 2 },
        { "ptboot-manifest 1\nfile a bytes=1 crc32=00000000\nfile a bytes=1 "
          "crc32=00000000\ncomplete 1\nend\n",
          3 },
        { "ptboot-manifest 1\ncomplete 1\nend\nfile a bytes=1 crc32=00000000\n", 4 },
        { "ptboot-manifest 1\nextra\ncomplete 1\nend\n", 2 },
        { "ptboot-manifest 1\nfile trace.pt bytes=99999999999999999999 crc32=00000000\ncomplete "
          "1\nend\n",
          2 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned line = 0;
        const char *msg = NULL;
        assert_int_equal(parse(cases[i].text, &line, &msg), MANIFEST_E_SYNTAX);
        assert_int_equal(line, cases[i].line);
        assert_true(msg && msg[0]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(complete_round_trip),
        cmocka_unit_test(missing_round_trip),
        cmocka_unit_test(bad_names),
        cmocka_unit_test(damage_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
