/* rtit_check(): one test per rule, across the capability sets of the real
 * CPUs in test/fixtures/cpuid (plus synthetic variants where no fixture
 * lacks or has a feature). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_decode_params.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_plan_report.h"
#include "arch/x86/rtit_topa.h"
#include "test/unit/rtit_test_util.h"

#define BUF_PHYS   0x40000000ull
#define TABLE_PHYS 0x3ff00000ull

static struct rtit_caps caps(const char *name)
{
    return rtit_fixture_caps(name);
}

static struct rtit_config base(const struct rtit_caps *k)
{
    struct rtit_config c;
    rtit_config_default(&c, k);
    c.buffer_phys = BUF_PHYS;
    c.table_phys = TABLE_PHYS;
    return c;
}

static void expect(const struct rtit_config *c, const struct rtit_caps *k, enum rtit_rule want,
                   int index)
{
    struct rtit_violation v;
    enum rtit_rule got = rtit_check(c, k, &v);
    if (got != want)
        fail_msg("expected %s, got %s", rtit_rule_name(want), rtit_rule_name(got));
    assert_int_equal(v.rule, want);
    assert_int_equal(v.index, index);
}

#define EXPECT(c, k, rule) expect(&(c), &(k), (rule), -1)

static void test_defaults_ok_on_every_pt_cpu(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT; i++) {
        struct rtit_caps k = caps(rtit_fixture_names[i]);
        struct rtit_config c = base(&k);
        expect(&c, &k, k.pt ? RTIT_RULE_OK : RTIT_RULE_PT_ABSENT, -1);
    }
}

static void test_rule_table_complete(void **state)
{
    (void)state;
    for (int r = 1; r < RTIT_RULE_COUNT; r++) {
        assert_non_null(rtit_rule_name(r));
        assert_true(strlen(rtit_rule_text(r)) > 10);
        assert_int_not_equal(rtit_rule_kind(r), RTIT_KIND_NONE);
        for (int s = 1; s < r; s++)
            assert_string_not_equal(rtit_rule_name(r), rtit_rule_name(s));
    }
    assert_string_equal(rtit_rule_kind_name(rtit_rule_kind(RTIT_RULE_MTC_FREQ_ENCODING)), "#GP");
}

static void test_ctl_value(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    /* OS | ToPA | TSCEn | BranchEn | MTCFreq=3 */
    assert_int_equal(rtit_config_ctl(&c, false), 0xe504);
    assert_int_equal(rtit_config_ctl(&c, true), 0xe505);
    c.range[1].cfg = RTIT_ADDR_CFG_STOP;
    c.psb_freq = 5;
    c.cyc_thresh = 2;
    c.cyc_en = true;
    assert_int_equal(rtit_config_ctl(&c, true), 0xe507ull | 5ull << 24 | 2ull << 19 | 2ull << 36);
    /* Broadwell: no MTC, so no MTCFreq */
    k = caps("broadwell-client.txt");
    c = base(&k);
    assert_int_equal(rtit_config_ctl(&c, true), 0x2505);
}

static void test_pt_absent(void **state)
{
    (void)state;
    struct rtit_caps k = caps("amd.txt");
    struct rtit_config c = base(&k);
    EXPECT(c, k, RTIT_RULE_PT_ABSENT);
    /* EBX[25]=1 but no real leaf 14h (QEMU-like) */
    k.leaf7_pt = true;
    EXPECT(c, k, RTIT_RULE_PT_ABSENT);
}

static void test_topa_unsupported(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    k.topa = false; /* a single-range-only CPU */
    struct rtit_config c = base(&k);
    assert_int_equal(c.output, RTIT_OUTPUT_SINGLE);
    EXPECT(c, k, RTIT_RULE_OK);
    c.output = RTIT_OUTPUT_TOPA;
    EXPECT(c, k, RTIT_RULE_TOPA_UNSUPPORTED);
}

static void test_single_unsupported(void **state)
{
    (void)state;
    static const char *const no_single[] = { "broadwell-client.txt" };
    static const char *const single[] = { "skylake-client.txt", "goldmont.txt",
                                          "icelake-client.txt", "alderlake.txt",
                                          "sapphirerapids.txt" };
    for (size_t i = 0; i < 1; i++) {
        struct rtit_caps k = caps(no_single[i]);
        struct rtit_config c = base(&k);
        c.output = RTIT_OUTPUT_SINGLE;
        EXPECT(c, k, RTIT_RULE_SINGLE_UNSUPPORTED);
    }
    for (size_t i = 0; i < 5; i++) {
        struct rtit_caps k = caps(single[i]);
        struct rtit_config c = base(&k);
        c.output = RTIT_OUTPUT_SINGLE;
        EXPECT(c, k, RTIT_RULE_OK);
    }
}

static void test_fabric_unsupported(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT - 1; i++) {
        struct rtit_caps k = caps(rtit_fixture_names[i]);
        struct rtit_config c = base(&k);
        c.fabric_en = true;
        EXPECT(c, k, RTIT_RULE_FABRIC_UNSUPPORTED);
        k.trace_transport = true;
        EXPECT(c, k, RTIT_RULE_OK);
    }
}

static void test_cyc_and_psb(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt");
    struct rtit_config c = base(&k);
    c.cyc_en = true;
    EXPECT(c, k, RTIT_RULE_CYC_UNSUPPORTED);
    c = base(&k);
    c.cyc_thresh = 1;
    EXPECT(c, k, RTIT_RULE_CYC_UNSUPPORTED);
    c = base(&k);
    c.psb_freq = 1;
    EXPECT(c, k, RTIT_RULE_PSB_FREQ_UNSUPPORTED);

    k = caps("skylake-client.txt"); /* CYC 0x3fff, PSB 0x003f */
    c = base(&k);
    c.cyc_en = true;
    c.cyc_thresh = 13;
    c.psb_freq = 5;
    EXPECT(c, k, RTIT_RULE_OK);
    c.cyc_thresh = 14;
    EXPECT(c, k, RTIT_RULE_CYC_THRESH_ENCODING);
    /* checked against the bitmap even with CYCEn=0 */
    c.cyc_en = false;
    EXPECT(c, k, RTIT_RULE_CYC_THRESH_ENCODING);
    c.cyc_thresh = 0;
    c.psb_freq = 6;
    EXPECT(c, k, RTIT_RULE_PSB_FREQ_ENCODING);
    c.psb_freq = 16;
    EXPECT(c, k, RTIT_RULE_PSB_FREQ_ENCODING);

    k = caps("goldmont.txt"); /* CYC 0xffff */
    c = base(&k);
    c.cyc_thresh = 15;
    EXPECT(c, k, RTIT_RULE_OK);
    k = caps("alderlake.txt"); /* CYC 0x003f */
    c = base(&k);
    c.cyc_thresh = 6;
    EXPECT(c, k, RTIT_RULE_CYC_THRESH_ENCODING);
    k = caps("icelake-client.txt"); /* CYC 0x1fff */
    c = base(&k);
    c.cyc_thresh = 13;
    EXPECT(c, k, RTIT_RULE_CYC_THRESH_ENCODING);
    c.cyc_thresh = 12;
    EXPECT(c, k, RTIT_RULE_OK);
}

static void test_mtc(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt");
    struct rtit_config c = base(&k);
    c.mtc_en = true;
    EXPECT(c, k, RTIT_RULE_MTC_UNSUPPORTED);
    c.mtc_en = false;
    c.mtc_freq = 3;
    EXPECT(c, k, RTIT_RULE_MTC_UNSUPPORTED);
    for (size_t i = 1; i < RTIT_FIXTURE_COUNT - 1; i++) {
        k = caps(rtit_fixture_names[i]); /* all: MTC bitmap 0x0249 */
        c = base(&k);
        c.mtc_en = true;
        for (unsigned f = 0; f < 16; f++) {
            c.mtc_freq = f;
            expect(&c, &k, (0x249 >> f) & 1 ? RTIT_RULE_OK : RTIT_RULE_MTC_FREQ_ENCODING, -1);
        }
    }
}

static void test_branchen(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt");
    struct rtit_config c = base(&k);
    c.branch_en = false;
    EXPECT(c, k, RTIT_RULE_BRANCHEN_BDM106);
    /* a non-Broadwell CPU without EBX[3]: BranchEn still not configurable */
    k.quirks = 0;
    EXPECT(c, k, RTIT_RULE_BRANCHEN_FIXED);
    for (size_t i = 1; i < RTIT_FIXTURE_COUNT - 1; i++) {
        k = caps(rtit_fixture_names[i]);
        c = base(&k);
        c.branch_en = false;
        EXPECT(c, k, RTIT_RULE_OK);
    }
}

static void test_ptwrite(void **state)
{
    (void)state;
    static const struct {
        const char *cpu;
        bool has;
    } t[] = {
        { "broadwell-client.txt", false }, { "skylake-client.txt", false },
        { "goldmont.txt", false },         { "icelake-client.txt", false },
        { "alderlake.txt", true },         { "sapphirerapids.txt", true },
    };
    for (size_t i = 0; i < 6; i++) {
        struct rtit_caps k = caps(t[i].cpu);
        struct rtit_config c = base(&k);
        c.ptw_en = true;
        EXPECT(c, k, t[i].has ? RTIT_RULE_OK : RTIT_RULE_PTW_UNSUPPORTED);
        c.ptw_en = false;
        c.fup_on_ptw = true;
        EXPECT(c, k, t[i].has ? RTIT_RULE_OK : RTIT_RULE_PTW_UNSUPPORTED);
    }
}

static void test_newer_features(void **state)
{
    (void)state;
    /* Alder Lake: EBX=0x5f: PSB/PMI preservation yes; power events,
	 * event trace, TNT disable no. */
    struct rtit_caps k = caps("alderlake.txt");
    struct rtit_config c = base(&k);
    c.inject_psb_pmi = true;
    EXPECT(c, k, RTIT_RULE_OK);
    c = base(&k);
    c.pwr_evt_en = true;
    EXPECT(c, k, RTIT_RULE_PWR_EVT_UNSUPPORTED);
    c = base(&k);
    c.event_en = true;
    EXPECT(c, k, RTIT_RULE_EVENT_UNSUPPORTED);
    c = base(&k);
    c.dis_tnt = true;
    EXPECT(c, k, RTIT_RULE_DISTNT_UNSUPPORTED);
    /* a newer CPU enumerating them */
    k.power_events = k.event_trace = k.tnt_disable = true;
    c = base(&k);
    c.pwr_evt_en = c.event_en = c.dis_tnt = true;
    EXPECT(c, k, RTIT_RULE_OK);

    k = caps("skylake-client.txt");
    c = base(&k);
    c.inject_psb_pmi = true;
    EXPECT(c, k, RTIT_RULE_INJECT_UNSUPPORTED);
}

static void test_cr3(void **state)
{
    (void)state;
    for (size_t i = 0; i < RTIT_FIXTURE_COUNT - 1; i++) {
        struct rtit_caps k = caps(rtit_fixture_names[i]);
        struct rtit_config c = base(&k);
        c.cr3_filter = true;
        c.cr3 = 0x7f001000;
        EXPECT(c, k, RTIT_RULE_OK);
        c.cr3 = 0x7f001018; /* PCD/PWT bits: reserved in CR3_MATCH */
        EXPECT(c, k, RTIT_RULE_CR3_RESERVED);
        /* cr3 value is ignored while the filter is off */
        c.cr3_filter = false;
        EXPECT(c, k, RTIT_RULE_OK);
        k.cr3_filter = false;
        c.cr3_filter = true;
        c.cr3 = 0x1000;
        EXPECT(c, k, RTIT_RULE_CR3_UNSUPPORTED);
    }
}

static void test_ranges(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt"); /* 0 ranges */
    struct rtit_config c = base(&k);
    c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0x1000, 0x2000 };
    expect(&c, &k, RTIT_RULE_RANGE_UNSUPPORTED, 0);

    for (size_t i = 1; i < RTIT_FIXTURE_COUNT - 1; i++) {
        k = caps(rtit_fixture_names[i]); /* 2 ranges each */
        c = base(&k);
        c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0x7e000000, 0x7effffff };
        c.range[1] = (struct rtit_addr_range){ RTIT_ADDR_CFG_STOP, 0xffffffff80000000ull,
                                               0xffffffff80001000ull };
        EXPECT(c, k, RTIT_RULE_OK);
        c.range[2].cfg = RTIT_ADDR_CFG_FILTER;
        expect(&c, &k, RTIT_RULE_RANGE_UNSUPPORTED, 2);
        c.range[2].cfg = RTIT_ADDR_CFG_OFF;
        c.range[3].cfg = RTIT_ADDR_CFG_STOP;
        expect(&c, &k, RTIT_RULE_RANGE_UNSUPPORTED, 3);
        c.range[3].cfg = RTIT_ADDR_CFG_OFF;
        c.range[1].cfg = 3;
        expect(&c, &k, RTIT_RULE_RANGE_CFG_RESERVED, 1);
        c.range[1].cfg = 15;
        expect(&c, &k, RTIT_RULE_RANGE_CFG_RESERVED, 1);
        c.range[1].cfg = RTIT_ADDR_CFG_STOP;
        /* canonical at 57 bits only: #GP without 5-level paging
		 * support, else taken but beyond 4-level paging */
        enum rtit_rule beyond48 =
            k.la57 ? RTIT_RULE_RANGE_BEYOND_PAGING : RTIT_RULE_RANGE_NONCANONICAL;
        c.range[1].start = 0x0000800000000000ull - 0x1000;
        c.range[1].end = 0x0000800000000000ull;
        expect(&c, &k, beyond48, 1);
        c.range[1].end = 0x00007fffffffffffull;
        c.range[0].start = 0xfff0000000000000ull;
        expect(&c, &k, beyond48, 0);
        c.range[0].start = 0xf000000000000000ull; /* not at 57 either */
        expect(&c, &k, RTIT_RULE_RANGE_NONCANONICAL, 0);
        /* a disabled range's addresses are not written: not checked */
        c.range[0].cfg = RTIT_ADDR_CFG_OFF;
        EXPECT(c, k, RTIT_RULE_OK);
    }
    /* a CPU with 4 ranges (14h.1.EAX[2:0] = 4, not masked to 2 bits) */
    k = caps("skylake-client.txt");
    k.num_ranges = 4;
    c = base(&k);
    c.range[3] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0, 0xfff };
    EXPECT(c, k, RTIT_RULE_OK);
}

/* A > B: the CPU takes it and the range never matches (36.2.4.3). */
static void test_range_empty(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0x2000, 0x1000 };
    expect(&c, &k, RTIT_RULE_RANGE_EMPTY, 0);
    assert_int_equal(rtit_rule_kind(RTIT_RULE_RANGE_EMPTY), RTIT_KIND_UNHONOURED);
    assert_string_equal(rtit_rule_kind_name(RTIT_KIND_UNHONOURED), "unhonoured");
    c.range[0].end = 0x2000; /* one address: fine */
    EXPECT(c, k, RTIT_RULE_OK);
    c.range[1] = (struct rtit_addr_range){ RTIT_ADDR_CFG_STOP, 0x3001, 0x3000 };
    expect(&c, &k, RTIT_RULE_RANGE_EMPTY, 1);
    /* high half above low half: A > B as unsigned, as the CPU compares */
    c.range[1] = (struct rtit_addr_range){ RTIT_ADDR_CFG_STOP, 0xffffffff80000000ull, 0x1000 };
    expect(&c, &k, RTIT_RULE_RANGE_EMPTY, 1);
    /* an unused range is not written: not judged */
    c.range[1].cfg = RTIT_ADDR_CFG_OFF;
    EXPECT(c, k, RTIT_RULE_OK);
    /* #GP rules come first: range 2 does not exist on Skylake */
    c.range[2] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 2, 1 };
    expect(&c, &k, RTIT_RULE_RANGE_UNSUPPORTED, 2);
}

/* 57-bit filter addresses: only on a CPU with 5-level paging (WRMSR takes
 * them) whose firmware runs 5-level paging (code can be there). */
static void test_range_la57(void **state)
{
    (void)state;
    const uint64_t a57 = 0x00ff000000000000ull, b57 = 0x00ff000000ffffffull;
    struct rtit_caps k = caps("sapphirerapids.txt");
    assert_true(k.la57);
    assert_false(k.paging_la57); /* a dump: 4-level unless told */
    struct rtit_config c = base(&k);
    c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, a57, b57 };
    expect(&c, &k, RTIT_RULE_RANGE_BEYOND_PAGING, 0);
    k.paging_la57 = true;
    EXPECT(c, k, RTIT_RULE_OK);
    c.range[0].end = 0x0100000000000000ull; /* beyond 57 bits */
    expect(&c, &k, RTIT_RULE_RANGE_NONCANONICAL, 0);
    c.range[0].start = 0xff00000000000000ull; /* high half at 57 */
    c.range[0].end = 0xff000000ffffffffull;
    EXPECT(c, k, RTIT_RULE_OK);
    /* no 5-level paging on Ice Lake client: CR4.LA57 cannot be set, and
	 * WRMSR faults on 57-bit addresses whatever the caller claims */
    k = caps("icelake-client.txt");
    assert_false(k.la57);
    k.paging_la57 = true;
    c = base(&k);
    c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, a57, b57 };
    expect(&c, &k, RTIT_RULE_RANGE_NONCANONICAL, 0);
    assert_int_equal(rtit_msr_linear_bits(&k), 48);
    assert_int_equal(rtit_ip_linear_bits(&k), 48);
}

/* A ToPA table inside the output: refused wherever it is (any table, any
 * region); defaults move out of the way with a note. */
static void test_table_overlap(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    c.table_phys = BUF_PHYS; /* issue #18: table 0 on region 0 */
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.regions = 8;
    c.table_phys = BUF_PHYS + 0x4000; /* in region 4 */
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.table_phys = BUF_PHYS + 0x7000; /* the last page of the last region */
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.table_phys = BUF_PHYS + 0x8000; /* just after: fine */
    EXPECT(c, k, RTIT_RULE_OK);
    c.table_phys = BUF_PHYS - 0x1000; /* just before: fine */
    EXPECT(c, k, RTIT_RULE_OK);
    /* two tables (600 regions): the second reaches into region 0 */
    c.regions = 600;
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.table_phys = BUF_PHYS - 0x2000;
    EXPECT(c, k, RTIT_RULE_OK);
    /* a 2 MiB region around the table */
    c = base(&k);
    c.region_size_code = 9;
    c.buffer_phys = 0x3fe00000;
    c.table_phys = 0x3ff00000;
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    /* the default addresses with 256 and 257 tables (issue #18) */
    c = base(&k);
    c.regions = 130816; /* 256 tables: they end where the buffer starts */
    EXPECT(c, k, RTIT_RULE_OK);
    bool moved = true;
    assert_int_equal(rtit_plan_default_table(&c, &k, &moved), TABLE_PHYS);
    assert_false(moved);
    c.regions = 130817; /* table 256 would be region 0 */
    EXPECT(c, k, RTIT_RULE_TOPA_TABLE_OVERLAP);
    c.table_phys = rtit_plan_default_table(&c, &k, &moved);
    assert_true(moved);
    assert_int_equal(c.table_phys, BUF_PHYS - 257 * 4096);
    EXPECT(c, k, RTIT_RULE_OK);
    char note[160];
    rtit_plan_default_table_note(note, sizeof(note), &c, &k);
    assert_non_null(strstr(note, "0x3feff000"));
    assert_non_null(strstr(note, "257 ToPA table"));
    /* no room below the buffer: after it */
    c = base(&k);
    c.buffer_phys = 0;
    c.regions = 4;
    c.table_phys = rtit_plan_default_table(&c, &k, &moved);
    assert_false(moved); /* 0x3ff00000 is clear of [0, 16K) */
    c.buffer_phys = 0x3fe00000;
    c.region_size_code = 9; /* 8 MiB from 0x3fe00000 covers 0x3ff00000 */
    c.table_phys = rtit_plan_default_table(&c, &k, &moved);
    assert_true(moved);
    assert_int_equal(c.table_phys, 0x3fdff000);
    EXPECT(c, k, RTIT_RULE_OK);
    c.buffer_phys = 0; /* 8 x 128 MiB = [0, 1G): nothing below */
    c.regions = 8;
    c.region_size_code = 15;
    c.table_phys = rtit_plan_default_table(&c, &k, &moved);
    assert_true(moved);
    assert_int_equal(c.table_phys, 1ull << 30);
    EXPECT(c, k, RTIT_RULE_OK);
    /* single range has no tables */
    c = base(&k);
    c.output = RTIT_OUTPUT_SINGLE;
    c.table_phys = BUF_PHYS;
    EXPECT(c, k, RTIT_RULE_OK);
    assert_int_equal(rtit_rule_kind(RTIT_RULE_TOPA_TABLE_OVERLAP), RTIT_KIND_UNHONOURED);
}

/* Stop-when-full needs ToPA: a single range wraps (36.2.6.1). */
static void test_single_range_stop(void **state)
{
    (void)state;
    for (size_t i = 1; i < RTIT_FIXTURE_COUNT - 1; i++) {
        struct rtit_caps k = caps(rtit_fixture_names[i]);
        if (!k.single_range)
            continue;
        struct rtit_config c = base(&k);
        c.output = RTIT_OUTPUT_SINGLE;
        c.when_full = RTIT_FULL_STOP;
        EXPECT(c, k, RTIT_RULE_SINGLE_RANGE_STOP);
        c.when_full = RTIT_FULL_RING;
        EXPECT(c, k, RTIT_RULE_OK);
        c.output = RTIT_OUTPUT_TOPA;
        c.when_full = RTIT_FULL_STOP;
        EXPECT(c, k, RTIT_RULE_OK);
    }
}

/* The single-range erratum list: the published errata and the later
 * client parts (pt_caps.c says why), by family 6 model. */
static void test_single_range_erratum_models(void **state)
{
    (void)state;
    static const unsigned listed[] = {
        0x8c, 0x8d,       /* Tiger Lake: TGL052 */
        0x97, 0x9a,       /* Alder Lake: ADL037 */
        0xb7, 0xba, 0xbf, /* Raptor Lake: RPL017 */
        0xbe,             /* Alder Lake-N */
        0xaa, 0xac,       /* Meteor Lake */
        0xc5, 0xc6, 0xb5, /* Arrow Lake */
        0xbd,             /* Lunar Lake */
        0xcc,             /* Panther Lake */
    };
    static const unsigned not_listed[] = {
        0x3d, 0x4e, 0x5e, 0x8e, 0x9e, 0x7e, 0xa5, 0x55, 0x6a, 0x8f, 0x5c, 0x7a,
    };
    for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
        const char *why = rtit_single_range_4k_reason(6, listed[i]);
        if (!why)
            fail_msg("model 0x%x not listed", listed[i]);
        struct rtit_caps k = caps("alderlake.txt");
        k.model = listed[i];
        k.quirks = RTIT_QUIRK_SINGLE_RANGE_4K;
        struct rtit_config c = base(&k);
        c.output = RTIT_OUTPUT_SINGLE;
        c.single_size = 8192;
        EXPECT(c, k, RTIT_RULE_SINGLE_ERRATUM);
    }
    assert_string_equal(rtit_single_range_4k_reason(6, 0x9a), "Alder Lake: ADL037");
    assert_non_null(strstr(rtit_single_range_4k_reason(6, 0xcc), "precaution"));
    for (size_t i = 0; i < sizeof(not_listed) / sizeof(not_listed[0]); i++)
        assert_null(rtit_single_range_4k_reason(6, not_listed[i]));
    assert_null(rtit_single_range_4k_reason(0x13, 0x01));
}

static void test_topa_rules(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt");
    struct rtit_config c = base(&k);
    c.regions = 2;
    EXPECT(c, k, RTIT_RULE_TOPA_SINGLE_ENTRY);
    c.regions = 1;
    c.region_size_code = 15; /* 128 MiB, one entry */
    c.buffer_phys = 0x40000000;
    EXPECT(c, k, RTIT_RULE_OK);
    c.when_full = RTIT_FULL_STOP;
    EXPECT(c, k, RTIT_RULE_OK);

    for (size_t i = 0; i < RTIT_FIXTURE_COUNT - 1; i++) {
        k = caps(rtit_fixture_names[i]);
        c = base(&k);
        c.regions = 0;
        EXPECT(c, k, RTIT_RULE_REGIONS_INVALID);
        c.regions = 1;
        c.region_size_code = 16;
        EXPECT(c, k, RTIT_RULE_REGIONS_INVALID);
        c.region_size_code = 9; /* 2 MiB */
        c.buffer_phys = 0x40100000;
        EXPECT(c, k, RTIT_RULE_REGION_ALIGN);
        c.buffer_phys = 0x40200080; /* not expressible in an entry */
        EXPECT(c, k, RTIT_RULE_REGION_BASE_4K);
        c.buffer_phys = 0x40200000;
        EXPECT(c, k, RTIT_RULE_OK);
        c.table_phys = TABLE_PHYS + 0x40; /* bits 6:0: #GP */
        EXPECT(c, k, RTIT_RULE_OUTPUT_BASE_RESERVED);
        c.table_phys = TABLE_PHYS + 0x80; /* 128 but not 4K aligned */
        EXPECT(c, k, RTIT_RULE_TOPA_TABLE_ALIGN);
        c.table_phys = TABLE_PHYS + 0x800;
        EXPECT(c, k, RTIT_RULE_TOPA_TABLE_ALIGN);
        c.table_phys = TABLE_PHYS;
        if (k.topa_multi_entry) {
            c.regions = 1000; /* 2 tables, 2000 MiB */
            c.region_size_code = 9;
            EXPECT(c, k, RTIT_RULE_OK);
        }
    }
}

static void test_maxphyaddr(void **state)
{
    (void)state;
    struct rtit_caps k = caps("broadwell-client.txt"); /* 39 bits */
    struct rtit_config c = base(&k);
    c.buffer_phys = 1ull << 39;
    EXPECT(c, k, RTIT_RULE_TOPA_ABOVE_MAXPHYADDR);
    c.buffer_phys = (1ull << 39) - 4096; /* last page: fits */
    EXPECT(c, k, RTIT_RULE_OK);
    c.buffer_phys = BUF_PHYS;
    c.table_phys = 1ull << 40;
    EXPECT(c, k, RTIT_RULE_ABOVE_MAXPHYADDR);

    k = caps("skylake-client.txt"); /* 39 bits: the 2nd table crosses */
    c = base(&k);
    c.regions = 600;
    c.table_phys = (1ull << 39) - 4096;
    EXPECT(c, k, RTIT_RULE_TOPA_ABOVE_MAXPHYADDR);
    c.table_phys = (1ull << 39) - 8192;
    EXPECT(c, k, RTIT_RULE_OK);

    k = caps("sapphirerapids.txt"); /* 52 bits */
    c = base(&k);
    c.buffer_phys = 1ull << 39;
    c.table_phys = 1ull << 40;
    EXPECT(c, k, RTIT_RULE_OK);
    c.output = RTIT_OUTPUT_SINGLE;
    c.buffer_phys = 1ull << 52;
    EXPECT(c, k, RTIT_RULE_ABOVE_MAXPHYADDR);
}

static void test_single_range(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    c.output = RTIT_OUTPUT_SINGLE;
    c.single_size = 1u << 20;
    EXPECT(c, k, RTIT_RULE_OK); /* Skylake: no erratum */
    c.single_size = 3000;
    EXPECT(c, k, RTIT_RULE_SINGLE_SIZE);
    c.single_size = 64;
    EXPECT(c, k, RTIT_RULE_SINGLE_SIZE_RANGE);
    c.single_size = 128;
    EXPECT(c, k, RTIT_RULE_OK);
    c.single_size = 1ull << 33;
    EXPECT(c, k, RTIT_RULE_SINGLE_SIZE_RANGE);
    c.single_size = 8192;
    c.buffer_phys = BUF_PHYS + 4096;
    EXPECT(c, k, RTIT_RULE_SINGLE_ALIGN);
    c.buffer_phys = BUF_PHYS + 0x40;
    EXPECT(c, k, RTIT_RULE_OUTPUT_BASE_RESERVED);

    k = caps("alderlake.txt"); /* ADL037 */
    c = base(&k);
    c.output = RTIT_OUTPUT_SINGLE;
    c.single_size = 4096;
    EXPECT(c, k, RTIT_RULE_OK);
    c.single_size = 8192;
    EXPECT(c, k, RTIT_RULE_SINGLE_ERRATUM);
    assert_int_equal(rtit_rule_kind(RTIT_RULE_SINGLE_ERRATUM), RTIT_KIND_UNSAFE);
}

static int platform_info_rd(void *ctx, uint32_t msr, uint64_t *v)
{
    unsigned *reads = ctx;
    (*reads)++;
    if (msr != X86_MSR_PLATFORM_INFO)
        return -1;
    *v = 0x80838f1011ff00ull;
    *v = (*v & ~0xff00ull) | 40u << 8; /* ratio 40 in bits 15:8 */
    return 0;
}

static void test_decode_params(void **state)
{
    (void)state;
    unsigned reads = 0;
    struct rtit_msr_ops ops = { platform_info_rd, NULL, &reads };
    struct rtit_decode_params p;
    char buf[256];

    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    c.mtc_en = true;
    c.range[0] = (struct rtit_addr_range){ RTIT_ADDR_CFG_FILTER, 0x1000, 0x1fff };
    rtit_decode_params_fill(&p, &k, &c, &ops);
    assert_int_equal(reads, 1);
    assert_true(p.nom_freq_valid);
    assert_int_equal(p.nom_freq, 40);
    assert_int_equal(p.ctl, rtit_config_ctl(&c, true));
    assert_int_equal(p.range[0].end, 0x1fff);
    assert_int_equal(p.maxphyaddr, 39);
    rtit_decode_params_libipt_args(&p, buf, sizeof(buf));
    assert_string_equal(buf, "--cpu 6/94/3 --mtc-freq 3 --nom-freq 40 "
                             "--cpuid-0x15.eax 2 --cpuid-0x15.ebx 334");
    /* truncation is safe and reports the full length */
    char small[10];
    int n = rtit_decode_params_libipt_args(&p, small, sizeof(small));
    assert_int_equal(n, (int)strlen(buf));
    assert_string_equal(small, "--cpu 6/9");

    /* Broadwell: no leaf 15h, MTC off, no MSR access without ops */
    k = caps("broadwell-client.txt");
    c = base(&k);
    rtit_decode_params_fill(&p, &k, &c, NULL);
    rtit_decode_params_libipt_args(&p, buf, sizeof(buf));
    assert_string_equal(buf, "--cpu 6/61/4");
    /* AMD: MSR_PLATFORM_INFO is not touched */
    reads = 0;
    k = caps("amd.txt");
    c = base(&k);
    rtit_decode_params_fill(&p, &k, &c, &ops);
    assert_int_equal(reads, 0);
    assert_false(p.nom_freq_valid);
}

static void test_parse_u64(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(rtit_parse_u64("0", &v, false), 0);
    assert_int_equal(v, 0);
    assert_int_equal(rtit_parse_u64("0x7E000000", &v, false), 0);
    assert_int_equal(v, 0x7e000000);
    assert_int_equal(rtit_parse_u64("18446744073709551615", &v, false), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(rtit_parse_u64("18446744073709551616", &v, false), -1);
    assert_int_equal(rtit_parse_u64("0xffffffffffffffff", &v, false), 0);
    assert_int_equal(rtit_parse_u64("0x1ffffffffffffffff", &v, false), -1);
    assert_int_equal(rtit_parse_u64("2M", &v, true), 0);
    assert_int_equal(v, 2u << 20);
    assert_int_equal(rtit_parse_u64("0x10k", &v, true), 0);
    assert_int_equal(v, 16u << 10);
    assert_int_equal(rtit_parse_u64("4G", &v, true), 0);
    assert_true(v == 4ull << 30);
    /* one parser for every command (decoder/ptd_num.h): K/M/G everywhere,
	 * whatever the caller's suffix flag says */
    assert_int_equal(rtit_parse_u64("2M", &v, false), 0);
    assert_int_equal(v, 2u << 20);
    assert_int_equal(rtit_parse_u64("2MB", &v, true), -1);
    assert_int_equal(rtit_parse_u64("", &v, false), -1);
    assert_int_equal(rtit_parse_u64("0x", &v, false), -1);
    assert_int_equal(rtit_parse_u64("-1", &v, false), -1);
    assert_int_equal(rtit_parse_u64("17179869184G", &v, true), -1); /* 2^34 G */
    assert_int_equal(rtit_parse_u64(NULL, &v, false), -1);
}

static void test_options(void **state)
{
    (void)state;
    struct rtit_caps k = caps("skylake-client.txt");
    struct rtit_config c = base(&k);
    char err[128];
    static const char *const flags[] = { "user",        "no-os",   "no-branch",      "no-tsc",
                                         "dis-retc",    "ptwrite", "fup-on-ptw",     "power-events",
                                         "event-trace", "dis-tnt", "inject-psb-pmi", "fabric" };
    for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
        assert_int_equal(rtit_option_takes_value(flags[i]), 0);
        assert_int_equal(rtit_option_apply(&c, flags[i], NULL, err, sizeof(err)), 0);
    }
    assert_true(c.user && !c.os && !c.branch_en && !c.tsc_en && c.dis_retc && c.ptw_en &&
                c.fup_on_ptw && c.pwr_evt_en && c.event_en && c.dis_tnt && c.inject_psb_pmi &&
                c.fabric_en);

    c = base(&k);
#define OK(n, v) assert_int_equal(rtit_option_apply(&c, n, v, err, sizeof(err)), 0)
    OK("output", "single");
    assert_int_equal(c.output, RTIT_OUTPUT_SINGLE);
    OK("output", "topa");
    OK("mode", "stop");
    assert_int_equal(c.when_full, RTIT_FULL_STOP);
    OK("regions", "600");
    OK("region-size", "2M");
    assert_int_equal(c.region_size_code, 9);
    OK("region-size", "128M");
    assert_int_equal(c.region_size_code, 15);
    OK("single-size", "64K");
    assert_int_equal(c.single_size, 65536);
    OK("buffer-base", "0x80000000");
    OK("table-base", "0x7ff00000");
    OK("mtc", "6");
    assert_true(c.mtc_en && c.mtc_freq == 6);
    OK("cyc", "2");
    assert_true(c.cyc_en && c.cyc_thresh == 2);
    OK("psb", "5");
    OK("cr3", "0x1000");
    assert_true(c.cr3_filter && c.cr3 == 0x1000);
    OK("filter", "1:0x1000:0x1fff");
    assert_int_equal(c.range[1].cfg, RTIT_ADDR_CFG_FILTER);
    assert_int_equal(c.range[1].end, 0x1fff);
    OK("trace-stop", "0:0xffffffff80000000:0xffffffff80000fff");
    assert_int_equal(c.range[0].cfg, RTIT_ADDR_CFG_STOP);
    /* range 1 was named: a second time is refused, naming the first */
    assert_int_equal(rtit_option_apply(&c, "range-cfg", "1:7:0:0", err, sizeof(err)), -1);
    assert_string_equal(err, "range-cfg=1:7:0:0: range 1 given twice (range-duplicate): "
                             "already filter=1:0x1000:0x1fff");
    assert_int_equal(c.range[1].cfg, RTIT_ADDR_CFG_FILTER);
    c = base(&k);
    OK("range-cfg", "1:7:0:0");
    assert_int_equal(c.range[1].cfg, 7);
    /* the result is judged by rtit_check, not by the parser */
    expect(&c, &k, RTIT_RULE_RANGE_CFG_RESERVED, 1);
    c = base(&k);
    OK("filter", "0:0x1000:0x2000"); /* issue #18 */
    assert_int_equal(rtit_option_apply(&c, "trace-stop", "0:0x3000:0x4000", err, sizeof(err)), -1);
    assert_string_equal(err, "trace-stop=0:0x3000:0x4000: range 0 given twice "
                             "(range-duplicate): already filter=0:0x1000:0x2000");
    assert_int_equal(c.range[0].start, 0x1000);
    OK("trace-stop", "1:0x3000:0x4000");
    assert_int_equal(rtit_option_apply(&c, "filter", "1:0x5000:0x6000", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "already trace-stop=1:0x3000:0x4000"));
    c = base(&k);
    OK("range-cfg", "0:0:0x10:0x20"); /* off, but named */
    assert_int_equal(rtit_option_apply(&c, "filter", "0:1:2", err, sizeof(err)), -1);
    assert_non_null(strstr(err, "already range-cfg=0:0:0x10:0x20"));
#undef OK

#define BAD(n, v, msg)                                                       \
    do {                                                                     \
        assert_int_equal(rtit_option_apply(&c, n, v, err, sizeof(err)), -1); \
        if (!strstr(err, msg))                                               \
            fail_msg("'%s' lacks '%s'", err, msg);                           \
    } while (0)
    BAD("bogus", NULL, "bogus: unknown option");
    BAD("regions", NULL, "regions: needs a value");
    BAD("regions", "", "needs a value");
    BAD("user", "1", "user=1: takes no value");
    BAD("output", "both", "expected topa or single");
    BAD("mode", "wrap", "expected ring or stop");
    BAD("regions", "many", "expected a number");
    BAD("region-size", "3K", "4K, 8K, ... or 128M");
    BAD("region-size", "256M", "4K, 8K, ... or 128M");
    BAD("filter", "4:0:1", "N 0..3");
    BAD("filter", "0:1", "expected N:START:END");
    BAD("filter", "0:1:2:3", "expected N:START:END");
    BAD("range-cfg", "0:1:2", "expected N:CFG:START:END");
    BAD("cr3", "x", "expected a number");
#undef BAD
    assert_int_equal(rtit_option_takes_value("cpuid"), -1);
    /* a tiny error buffer stays terminated */
    char tiny[4];
    assert_int_equal(rtit_option_apply(&c, "bogus", NULL, tiny, sizeof(tiny)), -1);
    assert_int_equal(strlen(tiny), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_ok_on_every_pt_cpu),
        cmocka_unit_test(test_rule_table_complete),
        cmocka_unit_test(test_ctl_value),
        cmocka_unit_test(test_pt_absent),
        cmocka_unit_test(test_topa_unsupported),
        cmocka_unit_test(test_single_unsupported),
        cmocka_unit_test(test_fabric_unsupported),
        cmocka_unit_test(test_cyc_and_psb),
        cmocka_unit_test(test_mtc),
        cmocka_unit_test(test_branchen),
        cmocka_unit_test(test_ptwrite),
        cmocka_unit_test(test_newer_features),
        cmocka_unit_test(test_cr3),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_range_empty),
        cmocka_unit_test(test_range_la57),
        cmocka_unit_test(test_table_overlap),
        cmocka_unit_test(test_single_range_stop),
        cmocka_unit_test(test_single_range_erratum_models),
        cmocka_unit_test(test_topa_rules),
        cmocka_unit_test(test_maxphyaddr),
        cmocka_unit_test(test_single_range),
        cmocka_unit_test(test_decode_params),
        cmocka_unit_test(test_parse_u64),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
