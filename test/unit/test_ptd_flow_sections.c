/* The sections the flow keeps at hand (struct ptd_flow's secs, filled by
 * section_enter in decoder/ptd_flow.c): a block that starts in a section
 * entered before finds its bounds and its block-cache directory without
 * the map callback; an IP in no section, a section that shares a memo slot
 * with another, and a flow invalidated after its code changed ask the map
 * callback again, and every answer is the callback's (bounds and
 * directory as a flow without the memo finds them).
 *
 * The image: sections at A (two pages), B and C (C's first page shares
 * A's memo slot: their page numbers differ by a multiple of
 * PTD_FLOW_SECTIONS), nothing mapped between. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_flow_impl.h"

#define PAGE 0x1000u
#define A    0x400000u
#define A_SZ (2u * PAGE)
#define B    0x483000u
#define B_SZ PAGE
#define C    (A + ((uint64_t)PTD_FLOW_SECTIONS << PTD_FLOW_SECTIONS_PAGE))
#define C_SZ PAGE
#define HOLE 0x500000u /* in no section */

_Static_assert(((A >> PTD_FLOW_SECTIONS_PAGE) & (PTD_FLOW_SECTIONS - 1)) ==
                   ((C >> PTD_FLOW_SECTIONS_PAGE) & (PTD_FLOW_SECTIONS - 1)),
               "A and C share a slot");

struct image {
    uint8_t code[3][2 * PAGE];
    int maps;
    uint64_t a_size; /* A's size as the map callback gives it */
};

static int read_cb(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    (void)ip;
    (void)buf;
    (void)size;
    return 0;
}

static const uint8_t *map_cb(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    static const struct {
        uint64_t base;
        unsigned k;
    } sec[] = { { A, 0 }, { B, 1 }, { C, 2 } };
    struct image *im = ctx;
    im->maps++;
    for (unsigned i = 0; i < 3; i++) {
        uint64_t sz = sec[i].base == A ? im->a_size : sec[i].base == B ? B_SZ : C_SZ;
        if (ip - sec[i].base < sz) {
            *base = sec[i].base;
            *size = (size_t)sz;
            return im->code[sec[i].k];
        }
    }
    return NULL;
}

static uint64_t bcache[PTD_FLOW_BCACHE_BYTES(A_SZ + B_SZ + C_SZ, 3) / 8 + 1];

static void flow_over(struct ptd_flow *f, struct image *im)
{
    struct ptd_flow_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.read = read_cb;
    cfg.map = map_cb;
    cfg.ctx = im;
    cfg.mode = 64;
    cfg.bcache = bcache;
    cfg.bcache_size = sizeof bcache;
    assert_int_equal(ptd_flow_init(f, &cfg), 0);
}

/* A block starting at ip: the section it runs in (the flow's bounds and
 * directory), and the map callback's calls for it. */
struct entered {
    uint64_t lo, hi;
    const uint32_t *bce;
    int maps;
};

static struct entered enter(struct ptd_flow *f, struct image *im, uint64_t ip)
{
    struct ptd_flow_block blk;
    struct entered e;
    int before = im->maps;
    f->ip = ip;
    ptd_flow_block_start(f, &blk);
    e.lo = f->sec_lo;
    e.hi = f->sec_hi;
    e.bce = f->bce;
    e.maps = im->maps - before;
    return e;
}

static void image(struct image *im)
{
    memset(im, 0x90, sizeof *im);
    im->maps = 0;
    im->a_size = A_SZ;
}

/* Back into a section entered before: its bounds and directory, no call. */
static void test_back_without_map(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im);
    flow_over(&f, &im);
    struct entered a = enter(&f, &im, A + 0x10);
    assert_int_equal(a.maps, 1);
    assert_int_equal(a.lo, A);
    assert_int_equal(a.hi, A + A_SZ);
    assert_non_null(a.bce);
    struct entered b = enter(&f, &im, B + 0x20);
    assert_int_equal(b.maps, 1);
    assert_int_equal(b.lo, B);
    assert_int_equal(b.hi, B + B_SZ);
    assert_ptr_not_equal(b.bce, a.bce);
    struct entered a2 = enter(&f, &im, A + 0x30);
    assert_int_equal(a2.maps, 0);
    assert_int_equal(a2.lo, A);
    assert_int_equal(a2.hi, A + A_SZ);
    assert_ptr_equal(a2.bce, a.bce);
    struct entered b2 = enter(&f, &im, B);
    assert_int_equal(b2.maps, 0);
    assert_ptr_equal(b2.bce, b.bce);
}

/* A's second page has a slot of its own: asked once, and the directory is
 * A's (found in the block cache's list, not made again). */
static void test_second_page_same_section(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im);
    flow_over(&f, &im);
    struct entered a = enter(&f, &im, A + 0x10);
    (void)enter(&f, &im, B);
    struct entered a1 = enter(&f, &im, A + PAGE + 0x10);
    assert_int_equal(a1.maps, 1);
    assert_int_equal(a1.lo, A);
    assert_int_equal(a1.hi, A + A_SZ);
    assert_ptr_equal(a1.bce, a.bce);
    (void)enter(&f, &im, B);
    assert_int_equal(enter(&f, &im, A + PAGE + 0x20).maps, 0);
}

/* C shares A's slot: each takes it from the other, and neither is taken
 * for the other (the bounds are checked, not only the slot). */
static void test_shared_slot(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im);
    flow_over(&f, &im);
    struct entered a = enter(&f, &im, A);
    struct entered c = enter(&f, &im, C + 8);
    assert_int_equal(c.maps, 1);
    assert_int_equal(c.lo, C);
    assert_int_equal(c.hi, C + C_SZ);
    assert_ptr_not_equal(c.bce, a.bce);
    struct entered a2 = enter(&f, &im, A + 8);
    assert_int_equal(a2.maps, 1);
    assert_int_equal(a2.lo, A);
    assert_ptr_equal(a2.bce, a.bce);
}

/* No section: not kept, asked again at each block. */
static void test_hole_asked_again(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im);
    flow_over(&f, &im);
    struct entered h = enter(&f, &im, HOLE);
    assert_int_equal(h.maps, 1);
    assert_int_equal(h.hi, 0);
    assert_int_equal(enter(&f, &im, HOLE + 4).maps, 1);
}

/* After ptd_flow_invalidate the sections are the callback's again: A,
 * now one page, comes out with its new bounds. */
static void test_invalidate_forgets(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im);
    flow_over(&f, &im);
    (void)enter(&f, &im, A + 0x10);
    (void)enter(&f, &im, B);
    im.a_size = PAGE;
    ptd_flow_invalidate(&f);
    struct entered a = enter(&f, &im, A + 0x10);
    assert_int_equal(a.maps, 1);
    assert_int_equal(a.hi, A + PAGE);
    assert_non_null(a.bce);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_back_without_map),   cmocka_unit_test(test_second_page_same_section),
        cmocka_unit_test(test_shared_slot),        cmocka_unit_test(test_hole_asked_again),
        cmocka_unit_test(test_invalidate_forgets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
