/* Unit tests of decoder/ptd_time.c with hand-computed times: TSC only,
 * TMA+MTC (TMA with all MTC bits and without), MTC wrap, CYC without and
 * with calibration (MTC periods, PSB+ TSCs, nominal frequency / CBR), OVF
 * with and without keeping the calibration, --no-tcal, SKL168, errors. The
 * numbers of the cases from libipt's tests are theirs (the .ptt files of its test suite). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "decoder/ptd_time.h"

static uint64_t now(const struct ptd_time *t, int want_rc)
{
    uint64_t tsc = 0;
    assert_int_equal(ptd_time_now(t, &tsc, NULL, NULL), want_rc);
    return tsc;
}

static struct ptd_time_config config(unsigned mtc_freq, unsigned nom, unsigned eax, unsigned ebx)
{
    struct ptd_time_config c = { .mtc_freq = (uint8_t)mtc_freq,
                                 .nom_freq = (uint8_t)nom,
                                 .cpuid_0x15_eax = eax,
                                 .cpuid_0x15_ebx = ebx };
    return c;
}

static void test_tsc_only(void **state)
{
    struct ptd_time t;
    uint32_t cbr;
    (void)state;
    ptd_time_init(&t, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0);
    assert_int_equal(ptd_time_cbr(&t, &cbr), -PTD_ERR_NO_CBR);
    assert_int_equal(ptd_time_tsc(&t, 0x123456789aull, NULL), 0);
    assert_int_equal(now(&t, 0), 0x123456789aull);
    /* MTC without CPUID 0x15: a configuration error, time stays */
    assert_int_equal(ptd_time_tma(&t, 0x10, 0x8, NULL), 0);
    assert_int_equal(ptd_time_mtc(&t, 0x1, NULL), -PTD_ERR_BAD_CONFIG);
    assert_int_equal(now(&t, 0), 0x123456789aull);
    assert_int_equal(ptd_time_tsc(&t, 0x2000, NULL), 0);
    assert_int_equal(now(&t, 0), 0x2000);
}

/* libipt's cbr-tsc-tma-mtc-cyc: nominal frequency 4, MTCFreq 8, CPUID 0x15
 * 1:4; ptdump --time-delta prints +a0000 +0 +3f0 +6 +2. */
static void test_cbr_tsc_tma_mtc_cyc(void **state)
{
    struct ptd_time_config c = config(8, 4, 1, 4);
    struct ptd_time t;
    uint64_t fcr;
    uint32_t cbr;
    bool used;
    (void)state;
    ptd_time_init(&t, &c);
    assert_int_equal(ptd_time_cbr_update(&t, 2, NULL), 0); /* outside PSB+ */
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, (4u << 8) / 2); /* 2.0 ticks per cycle */
    assert_int_equal(ptd_time_cbr(&t, &cbr), 0);
    assert_int_equal(cbr, 2);
    ptd_time_tsc(&t, 0xa0000, NULL);
    assert_int_equal(now(&t, 0), 0xa0000);
    /* TMA: CTC 0x102, FastCounter 8: the TSC was 8 ticks after CTC 0x102 */
    assert_int_equal(ptd_time_tma(&t, 0x102, 0x8, NULL), 0);
    assert_int_equal(now(&t, 0), 0xa0000);
    /* MTC 2: CTC 0x200, 0xfe CTC ticks * 4 = 0x3f8 after a0000 - 8 */
    assert_int_equal(ptd_time_mtc(&t, 2, NULL), 0);
    assert_int_equal(now(&t, 0), 0xa03f0);
    assert_int_equal(ptd_time_cyc(&t, 3, NULL, &used), 0);
    assert_true(used);
    assert_int_equal(now(&t, 0), 0xa03f6); /* 3 cycles * 2.0 */
    ptd_time_cyc(&t, 1, NULL, NULL);
    assert_int_equal(now(&t, 0), 0xa03f8);
}

/* TMA+MTC at MTCFreq 4, CPUID 0x15 1:4 (libipt's mtc-ovf-*-cyc). */
static void test_tma_mtc(void **state)
{
    struct ptd_time_config c = config(4, 0, 1, 4);
    struct ptd_time t;
    uint32_t lost_mtc, lost_cyc;
    uint64_t tsc;
    (void)state;
    ptd_time_init(&t, &c);
    ptd_time_psb(&t);
    ptd_time_tsc(&t, 0x1000, NULL);
    ptd_time_tma(&t, 0x10, 0x40, NULL);
    ptd_time_psbend(&t);
    assert_int_equal(now(&t, 0), 0x1000);
    ptd_time_mtc(&t, 2, NULL); /* CTC 0x20: 0x10 * 4 after 0x1000 - 0x40 */
    assert_int_equal(now(&t, 0), 0x1000);
    ptd_time_cyc(&t, 0x100, NULL, NULL); /* not calibrated yet: lost */
    assert_int_equal(ptd_time_now(&t, &tsc, &lost_mtc, &lost_cyc), 0);
    assert_int_equal(lost_cyc, 1);
    assert_int_equal(lost_mtc, 0);
    ptd_time_mtc(&t, 3, NULL); /* calibrates: 0x40 ticks / 0x100 cycles */
    assert_int_equal(now(&t, 0), 0x1040);
    ptd_time_cyc(&t, 0x80, NULL, NULL);
    assert_int_equal(now(&t, 0), 0x1060);
    ptd_time_cyc(&t, 0x80, NULL, NULL);
    assert_int_equal(now(&t, 0), 0x1080);
    ptd_time_mtc(&t, 4, NULL);
    assert_int_equal(now(&t, 0), 0x1080);
}

/* MTCFreq 10: MTC carries CTC bits 17:10, TMA only 15:0; the first MTC
 * supplies the bits above 15 (one period back if the low bits wrapped). */
static void test_tma_without_mtc_bits(void **state)
{
    struct ptd_time_config c = config(10, 0, 1, 1);
    struct ptd_time t;
    (void)state;
    ptd_time_init(&t, &c);
    ptd_time_tsc(&t, 0x10000, NULL);
    ptd_time_tma(&t, 0xfff0, 0x10, NULL); /* base 0xfff0 at CTC 0xfff0 */
    ptd_time_mtc(&t, 0x40, NULL);         /* CTC 0x10000: 0x10 ticks later */
    assert_int_equal(now(&t, 0), 0x10000);
    ptd_time_mtc(&t, 0x41, NULL); /* one period: 0x400 ticks */
    assert_int_equal(now(&t, 0), 0x10400);
}

static void test_mtc_wrap(void **state)
{
    struct ptd_time_config c = config(0, 0, 1, 1);
    struct ptd_time t;
    (void)state;
    ptd_time_init(&t, &c);
    ptd_time_tsc(&t, 0x5000, NULL);
    ptd_time_tma(&t, 0xfe, 0, NULL);
    ptd_time_mtc(&t, 0xff, NULL);
    assert_int_equal(now(&t, 0), 0x5001);
    ptd_time_mtc(&t, 0x01, NULL); /* 0xff -> 0x101: 2 ticks */
    assert_int_equal(now(&t, 0), 0x5003);
    /* MTCs between a TSC and its TMA are ignored */
    ptd_time_tsc(&t, 0x9000, NULL);
    ptd_time_mtc(&t, 0x80, NULL);
    assert_int_equal(now(&t, 0), 0x9000);
}

/* libipt's mtc-cyc_calibrate: no TSC at all (time relative to the start). */
static void test_cyc_calibrated_by_mtc(void **state)
{
    struct ptd_time_config c = config(4, 0, 1, 4);
    struct ptd_time t;
    uint64_t fcr;
    bool used = true;
    (void)state;
    ptd_time_init(&t, &c);
    ptd_time_mtc(&t, 2, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0);
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    ptd_time_cyc(&t, 0x100, NULL, &used);
    assert_false(used);
    ptd_time_mtc(&t, 3, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0x40);
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, 0x40); /* 0.25 ticks per cycle */
    ptd_time_cyc(&t, 0x100, NULL, &used);
    assert_true(used);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0x80);
    ptd_time_mtc(&t, 4, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0x80);
    /* a CYC spanning an MTC: the part before it is taken off (0x40 ticks of
     * the last period = 0x100 cycles), the rest (0x20 cycles) counts */
    ptd_time_mtc(&t, 5, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0xc0);
    ptd_time_cyc(&t, 0x120, NULL, NULL);
    assert_int_equal(now(&t, -PTD_ERR_NO_TIME), 0xc8);
}

static void test_cyc_calibrated_by_psb_tsc(void **state)
{
    struct ptd_time t;
    uint64_t fcr;
    (void)state;
    ptd_time_init(&t, NULL);
    ptd_time_psb(&t);
    ptd_time_tsc(&t, 0x1000, NULL);
    ptd_time_psbend(&t);
    ptd_time_cyc(&t, 0x100, NULL, NULL);
    /* a TSC outside PSB+ restarts the measurement */
    ptd_time_tsc(&t, 0x1100, NULL);
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    ptd_time_cyc(&t, 0x100, NULL, NULL);
    ptd_time_psb(&t);
    ptd_time_tsc(&t, 0x1300, NULL); /* 0x200 ticks over 0x100 cycles */
    ptd_time_psbend(&t);
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, 0x200);
    ptd_time_cyc(&t, 0x10, NULL, NULL);
    assert_int_equal(now(&t, 0), 0x1320);
}

static void test_cbr_calibration(void **state)
{
    struct ptd_time_config c = config(0, 24, 0, 0);
    struct ptd_time t;
    uint64_t fcr;
    (void)state;
    ptd_time_init(&t, &c);
    ptd_time_psb(&t);
    ptd_time_cbr_update(&t, 32, NULL); /* 24/32 = 0.75 ticks per cycle */
    ptd_time_psbend(&t);
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, 0xc0);
    ptd_time_tsc(&t, 0x100, NULL);
    ptd_time_cyc(&t, 0x100, NULL, NULL);
    assert_int_equal(now(&t, 0), 0x1c0);
    /* without the nominal frequency a CBR outside PSB+ drops the ratio */
    c.nom_freq = 0;
    ptd_time_init(&t, &c);
    ptd_time_psb(&t);
    ptd_time_tsc(&t, 0x1000, NULL);
    ptd_time_psbend(&t);
    ptd_time_cyc(&t, 0x100, NULL, NULL);
    ptd_time_psb(&t);
    ptd_time_tsc(&t, 0x1100, NULL);
    ptd_time_psbend(&t);
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    ptd_time_cbr_update(&t, 30, NULL);
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    assert_int_equal(ptd_time_cbr_update(&t, 0, NULL), -PTD_ERR_BAD_PACKET);
}

static void calibrated(struct ptd_time *t, uint32_t flags)
{
    struct ptd_time_config c = config(4, 0, 1, 4);
    c.flags = flags;
    ptd_time_init(t, &c);
    ptd_time_tsc(t, 0x1000, NULL);
    ptd_time_tma(t, 0x10, 0x40, NULL);
    ptd_time_mtc(t, 2, NULL);
    ptd_time_cyc(t, 0x100, NULL, NULL);
    ptd_time_mtc(t, 3, NULL);
    ptd_time_cyc(t, 0x80, NULL, NULL);
    assert_int_equal(now(t, 0), 0x1060);
}

static void test_ovf(void **state)
{
    struct ptd_time t;
    uint64_t fcr;
    uint32_t lost_mtc, lost_cyc;
    uint64_t tsc;
    struct ptd_pkt ovf = { .kind = PTD_PKT_OVF };
    (void)state;
    /* default: OVF drops the calibration, keeps the time */
    calibrated(&t, 0);
    assert_int_equal(ptd_time_packet(&t, &ovf), 0);
    assert_int_equal(now(&t, 0), 0x1060);
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    ptd_time_cyc(&t, 0x80, NULL, NULL);
    assert_int_equal(ptd_time_now(&t, &tsc, &lost_mtc, &lost_cyc), 0);
    assert_int_equal(tsc, 0x1060);
    assert_int_equal(lost_cyc, 1);
    /* --keep-tcal-on-ovf */
    calibrated(&t, PTD_TIME_KEEP_TCAL_ON_OVF);
    ptd_time_packet(&t, &ovf);
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, 0x40);
    ptd_time_cyc(&t, 0x80, NULL, NULL);
    assert_int_equal(now(&t, 0), 0x1080);
}

static void test_no_tcal(void **state)
{
    struct ptd_time_config c = config(4, 20, 1, 4);
    struct ptd_time t;
    uint64_t fcr;
    bool used = true;
    (void)state;
    c.flags = PTD_TIME_NO_TCAL;
    ptd_time_init(&t, &c);
    ptd_time_cbr_update(&t, 10, NULL);
    ptd_time_tsc(&t, 0x1000, NULL);
    ptd_time_tma(&t, 0x10, 0, NULL);
    ptd_time_mtc(&t, 2, NULL);
    ptd_time_cyc(&t, 0x100, NULL, &used);
    ptd_time_mtc(&t, 3, NULL);
    assert_false(used);
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    assert_int_equal(now(&t, 0), 0x1080);
}

/* SKL168: the first MTC after a PSB does not calibrate when an MTC was lost
 * in between. */
static void test_skl168(void **state)
{
    struct ptd_time_config c = config(4, 0, 1, 4);
    struct ptd_time t;
    uint64_t fcr;
    (void)state;
    c.errata = ptd_errata_cpu(6, 0x4e);
    assert_true(c.errata & PTD_ERRATUM_SKL168);
    assert_false(ptd_errata_cpu(6, 0x55) & PTD_ERRATUM_SKL168);
    ptd_time_init(&t, &c);
    ptd_time_mtc(&t, 2, NULL);
    ptd_time_psb(&t);
    ptd_time_psbend(&t);
    ptd_time_cyc(&t, 0x200, NULL, NULL);
    ptd_time_mtc(&t, 4, NULL); /* two periods: one MTC lost */
    assert_int_equal(ptd_time_fcr(&t, &fcr), -PTD_ERR_NO_TIME);
    ptd_time_cyc(&t, 0x100, NULL, NULL);
    ptd_time_mtc(&t, 5, NULL); /* not the first after PSB */
    assert_int_equal(ptd_time_fcr(&t, &fcr), 0);
    assert_int_equal(fcr, 0x40);
}

static void test_errors(void **state)
{
    struct ptd_time t;
    struct ptd_pkt tma = { .kind = PTD_PKT_TMA, .payload = 1 };
    (void)state;
    ptd_time_init(&t, NULL);
    assert_int_equal(ptd_time_packet(&t, &tma), -PTD_ERR_BAD_CONTEXT);
    ptd_time_tsc(&t, 1, NULL);
    assert_int_equal(ptd_time_packet(&t, &tma), 0);
    assert_int_equal(ptd_time_packet(&t, &tma), -PTD_ERR_BAD_CONTEXT);
    assert_string_equal(ptd_errstr(-PTD_ERR_NO_TIME), "no timing information");
    assert_string_equal(ptd_errstr(-PTD_ERR_BAD_CONTEXT), "unexpected packet context");
    assert_string_equal(ptd_errstr(-PTD_ERR_BAD_PACKET), "unknown packet");
    /* a too-large MTCFreq is clamped to the 4-bit field */
    struct ptd_time_config c = config(200, 0, 1, 1);
    ptd_time_init(&t, &c);
    assert_int_equal(t.cfg.mtc_freq, PTD_TIME_MTC_FREQ_MAX);
}

/* SKD007: a 2-byte CYC of 0x20..0x3f followed by f3 is an OVF that cut a
 * CYC short. */
static void test_skd007(void **state)
{
    const uint8_t hit[] = { 0x07, 0x02, 0xf3, 0x1d }; /* CYC 0x20, then 02 f3 */
    const uint8_t full[] = { 0x07, 0x02 };            /* nothing after it */
    const uint8_t other[] = { 0x07, 0x04, 0xf3 };     /* CYC 0x40 */
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    (void)state;
    ptd_pkt_init(&d, hit, sizeof hit);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_int_equal(p.payload, 0x20);
    assert_true(ptd_time_skd007_cyc(&p, hit, hit + sizeof hit));
    assert_false(ptd_time_skd007_cyc(&p, full, full + sizeof full));
    ptd_pkt_init(&d, other, sizeof other);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_false(ptd_time_skd007_cyc(&p, other, other + sizeof other));
    p.kind = PTD_PKT_MTC;
    assert_false(ptd_time_skd007_cyc(&p, hit, hit + sizeof hit));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tsc_only),
        cmocka_unit_test(test_cbr_tsc_tma_mtc_cyc),
        cmocka_unit_test(test_tma_mtc),
        cmocka_unit_test(test_tma_without_mtc_bits),
        cmocka_unit_test(test_mtc_wrap),
        cmocka_unit_test(test_cyc_calibrated_by_mtc),
        cmocka_unit_test(test_cyc_calibrated_by_psb_tsc),
        cmocka_unit_test(test_cbr_calibration),
        cmocka_unit_test(test_ovf),
        cmocka_unit_test(test_no_tcal),
        cmocka_unit_test(test_skl168),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_skd007),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
