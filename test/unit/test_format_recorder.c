/* The hang recorder's memory format (format/recorder.h): a region laid out
 * and written as the driver does it, then read back as the next boot does,
 * intact and damaged in every way the checks must catch: no header, another
 * version, a damaged fixed part, a header written elsewhere, impossible
 * layouts under a good CRC, a torn live slot (the other one is taken), both
 * slots damaged, a write position beyond the trace, a short region; the
 * sideband and the code only with their CRCs; the variable. Then a few
 * thousand random corruptions of the header page: recorder_check answers
 * each (OK only with every area inside the region) and never reads past
 * what it was given. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/ptd_frame.h"
#include "format/recorder.h"

#define PHYS  0x100000000ull
#define TRACE (64u << 10)

static uint8_t region[1u << 20] __attribute__((aligned(4096)));

static uint64_t layout(struct recorder_fixed *f)
{
    memset(f, 0, sizeof *f);
    struct recorder_request r = {
        .sideband_cap = 6000,
        .code_pages = 4,
        .trace_bytes = TRACE,
    };
    uint64_t bytes = recorder_plan(f, PHYS, &r);
    f->unit = RECORDER_UNIT_SOFT;
    f->flags = RECORDER_RING;
    f->regions = 1;
    f->region_code = 4; /* 4 KiB << 4 = 64 KiB */
    f->generation = 7;
    strcpy(f->options, "--image ptbhang.efi --hang-timeout 5");
    strcpy(f->image, "ptbhang.efi");
    recorder_seal(f);
    return bytes;
}

static const char sb_text[] = "ptboot-sideband 1\nunit soft\n";

/* A region as the driver leaves it: header, sideband, two code pages,
 * some trace, a live slot written twice. */
static uint64_t build(struct recorder_writer *w, struct recorder_live *l)
{
    struct recorder_fixed f;
    uint64_t bytes = layout(&f);
    assert_true(bytes > 0 && bytes <= sizeof region);
    memset(region, 0x5a, sizeof region);
    recorder_writer_init(w, region, &f);
    memcpy(region + f.sideband_off, sb_text, sizeof sb_text - 1);
    uint64_t addrs[2] = { 0x7e000000, 0x7e001000 };
    memcpy(region + f.addr_off, addrs, sizeof addrs);
    memset(region + f.code_off, 0xc3, 2 * RECORDER_PAGE);
    memset(l, 0, sizeof *l);
    l->state = RECORDER_TRACING;
    l->write_pos = 1000;
    l->bytes = 70000;
    l->wrapped = 1;
    l->pos_source = RECORDER_POS_UNIT;
    l->sideband_bytes = sizeof sb_text - 1;
    l->sideband_crc = ptd_crc32(0, sb_text, sizeof sb_text - 1);
    l->code_pages = 2;
    l->code_crc = ptd_crc32(0, region + f.code_off, 2 * RECORDER_PAGE);
    l->addr_crc = ptd_crc32(0, addrs, sizeof addrs);
    recorder_write_live(w, l);
    l->write_pos = 2000;
    l->bytes = 71000;
    recorder_write_live(w, l);
    return bytes;
}

static void test_round_trip(void **state)
{
    (void)state;
    struct recorder_writer w;
    struct recorder_live l;
    uint64_t bytes = build(&w, &l);
    struct recorder_view v;
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    assert_int_equal(v.live.write_pos, 2000);
    assert_int_equal(v.live.seq, 2);
    assert_true(v.other_slot_ok);
    assert_int_equal(v.fixed.generation, 7);
    assert_string_equal(v.fixed.image, "ptbhang.efi");
    /* areas apart, page aligned, trace inside the region */
    assert_true(v.fixed.trace_off + v.fixed.trace_bytes <= bytes);
    assert_int_equal(v.fixed.trace_off % RECORDER_PAGE, 0);
    size_t len;
    const char *t = recorder_sideband(region, &v, &len);
    assert_non_null(t);
    assert_int_equal(len, sizeof sb_text - 1);
    assert_memory_equal(t, sb_text, len);
    const uint8_t *dump, *addr;
    size_t pages;
    assert_true(recorder_code(region, &v, &dump, &addr, &pages));
    assert_int_equal(pages, 2);
    assert_int_equal(dump[0], 0xc3);
    /* the third write goes to the slot of the first: the second survives */
    l.write_pos = 3000;
    l.bytes = 72000;
    recorder_write_live(&w, &l);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    assert_int_equal(v.live.write_pos, 3000);
    assert_int_equal(v.slot, 1);
}

static void test_live_slots(void **state)
{
    (void)state;
    struct recorder_writer w;
    struct recorder_live l;
    uint64_t bytes = build(&w, &l);
    struct recorder_view v;
    /* a reset in the middle of writing the newest slot (seq 2: slot 0) */
    region[RECORDER_LIVE_OFF0 + 20] ^= 0xff;
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    assert_int_equal(v.live.seq, 1);
    assert_int_equal(v.live.write_pos, 1000);
    assert_false(v.other_slot_ok);
    /* both */
    region[RECORDER_LIVE_OFF1 + 9] ^= 0x01;
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_LIVE);
    /* a good CRC over a position beyond the trace: the other slot */
    build(&w, &l);
    l.write_pos = TRACE + 1;
    recorder_write_live(&w, &l);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    assert_int_equal(v.live.write_pos, 2000);
    /* and both beyond */
    recorder_write_live(&w, &l);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_POS);
    /* the soft unit cannot be further than it wrote */
    build(&w, &l);
    l.write_pos = 5000;
    l.bytes = 4000;
    l.wrapped = 0;
    recorder_write_live(&w, &l);
    recorder_write_live(&w, &l);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_POS);
}

static void test_fixed_part(void **state)
{
    (void)state;
    struct recorder_writer w;
    struct recorder_live l;
    uint64_t bytes = build(&w, &l);
    struct recorder_view v;
    assert_int_equal(recorder_check(region, bytes, PHYS + 4096, &v), RECORDER_E_PLACE);
    assert_int_equal(recorder_check(region, bytes - 4096, PHYS, &v), RECORDER_E_SHORT);
    assert_int_equal(recorder_check(region, 100, PHYS, &v), RECORDER_E_SHORT);
    region[100] ^= 0x10; /* inside options[] */
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_CRC);
    region[100] ^= 0x10;
    struct recorder_fixed f;
    memcpy(&f, region, sizeof f);
    f.version = 2;
    memcpy(region, &f, sizeof f);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_VERSION);
    memset(region, 0, 8);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_NONE);
    memset(region, 0xaf, RECORDER_PAGE); /* what Debian's OVMF leaves in free memory */
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_E_NONE);
}

/* Impossible layouts under a good CRC. */
static void test_layouts(void **state)
{
    (void)state;
    struct recorder_view v;
    for (int k = 0; k < 9; k++) {
        struct recorder_writer w;
        struct recorder_live l;
        uint64_t bytes = build(&w, &l);
        struct recorder_fixed f;
        memcpy(&f, region, sizeof f);
        switch (k) {
        case 0: f.trace_off = f.code_off; break;       /* overlap */
        case 1: f.trace_bytes = f.region_bytes; break; /* beyond */
        case 2: f.sideband_off = 100; break;           /* in the header */
        case 3: f.code_off += 8; break;                /* misaligned */
        case 4: f.region_code = 5; break;              /* regions do not cover it */
        case 5: f.unit = 9; break;
        case 6: f.region_bytes = RECORDER_MAX_REGION * 2; break;
        case 7: f.addr_cap = 8; break;                      /* fewer addresses than pages */
        case 8: f.trace_off = UINT64_MAX & ~4095ull; break; /* wraps around */
        }
        recorder_seal(&f);
        memcpy(region, &f, sizeof f);
        int rc = recorder_check(region, bytes, PHYS, &v);
        if (rc != RECORDER_E_LAYOUT)
            fail_msg("layout %d: %d", k, rc);
    }
}

static void test_sideband_and_code(void **state)
{
    (void)state;
    struct recorder_writer w;
    struct recorder_live l;
    uint64_t bytes = build(&w, &l);
    struct recorder_view v;
    struct recorder_fixed f;
    memcpy(&f, region, sizeof f);
    region[f.sideband_off + 3] ^= 1;
    region[f.code_off + 4096 + 7] ^= 1;
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    size_t len;
    assert_null(recorder_sideband(region, &v, &len));
    assert_int_equal(len, 0);
    const uint8_t *d, *a;
    size_t pages;
    assert_false(recorder_code(region, &v, &d, &a, &pages));
    assert_int_equal(pages, 0);
    /* a page address not page aligned, under a good CRC */
    build(&w, &l);
    uint64_t odd[2] = { 0x7e000000, 0x7e001008 };
    memcpy(region + f.addr_off, odd, sizeof odd);
    l.addr_crc = ptd_crc32(0, odd, sizeof odd);
    recorder_write_live(&w, &l);
    assert_int_equal(recorder_check(region, bytes, PHYS, &v), RECORDER_OK);
    assert_false(recorder_code(region, &v, &d, &a, &pages));
}

static void test_var(void **state)
{
    (void)state;
    struct recorder_var e, d;
    recorder_var_encode(&e, RECORDER_UNIT_SOFT, 3, PHYS, 0x200000);
    assert_int_equal(recorder_var_decode(&e, sizeof e, &d), 0);
    assert_int_equal(d.generation, 3);
    assert_int_equal(d.region_phys, PHYS);
    assert_int_equal(recorder_var_decode(&e, sizeof e - 1, &d), -1);
    ((uint8_t *)&e)[20] ^= 4;
    assert_int_equal(recorder_var_decode(&e, sizeof e, &d), -1);
    recorder_var_encode(&e, RECORDER_UNIT_SOFT, 3, PHYS + 12, 0x200000);
    assert_int_equal(recorder_var_decode(&e, sizeof e, &d), -1);
}

/* Random damage to the header page, checked against a region given with
 * exactly its size: sanitizers and valgrind see any read past it. */
static void test_random_damage(void **state)
{
    (void)state;
    uint32_t r = 12345;
    unsigned ok = 0, bad = 0;
    for (int i = 0; i < 3000; i++) {
        struct recorder_writer w;
        struct recorder_live l;
        uint64_t bytes = build(&w, &l);
        int flips = 1 + i % 5;
        for (int k = 0; k < flips; k++) {
            r = r * 1103515245u + 12345u;
            uint32_t off = (r >> 8) % RECORDER_HEADER_BYTES;
            region[off] ^= (uint8_t)(1u << ((r >> 3) & 7));
        }
        struct recorder_view v;
        int rc = recorder_check(region, bytes, PHYS, &v);
        if (rc != RECORDER_OK) {
            bad++;
            continue;
        }
        ok++;
        assert_true(v.fixed.region_bytes <= bytes);
        assert_true(v.fixed.trace_off + v.fixed.trace_bytes <= v.fixed.region_bytes);
        assert_true(v.live.write_pos <= v.fixed.trace_bytes);
        size_t len;
        recorder_sideband(region, &v, &len);
        assert_true(len <= v.fixed.sideband_cap);
    }
    /* flips outside both structs leave it intact; most others are caught */
    assert_true(ok > 0 && bad > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),        cmocka_unit_test(test_live_slots),
        cmocka_unit_test(test_fixed_part),        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_sideband_and_code), cmocka_unit_test(test_var),
        cmocka_unit_test(test_random_damage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
