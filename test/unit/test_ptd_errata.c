/* Unit tests of decoder/ptd_errata.c: the CPUs and errata the decoder
 * knows. libipt 2.0.5's lists (ptd_errata_of_cpu with libipt20) against
 * Debian's libipt's pt_cpu_errata() for every model of families 6, 18 and
 * 19; current libipt's lists as fixed facts: 2.0.5's plus the CPUs it
 * added, minus SKL014 where it was fixed (libipt d1c66a87). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptd_errata.h"

static unsigned bits_of(const struct pt_errata *e)
{
    return (e->bdm70 ? PTD_ERRATUM_BDM70 : 0) | (e->bdm64 ? PTD_ERRATUM_BDM64 : 0) |
           (e->skd007 ? PTD_ERRATUM_SKD007 : 0) | (e->skd022 ? PTD_ERRATUM_SKD022 : 0) |
           (e->skd010 ? PTD_ERRATUM_SKD010 : 0) | (e->skl014 ? PTD_ERRATUM_SKL014 : 0) |
           (e->apl12 ? PTD_ERRATUM_APL12 : 0) | (e->apl11 ? PTD_ERRATUM_APL11 : 0) |
           (e->skl168 ? PTD_ERRATUM_SKL168 : 0) | (e->skz84 ? PTD_ERRATUM_SKZ84 : 0);
}

static const unsigned families[] = { 6, 18, 19 };

/* libipt 2.0.5's lists are Debian's libipt's, CPU by CPU. */
static void test_libipt20_lists(void **state)
{
    (void)state;
    for (unsigned f = 0; f < 3; f++) {
        for (unsigned m = 0; m < 256; m++) {
            struct pt_cpu c;
            struct pt_errata le;
            unsigned e = 12345;
            memset(&c, 0, sizeof(c));
            c.vendor = pcv_intel;
            c.family = (uint16_t)families[f];
            c.model = (uint8_t)m;
            int lr = pt_cpu_errata(&le, &c);
            bool known = ptd_errata_of_cpu(families[f], m, true, &e);
            if (known != (lr >= 0) || (known && e != bits_of(&le)) || (!known && e != 0)) {
                print_error("%u/%#x: known %d errata %#x, libipt %d %#x\n", families[f], m, known,
                            e, lr, lr >= 0 ? bits_of(&le) : 0);
                fail();
            }
        }
    }
}

/* What current libipt changed: SKL014 fixed on these (d1c66a87). */
static const uint8_t skl014_fixed[] = { 0x8f, 0x97, 0x9a, 0xbf };

/* The CPUs current libipt added, with their errata (its pt_cpu_errata()). */
static const struct {
    unsigned family, model, errata;
} added[] = {
#define HYBRID (PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_APL11)
#define SERVER (PTD_ERRATUM_BDM70 | PTD_ERRATUM_SKD022 | PTD_ERRATUM_SKZ84)
    { 6, 0xcf, SERVER },
    { 6, 0xad, SERVER },
    { 6, 0xae, SERVER },
    { 19, 0x01, SERVER },
    { 6, 0xba, HYBRID },
    { 6, 0xb7, HYBRID },
    { 6, 0xc5, HYBRID },
    { 6, 0xc6, HYBRID },
    { 6, 0xb5, HYBRID },
    { 6, 0xaa, HYBRID },
    { 6, 0xac, HYBRID },
    { 6, 0xbd, HYBRID },
    { 6, 0xcc, HYBRID },
    { 6, 0xd5, HYBRID },
    { 18, 0x01, HYBRID },
    { 18, 0x03, HYBRID },
    { 6, 0xb6, PTD_ERRATUM_APL11 },
    { 6, 0xaf, PTD_ERRATUM_APL11 },
    { 6, 0xdd, PTD_ERRATUM_APL11 },
};

/* Current libipt's lists: 2.0.5's with SKL014 fixed on four, and the added
 * CPUs; every other CPU unknown (the tools' "unknown cpu"). */
static void test_current_lists(void **state)
{
    (void)state;
    for (unsigned f = 0; f < 3; f++) {
        for (unsigned m = 0; m < 256; m++) {
            unsigned e = 0, old = 0, want = 0;
            bool known = ptd_errata_of_cpu(families[f], m, false, &e);
            bool want_known = ptd_errata_of_cpu(families[f], m, true, &old);
            want = old;
            if (families[f] == 6 && memchr(skl014_fixed, (int)m, sizeof skl014_fixed))
                want &= ~(unsigned)PTD_ERRATUM_SKL014;
            for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
                if (added[i].family == families[f] && added[i].model == m) {
                    assert_false(want_known); /* new in current libipt */
                    want_known = true;
                    want = added[i].errata;
                }
            }
            if (known != want_known || e != want) {
                print_error("%u/%#x: known %d errata %#x, want %d %#x\n", families[f], m, known, e,
                            want_known, want);
                fail();
            }
        }
    }
    /* the examples of the issue: Meteor Lake (6/170) takes APL11, BDM70
     * and SKD022; Granite Rapids' 19/1 SKZ84; Alder Lake no SKL014 */
    assert_int_equal(ptd_errata_cpu(6, 170), HYBRID);
    assert_int_equal(ptd_errata_cpu(19, 1), SERVER);
    assert_false(ptd_errata_cpu(6, 151) & PTD_ERRATUM_SKL014);
    assert_int_equal(ptd_errata_cpu(0, 0), 0);
    assert_int_equal(ptd_errata_cpu(6, 0x1a), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_libipt20_lists),
        cmocka_unit_test(test_current_lists),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
