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

static struct image im;
static struct ptd_flow f;

/* A fresh image and a flow over it, with a block cache. */
static void start(void)
{
    struct ptd_flow_config cfg;
    memset(&im, 0x90, sizeof im);
    im.maps = 0;
    im.a_size = A_SZ;
    memset(&cfg, 0, sizeof cfg);
    cfg.read = read_cb;
    cfg.map = map_cb;
    cfg.ctx = &im;
    cfg.mode = 64;
    cfg.bcache = bcache;
    cfg.bcache_size = sizeof bcache;
    assert_int_equal(ptd_flow_init(&f, &cfg), 0);
}

/* A block starting at ip: the map callback asked maps times for it, the
 * flow's section [lo, hi); its block-cache directory. */
static const uint32_t *expect(uint64_t ip, int maps, uint64_t lo, uint64_t hi)
{
    struct ptd_flow_block blk;
    int before = im.maps;
    f.ip = ip;
    ptd_flow_block_start(&f, &blk);
    assert_int_equal(im.maps - before, maps);
    assert_int_equal(f.sec_lo, lo);
    assert_int_equal(f.sec_hi, hi);
    return f.bce;
}

/* Back into a section entered before: its bounds and directory, no call. */
static void test_back_without_map(void **state)
{
    (void)state;
    start();
    const uint32_t *a = expect(A + 0x10, 1, A, A + A_SZ);
    const uint32_t *b = expect(B + 0x20, 1, B, B + B_SZ);
    assert_non_null(a);
    assert_ptr_not_equal(b, a);
    assert_ptr_equal(expect(A + 0x30, 0, A, A + A_SZ), a);
    assert_ptr_equal(expect(B, 0, B, B + B_SZ), b);
}

/* A's second page has a slot of its own: asked once, and the directory is
 * A's (found in the block cache's list, not made again). */
static void test_second_page_same_section(void **state)
{
    (void)state;
    start();
    const uint32_t *a = expect(A + 0x10, 1, A, A + A_SZ);
    (void)expect(B, 1, B, B + B_SZ);
    assert_ptr_equal(expect(A + PAGE + 0x10, 1, A, A + A_SZ), a);
    (void)expect(B, 0, B, B + B_SZ);
    assert_ptr_equal(expect(A + PAGE + 0x20, 0, A, A + A_SZ), a);
}

/* C shares A's slot: each takes it from the other, and neither is taken
 * for the other (the bounds are checked, not only the slot). */
static void test_shared_slot(void **state)
{
    (void)state;
    start();
    const uint32_t *a = expect(A, 1, A, A + A_SZ);
    assert_ptr_not_equal(expect(C + 8, 1, C, C + C_SZ), a);
    assert_ptr_equal(expect(A + 8, 1, A, A + A_SZ), a);
}

/* No section: not kept, asked again at each block. */
static void test_hole_asked_again(void **state)
{
    (void)state;
    start();
    (void)expect(HOLE, 1, 0, 0);
    (void)expect(HOLE + 4, 1, 0, 0);
}

/* After ptd_flow_invalidate the sections are the callback's again: A,
 * now one page, comes out with its new bounds. */
static void test_invalidate_forgets(void **state)
{
    (void)state;
    start();
    (void)expect(A + 0x10, 1, A, A + A_SZ);
    (void)expect(B, 1, B, B + B_SZ);
    im.a_size = PAGE;
    ptd_flow_invalidate(&f);
    assert_non_null(expect(A + 0x10, 1, A, A + PAGE));
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
