/* The walks' memo (decoder/ptd_flow_walks.c): a walk to an event's IP
 * taken a second time comes out exactly as the first (the block, the
 * instruction it ends at, the flow's IP, the TRIG count, the call stack)
 * without decoding the code again; a walk the room would cut, one that
 * pushed two return addresses, a flow without a block cache, a window
 * copied through the read callback and a flow invalidated after its code
 * changed walk the code again. Every
 * outcome is checked against the same walk on a flow without the memo.
 *
 * To tell a kept walk from a decoded one, the tests change the code under
 * the flow without telling it (which the decoder's contract forbids): a
 * kept walk still finds the old code's outcome. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_flow_impl.h"
#include "test/unit/code_image_cb.h"

#define AWAY 0x7000u /* a stop IP the walks never reach */

/* 64-bit code: four instructions that need no trace (a direct call
 * followed on the way, its return address pushed), then a return */
static const uint8_t code[] = {
    0x48, 0x89, 0xe5,             /* +0  mov rbp, rsp */
    0x90,                         /* +3  nop */
    0xe8, 0x02, 0x00, 0x00, 0x00, /* +4  call +11 (returns to +9) */
    0x90, 0x90,                   /* +9  (not run) */
    0x31, 0xc0,                   /* +11 xor eax, eax */
    0xc3,                         /* +13 ret */
};

static uint64_t bcache[PTD_FLOW_BCACHE_BYTES(sizeof(struct image), 1) / 8 + 1];

/* A flow over im (mapped in place unless im->mapped is 0), with the
 * block cache's memory (and so the memo) or without. */
static void flow_over(struct ptd_flow *f, struct image *im, bool memo)
{
    struct ptd_flow_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.read = read_cb;
    cfg.map = im->mapped ? map_cb : NULL;
    cfg.ctx = im;
    cfg.mode = 64;
    if (memo) {
        memset(bcache, 0xa5, sizeof bcache); /* not zero: the cache clears it */
        cfg.bcache = bcache;
        cfg.bcache_size = sizeof bcache;
    }
    assert_int_equal(ptd_flow_init(f, &cfg), 0);
}

static void image(struct image *im, size_t mapped)
{
    memset(im, 0x90, sizeof *im); /* NOPs after the code */
    memcpy(im->bytes, code, sizeof code);
    im->mapped = mapped;
}

/* The flow at ip, its window and section loaded as the walk finds them. */
static void place(struct ptd_flow *f, uint64_t ip)
{
    struct ptd_flow_pinsn p;
    f->ip = ip;
    f->ret_top = f->ret_count = f->ret_known = 0;
    assert_int_equal(ptd_flow_decode_step(f, &p), 0);
    f->sec_lo = BASE;
    f->sec_hi = BASE + sizeof(struct image);
}

/* What a walk leaves. */
struct outcome {
    int r;
    uint64_t ip, last_ip, p_ip, p_target, ret;
    uint32_t ninsn, icnt;
    uint8_t last_iclass, p_iclass, p_size, ret_count;
};

static struct outcome walk(struct ptd_flow *f, uint64_t from, uint64_t stop, uint32_t ninsn0)
{
    struct ptd_flow_block blk;
    struct ptd_flow_pinsn p;
    struct outcome o;
    memset(&blk, 0, sizeof blk);
    memset(&p, 0, sizeof p);
    memset(&o, 0, sizeof o);
    place(f, from);
    blk.ninsn = ninsn0;
    o.r = ptd_flow_walk_plain(f, &blk, &p, stop);
    o.ip = f->ip;
    o.last_ip = blk.last_ip;
    o.ninsn = blk.ninsn;
    o.last_iclass = blk.last_iclass;
    o.p_ip = p.ip;
    o.p_iclass = p.iclass;
    o.p_size = p.size;
    o.p_target = p.target;
    o.icnt = f->icnt;
    o.ret_count = f->ret_count;
    o.ret =
        f->ret_count ? f->retstack[(f->ret_top + PTD_FLOW_RETSTACK - 1) % PTD_FLOW_RETSTACK] : 0;
    return o;
}

static void assert_same(const struct outcome *a, const struct outcome *b)
{
    assert_int_equal(a->r, b->r);
    assert_int_equal(a->ip, b->ip);
    assert_int_equal(a->last_ip, b->last_ip);
    assert_int_equal(a->ninsn, b->ninsn);
    assert_int_equal(a->last_iclass, b->last_iclass);
    assert_int_equal(a->p_ip, b->p_ip);
    assert_int_equal(a->p_iclass, b->p_iclass);
    assert_int_equal(a->p_size, b->p_size);
    assert_int_equal(a->p_target, b->p_target);
    assert_int_equal(a->icnt, b->icnt);
    assert_int_equal(a->ret_count, b->ret_count);
    assert_int_equal(a->ret, b->ret);
}

/* The walk from BASE, as the code says: mov, nop, the call followed, xor,
 * stopped at the return (taken into the block, the flow at it). */
static void test_walk_outcome(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im, sizeof im.bytes);
    flow_over(&f, &im, true);
    struct outcome o = walk(&f, BASE, AWAY, 0);
    assert_int_equal(o.r, 1);
    assert_int_equal(o.ip, BASE + 13);
    assert_int_equal(o.ninsn, 5);
    assert_int_equal(o.last_ip, BASE + 13);
    assert_int_equal(o.p_iclass, PTD_ICLASS_NEAR_RET);
    assert_int_equal(o.ret_count, 1);
    assert_int_equal(o.ret, BASE + 9);
}

/* Taken again, the walk is the kept one: the code changed under it (a
 * return at +3) does not show; invalidated, the flow decodes it again. */
static void test_second_walk_kept(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    image(&im, sizeof im.bytes);
    flow_over(&f, &im, true);
    struct outcome first = walk(&f, BASE, AWAY, 0);
    im.bytes[3] = 0xc3;
    struct outcome again = walk(&f, BASE, AWAY, 0);
    assert_same(&first, &again);
    /* another stop is another walk */
    struct outcome other = walk(&f, BASE, AWAY + 1, 0);
    assert_int_equal(other.r, 1);
    assert_int_equal(other.ip, BASE + 3);
    assert_int_equal(other.ninsn, 2);
    ptd_flow_invalidate(&f);
    struct outcome fresh = walk(&f, BASE, AWAY, 0);
    assert_int_equal(fresh.r, 1);
    assert_int_equal(fresh.ip, BASE + 3);
    assert_int_equal(fresh.ninsn, 2);
}

/* A walk that ends at the stop IP or leaves the section is kept too, and
 * comes out as a flow without the memo walks it. */
static void test_kept_walks_match(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f, plain;
    static const struct {
        uint64_t from, stop;
    } walks[] = {
        { BASE, BASE + 4 },      /* at the call */
        { BASE, BASE + 11 },     /* past the call, at its target */
        { BASE + 3, BASE + 13 }, /* at the return (not walked) */
        { BASE + 11, AWAY },     /* xor, then the return */
        { BASE + 13, AWAY },     /* the return alone */
        { BASE + 3, BASE + 3 },  /* already there: nothing */
    };
    image(&im, sizeof im.bytes);
    flow_over(&f, &im, true);
    for (size_t k = 0; k < sizeof walks / sizeof walks[0]; k++) {
        struct outcome first = walk(&f, walks[k].from, walks[k].stop, 7);
        struct outcome again = walk(&f, walks[k].from, walks[k].stop, 7);
        assert_same(&first, &again);
        flow_over(&plain, &im, false);
        struct outcome want = walk(&plain, walks[k].from, walks[k].stop, 7);
        assert_same(&first, &want);
    }
}

/* Where the block has less room than the kept walk, the flow walks the
 * code (and stops where the room ends): the block's limit, and the TRIG
 * count's. */
static void test_room_walks_again(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f, plain;
    image(&im, sizeof im.bytes);
    flow_over(&f, &im, true);
    (void)walk(&f, BASE, AWAY, 0);
    struct outcome cut = walk(&f, BASE, AWAY, PTD_FLOW_BLOCK_MAX - 2);
    flow_over(&plain, &im, false);
    struct outcome want = walk(&plain, BASE, AWAY, PTD_FLOW_BLOCK_MAX - 2);
    assert_same(&cut, &want);
    assert_int_equal(cut.r, 0);
    assert_int_equal(cut.ninsn, PTD_FLOW_BLOCK_MAX);
    assert_int_equal(cut.ip, BASE + 4);

    f.has_icnt = 1;
    f.icnt = UINT32_MAX - 3;
    im.bytes[3] = 0xc3; /* walked again: the change shows */
    struct outcome trig = walk(&f, BASE, AWAY, 0);
    assert_int_equal(trig.r, 1);
    assert_int_equal(trig.ip, BASE + 3);
    assert_int_equal(trig.icnt, UINT32_MAX - 1);
}

/* A walk through two direct calls pushes two return addresses: it is not
 * kept (the memo holds one), and the second walk decodes the changed
 * code. */
static void test_two_pushes_walk_again(void **state)
{
    (void)state;
    static const uint8_t calls[] = {
        0xe8, 0x01, 0x00, 0x00, 0x00, /* +0  call +6 (returns to +5) */
        0x90,                         /* +5  (not run) */
        0xe8, 0x01, 0x00, 0x00, 0x00, /* +6  call +12 (returns to +11) */
        0x90,                         /* +11 (not run) */
        0xc3,                         /* +12 ret */
    };
    static struct image im;
    static struct ptd_flow f;
    image(&im, sizeof im.bytes);
    memcpy(im.bytes, calls, sizeof calls);
    flow_over(&f, &im, true);
    struct outcome first = walk(&f, BASE, AWAY, 0);
    assert_int_equal(first.r, 1);
    assert_int_equal(first.ip, BASE + 12);
    assert_int_equal(first.ninsn, 3);
    assert_int_equal(first.ret_count, 2);
    assert_int_equal(first.ret, BASE + 11);
    im.bytes[6] = 0xc3;
    struct outcome again = walk(&f, BASE, AWAY, 0);
    assert_int_equal(again.ip, BASE + 6);
    assert_int_equal(again.ninsn, 2);
    assert_int_equal(again.ret_count, 1);
}

/* No memo without the block cache's memory, nor in a window the read
 * callback copied: the second walk decodes the changed code. */
static void test_no_memo(void **state)
{
    (void)state;
    static struct image im;
    static struct ptd_flow f;
    /* mapped in place, no memory for the cache */
    image(&im, sizeof im.bytes);
    flow_over(&f, &im, false);
    (void)walk(&f, BASE, AWAY, 0);
    im.bytes[3] = 0xc3;
    struct outcome o = walk(&f, BASE, AWAY, 0);
    assert_int_equal(o.ip, BASE + 3);
    assert_int_equal(o.ninsn, 2);
    /* the memory, but the code only read (copied into the flow's window,
     * read again once the window is dropped: the memo stays) */
    image(&im, 0);
    flow_over(&f, &im, true);
    (void)walk(&f, BASE, AWAY, 0);
    im.bytes[3] = 0xc3;
    f.win_len = 0;
    o = walk(&f, BASE, AWAY, 0);
    assert_int_equal(o.ip, BASE + 3);
    assert_int_equal(o.ninsn, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_walk_outcome),          cmocka_unit_test(test_second_walk_kept),
        cmocka_unit_test(test_kept_walks_match),      cmocka_unit_test(test_room_walks_again),
        cmocka_unit_test(test_two_pushes_walk_again), cmocka_unit_test(test_no_memo),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
