/* arch/x86/x86_nx_watch: the landing watch's page-table edits on page
 * tables built here (4-level paging, physical addresses as offsets into
 * one buffer), checked entry by entry: what arm sets, that disarm and
 * release give back every table byte for byte, that splits translate
 * every address as the large page did, and that errors leave nothing
 * changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86/x86_nx_watch.h"

#define P         1ull
#define RW        2ull
#define US        4ull
#define A         (1ull << 5)
#define D         (1ull << 6)
#define PS        (1ull << 7)
#define G         (1ull << 8)
#define PAT_LARGE (1ull << 12)
#define XD        (1ull << 63)
#define ADDR      0x000ffffffffff000ull

/* 16 tables of 4 KiB: [0] PML4, then whatever a test builds */
#define NTABLES 16
static uint64_t mem[NTABLES][512] __attribute__((aligned(4096)));
static uint64_t before[NTABLES][512];
#define PHYS(t) (0x100000ull + (uint64_t)(t)*4096) /* table t's "physical" address */

static uint64_t *map(void *ctx, uint64_t phys)
{
    (void)ctx;
    if (phys < PHYS(0) || phys >= PHYS(NTABLES) || (phys & 4095))
        return NULL;
    return mem[(phys - PHYS(0)) / 4096];
}

static struct x86_nx_watch W;
static struct x86_nx_watch_page pages[64];
static struct x86_nx_watch_spare spares[4];

static unsigned idx(uint64_t va, unsigned level)
{
    return (unsigned)((va >> (12 + 9 * (level - 1))) & 511);
}

/* tables: 0 PML4, 1 PDPT, 2 PD, 3 PT; spares 12..15 */
static void build(void)
{
    memset(mem, 0, sizeof mem);
    mem[0][0] = PHYS(1) | P | RW;
    mem[1][0] = PHYS(2) | P | RW;
    mem[2][0] = PHYS(3) | P | RW; /* 0..2M: 4 KiB pages */
    for (unsigned i = 0; i < 512; i++)
        mem[3][i] = ((uint64_t)i << 12) | P | RW | (i == 5 ? XD : 0) | (i == 6 ? A | D : 0);
    mem[3][9] = 0;                                          /* 0x9000 not present */
    mem[2][1] = (2ull << 20) | P | RW | PS | G | PAT_LARGE; /* 2M..4M: one 2 MiB page */
    mem[1][1] = (1ull << 30) | P | PS | XD; /* 1G..2G: one 1 GiB page, read-only, no exec */
    mem[1][2] = (2ull << 30) | P | RW | PS; /* 2G..3G: one 1 GiB page */
    for (unsigned k = 0; k < 4; k++) {
        spares[k].table = mem[12 + k];
        spares[k].phys = PHYS(12 + k);
    }
    memcpy(before, mem, sizeof mem);
}

/* the leaf entry, physical address and rights of va, walking as a CPU */
static int translate(uint64_t va, uint64_t *pa, uint64_t *rights)
{
    uint64_t *t = map(NULL, PHYS(0));
    uint64_t rw = RW, us = US, xd = 0;
    for (unsigned level = 4; level >= 1; level--) {
        uint64_t e = t[idx(va, level)];
        if (!(e & P))
            return -1;
        rw &= e;
        us &= e;
        xd |= e & XD;
        if (level == 1 || ((level == 2 || level == 3) && (e & PS))) {
            uint64_t off = (1ull << (12 + 9 * (level - 1))) - 1;
            *pa = ((e & ADDR) & ~off) | (va & off);
            uint64_t pat = level == 1 ? (e & PS) != 0 : (e & PAT_LARGE) != 0;
            *rights = (rw & RW) | (us & US) | (xd ? XD : 0) | (e & G) | (pat << 7);
            return (int)level;
        }
        t = map(NULL, e & ADDR);
        assert_non_null(t);
    }
    return -1;
}

static long prepare(const uint64_t *lo, const uint64_t *hi, unsigned n, unsigned nspares)
{
    return x86_nx_watch_prepare(&W, PHYS(0), 4, lo, hi, n, pages, 64, spares, nspares, map, NULL);
}

static void test_small_pages(void **state)
{
    (void)state;
    build();
    /* two ranges touching in one page and one overlapping: pages 2..7 */
    uint64_t lo[3] = { 0x2010, 0x4000, 0x3ff0 }, hi[3] = { 0x3fff, 0x7000, 0x4100 };
    assert_int_equal(x86_nx_watch_count(lo, hi, 3), 6);
    assert_int_equal(prepare(lo, hi, 3, 0), 6);
    assert_int_equal(W.nranges, 1);
    assert_false(x86_nx_watch_owns(&W, 0x2000));
    assert_true(x86_nx_watch_covers(&W, 0x7fff));
    assert_false(x86_nx_watch_covers(&W, 0x8000));
    /* page 5 had XD already: arm sets the other five, owns them only */
    assert_int_equal(x86_nx_watch_arm(&W), 5);
    for (unsigned i = 2; i <= 7; i++)
        assert_true(mem[3][i] & XD);
    assert_true(x86_nx_watch_owns(&W, 0x2abc));
    assert_false(x86_nx_watch_owns(&W, 0x5000));
    assert_false(x86_nx_watch_owns(&W, 0x8000));
    assert_int_equal(x86_nx_watch_arm(&W), 0); /* armed already */
    /* disarm clears what arm set, nothing else */
    assert_int_equal(x86_nx_watch_disarm(&W), 5);
    assert_memory_equal(mem, before, sizeof mem);
    assert_false(x86_nx_watch_owns(&W, 0x2abc));
    /* the firmware sets XD on page 3 meanwhile: the next arm leaves it to it */
    mem[3][3] |= XD;
    assert_int_equal(x86_nx_watch_arm(&W), 4);
    assert_false(x86_nx_watch_owns(&W, 0x3000));
    x86_nx_watch_disarm(&W);
    assert_true(mem[3][3] & XD);
    mem[3][3] &= ~XD;
    assert_int_equal(x86_nx_watch_release(&W), 0);
    assert_memory_equal(mem, before, sizeof mem);
}

static void test_split_2m(void **state)
{
    (void)state;
    build();
    uint64_t lo = 0x201000, hi = 0x202fff, pa0[512], r0[512];
    for (unsigned i = 0; i < 512; i++)
        assert_int_equal(translate(0x200000 + i * 4096ull + 12, &pa0[i], &r0[i]), 2);
    assert_int_equal(prepare(&lo, &hi, 1, 1), 2);
    assert_int_equal(W.nsplit, 1);
    /* every address translates as before, now through 4 KiB entries (PAT
     * moved from bit 12 to bit 7, G kept) */
    for (unsigned i = 0; i < 512; i++) {
        uint64_t pa, r;
        assert_int_equal(translate(0x200000 + i * 4096ull + 12, &pa, &r), 1);
        assert_int_equal(pa, pa0[i]);
        assert_int_equal(r, r0[i]);
    }
    assert_int_equal(x86_nx_watch_arm(&W), 2);
    uint64_t pa, r;
    translate(0x201000, &pa, &r);
    assert_true(r & XD);
    translate(0x203000, &pa, &r);
    assert_false(r & XD);
    /* the CPU sets A and D in the split entries: release merges them */
    mem[12][7] |= A | D;
    assert_int_equal(x86_nx_watch_release(&W), 1);
    assert_int_equal(mem[2][1], before[2][1] | A | D);
    mem[2][1] = before[2][1];
    assert_memory_equal(mem[0], before[0], 12 * sizeof mem[0]);
}

static void test_split_1g(void **state)
{
    (void)state;
    build();
    /* a page in a read-only, non-executable 1 GiB page: two splits */
    uint64_t lo = 0x40345000, hi = 0x40345fff, pa, r;
    assert_int_equal(prepare(&lo, &hi, 1, 2), 1);
    assert_int_equal(W.nsplit, 2);
    assert_int_equal(translate(0x40345678, &pa, &r), 1);
    assert_int_equal(pa, 0x40345678);
    assert_int_equal(r, XD); /* read-only, XD: as before */
    assert_int_equal(translate(0x7fffffff, &pa, &r), 2);
    assert_int_equal(pa, 0x7fffffff);
    assert_int_equal(x86_nx_watch_arm(&W), 0); /* XD already: nothing to set */
    assert_false(x86_nx_watch_owns(&W, 0x40345000));
    assert_int_equal(x86_nx_watch_release(&W), 2);
    assert_memory_equal(mem[0], before[0], 12 * sizeof mem[0]);
    /* a page in the writable 1 GiB page, and the 2 MiB page: three splits */
    build();
    uint64_t l2[2] = { 0x80000000, 0x3ff000 }, h2[2] = { 0x80000fff, 0x3fffff };
    assert_int_equal(prepare(l2, h2, 2, 3), 2);
    assert_int_equal(W.nsplit, 3);
    assert_int_equal(x86_nx_watch_arm(&W), 2);
    assert_true(x86_nx_watch_owns(&W, 0x80000010));
    assert_true(x86_nx_watch_owns(&W, 0x3ff010));
    assert_int_equal(x86_nx_watch_release(&W), 3);
    assert_memory_equal(mem[0], before[0], 12 * sizeof mem[0]);
}

static void test_kept_split(void **state)
{
    (void)state;
    build();
    uint64_t lo = 0x210000, hi = 0x210fff;
    assert_int_equal(prepare(&lo, &hi, 1, 1), 1);
    /* someone else makes a page of the split read-only meanwhile: the
     * split stays (it maps the same and keeps that change) */
    mem[12][100] &= ~RW;
    assert_int_equal(x86_nx_watch_release(&W), 0);
    assert_int_equal(W.kept_splits, 1);
    assert_int_equal(mem[2][1] & ADDR, PHYS(12));
}

static void test_errors(void **state)
{
    (void)state;
    build();
    uint64_t lo = 0x8000, hi = 0x9fff;
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_UNMAPPED);
    lo = 0x100000000ull; /* PDPT entry 4: not present */
    hi = lo;
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_UNMAPPED);
    lo = 0;
    hi = 0x40fff; /* 65 pages */
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_PAGES);
    lo = 0x200000;
    hi = 0x200fff;
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_SPLITS);
    /* two splits needed, one spare: the first is undone */
    uint64_t l2[2] = { 0x210000, 0x80000000 }, h2[2] = { 0x210000, 0x80000000 };
    assert_int_equal(prepare(l2, h2, 2, 1), X86_NX_WATCH_E_SPLITS);
    assert_memory_equal(mem[0], before[0], 12 * sizeof mem[0]); /* spares are scratch */
    lo = 0x3000;
    hi = 0x2000;
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_INVALID);
    assert_int_equal(prepare(&lo, &hi, 0, 0), X86_NX_WATCH_E_INVALID);
    uint64_t l9[9] = { 0 }, h9[9] = { 0 };
    assert_int_equal(prepare(l9, h9, 9, 0), X86_NX_WATCH_E_RANGES);
    assert_int_equal(
        x86_nx_watch_prepare(&W, PHYS(0), 3, &lo, &hi, 1, pages, 64, NULL, 0, map, NULL),
        X86_NX_WATCH_E_INVALID);
    /* a table out of the map's reach */
    mem[1][3] = 0x7000000ull | P | RW;
    lo = hi = 0xc0000000ull;
    assert_int_equal(prepare(&lo, &hi, 1, 0), X86_NX_WATCH_E_TABLE);
    mem[1][3] = 0;
    assert_memory_equal(mem[0], before[0], 12 * sizeof mem[0]);
    for (long e = -1; e >= -6; e--)
        assert_string_not_equal(x86_nx_watch_strerror(e), "unknown error");
    assert_string_equal(x86_nx_watch_strerror(-99), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_pages), cmocka_unit_test(test_split_2m),
        cmocka_unit_test(test_split_1g),    cmocka_unit_test(test_kept_split),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
