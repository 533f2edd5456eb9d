/* format/sideband.c: the capture's sideband and its text form. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_decode_params.h"
#include "arch/x86/rtit_regs.h"
#include "efi/capture/sideband_cpu.h"

static struct sideband a, b;
static char text[SIDEBAND_TEXT_MAX];

static void read_caps(const char *file, struct rtit_caps *caps)
{
    static struct x86_cpuid_dump dump;
    static char buf[64 * 1024];
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    unsigned line = 0;
    assert_int_equal(x86_cpuid_dump_parse(&dump, buf, n, &line), 0);
    assert_int_equal(rtit_caps_read(caps, x86_cpuid_dump_query, &dump), 0);
}

/* A capture as the target would describe it: Skylake's recorded CPUID,
 * a configuration with MTC and two ranges, three images. */
static void fill(struct sideband *sb)
{
    struct rtit_caps caps;
    struct rtit_config cfg;
    struct rtit_decode_params p;
    read_caps("test/fixtures/cpuid/skylake-client.txt", &caps);
    memset(&cfg, 0, sizeof cfg);
    cfg.when_full = RTIT_FULL_STOP;
    cfg.branch_en = cfg.tsc_en = cfg.mtc_en = true;
    cfg.mtc_freq = 3;
    cfg.psb_freq = 2;
    cfg.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0x7e00000, 0x7e3ffff };
    cfg.range[2] = (struct rtit_addr_range){ RTIT_ADDR_CFG_STOP, 0x7e01234, 0x7e01234 };
    rtit_decode_params_fill(&p, &caps, &cfg, NULL);
    p.nom_freq_valid = true; /* as if MSR_PLATFORM_INFO had said 40 */
    p.nom_freq = 40;
    sideband_init(sb);
    sb->unit = SIDEBAND_UNIT_HW;
    sideband_set_cpu(sb, &caps, &p);
    sideband_set_config(sb, &cfg, 1u << 20);
    sb->trace.bytes = 123456;
    sb->trace.stopped = true;
    assert_int_equal(
        sideband_add_image(sb, 0x7e00000, 0x40000, 0x7e01000, "ptboot",
                           SIDEBAND_IMG_BEFORE | SIDEBAND_IMG_TARGET | SIDEBAND_IMG_SNAPSHOT),
        0);
    assert_int_equal(sideband_add_image(sb, 0x7f10000, 0x3000, 0, "PciBus Dxe",
                                        SIDEBAND_IMG_WHILE | SIDEBAND_IMG_UNLOADED),
                     1);
    assert_int_equal(sideband_add_image(sb, 0x100000, 0x1000, 0x100400, "bad\nname\x01", 0), 2);
    /* version 2: the CodeView records that name the debug files, a load time */
    static const uint8_t guid[16] = { 0xca, 0xf4, 0x13, 0x11, 0xe5, 0xec, 0x00, 0x90,
                                      0x4c, 0x4c, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2e };
    sideband_set_debug(sb, 0, SIDEBAND_CV_RSDS, guid, 1, "/build/ptboot/build/efi/ptboot.so");
    sideband_set_debug(sb, 1, SIDEBAND_CV_NB10, (const uint8_t *)"\x78\x56\x34\x12", 2,
                       "/home/someone/src/firmware/platform-bringup/edk2/Build/OvmfX64/DEBUG_GCC5/"
                       "X64/MdeModulePkg/Bus/Pci/PciBusDxe/PciBusDxe/DEBUG/PciBusDxe.dll");
    sb->images[1].load_tsc = 123456789012ull;
}

static void round_trip(void **state)
{
    (void)state;
    struct sideband_error err;
    fill(&a);
    /* the CPU facts came from the recorded CPUID (Skylake 6/94/3, 15h 2/0xa8?) */
    assert_string_equal(a.cpu.vendor, "GenuineIntel");
    assert_int_equal(a.cpu.family, 6);
    assert_int_equal(a.cpu.model, 0x5e);
    assert_int_equal(a.config.nfilter, 2);
    assert_int_equal(a.config.filter[1].kind, SIDEBAND_FILTER_STOP);
    assert_false(a.config.ring);
    assert_true(a.config.ctl & RTIT_CTL_TRACEEN);
    assert_string_equal(a.images[2].name, "bad_name_"); /* a name never breaks a line */

    size_t n = sideband_write(&a, text, sizeof text);
    assert_true(n > 0 && n < sizeof text);
    assert_int_equal(strlen(text), n);
    assert_int_equal(sideband_parse(&b, text, n, &err), 0);
    assert_memory_equal(&a, &b, sizeof a);
    /* what a reader greps for */
    assert_non_null(strstr(text, "\nimage base=0x7e00000 size=0x40000 entry=0x7e01000 "
                                 "flags=before,snapshot,target name=ptboot\n"));
    assert_non_null(strstr(text, "\nfilter kind=stop a=0x7e01234 b=0x7e01234\n"));
    assert_non_null(strstr(text, "\ncpu.nom_freq 40\n"));
    assert_non_null(strstr(
        text,
        "\nimage base=0x7f10000 size=0x3000 entry=0x0 flags=while,unloaded name=PciBus Dxe\n"));
    assert_non_null(strstr(
        text, "\nimage.debug base=0x7e00000 cv=rsds guid=1113f4ca-ece5-9000-4c4c-44205044422e "
              "age=1 path=/build/ptboot/build/efi/ptboot.so\n"));
    assert_non_null(strstr(text, "\nimage.loaded base=0x7f10000 tsc=123456789012\n"));
    /* a path longer than the field keeps its tail: the file name */
    assert_non_null(strstr(text, "\nimage.debug base=0x7f10000 cv=nb10 sig=0x12345678 age=2 "
                                 "path=ne/src/firmware/platform-"));
    assert_non_null(strstr(text, "/DEBUG/PciBusDxe.dll\n"));
    assert_int_equal(strlen(b.images[1].cv_path), SIDEBAND_PATH_MAX - 1);
    assert_int_equal(b.images[2].cv, SIDEBAND_CV_NONE);
    assert_int_equal(b.images[0].load_tsc, 0);
    assert_true(strncmp(text, "ptboot-sideband 2\n", 18) == 0);
    /* a row taken by another image at the same base loses the old facts */
    sideband_add_image(&b, 0x7f10000, 0x1000, 0, "Other", SIDEBAND_IMG_WHILE);
    assert_int_equal(b.images[1].cv, SIDEBAND_CV_NONE);
    assert_int_equal(b.images[1].load_tsc, 0);
}

/* Every image with the longest name, path and numbers: the text stays
 * within SIDEBAND_TEXT_MAX and each line within SIDEBAND_LINE_MAX. */
static void longest_text_fits(void **state)
{
    (void)state;
    char name[SIDEBAND_NAME_MAX], path[300];
    struct sideband_error err;
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = 0;
    sideband_init(&a);
    for (unsigned i = 0; i < SIDEBAND_MAX_IMAGES; i++) {
        uint64_t base = 0xffffffff00000000ull + i * 0x100000ull;
        assert_int_equal(sideband_add_image(&a, base, 0xfffff, base + 0xffffe, name, 0x1f), (int)i);
        sideband_set_debug(&a, (int)i, SIDEBAND_CV_RSDS, (const uint8_t *)"0123456789abcdef",
                           UINT32_MAX, path);
        a.images[i].load_tsc = UINT64_MAX;
    }
    size_t n = sideband_write(&a, text, sizeof text);
    assert_true(n < sizeof text);
    for (char *l = text, *e; (e = strchr(l, '\n')); l = e + 1)
        assert_true((size_t)(e - l) <= SIDEBAND_LINE_MAX);
    assert_int_equal(sideband_parse(&b, text, n, &err), 0);
    assert_memory_equal(&a, &b, sizeof a);
}

static void write_truncates_like_snprintf(void **state)
{
    (void)state;
    char small[40];
    fill(&a);
    size_t full = sideband_write(&a, text, sizeof text);
    memset(small, 'x', sizeof small);
    assert_int_equal(sideband_write(&a, small, sizeof small), full);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, text, sizeof small - 1);
    /* exactly enough room */
    char *exact = malloc(full + 1);
    assert_int_equal(sideband_write(&a, exact, full + 1), full);
    assert_string_equal(exact, text);
    free(exact);
    assert_int_equal(sideband_write(&a, NULL, 0), full);
}

static void table_capacity_and_lookup(void **state)
{
    (void)state;
    sideband_init(&a);
    for (unsigned i = 0; i < SIDEBAND_MAX_IMAGES; i++)
        assert_int_equal(sideband_add_image(&a, 0x100000 + i * 0x10000ull, 0x8000, 0, "m", 0),
                         (int)i);
    assert_int_equal(sideband_add_image(&a, 0x1, 0x10, 0, "late", 0), -1);
    assert_int_equal(a.images_dropped, 1);
    /* the same base again: the row is updated, not added */
    assert_int_equal(sideband_add_image(&a, 0x100000 + 7 * 0x10000ull, 0x9000, 0, "again",
                                        SIDEBAND_IMG_UNLOADED),
                     7);
    assert_string_equal(sideband_find_image(&a, 0x100000 + 7 * 0x10000ull + 0x8fff)->name, "again");
    assert_null(sideband_find_image(&a, 0x100000 + 8 * 0x10000ull + 0x8000));
    assert_null(sideband_find_image(&a, 0xfffff));
    /* a full table still round-trips (and the text says one was dropped) */
    size_t n = sideband_write(&a, text, sizeof text);
    struct sideband_error err;
    assert_int_equal(sideband_parse(&b, text, n, &err), 0);
    assert_int_equal(b.nimages, SIDEBAND_MAX_IMAGES);
    assert_int_equal(b.images_dropped, 1);
}

struct bad {
    const char *text;
    unsigned line;
    const char *msg;
};

#define HDR  "ptboot-sideband 1\n"
#define HDR2 "ptboot-sideband 2\n"
#define IMG  "image base=0x1000 size=0x100 entry=0 flags=- name=x\n"
static const struct bad bads[] = {
    { "", 0, "empty" },
    { "# only a comment\n", 0, "empty" },
    { "ptboot-sideband 3\nend\n", 1, "version" },
    { "ptboot-sideband 0\nend\n", 1, "version" },
    /* version 1 has no image.debug / image.loaded lines */
    { HDR "image base=0x1000 size=0x100 entry=0 flags=- name=x\n"
          "image.loaded base=0x1000 tsc=5\nend\n",
      3, "unknown key" },
    { HDR2 "image.loaded base=0x1000 tsc=5\nend\n", 2, "no image line" },
    { HDR2 IMG "image.loaded base=0x1000\nend\n", 3, "want base=N tsc=N" },
    { HDR2 IMG "image.debug base=0x1000 cv=pdb guid=0 age=1 path=x\nend\n", 3, "rsds or nb10" },
    { HDR2 IMG "image.debug base=0x1000 cv=rsds guid=0011 age=1 path=x\nend\n", 3, "GUID" },
    { HDR2 IMG
      "image.debug base=0x1000 cv=rsds guid=1113f4caece590004c4c44205044422e age=1 path=x\nend\n",
      3, "GUID" },
    { HDR2 IMG "image.debug base=0x1000 cv=rsds guid=1113f4ca-ece5-9000-4c4c+44205044422e age=1 "
               "path=x\nend\n",
      3, "GUID" },
    { HDR2 IMG "image.debug base=0x1000 cv=nb10 sig=0x100000000 age=1 path=x\nend\n", 3, "sig=N" },
    { HDR2 IMG "image.debug base=0x1000 cv=nb10 sig=1 path=x\nend\n", 3, "age=N" },
    { HDR2 IMG "image.debug base=0x1000 cv=nb10 sig=1 age=1\nend\n", 3, "path=PATH last" },
    { "sideband 1\n", 1, "not a ptboot sideband" },
    { HDR "unit hw\n", 2, "truncated" },
    { HDR "unit cpu\nend\n", 2, "unit" },
    { HDR "\n# c\ncpu.family 0x1000\nend\n", 4, "out of range" },
    { HDR "cpu.model 12x\nend\n", 2, "bad number" },
    { HDR "cpu.model 99999999999999999999999\nend\n", 2, "bad number" },
    { HDR "cpu.model\nend\n", 2, "bad number" },
    { HDR "config.mtc_freq 16\nend\n", 2, "out of range" },
    { HDR "config.tsc 1 2\nend\n", 2, "bad number" },
    { HDR "trace.bytes -1\nend\n", 2, "bad number" },
    { HDR "cpu.cpuid15 eax=1 ebx=2\nend\n", 2, "cpuid15" },
    { HDR "cpu.vendor GenuineIntelXX\nend\n", 2, "vendor" },
    { HDR "config.full wrap\nend\n", 2, "ring or stop" },
    { HDR "filter kind=both a=0 b=1\nend\n", 2, "kind" },
    { HDR "filter kind=filter a=0x10 b=0x8\nend\n", 2, "b below a" },
    { HDR "filter kind=filter a=1 b=2\nfilter kind=filter a=1 b=2\nfilter kind=filter a=1 b=2\n"
          "filter kind=filter a=1 b=2\nfilter kind=filter a=1 b=2\nend\n",
      6, "more than 4" },
    { HDR "image base=0x1000 size=0x0 entry=0 flags=- name=x\nend\n", 2, "size zero" },
    { HDR "image base=0xfffffffffffff000 size=0x2000 entry=0 flags=- name=x\nend\n", 2,
      "past the end" },
    { HDR "image base=0x1000 size=0x100 entry=0x1100 flags=- name=x\nend\n", 2, "entry outside" },
    { HDR "image base=0x1000 size=0x100 entry=0 flags=while, name=x\nend\n", 2, "flags" },
    { HDR "image base=0x1000 size=0x100 entry=0 flags=loaded name=x\nend\n", 2, "flags" },
    { HDR "image base=0x1000 size=0x100 entry=0 flags=-\nend\n", 2, "name=NAME last" },
    { HDR "image size=0x100 base=0x1000 entry=0 flags=- name=x\nend\n", 2, "want base=N" },
    { HDR "image base=0x1000 size=0x100 entry=0 flags=- name=x\n"
          "image base=0x1000 size=0x200 entry=0 flags=- name=y\nend\n",
      3, "same base" },
    { HDR "image base=0x1000 size=0x100 entry=0 flags=- name="
          "0123456789012345678901234567890123456789012345678901234567890123456789012\nend\n",
      2, "longer than 71" },
    { HDR "colour blue\nend\n", 2, "unknown key" },
    { HDR "unit hw\x01\nend\n", 2, "control character" },
    { HDR "end\nunit hw\n", 3, "after 'end'" },
    { HDR "end extra\n", 2, "no value" },
    { HDR "config.buffer 0x"
          "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
          "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
          "00000000000000000000000000000000000000000000000000000000000000000000000000000000"
          "00000000000000000000000000000000000000000000000000000000000000000000000000000001\nend\n",
      2, "too long" },
};

static void parse_errors_name_the_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bads / sizeof bads[0]; i++) {
        struct sideband_error err;
        int r = sideband_parse(&b, bads[i].text, strlen(bads[i].text), &err);
        if (r != -1 || err.line != bads[i].line || !err.msg || !strstr(err.msg, bads[i].msg))
            fail_msg("case %zu: got %d at line %u '%s', want line %u '%s'", i, r, err.line,
                     err.msg ? err.msg : "(null)", bads[i].line, bads[i].msg);
    }
}

static void parse_accepts_comments_crlf_and_no_final_newline(void **state)
{
    (void)state;
    static const char t[] =
        "# written by hand\r\nptboot-sideband 1\r\n\r\n  unit soft\r\n"
        "cpu.nom_freq 0x28\r\n\tconfig.full ring\r\n"
        "image base=0x2000 size=0x1000 entry=0x2010 flags=while name=My Driver \r\nend";
    struct sideband_error err;
    assert_int_equal(sideband_parse(&b, t, sizeof t - 1, &err), 0);
    assert_int_equal(b.unit, SIDEBAND_UNIT_SOFT);
    assert_true(b.cpu.nom_freq_valid);
    assert_int_equal(b.cpu.nom_freq, 40);
    assert_true(b.config.ring);
    assert_int_equal(b.nimages, 1);
    assert_string_equal(b.images[0].name, "My Driver");
    assert_int_equal(b.images[0].flags, SIDEBAND_IMG_WHILE);
    /* a NUL inside the text is a control character, not an end */
    static const char z[] = "ptboot-sideband 1\nunit hw\0\nend\n";
    assert_int_equal(sideband_parse(&b, z, sizeof z - 1, &err), -1);
    assert_int_equal(err.line, 2);
}

/* Mutated copies of a valid text (bytes flipped, lines cut, bytes
 * inserted): the parser ends with 0 or an error naming a line inside the
 * text, never reads past it (ASan-clean in `make fuzz`-like runs). */
static void mutations_never_crash(void **state)
{
    (void)state;
    fill(&a);
    size_t n = sideband_write(&a, text, sizeof text);
    unsigned lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    uint64_t rs = 0x9e3779b97f4a7c15ull;
    char *m = malloc(n + 16);
    unsigned ok = 0, errs = 0;
    for (int it = 0; it < 20000; it++) {
        size_t len = n;
        memcpy(m, text, n);
        for (int k = 0; k < 1 + it % 4; k++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(rs >> 33) % len;
            switch ((rs >> 20) % 3) {
            case 0: m[at] = (char)(rs >> 8); break;
            case 1: len = at; break;
            default: m[at] = "= \n0x,"[(rs >> 12) % 6]; break;
            }
            if (len == 0)
                break;
        }
        struct sideband_error err;
        if (sideband_parse(&b, m, len, &err) == 0) {
            ok++;
            assert_true(b.nimages <= SIDEBAND_MAX_IMAGES);
        } else {
            errs++;
            assert_non_null(err.msg);
            assert_true(err.line <= lines + 2);
        }
    }
    free(m);
    /* both outcomes happen: the mutations are neither all fatal nor all harmless */
    assert_true(ok > 0 && errs > 0);
}

/* Found by test/fuzz/fuzz_sideband.c: a sideband without CPU facts (the
 * `images` command, a soft unit) is written with "cpu.vendor unknown",
 * which used to read back as the vendor "unknown". */
static void round_trip_without_vendor(void **state)
{
    (void)state;
    struct sideband_error err;
    sideband_init(&a);
    a.unit = SIDEBAND_UNIT_SOFT;
    size_t n = sideband_write(&a, text, sizeof text);
    assert_true(n > 0 && n < sizeof text);
    assert_non_null(strstr(text, "\ncpu.vendor unknown\n"));
    assert_int_equal(sideband_parse(&b, text, n, &err), 0);
    assert_string_equal(b.cpu.vendor, "");
    assert_memory_equal(&a, &b, sizeof a);
}

static void flags_text(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(sideband_flags_str(0, buf, sizeof buf), "-");
    assert_string_equal(
        sideband_flags_str(SIDEBAND_IMG_WHILE | SIDEBAND_IMG_SNAPSHOT, buf, sizeof buf),
        "while,snapshot");
    assert_string_equal(sideband_unit_name(SIDEBAND_UNIT_SOFT), "soft");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip),
        cmocka_unit_test(longest_text_fits),
        cmocka_unit_test(write_truncates_like_snprintf),
        cmocka_unit_test(table_capacity_and_lookup),
        cmocka_unit_test(parse_errors_name_the_line),
        cmocka_unit_test(parse_accepts_comments_crlf_and_no_final_newline),
        cmocka_unit_test(mutations_never_crash),
        cmocka_unit_test(round_trip_without_vendor),
        cmocka_unit_test(flags_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
