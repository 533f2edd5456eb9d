/* The IPs inside a block (decoder/ptd_flow_ips.h), which the --no-inst
 * lines of the block path come from: on hand-assembled code, mapped in
 * place, mapped only in part (the rest through the read callback), not
 * mapped at all; the errors when the block does not fit or the code does
 * not lead to its last instruction; the walk a batch at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_flow_ips.h"
#include "test/unit/code_image_cb.h"

/* 64-bit code: lengths 3, 1, 5, 2, 7, 1 */
static const uint8_t code[] = {
    0x48, 0x89, 0xe5,                         /* mov rbp, rsp */
    0x90,                                     /* nop */
    0x0f, 0x1f, 0x44, 0x00, 0x00,             /* nop dword [rax+rax] */
    0x31, 0xc0,                               /* xor eax, eax */
    0x48, 0x8b, 0x05, 0x10, 0x00, 0x00, 0x00, /* mov rax, [rip+0x10] (7) */
    0xc3,                                     /* ret */
};
static const uint64_t want[] = { BASE, BASE + 3, BASE + 4, BASE + 9, BASE + 11, BASE + 18 };
#define NINSN 6

static void setup_flow(struct ptd_flow *f, struct image *im, size_t mapped)
{
    memset(im, 0x90, sizeof *im); /* NOPs after the code */
    memcpy(im->bytes, code, sizeof code);
    im->mapped = mapped;
    im->reads = 0;
    im->maps = 0;
    memset(f, 0, sizeof *f);
    f->read = read_cb;
    f->map = mapped ? map_cb : NULL;
    f->ctx = im;
}

static struct ptd_flow_block block(uint32_t ninsn, uint64_t last_ip)
{
    struct ptd_flow_block b;
    memset(&b, 0, sizeof b);
    b.ip = BASE;
    b.last_ip = last_ip;
    b.ninsn = ninsn;
    b.mode = PTD_EXEC_MODE_64;
    b.last_iclass = PTD_ICLASS_NEAR_RET;
    return b;
}

static void check_ips(size_t mapped, int want_reads)
{
    struct ptd_flow f;
    struct image im;
    uint64_t ips[PTD_FLOW_BLOCK_MAX];
    setup_flow(&f, &im, mapped);
    struct ptd_flow_block b = block(NINSN, want[NINSN - 1]);
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX), NINSN);
    assert_memory_equal(ips, want, sizeof want);
    if (want_reads >= 0)
        assert_int_equal(im.reads, want_reads);
    else
        assert_true(im.reads > 0);
}

/* the whole block in one mapped region: no copy */
static void test_mapped(void **state)
{
    (void)state;
    check_ips(sizeof(((struct image *)0)->bytes), 0);
}

/* the region ends inside the block: the rest through the read callback */
static void test_partly_mapped(void **state)
{
    (void)state;
    check_ips(12, -1);
}

/* no map callback: every instruction through the read callback */
static void test_read_only(void **state)
{
    (void)state;
    check_ips(0, NINSN - 1);
}

/* the flow's code window holds the block: no callback at all; a window
 * that ends inside the block: the rest through the read callback */
static void test_window(void **state)
{
    struct ptd_flow f;
    struct image im;
    uint64_t ips[PTD_FLOW_BLOCK_MAX];
    (void)state;
    const unsigned lens[] = { sizeof im.bytes, 12 };
    for (unsigned i = 0; i < 2; i++) {
        unsigned len = lens[i];
        setup_flow(&f, &im, 0);
        f.code = im.bytes;
        f.win_base = BASE;
        f.win_len = len;
        struct ptd_flow_block b = block(NINSN, want[NINSN - 1]);
        assert_int_equal(ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX), NINSN);
        assert_memory_equal(ips, want, sizeof want);
        if (len == sizeof im.bytes)
            assert_int_equal(im.reads, 0);
        else
            assert_true(im.reads > 0);
    }
}

static void test_one_insn(void **state)
{
    struct ptd_flow f;
    struct image im;
    uint64_t ips[1];
    (void)state;
    setup_flow(&f, &im, 0);
    struct ptd_flow_block b = block(1, BASE);
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, 1), 1);
    assert_true(ips[0] == BASE);
    b.ninsn = 0;
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, 1), 0);
}

static void test_errors(void **state)
{
    struct ptd_flow f;
    struct image im;
    uint64_t ips[PTD_FLOW_BLOCK_MAX];
    (void)state;
    setup_flow(&f, &im, sizeof im.bytes);
    /* does not fit the caller's array */
    struct ptd_flow_block b = block(NINSN, want[NINSN - 1]);
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, NINSN - 1), -PTD_ERR_NOSPC);
    /* the code does not end the block where it says (it changed) */
    b.last_ip = want[NINSN - 1] + 1;
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX), -PTD_ERR_INTERNAL);
    /* no code at all there */
    b = block(NINSN, want[NINSN - 1]);
    b.ip = 0x10;
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX), -PTD_ERR_INTERNAL);
    /* an execution mode the flow never hands out */
    b = block(NINSN, want[NINSN - 1]);
    b.mode = PTD_FLOW_MODE_UNKNOWN;
    assert_int_equal(ptd_flow_block_ips(&f, &b, ips, PTD_FLOW_BLOCK_MAX), -PTD_ERR_INTERNAL);
}

/* the IPs after an IP a batch at a time, as the --no-inst lines take
 * them: the region asked for once, the walk's end where the code ends */
static void test_batch(void **state)
{
    struct ptd_flow f;
    struct image im;
    uint64_t next[100];
    (void)state;
    setup_flow(&f, &im, sizeof im.bytes);
    assert_int_equal(ptd_flow_ips_after(&f, BASE, PTD_EXEC_MODE_64, next, NINSN - 1), NINSN - 1);
    assert_memory_equal(next, want + 1, (NINSN - 1) * sizeof next[0]);
    assert_int_equal(im.maps, 1);
    assert_int_equal(im.reads, 0);
    /* on over the NOPs after the code to the image's end: the last ones
     * (fewer than an instruction's worth of bytes left in the region)
     * through the read callback, then nothing */
    uint32_t n = ptd_flow_ips_after(&f, BASE, PTD_EXEC_MODE_64, next, 100);
    assert_int_equal(n, NINSN + (sizeof im.bytes - sizeof code));
    assert_true(next[n - 1] == BASE + sizeof im.bytes);
    for (uint32_t k = NINSN; k < n; k++)
        assert_true(next[k] == next[k - 1] + 1);
    /* a mode the flow never hands out: none */
    assert_int_equal(ptd_flow_ips_after(&f, BASE, PTD_FLOW_MODE_UNKNOWN, next, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapped),    cmocka_unit_test(test_partly_mapped),
        cmocka_unit_test(test_read_only), cmocka_unit_test(test_window),
        cmocka_unit_test(test_one_insn),  cmocka_unit_test(test_errors),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
