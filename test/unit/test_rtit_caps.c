/* CPUID dump parsing, capability decoding and the info report, on the real
 * CPUs' dumps of test/fixtures/cpuid and on synthetic (QEMU-like) ones. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "arch/x86/rtit_regs.h"

#define FIXTURES "test/fixtures/cpuid/"

static struct x86_cpuid_dump dump; /* test-only state */

static void load_text(const char *text)
{
    unsigned line = 99;
    int err = x86_cpuid_dump_parse(&dump, text, strlen(text), &line);
    assert_int_equal(err, 0);
    assert_int_equal(line, 0);
}

static void load_fixture(const char *name)
{
    char path[256], buf[65536];
    snprintf(path, sizeof(path), FIXTURES "%s", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    load_text(buf);
}

static void caps_of_fixture(const char *name, struct rtit_caps *c)
{
    load_fixture(name);
    assert_int_equal(rtit_caps_read(c, x86_cpuid_dump_query, &dump), 0);
}

static void caps_of_text(const char *text, struct rtit_caps *c)
{
    load_text(text);
    assert_int_equal(rtit_caps_read(c, x86_cpuid_dump_query, &dump), 0);
}

static void machine_line(const struct rtit_caps *c, char *buf, size_t n)
{
    rtit_caps_machine_line(c, buf, n);
}

/* ---- real CPUs ---------------------------------------------------------- */

static void test_broadwell(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    caps_of_fixture("broadwell-client.txt", &c);
    assert_string_equal(c.vendor, "GenuineIntel");
    assert_int_equal(c.family, 6);
    assert_int_equal(c.model, 0x3d);
    assert_int_equal(c.stepping, 4);
    assert_true(c.pt);
    assert_int_equal(c.reason, RTIT_PT_OK);
    assert_int_equal(c.max_basic_leaf, 0x14);
    assert_true(c.has_leaf14);
    assert_false(c.has_leaf14_1); /* 14h.0.EAX = 0 */
    assert_true(c.cr3_filter);
    assert_false(c.psb_cyc);
    assert_false(c.ip_filter);
    assert_false(c.mtc);
    assert_true(c.topa);
    assert_false(c.topa_multi_entry);
    assert_false(c.single_range);
    assert_false(c.lip);
    assert_int_equal(c.num_ranges, 0);
    assert_int_equal(c.mtc_periods, 0);
    assert_int_equal(c.cyc_thresholds, 0);
    assert_int_equal(c.psb_periods, 0);
    assert_int_equal(c.maxphyaddr, 39);
    assert_true(c.maxphyaddr_enumerated);
    assert_false(c.has_leaf15); /* max basic leaf 14h */
    assert_int_equal(c.quirks, RTIT_QUIRK_BRANCHEN_REQUIRED);
    assert_false(c.hypervisor);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 "
                              "model=0x3d stepping=0x4 hypervisor=0 maxleaf=0x14 ranges=0 "
                              "topa=1 mentry=0 single=0");
}

static void test_skylake(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    caps_of_fixture("skylake-client.txt", &c);
    assert_true(c.pt);
    assert_int_equal(c.model, 0x5e);
    assert_true(c.has_leaf14_1);
    assert_int_equal(c.leaf14_1.eax, 0x02490002);
    assert_int_equal(c.leaf14_1.ebx, 0x003f3fff);
    assert_int_equal(c.num_ranges, 2);
    assert_int_equal(c.mtc_periods, 0x0249);
    assert_int_equal(c.cyc_thresholds, 0x3fff);
    assert_int_equal(c.psb_periods, 0x003f);
    assert_true(c.cr3_filter && c.psb_cyc && c.ip_filter && c.mtc);
    assert_false(c.ptwrite || c.power_events || c.psb_pmi_preserve || c.event_trace ||
                 c.tnt_disable);
    assert_true(c.topa && c.topa_multi_entry && c.single_range);
    assert_false(c.trace_transport || c.lip);
    assert_true(c.has_leaf15);
    assert_int_equal(c.tsc_denominator, 2);
    assert_int_equal(c.tsc_numerator, 0x14e);
    assert_int_equal(c.crystal_hz, 0);
    assert_int_equal(c.quirks, 0);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 "
                              "model=0x5e stepping=0x3 hypervisor=0 maxleaf=0x16 ranges=2 "
                              "topa=1 mentry=1 single=1");
}

static void test_goldmont(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_fixture("goldmont.txt", &c);
    assert_true(c.pt);
    assert_int_equal(c.model, 0x5c);
    assert_int_equal(c.stepping, 0xa);
    assert_true(c.lip);
    assert_int_equal(c.leaf14_0.ecx, 0x80000007);
    assert_int_equal(c.cyc_thresholds, 0xffff);
    assert_int_equal(c.num_ranges, 2);
    assert_true(c.quirks & RTIT_QUIRK_CORE_SCOPED_MSRS);
    assert_false(c.quirks & RTIT_QUIRK_BRANCHEN_REQUIRED);
    assert_true(c.has_leaf15);
    assert_int_equal(c.crystal_hz, 19200000);
    assert_int_equal(c.tsc_numerator, 0xc9);
    assert_int_equal(c.tsc_denominator, 3);
}

static void test_icelake(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_fixture("icelake-client.txt", &c);
    assert_true(c.pt);
    assert_int_equal(c.model, 0x7e);
    assert_int_equal(c.cyc_thresholds, 0x1fff);
    assert_int_equal(c.psb_periods, 0x3f);
    assert_false(c.lip);
    assert_int_equal(c.quirks, 0);
    assert_int_equal(c.crystal_hz, 38400000);
}

static void test_alderlake(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    caps_of_fixture("alderlake.txt", &c);
    assert_true(c.pt);
    assert_int_equal(c.model, 0x97);
    assert_int_equal(c.leaf14_0.ebx, 0x5f);
    assert_true(c.ptwrite);
    /* EBX=0x5f: bit 5 (power event trace) clear, bit 6 (PSB/PMI
	 * preservation) set - see test/fixtures/cpuid/README.md. */
    assert_false(c.power_events);
    assert_true(c.psb_pmi_preserve);
    assert_false(c.event_trace);
    assert_false(c.tnt_disable);
    assert_int_equal(c.cyc_thresholds, 0x003f);
    assert_true(c.quirks & RTIT_QUIRK_SINGLE_RANGE_4K);
    assert_int_equal(c.maxphyaddr, 46);
    assert_true(c.hybrid);
    assert_false(c.la57); /* CPUID.(7,0).ECX=0x98c027ac: bit 16 clear */
    assert_false(c.paging_la57);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 "
                              "model=0x97 stepping=0x2 hypervisor=0 maxleaf=0x20 ranges=2 "
                              "topa=1 mentry=1 single=1");
}

static void test_sapphirerapids(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_fixture("sapphirerapids.txt", &c);
    assert_true(c.pt);
    assert_int_equal(c.model, 0x8f);
    assert_int_equal(c.maxphyaddr, 52);
    assert_true(c.ptwrite);
    assert_false(c.hybrid);
    assert_int_equal(c.quirks, 0);
    /* CPUID.(7,0).ECX=0xbb417fee: bit 16, 5-level paging */
    assert_int_equal(c.leaf7_ecx, 0xbb417fee);
    assert_true(c.la57);
    /* a dump says nothing of CR4: 4-level unless the caller knows */
    assert_false(c.paging_la57);
}

static void test_amd(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    caps_of_fixture("amd.txt", &c);
    assert_string_equal(c.vendor, "AuthenticAMD");
    assert_false(c.pt);
    assert_int_equal(c.reason, RTIT_PT_NO_PT_BIT);
    assert_string_equal(rtit_pt_reason_name(c.reason), "no-pt-bit");
    assert_false(c.has_leaf14);
    assert_int_equal(c.family, 0x19);
    assert_int_equal(c.model, 0x61);
    assert_int_equal(c.max_basic_leaf, 0x10);
    assert_int_equal(c.maxphyaddr, 48);
    assert_int_equal(c.quirks, 0);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=no reason=no-pt-bit vendor=AuthenticAMD "
                              "family=0x19 model=0x61 stepping=0x2 hypervisor=0 maxleaf=0x10 "
                              "ranges=0 topa=0 mentry=0 single=0");
}

/* ---- synthetic: QEMU-like and edge cases -------------------------------- */

#define QEMU_HEAD                                                                       \
    "CPU:\n"                                                                            \
    "   0x00000000 0x00: eax=0x0000000d ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n" \
    "   0x00000001 0x00: eax=0x000306a9 ebx=0x00000800 ecx=0x80202001 edx=0x078bfbfd\n"
#define QEMU_TAIL                                                                       \
    "   0x0000000d 0x00: eax=0x00000007 ebx=0x00000340 ecx=0x00000340 edx=0x00000000\n" \
    "   0x0000000d 0x01: eax=0x00000001 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n" \
    "   0x80000000 0x00: eax=0x80000008 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n" \
    "   0x80000008 0x00: eax=0x00003028 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n"

static void test_qemu_no_pt_bit(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    caps_of_text(QEMU_HEAD "   0x00000007 0x00: eax=0x00000000 ebx=0x00000000 ecx=0x00000000 "
                           "edx=0x00000000\n" QEMU_TAIL,
                 &c);
    assert_false(c.pt);
    assert_int_equal(c.reason, RTIT_PT_NO_PT_BIT);
    assert_true(c.hypervisor);
    assert_int_equal(c.maxphyaddr, 40);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=no reason=no-pt-bit vendor=GenuineIntel "
                              "family=0x6 model=0x3a stepping=0x9 hypervisor=1 maxleaf=0xd "
                              "ranges=0 topa=0 mentry=0 single=0");
}

static void test_qemu_pt_bit_but_no_leaf14(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_text(QEMU_HEAD "   0x00000007 0x00: eax=0x00000000 ebx=0x02000000 ecx=0x00000000 "
                           "edx=0x00000000\n" QEMU_TAIL,
                 &c);
    assert_true(c.leaf7_pt);
    assert_false(c.pt);
    assert_int_equal(c.reason, RTIT_PT_NO_LEAF14);
    assert_string_equal(rtit_pt_reason_name(c.reason), "no-leaf14");
    assert_false(c.has_leaf14);
    assert_false(c.topa);

    /* Why the max-leaf check matters: like a real Intel CPU, leaf 14h
	 * above the maximum returns the highest basic leaf (0Dh, XSAVE), whose
	 * EBX/ECX would read as "CR3 filter... ToPA...". */
    x86_cpuid_regs r;
    x86_cpuid_dump_query(&dump, 0x14, 0, &r);
    assert_int_equal(r.eax, 0x7);
    assert_int_equal(r.ebx, 0x340);
    assert_int_equal(r.ecx, 0x340);
    x86_cpuid_dump_query(&dump, 0x14, 1, &r);
    assert_int_equal(r.eax, 0x1);
}

static void test_no_leaf7(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_text(
        "CPU:\n"
        "   0x00000000 0x00: eax=0x00000005 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
        "   0x00000001 0x00: eax=0x00000f29 ebx=0x00000000 ecx=0x00000000 edx=0x00000000\n",
        &c);
    assert_false(c.pt);
    assert_int_equal(c.reason, RTIT_PT_NO_LEAF7);
    assert_int_equal(c.family, 0xf);
    assert_int_equal(c.model, 0x2);
    /* no 80000000h in the dump: MAXPHYADDR defaults to 36 */
    assert_int_equal(c.max_ext_leaf, 0);
    assert_int_equal(c.maxphyaddr, 36);
    assert_false(c.maxphyaddr_enumerated);
}

static void test_no_output(void **state)
{
    (void)state;
    struct rtit_caps c;
    caps_of_text(
        "CPU:\n"
        "   0x00000000 0x00: eax=0x00000014 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\n"
        "   0x00000007 0x00: eax=0x00000000 ebx=0x02000000 ecx=0x00000000 edx=0x00000000\n"
        "   0x00000014 0x00: eax=0x00000000 ebx=0x00000000 ecx=0x00000008 edx=0x00000000\n",
        &c);
    assert_false(c.pt);
    assert_int_equal(c.reason, RTIT_PT_NO_OUTPUT);
    assert_true(c.trace_transport);
}

static void test_display_family_model(void **state)
{
    (void)state;
    assert_int_equal(x86_display_family(0x000906ea), 6);
    assert_int_equal(x86_display_model(0x000906ea), 0x9e);
    assert_int_equal(x86_display_family(0x00a60f12), 0x19);
    assert_int_equal(x86_display_model(0x00a60f12), 0x61);
    /* family 5: extended model ignored */
    assert_int_equal(x86_display_model(0x00010543), 0x4);
}

/* ---- the dump parser ---------------------------------------------------- */

static void expect_parse_error(const char *text, int err, unsigned line)
{
    unsigned got = 0;
    assert_int_equal(x86_cpuid_dump_parse(&dump, text, strlen(text), &got), err);
    assert_int_equal(got, line);
}

static void test_parse_errors(void **state)
{
    (void)state;
    const char *ok = "   0x00000000 0x00: eax=0x00000001 ebx=0x0 ecx=0x0 edx=0x0\n";
    char buf[512];

    /* a malformed leaf line is reported with its line number */
    snprintf(buf, sizeof(buf), "CPU:\n%s   0x00000001 0x00: eax=0x1 ebx=0x2 ecx=0x3\n", ok);
    expect_parse_error(buf, X86_CPUID_DUMP_E_SYNTAX, 3);
    snprintf(buf, sizeof(buf), "CPU:\n%s%s   0x00000002 0x00 eax=0x1 ebx=0x2 ecx=0x3 edx=0x4\n", ok,
             "# comment\n");
    expect_parse_error(buf, X86_CPUID_DUMP_E_SYNTAX, 4);
    expect_parse_error("   0x00000001 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0xZ\n",
                       X86_CPUID_DUMP_E_SYNTAX, 1);
    expect_parse_error("   0x00000001 0x00: eax=0x123456789 ebx=0x2 ecx=0x3 edx=0x4\n",
                       X86_CPUID_DUMP_E_SYNTAX, 1);
    expect_parse_error("   0x00000001 0x00: eax=0x1 ebx=0x2 ecx=0x3 edx=0x4 junk\n",
                       X86_CPUID_DUMP_E_SYNTAX, 1);
    expect_parse_error("   0x00000001 0x00: ebx=0x1 eax=0x2 ecx=0x3 edx=0x4\n",
                       X86_CPUID_DUMP_E_SYNTAX, 1);
    /* the same leaf twice within one CPU */
    snprintf(buf, sizeof(buf), "CPU:\n%s\n%s", ok, ok);
    expect_parse_error(buf, X86_CPUID_DUMP_E_DUP, 4);
    /* nothing to parse */
    expect_parse_error("", X86_CPUID_DUMP_E_EMPTY, 0);
    expect_parse_error("CPU:\nhello\n", X86_CPUID_DUMP_E_EMPTY, 0);
    assert_string_equal(x86_cpuid_dump_strerror(X86_CPUID_DUMP_E_DUP), "leaf/subleaf given twice");
}

static void test_parse_full(void **state)
{
    (void)state;
    static char buf[(X86_CPUID_DUMP_MAX + 2) * 80];
    size_t n = 0;
    for (unsigned i = 0; i <= X86_CPUID_DUMP_MAX; i++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n,
                              "   0x00000004 0x%02x: eax=0x0 ebx=0x0 ecx=0x0 edx=0x0\n", i);
    expect_parse_error(buf, X86_CPUID_DUMP_E_FULL, X86_CPUID_DUMP_MAX + 1);
}

static void test_parse_tolerant(void **state)
{
    (void)state;
    /* CRLF, unknown lines, uppercase hex, tabs, several CPUs (first taken) */
    load_text(
        "cpuid version 20230614\r\n"
        "CPU 0:\r\n"
        "   0x00000000 0x00: eax=0x00000007 ebx=0x756E6547 ecx=0x6C65746E edx=0x49656E69\r\n"
        "\t0x00000007 0x00:\teax=0x00000000 ebx=0x02000000 ecx=0x0 edx=0x0\r\n"
        "   (some decoded line) = 0x1234\r\n"
        "\r\n"
        "CPU 1:\r\n"
        "   0x00000000 0x00: eax=0x00000016 ebx=0x756e6547 ecx=0x6c65746e edx=0x49656e69\r\n");
    assert_int_equal(dump.count, 2);
    const x86_cpuid_regs *r = x86_cpuid_dump_find(&dump, 0, 0);
    assert_non_null(r);
    assert_int_equal(r->eax, 7);
    assert_int_equal(r->ebx, 0x756e6547);
    r = x86_cpuid_dump_find(&dump, 7, 0);
    assert_non_null(r);
    assert_int_equal(r->ebx, 0x02000000);
    /* no final newline, no CPU line */
    load_text("   0x00000000 0x00: eax=0x00000001 ebx=0x0 ecx=0x0 edx=0x0");
    assert_int_equal(dump.count, 1);
}

/* AIDA64's layout, as in InstLatx64's collection */
static void test_parse_aida(void **state)
{
    (void)state;
    struct rtit_caps c;
    char line[256];
    load_text("CPUID dump of an Intel Core i7-6700K\r\n"
              "CPU#000 AffMask: 0x0000000000000001\r\n"
              "CPUID 00000000: 00000016-756E6547-6C65746E-49656E69 [GenuineIntel]\r\n"
              "CPUID 00000001: 000506E3-00100800-7FFAFBBF-BFEBFBFF\r\n"
              "CPUID 00000004: 1C004121-01C0003F-0000003F-00000000 [SL 00]\r\n"
              "CPUID 00000004: 1C03C163-02C0003F-00000FFF-00000006 [SL 03]\r\n"
              "CPUID 00000007: 00000000-029C6FBF-00000000-9C002400\r\n"
              "CPUID 00000014: 00000001-0000000F-00000007-00000000\r\n"
              "CPUID 00000014: 02490002-003F3FFF-00000000-00000000\r\n"
              "CPUID 00000015: 00000002-0000014E-00000000-00000000\r\n"
              "CPUID 80000000: 80000008-00000000-00000000-00000000\r\n"
              "CPUID 80000008: 00003027-00000000-00000000-00000000\r\n"
              "CPU#001 AffMask: 0x0000000000000002\r\n"
              "CPUID 00000000: 00000016-756E6547-6C65746E-49656E69\r\n"
              "CPUID 00000014: 00000001-00000000-00000000-00000000\r\n");
    assert_int_equal(dump.count, 10);
    const x86_cpuid_regs *r = x86_cpuid_dump_find(&dump, 4, 3);
    assert_non_null(r);
    assert_int_equal(r->edx, 6);
    r = x86_cpuid_dump_find(&dump, 0x14, 1); /* second 14h line */
    assert_non_null(r);
    assert_int_equal(r->ebx, 0x003f3fff);
    assert_int_equal(rtit_caps_read(&c, x86_cpuid_dump_query, &dump), 0);
    machine_line(&c, line, sizeof(line));
    assert_string_equal(line, "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 "
                              "model=0x5e stepping=0x3 hypervisor=0 maxleaf=0x16 ranges=2 "
                              "topa=1 mentry=1 single=1");

    /* a second CPU starting with leaf 0 and no heading */
    load_text("CPUID 00000000: 00000014-756E6547-6C65746E-49656E69\n"
              "CPUID 00000000: 00000016-756E6547-6C65746E-49656E69\n");
    assert_int_equal(dump.count, 1);
    /* malformed register lines are errors with their line number */
    expect_parse_error("CPUID 00000000: 00000016-756E6547-6C65746E\n", X86_CPUID_DUMP_E_SYNTAX, 1);
    expect_parse_error("\nCPUID 00000001: 000506E3-00100800-7FFAFBBF-BFEBFBFF [SL\n",
                       X86_CPUID_DUMP_E_SYNTAX, 2);
    expect_parse_error("CPUID 00000001: 000506E3-00100800-7FFAFBBF-BFEBFBFF junk\n",
                       X86_CPUID_DUMP_E_SYNTAX, 1);
    /* "[SL nn]" naming a subleaf twice */
    expect_parse_error("CPUID 00000004: 00000000-00000000-00000000-00000000 [SL 01]\n"
                       "CPUID 00000004: 00000000-00000000-00000000-00000000\n",
                       X86_CPUID_DUMP_E_DUP, 2);
}

static void test_query_semantics(void **state)
{
    (void)state;
    x86_cpuid_regs r;

    load_fixture("skylake-client.txt");
    /* leaf 1 ignores ECX: subleaf 5 answers like subleaf 0 */
    x86_cpuid_dump_query(&dump, 1, 5, &r);
    assert_int_equal(r.eax, 0x000506e3);
    /* leaf 14h is indexed: subleaf 2 does not exist -> zeros */
    x86_cpuid_dump_query(&dump, 0x14, 2, &r);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    /* above max basic leaf (16h) on Intel: highest basic leaf's data */
    x86_cpuid_dump_query(&dump, 0x17, 0, &r);
    const x86_cpuid_regs *top = x86_cpuid_dump_find(&dump, 0x16, 0);
    assert_non_null(top);
    assert_memory_equal(&r, top, sizeof(r));
    /* above max extended leaf: same */
    x86_cpuid_dump_query(&dump, 0x80000009, 0, &r);
    assert_memory_equal(&r, top, sizeof(r));

    /* AMD answers out-of-range leaves with zeros */
    load_fixture("amd.txt");
    x86_cpuid_dump_query(&dump, 0x14, 0, &r);
    assert_int_equal(r.eax | r.ebx | r.ecx | r.edx, 0);
    /* a NULL dump is a CPU without leaves */
    x86_cpuid_dump_query(NULL, 0, 0, &r);
    assert_int_equal(r.eax, 0);
}

/* ---- the report ---------------------------------------------------------- */

struct lines {
    char text[128][256];
    int n;
};

static void collect(void *ctx, const char *line)
{
    struct lines *l = ctx;
    assert_true(l->n < 128);
    assert_true(strlen(line) < 256);
    strcpy(l->text[l->n++], line);
}

static int find_line(const struct lines *l, const char *needle)
{
    for (int i = 0; i < l->n; i++)
        if (strstr(l->text[i], needle))
            return i;
    return -1;
}

static int count_prefix(const struct lines *l, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += strncmp(l->text[i], prefix, strlen(prefix)) == 0;
    return n;
}

static void test_report_skylake(void **state)
{
    (void)state;
    static struct lines l;
    struct rtit_caps c;
    char machine[256];

    caps_of_fixture("skylake-client.txt", &c);
    l.n = 0;
    rtit_caps_report(&c, NULL, collect, &l);
    machine_line(&c, machine, sizeof(machine));
    assert_true(l.n > 20);
    assert_string_equal(l.text[l.n - 1], machine);
    assert_int_equal(count_prefix(&l, "ptboot: "), 1);
    assert_true(find_line(&l, "vendor: GenuineIntel") >= 0);
    assert_true(find_line(&l, "family 0x6 (6) model 0x5e (94) stepping 0x3 (3)") >= 0);
    assert_true(find_line(&l, "hypervisor: no") >= 0);
    assert_true(find_line(&l, "CPUID.(7,0).EBX[25] (Intel PT): 1") >= 0);
    static const char *const names[] = {
        "cr3_filter",       "psb_cyc",          "ip_filter",       "mtc",         "ptwrite",
        "power_events",     "psb_pmi_preserve", "event_trace",     "tnt_disable", "topa ",
        "topa_multi_entry", "single_range",     "trace_transport", "lip"
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        assert_true(find_line(&l, names[i]) >= 0);
    assert_true(find_line(&l, "address ranges: 2") >= 0);
    assert_true(find_line(&l, "MTCFreq encodings: 0x0249 -> 0 3 6 9 ") >= 0);
    assert_true(find_line(&l, "PSBFreq encodings: 0x003f -> 0 1 2 3 4 5 ") >= 0);
    assert_true(find_line(&l, "MAXPHYADDR: 39 bits") >= 0);
    assert_true(find_line(&l, "TSC/crystal ratio 334/2") >= 0);
    assert_true(find_line(&l, "IA32_RTIT_CTL") < 0); /* no MSRs given */
    assert_true(find_line(&l, "hybrid") < 0);
}

static void test_report_tsc_and_quirks(void **state)
{
    (void)state;
    static struct lines l;
    struct rtit_caps c;

    caps_of_fixture("alderlake.txt", &c);
    l.n = 0;
    rtit_caps_report(&c, NULL, collect, &l);
    /* 38.4 MHz * 166 / 2 */
    assert_true(find_line(&l, "crystal 38400000 Hz, TSC 3187200000 Hz") >= 0);
    assert_true(find_line(&l, "single-range-max-4k (Alder Lake: ADL037)") >= 0);
    assert_true(find_line(&l, "hybrid: yes") >= 0);
    assert_true(find_line(&l, "5-level paging") < 0);

    caps_of_fixture("sapphirerapids.txt", &c);
    l.n = 0;
    rtit_caps_report(&c, NULL, collect, &l);
    assert_true(find_line(&l, "5-level paging: supported (CPUID.(7,0).ECX[16])") >= 0);

    caps_of_fixture("broadwell-client.txt", &c);
    l.n = 0;
    rtit_caps_report(&c, NULL, collect, &l);
    assert_true(find_line(&l, "leaf 14h.1: absent") >= 0);
    assert_true(find_line(&l, "branchen-required") >= 0);
    assert_true(find_line(&l, "leaf 15h: absent") >= 0);
}

static void test_report_msrs(void **state)
{
    (void)state;
    static struct lines l;
    struct rtit_caps c;
    struct rtit_msr_snapshot s;

    caps_of_fixture("icelake-client.txt", &c);
    memset(&s, 0, sizeof(s));
    s.ctl.ok = true;
    s.ctl.value = RTIT_CTL_TRACEEN | RTIT_CTL_OS | RTIT_CTL_TOPA | RTIT_CTL_BRANCHEN |
                  (3ull << RTIT_CTL_MTCFREQ_SHIFT);
    s.status.ok = true;
    s.status.value = RTIT_STATUS_TRIGGEREN | (0x123ull << RTIT_STATUS_BYTECNT_SHIFT);
    s.output_base.fault = true;
    s.output_base.err = -1;
    l.n = 0;
    rtit_caps_report(&c, &s, collect, &l);
    int i = find_line(&l, "IA32_RTIT_CTL (0x570): 0xe105 TraceEn OS ToPA BranchEn MTCFreq=3");
    assert_true(i >= 0);
    assert_true(
        find_line(&l, "IA32_RTIT_STATUS (0x571): 0x12300000004 TriggerEn PacketByteCnt=291") >= 0);
    assert_true(find_line(&l, "IA32_RTIT_OUTPUT_BASE (0x560): read failed") >= 0);
    assert_true(find_line(&l, "IA32_RTIT_OUTPUT_MASK_PTRS (0x561): not read") >= 0);
    assert_true(find_line(&l, "firmware") >= 0);
    assert_true(find_line(&l, "already owns Intel PT") >= 0);
    assert_int_equal(count_prefix(&l, "ptboot: "), 1);
    assert_int_equal(strncmp(l.text[l.n - 1], "ptboot: info pt=yes", 19), 0);

    /* TraceEn=0: no ownership warning */
    s.ctl.value = 0;
    l.n = 0;
    rtit_caps_report(&c, &s, collect, &l);
    assert_true(find_line(&l, "IA32_RTIT_CTL (0x570): 0x0 (all clear)") >= 0);
    assert_true(find_line(&l, "already owns") < 0);
}

/* ---- MSR snapshot: only the MSRs CPUID promises are read ------------------ */

struct fake_msrs {
    uint32_t read[8];
    int n;
    int fail_msr;
};

static int fake_rd(void *ctx, uint32_t msr, uint64_t *v)
{
    struct fake_msrs *f = ctx;
    f->read[f->n++] = msr;
    if ((int)msr == f->fail_msr)
        return -1;
    *v = msr == RTIT_MSR_CTL ? RTIT_CTL_TRACEEN : 0;
    return 0;
}

static void test_snapshot(void **state)
{
    (void)state;
    struct rtit_caps c;
    struct rtit_msr_snapshot s;
    struct fake_msrs f = { .fail_msr = RTIT_MSR_STATUS };
    struct rtit_msr_ops ops = { fake_rd, NULL, &f };

    caps_of_fixture("broadwell-client.txt", &c);
    rtit_msr_snapshot_take(&s, &c, &ops);
    assert_int_equal(f.n, 4);
    assert_true(s.ctl.ok);
    assert_true(s.status.fault);
    assert_int_equal(s.status.err, -1);
    assert_true(s.output_base.ok && s.output_mask_ptrs.ok);
    assert_true(rtit_msr_snapshot_tracing(&s));

    f.n = 0;
    caps_of_fixture("amd.txt", &c);
    rtit_msr_snapshot_take(&s, &c, &ops);
    assert_int_equal(f.n, 0); /* would #GP: never touched */
    assert_false(s.ctl.ok || s.ctl.fault);
    assert_false(rtit_msr_snapshot_tracing(&s));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broadwell),
        cmocka_unit_test(test_skylake),
        cmocka_unit_test(test_goldmont),
        cmocka_unit_test(test_icelake),
        cmocka_unit_test(test_alderlake),
        cmocka_unit_test(test_sapphirerapids),
        cmocka_unit_test(test_amd),
        cmocka_unit_test(test_qemu_no_pt_bit),
        cmocka_unit_test(test_qemu_pt_bit_but_no_leaf14),
        cmocka_unit_test(test_no_leaf7),
        cmocka_unit_test(test_no_output),
        cmocka_unit_test(test_display_family_model),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_full),
        cmocka_unit_test(test_parse_tolerant),
        cmocka_unit_test(test_parse_aida),
        cmocka_unit_test(test_query_semantics),
        cmocka_unit_test(test_report_skylake),
        cmocka_unit_test(test_report_tsc_and_quirks),
        cmocka_unit_test(test_report_msrs),
        cmocka_unit_test(test_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
