/* The RTIT model itself, with hand-written MSR values and ToPA tables (no
 * arch/ code): the #GPs and operational errors of the SDM that arch/ never
 * produces on purpose, so the property test can trust the model. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "test/rtit_model.h"

#define MEM_PHYS 0x100000ull
#define TAB      MEM_PHYS
#define BUF      (MEM_PHYS + 0x10000)

static uint8_t mem[0x40000] __attribute__((aligned(4096)));
static struct rtit_model m;

/* Skylake-like: CR3, PSB/CYC, IP filter, MTC; ToPA+MENTRY+single; 2 ranges */
static const struct rtit_model_caps skl = {
    .pt = true,
    .ebx14 = 0xf,
    .ecx14 = 0x7,
    .has14_1 = true,
    .eax14_1 = 0x02490002,
    .ebx14_1 = 0x003f3fff,
    .maxphyaddr = 39,
    .family = 6,
    .model = 0x5e,
};
/* Broadwell-like: CR3 + ToPA only, no multi-entry */
static const struct rtit_model_caps bdw = {
    .pt = true,
    .ebx14 = 0x1,
    .ecx14 = 0x1,
    .maxphyaddr = 39,
    .family = 6,
    .model = 0x3d,
};

#define CTL_OS_TOPA_BR 0x2104ull /* OS | ToPA | BranchEn */

static uint64_t *table(unsigned t)
{
    return (uint64_t *)(void *)(mem + t * 4096);
}

static void setup(const struct rtit_model_caps *c)
{
    memset(mem, 0, sizeof(mem));
    rtit_model_init(&m, c, mem, MEM_PHYS, sizeof(mem));
}

static int wr(uint32_t msr, uint64_t v)
{
    return rtit_model_wrmsr(&m, msr, v);
}

static void expect_gp(uint32_t msr, uint64_t v, const char *why)
{
    unsigned n = m.gp_count;
    assert_int_equal(wr(msr, v), -1);
    assert_int_equal(m.gp_count, n + 1);
    if (!strstr(m.last_gp, why))
        fail_msg("expected '%s' in '%s'", why, m.last_gp);
}

/* Enable with the current tables; return whether STATUS.Error got set. */
static bool enable_errors(uint64_t ctl)
{
    assert_int_equal(wr(0x560, TAB), 0);
    assert_int_equal(wr(0x561, 0x7f), 0);
    assert_int_equal(wr(0x570, ctl | 1), 0);
    rtit_model_trace(&m, 64 * 1024);
    return m.status & 0x10;
}

static void test_gp_missing_msrs(void **state)
{
    (void)state;
    uint64_t v;
    struct rtit_model_caps none = { 0 };
    setup(&none);
    assert_int_equal(rtit_model_rdmsr(&m, 0x570, &v), -1);
    expect_gp(0x571, 0, "does not have");

    setup(&bdw);
    assert_int_equal(rtit_model_rdmsr(&m, 0x570, &v), 0);
    assert_int_equal(rtit_model_rdmsr(&m, 0x572, &v), 0); /* CR3 cap */
    expect_gp(0x580, 0, "does not have");                 /* no ranges */
    setup(&skl);
    assert_int_equal(wr(0x583, 0x1000), 0);    /* ADDR1_B: range 1 < 2 */
    expect_gp(0x584, 0x1000, "does not have"); /* ADDR2_A */
    expect_gp(0x590, 0, "does not have");
}

static void test_gp_ctl_rules(void **state)
{
    (void)state;
    setup(&bdw);
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 1, "reserved");        /* CYCEn */
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 9, "reserved");        /* MTCEn */
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 12, "reserved");       /* PTWEn */
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 32, "reserved");       /* ADDR0_CFG */
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 18, "reserved");       /* bit 18 */
    expect_gp(0x570, (CTL_OS_TOPA_BR & ~0x2000ull) | 1, "BranchEn"); /* BDM106 */
    expect_gp(0x570, 0x2004 | 1, "no single-range");                 /* ToPA=0 */
    assert_int_equal(wr(0x570, 0x2004), 0); /* ToPA=0 without TraceEn: fine */

    setup(&skl);
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 14, "MTCFreq"); /* 1 not in 0x249 */
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 3ull << 14), 0);
    expect_gp(0x570, CTL_OS_TOPA_BR | 14ull << 19, "CycThresh");
    expect_gp(0x570, CTL_OS_TOPA_BR | 6ull << 24, "PSBFreq");
    expect_gp(0x570, CTL_OS_TOPA_BR | 3ull << 36, "ADDRn_CFG");
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 40, "reserved"); /* ADDR2 */
    expect_gp(0x570, CTL_OS_TOPA_BR | 1ull << 55, "reserved"); /* DisTNT */
    /* BranchEn=0 is fine with COFI suppression (EBX[3]) */
    assert_int_equal(wr(0x570, 0x104), 0);
}

static void test_gp_while_tracing(void **state)
{
    (void)state;
    setup(&skl);
    table(0)[0] = BUF;     /* 4 KiB region */
    table(0)[1] = TAB | 1; /* END -> itself */
    assert_false(enable_errors(CTL_OS_TOPA_BR | 3ull << 14));
    uint64_t ctl = m.ctl;
    assert_int_equal(wr(0x570, ctl), 0); /* same value: allowed */
    expect_gp(0x570, ctl | 1ull << 10, "while TraceEn=1");
    expect_gp(0x560, TAB, "while TraceEn=1");
    expect_gp(0x561, 0x7f, "while TraceEn=1");
    expect_gp(0x571, 0, "while TraceEn=1");
    expect_gp(0x580, 0, "while TraceEn=1");
    /* clearing TraceEn may change other bits in the same write */
    assert_int_equal(wr(0x570, 0), 0);
    assert_int_equal(wr(0x560, TAB), 0);
}

static void test_gp_values(void **state)
{
    (void)state;
    setup(&skl);
    expect_gp(0x560, TAB | 0x40, "bits 6:0");
    expect_gp(0x560, 1ull << 39, "above MAXPHYADDR");
    assert_int_equal(wr(0x560, (1ull << 39) - 4096), 0);
    expect_gp(0x572, 0x1008, "bits 4:0");
    expect_gp(0x580, 0x0000800000000000ull, "non-canonical");
    assert_int_equal(wr(0x580, 0xffff800000000000ull), 0);
    expect_gp(0x571, 1ull << 3, "reserved");
    expect_gp(0x571, 1ull << 6, "reserved");    /* PendPSB without EBX[6] */
    assert_int_equal(wr(0x571, 5ull << 32), 0); /* PacketByteCnt: EBX[1] */
    setup(&bdw);
    expect_gp(0x571, 5ull << 32, "PacketByteCnt");
    /* RO bits are ignored, not faulted */
    assert_int_equal(wr(0x571, 0x7), 0);
    assert_int_equal(m.status & 7, 0);
}

static void test_topa_errors(void **state)
{
    (void)state;
    static const struct {
        uint64_t e0, e1;
        const char *why;
    } cases[] = {
        { TAB | 1, BUF, "END entry in entry 0" },
        { BUF, TAB | 1 | 1ull << 4, "END entry with INT or STOP" },
        { BUF, TAB | 1 | 1ull << 2, "END entry with INT or STOP" },
        { BUF | 1ull << 1, TAB | 1, "reserved bits" }, /* Fuchsia's INT bug */
        { (BUF + 0x1000) | 1ull << 6, TAB | 1, "not aligned to its size" },
        { (1ull << 39) | 0, TAB | 1, "reserved bits" }, /* above MAXPHYADDR */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        setup(&skl);
        table(0)[0] = cases[i].e0;
        table(0)[1] = cases[i].e1;
        table(0)[2] = TAB | 1;
        assert_true(enable_errors(CTL_OS_TOPA_BR | 3ull << 14));
        if (!strstr(m.last_error, cases[i].why))
            fail_msg("case %zu: expected '%s' in '%s'", i, cases[i].why, m.last_error);
        assert_int_equal(m.gp_count, 0);
    }
    /* table base not 4 KiB aligned (but 128-byte aligned: no #GP) */
    setup(&skl);
    assert_int_equal(wr(0x560, TAB + 0x80), 0);
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 3ull << 14 | 1), 0);
    assert_true(m.status & 0x10);
    assert_non_null(strstr(m.last_error, "not 4 KiB aligned"));
}

static void test_single_entry_layout(void **state)
{
    (void)state;
    /* Broadwell: region + END -> itself is the only valid table */
    setup(&bdw);
    table(0)[0] = BUF;
    table(0)[1] = TAB | 1;
    assert_false(enable_errors(CTL_OS_TOPA_BR));
    setup(&bdw);
    table(0)[0] = BUF;
    table(0)[1] = BUF + 4096; /* a second output entry */
    table(0)[2] = TAB | 1;
    assert_true(enable_errors(CTL_OS_TOPA_BR));
    assert_non_null(strstr(m.last_error, "single-entry"));
    setup(&bdw);
    table(0)[0] = BUF;
    table(0)[1] = (TAB + 4096) | 1; /* END to another table */
    table(1)[0] = BUF;
    table(1)[1] = (TAB + 4096) | 1;
    assert_true(enable_errors(CTL_OS_TOPA_BR));
    assert_non_null(strstr(m.last_error, "single-entry ToPA: entry 1 must be END to the table"));
}

static void test_output_walk(void **state)
{
    (void)state;
    /* two tables: t0 = [4K, END->t1], t1 = [8K STOP, END->t0] */
    setup(&skl);
    table(0)[0] = BUF;
    table(0)[1] = (TAB + 4096) | 1;
    table(1)[0] = (BUF + 0x2000) | 1ull << 6 | 1ull << 4;
    table(1)[1] = TAB | 1;
    assert_false(enable_errors(CTL_OS_TOPA_BR));
    /* enable_errors traced 64 KiB: filled 4K + 8K and stopped */
    assert_true(m.status & 0x20); /* Stopped */
    assert_false(m.status & 0x4); /* TriggerEn cleared */
    assert_int_equal(m.bytes_stored, 12288);
    assert_int_equal(m.output_base, TAB + 4096);
    assert_int_equal(m.mask_ptrs, 0x7f | 0ull << 7 | 0x2000ull << 32);
    assert_int_equal(mem[0x10000], 1);
    assert_int_equal(mem[0x10000 + 4095], (uint8_t)(4095 % 251 + 1));
    assert_int_equal(mem[0x12000], (uint8_t)(4096 % 251 + 1));
    assert_int_equal(mem[0x11000], 0); /* gap between the regions */
    /* PacketByteCnt counted the output */
    assert_int_equal(m.status >> 32 & 0x1ffff, 12288);
    assert_true(m.psb_on_enable);

    /* re-enable with Stopped cleared but pointers left: OutputOffset =
	 * region size -> operational error */
    assert_int_equal(wr(0x570, 0), 0);
    assert_int_equal(wr(0x571, 0), 0);
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 1), 0);
    assert_true(m.status & 0x10);
    /* Stopped still set: enable traces nothing, no error */
    setup(&skl);
    table(0)[0] = BUF;
    table(0)[1] = TAB | 1;
    assert_int_equal(wr(0x571, 0x20), 0);
    assert_false(enable_errors(CTL_OS_TOPA_BR));
    assert_int_equal(m.bytes_stored, 0);
}

static void test_single_range(void **state)
{
    (void)state;
    setup(&skl);
    assert_int_equal(wr(0x560, BUF), 0);
    assert_int_equal(wr(0x561, 0xfff), 0); /* 4 KiB */
    assert_int_equal(wr(0x570, 0x2005), 0);
    assert_int_equal(rtit_model_trace(&m, 5000), 5000);
    assert_int_equal(m.mask_ptrs >> 32, 5000 - 4096);
    assert_false(m.status & 0x30);
    /* mask not contiguous */
    setup(&skl);
    assert_int_equal(wr(0x560, BUF), 0);
    assert_int_equal(wr(0x561, 0xbff), 0);
    assert_int_equal(wr(0x570, 0x2005), 0);
    assert_non_null(strstr(m.last_error, "mask not contiguous"));
    /* base overlapping the mask */
    setup(&skl);
    assert_int_equal(wr(0x560, BUF + 0x800), 0);
    assert_int_equal(wr(0x561, 0xfff), 0);
    assert_int_equal(wr(0x570, 0x2005), 0);
    assert_non_null(strstr(m.last_error, "overlaps the mask"));
}

/* Output landing on a ToPA table: the model counts every byte stored into
 * a page it read entries from (a CPU does not check; it then follows what
 * it wrote). */
static void test_output_over_table(void **state)
{
    (void)state;
    /* region 0 is the table's own page */
    setup(&skl);
    table(0)[0] = TAB;     /* 4 KiB region at the table */
    table(0)[1] = TAB | 1; /* END -> itself */
    assert_int_equal(wr(0x560, TAB), 0);
    assert_int_equal(wr(0x561, 0x7f), 0);
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 1), 0);
    assert_int_equal(m.table_overwrites, 0);
    assert_int_equal(rtit_model_trace(&m, 64), 64);
    assert_int_equal(m.table_overwrites, 64);
    assert_int_equal(m.last_table_hit, TAB + 63);
    /* the next region read finds trace bytes where entry 1 was */
    rtit_model_trace(&m, 8192);
    assert_true(m.status & 0x10);
    /* a chained table inside region 1 of table 0 is hit only once the
	 * output reaches it */
    setup(&skl);
    table(0)[0] = BUF;                        /* region 0 */
    table(0)[1] = (BUF + 0x2000) | 1ull << 6; /* region 1: 8 KiB */
    table(0)[2] = (BUF + 0x3000) | 1;         /* END -> table in region 1 */
    memcpy(mem + 0x13000, (uint64_t[]){ BUF | 0ull, TAB | 1 }, 16);
    assert_int_equal(wr(0x560, TAB), 0);
    assert_int_equal(wr(0x561, 0x7f), 0);
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 1), 0);
    assert_false(m.status & 0x10);
    rtit_model_trace(&m, 4096);
    assert_int_equal(m.table_overwrites, 0);
    rtit_model_trace(&m, 4096 + 16);
    assert_int_equal(m.table_overwrites, 16);
    /* disjoint tables and regions: never */
    setup(&skl);
    table(0)[0] = BUF;
    table(0)[1] = TAB | 1;
    assert_false(enable_errors(CTL_OS_TOPA_BR));
    assert_int_equal(m.table_overwrites, 0);
}

/* Which IPs a range holds (36.2.4.3: ADDRn_A <= IP <= ADDRn_B): none when
 * A > B; and which IPs exist in the paging mode. */
static void test_range_holds(void **state)
{
    (void)state;
    setup(&skl);
    assert_int_equal(wr(0x580, 0x2000), 0);
    assert_int_equal(wr(0x581, 0x1000), 0); /* A > B: the CPU takes it */
    assert_int_equal(wr(0x582, 0x1000), 0);
    assert_int_equal(wr(0x583, 0x2000), 0);
    assert_int_equal(wr(0x570, CTL_OS_TOPA_BR | 1ull << 32 | 2ull << 36), 0);
    assert_int_equal(m.gp_count, 0);
    for (uint64_t ip = 0xfff; ip <= 0x2001; ip++)
        assert_false(rtit_model_range_holds(&m, 0, ip));
    assert_false(rtit_model_range_holds(&m, 1, 0xfff));
    assert_true(rtit_model_range_holds(&m, 1, 0x1000));
    assert_true(rtit_model_range_holds(&m, 1, 0x2000));
    assert_false(rtit_model_range_holds(&m, 1, 0x2001));
    assert_false(rtit_model_range_holds(&m, 2, 0x1800)); /* not configured */
}

/* 57-bit addresses: WRMSR checks them at the CPU's width (LA57 support),
 * code runs at them only with CR4.LA57=1. */
static void test_la57(void **state)
{
    (void)state;
    const uint64_t a57 = 0x00ff000000000000ull; /* canonical at 57 only */
    struct rtit_model_caps c = skl;
    setup(&c);
    expect_gp(0x580, a57, "non-canonical");
    assert_true(rtit_model_ip_possible(&m, 0x00007fffffffffffull));
    assert_false(rtit_model_ip_possible(&m, a57));
    c.ecx7 = 1u << 16; /* 5-level paging supported, CR4.LA57=0 */
    setup(&c);
    assert_int_equal(wr(0x580, a57), 0);
    expect_gp(0x580, 0x0100000000000000ull, "non-canonical");
    assert_false(rtit_model_ip_possible(&m, a57));
    c.paging_la57 = true;
    setup(&c);
    assert_int_equal(wr(0x580, a57), 0);
    assert_true(rtit_model_ip_possible(&m, a57));
    assert_true(rtit_model_ip_possible(&m, 0xff00000000000000ull));
    assert_false(rtit_model_ip_possible(&m, 0x0100000000000000ull));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gp_missing_msrs),
        cmocka_unit_test(test_gp_ctl_rules),
        cmocka_unit_test(test_gp_while_tracing),
        cmocka_unit_test(test_gp_values),
        cmocka_unit_test(test_topa_errors),
        cmocka_unit_test(test_single_entry_layout),
        cmocka_unit_test(test_output_walk),
        cmocka_unit_test(test_single_range),
        cmocka_unit_test(test_output_over_table),
        cmocka_unit_test(test_range_holds),
        cmocka_unit_test(test_la57),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
