/* format/fv.c, format/ffs.c, format/pi_guid.c: firmware volumes, files and
 * sections. The volumes here are built field by field from the PI 1.8
 * Vol. 3 layouts (EFI_FIRMWARE_VOLUME_HEADER offsets written out below),
 * files and sections with the writers under test and then checked byte by
 * byte where the layout fixes them (header sums, sizes, alignment); every
 * refusal is provoked by the one damaged byte that must cause it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "format/ffs.h"
#include "format/fv.h"
#include "format/pi_guid.h"

#define VOL_BYTES 0x4000

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void put32(uint8_t *p, uint32_t v)
{
    put16(p, (uint16_t)v);
    put16(p + 2, (uint16_t)(v >> 16));
}
static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)v);
    put32(p + 4, (uint32_t)(v >> 32));
}

/* A volume of len bytes: the header of PI 1.8 Vol. 3 section 3.2.1
 * (ZeroVector 0..15, FileSystemGuid 16, FvLength 32, Signature 40,
 * Attributes 44, HeaderLength 48, Checksum 50, ExtHeaderOffset 52,
 * Reserved 54, Revision 55, BlockMap 56), one block-map entry and the
 * terminator (HeaderLength 72), optionally an extended header at 72
 * (FvName, ExtHeaderSize 20), the rest erased. */
static void make_volume(uint8_t *v, uint64_t len, const struct pi_guid *fs, uint8_t erased,
                        bool ext)
{
    memset(v, erased, len);
    memset(v, 0, 72);
    memcpy(v + 16, fs->b, 16);
    put64(v + 32, len);
    memcpy(v + 40, "_FVH", 4);
    put32(v + 44, erased ? 0x0004feffu : 0x0004f7ffu);
    put16(v + 48, 72);
    put16(v + 52, ext ? 72 : 0);
    v[55] = 2;
    put32(v + 56, (uint32_t)(len / 0x1000));
    put32(v + 60, 0x1000);
    if (ext) {
        for (int i = 0; i < 16; i++)
            v[72 + i] = (uint8_t)(0xa0 + i);
        put32(v + 88, 20);
    }
    fv_header_checksum_fix(v, 72);
}

static const struct pi_guid G1 = { { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 } };
static const struct pi_guid G2 = { { 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29, 0x2a,
                                     0x2b, 0x2c, 0x2d, 0x2e, 0x2f, 0x30 } };

/* A file of type DRIVER with a RAW section of n bytes of pattern and a UI
 * section, into out; returns its size. */
static size_t make_file(uint8_t *out, size_t cap, const struct pi_guid *name, uint8_t attributes,
                        size_t n, const char *ui, uint8_t erased)
{
    uint8_t *raw = malloc(n ? n : 1);
    for (size_t i = 0; i < n; i++)
        raw[i] = (uint8_t)(i * 7 + 1);
    long end = ffs_section_write(out + FFS_HEADER_BYTES, cap - FFS_HEADER_BYTES, 0, FFS_SECTION_RAW,
                                 raw, n);
    assert_true(end > 0);
    end = ffs_ui_section_write(out + FFS_HEADER_BYTES, cap - FFS_HEADER_BYTES, (size_t)end, ui);
    assert_true(end > 0);
    free(raw);
    size_t size = FFS_HEADER_BYTES + (size_t)end;
    assert_int_equal(ffs_file_finish(out, size, name, FFS_TYPE_DRIVER, attributes, erased, false),
                     FFS_HEADER_BYTES);
    return size;
}

static uint8_t sum8(const uint8_t *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    return s;
}

static void guids(void **state)
{
    (void)state;
    char t[PI_GUID_TEXT_BYTES];
    pi_guid_format(&PI_GUID_FFS2, t);
    assert_string_equal(t, "8c8ce578-8a3d-4f1c-9935-896185c32dd3");
    /* the stored bytes: Data1..3 little-endian, Data4 in order */
    static const uint8_t ffs2[16] = { 0x78, 0xe5, 0x8c, 0x8c, 0x3d, 0x8a, 0x1c, 0x4f,
                                      0x99, 0x35, 0x89, 0x61, 0x85, 0xc3, 0x2d, 0xd3 };
    assert_memory_equal(PI_GUID_FFS2.b, ffs2, 16);
    struct pi_guid g;
    assert_int_equal(pi_guid_parse("26BACCB1-6F42-11D4-BCE7-0080C73C8881", 36, &g), 0);
    assert_true(pi_guid_equal(&g, &PI_GUID_CPU_ARCH));
    assert_string_equal(pi_guid_name(&g), "cpu-arch-protocol");
    assert_int_equal(pi_guid_parse("26baccb1-6f42-11d4-bce7-0080c73c888", 35, &g), -1);
    assert_int_equal(pi_guid_parse("26baccb1-6f42-11d4-bce7x0080c73c8881", 36, &g), -1);
    assert_int_equal(pi_guid_parse("26baccb1-6f42-11d4-bce7-0080c73c88g1", 36, &g), -1);
    pi_guid_format(&G1, t);
    assert_int_equal(pi_guid_parse(t, strlen(t), &g), 0);
    assert_true(pi_guid_equal(&g, &G1));
    assert_null(pi_guid_name(&G1));
}

static void volume_header(void **state)
{
    (void)state;
    static uint8_t v[VOL_BYTES];
    struct fv_volume fv;
    make_volume(v, VOL_BYTES, &PI_GUID_FFS2, 0xff, true);
    assert_int_equal(fv_header_sum(v, 72), 0);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
    assert_int_equal(fv.length, VOL_BYTES);
    assert_int_equal(fv.fs, FV_FS_FFS2);
    assert_int_equal(fv.erased, 0xff);
    assert_int_equal(fv.block_bytes, VOL_BYTES);
    assert_true(fv.has_name);
    assert_int_equal(fv.name.b[0], 0xa0);
    assert_int_equal(fv.files_offset, 96); /* after the 20-byte extended header, 8-aligned */
    assert_true(fv_has_files(&fv));

    /* each refusal from one damaged field */
    assert_int_equal(fv_volume_parse(v, VOL_BYTES - 1, &fv), FV_E_TRUNCATED);
    assert_int_equal(fv_volume_parse(v, 40, &fv), FV_E_TRUNCATED);
    v[41] ^= 1;
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_SIGNATURE);
    v[41] ^= 1;
    v[60] ^= 0x10; /* a block length: the sum is off */
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_HEADER_CHECKSUM);
    v[60] ^= 0x10;
    v[55] = 3;
    fv_header_checksum_fix(v, 72);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_REVISION);
    v[55] = 2;
    put32(v + 64, 1); /* the terminator is no longer {0,0} */
    fv_header_checksum_fix(v, 72);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_BLOCK_MAP);
    put32(v + 64, 0);
    put16(v + 48, 71);
    fv_header_checksum_fix(v, 72);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_HEADER_LENGTH);
    put16(v + 48, 72);
    put32(v + 88, VOL_BYTES); /* ExtHeaderSize past the volume */
    fv_header_checksum_fix(v, 72);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_E_EXT_HEADER);
    put32(v + 88, 20);
    fv_header_checksum_fix(v, 72);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);

    make_volume(v, VOL_BYTES, &PI_GUID_NV_DATA, 0xff, false);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
    assert_int_equal(fv.fs, FV_FS_NVRAM);
    assert_false(fv_has_files(&fv));
    assert_int_equal(fv.files_offset, 72);
}

/* Two files laid out, then walked: names, sizes, checksums, sections. */
static void files_and_sections(void **state)
{
    (void)state;
    static uint8_t v[VOL_BYTES], f1[512], f2[512];
    struct fv_volume fv;
    for (int pol = 0; pol < 2; pol++) {
        uint8_t erased = pol ? 0xff : 0x00;
        make_volume(v, VOL_BYTES, &PI_GUID_FFS2, erased, true);
        assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
        size_t n1 = make_file(f1, sizeof f1, &G1, 0, 5, "First", erased);
        size_t n2 = make_file(f2, sizeof f2, &G2, FFS_ATTR_CHECKSUM, 100, "Second", erased);
        /* header sums to 0 with File and State taken as 0; data checksum */
        assert_int_equal((uint8_t)(sum8(f1, 24) - f1[17] - f1[23]), 0);
        assert_int_equal(f1[17], FFS_FIXED_CHECKSUM);
        assert_int_equal((uint8_t)(sum8(f2 + 24, n2 - 24) + f2[17]), 0);
        /* state: header construction, header valid, data valid */
        assert_int_equal(f1[23], erased ? 0xf8 : 0x07);
        assert_int_equal(f1[20] | f1[21] << 8 | f1[22] << 16, n1);

        struct fv_layout_file items[2] = { { f1, n1, 0 }, { f2, n2, 0 } };
        struct fv_layout_result r;
        assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 2, &r), FV_OK);
        assert_int_equal(r.pads, 0);
        uint64_t at2 = (fv.files_offset + n1 + 7) & ~7ull;
        assert_int_equal(r.end, at2 + n2);
        assert_memory_equal(v + fv.files_offset, f1, n1);
        assert_memory_equal(v + at2, f2, n2);
        for (uint64_t k = fv.files_offset + n1; k < at2; k++)
            assert_int_equal(v[k], erased);

        uint64_t pos = fv.files_offset, err = 0;
        struct ffs_file f;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
        assert_true(pi_guid_equal(&f.name, &G1));
        assert_int_equal(f.offset, fv.files_offset);
        assert_int_equal(f.size, n1);
        assert_int_equal(f.state, FFS_FILE_VALID);
        assert_int_equal(f.type, FFS_TYPE_DRIVER);
        /* its sections: RAW (5 bytes) then UI at the next 4-byte boundary */
        const uint8_t *data = v + f.offset + f.header_bytes;
        uint64_t len = f.size - f.header_bytes, sp = 0, serr = 0;
        struct ffs_section s;
        assert_int_equal(ffs_section_next(data, len, &sp, &s, &serr), 1);
        assert_int_equal(s.type, FFS_SECTION_RAW);
        assert_int_equal(s.size, 9);
        assert_int_equal(s.data_offset, 4);
        assert_int_equal(data[4], 1);
        assert_int_equal(ffs_section_next(data, len, &sp, &s, &serr), 1);
        assert_int_equal(s.offset, 12);
        assert_int_equal(s.type, FFS_SECTION_USER_INTERFACE);
        char ui[16];
        assert_int_equal(
            ffs_ui_text(data + s.offset + s.data_offset, s.size - s.data_offset, ui, sizeof ui), 5);
        assert_string_equal(ui, "First");
        assert_int_equal(ffs_section_next(data, len, &sp, &s, &serr), 0);

        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
        assert_true(pi_guid_equal(&f.name, &G2));
        assert_int_equal(f.offset, at2);
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 0);
        assert_int_equal(pos, (r.end + 7) & ~7ull);

        /* one damaged byte each */
        v[at2 + 40] ^= 0x55; /* data of a checksummed file */
        pos = at2;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FILE_DATA_CHECKSUM);
        assert_int_equal(err, at2);
        v[at2 + 40] ^= 0x55;
        v[fv.files_offset + 18] = FFS_TYPE_PEIM; /* header field */
        pos = fv.files_offset;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FILE_HEADER_CHECKSUM);
        v[fv.files_offset + 18] = FFS_TYPE_DRIVER;
        v[fv.files_offset + 17] = 0x55; /* not the fixed 0xAA */
        pos = fv.files_offset;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FILE_DATA_CHECKSUM);
        v[fv.files_offset + 17] = FFS_FIXED_CHECKSUM;
        v[VOL_BYTES - 100] = (uint8_t)~erased; /* dirt in the free space */
        pos = at2 + n2;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FREE_SPACE);
        assert_int_equal(err, VOL_BYTES - 100);
        v[VOL_BYTES - 100] = erased;
        /* a size past the volume */
        uint8_t keep[3];
        memcpy(keep, v + at2 + 20, 3);
        v[at2 + 22] = 0x10;
        pos = at2;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FILE_SIZE);
        memcpy(v + at2 + 20, keep, 3);
        /* deleted: still walked over, with its state */
        uint8_t st = v[fv.files_offset + 23];
        v[fv.files_offset + 23] =
            erased ? (uint8_t)(st & ~FFS_STATE_DELETED) : (uint8_t)(st | FFS_STATE_DELETED);
        pos = fv.files_offset;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
        assert_int_equal(f.state, FFS_FILE_DELETED);
        assert_int_equal(pos, fv.files_offset + n1);
        /* a reserved state bit */
        v[fv.files_offset + 23] = erased ? (uint8_t)(st & ~0x80) : (uint8_t)(st | 0x80);
        pos = fv.files_offset;
        assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), FV_E_FILE_STATE);
    }
}

static void alignment(void **state)
{
    (void)state;
    assert_int_equal(ffs_data_alignment(0), 1);
    assert_int_equal(ffs_data_alignment(0x08), 16);
    assert_int_equal(ffs_data_alignment(0x10), 128);
    assert_int_equal(ffs_data_alignment(0x28), 4096);
    assert_int_equal(ffs_data_alignment(0x38), 65536);
    assert_int_equal(ffs_data_alignment(0x02), 131072);
    assert_int_equal(ffs_data_alignment(0x3a), 16u << 20);
    for (uint32_t a = 16; a <= (16u << 20); a <<= 1)
        assert_true(ffs_data_alignment(ffs_alignment_attributes(a)) >= a);
    assert_int_equal(ffs_alignment_attributes(4096), 0x28);
    assert_int_equal(ffs_alignment_attributes(8), 0);

    uint64_t pad;
    /* aligned already: no pad */
    assert_int_equal(fv_place(0x68, 24, 128, &pad), 0x68);
    assert_int_equal(pad, 0);
    /* OVMF's PEI volume: a file after 0xa8 whose data wants 128 bytes:
     * a 0x40-byte pad file, the file at 0xe8, its data at 0x100 */
    assert_int_equal(fv_place(0xa4, 24, 128, &pad), 0xe8);
    assert_int_equal(pad, 0x40);
    /* a gap smaller than a pad header is not possible: the next boundary */
    assert_int_equal(fv_place(0, 24, 32, &pad), 40);
    assert_int_equal(pad, 40);
}

/* A 4 KiB-aligned file after a small one: a pad file between, the data
 * on its boundary, the pad a valid file the walker steps over. */
static void layout_pads(void **state)
{
    (void)state;
    static uint8_t v[VOL_BYTES], f1[512], f2[512];
    struct fv_volume fv;
    make_volume(v, VOL_BYTES, &PI_GUID_FFS2, 0xff, false);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
    size_t n1 = make_file(f1, sizeof f1, &G1, 0, 10, "a", 0xff);
    size_t n2 = make_file(f2, sizeof f2, &G2, 0x28, 10, "b", 0xff);
    struct fv_layout_file items[2] = { { f1, n1, 0 }, { f2, n2, 0 } };
    struct fv_layout_result r;
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 2, &r), FV_OK);
    assert_int_equal(r.pads, 1);
    uint64_t pos = fv.files_offset, err;
    struct ffs_file f;
    assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
    assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
    assert_int_equal(f.type, FFS_TYPE_PAD);
    assert_int_equal(f.state, FFS_FILE_VALID);
    assert_true(pi_guid_is_filled(&f.name, 0xff));
    assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 1);
    assert_true(pi_guid_equal(&f.name, &G2));
    assert_int_equal((f.offset + f.header_bytes) % 4096, 0);
    assert_int_equal(f.data_align, 4096);
    assert_int_equal(fv_file_next(v, &fv, &pos, &f, &err), 0);
}

static void layout_refusals(void **state)
{
    (void)state;
    static uint8_t v[VOL_BYTES], before[VOL_BYTES], f1[VOL_BYTES], f2[512];
    struct fv_volume fv;
    make_volume(v, VOL_BYTES, &PI_GUID_FFS2, 0xff, false);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
    memcpy(before, v, VOL_BYTES);
    /* no room: exactly how much is missing, and nothing written */
    size_t n1 = make_file(f1, sizeof f1, &G1, 0, VOL_BYTES - 200, "big", 0xff);
    size_t n2 = make_file(f2, sizeof f2, &G2, 0, 300, "more", 0xff);
    struct fv_layout_file items[2] = { { f1, n1, 0 }, { f2, n2, 0 } };
    struct fv_layout_result r;
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 2, &r), FV_E_NO_ROOM);
    uint64_t end = ((fv.files_offset + n1 + 7) & ~7ull) + n2;
    assert_int_equal(r.missing, end - VOL_BYTES);
    assert_memory_equal(v, before, VOL_BYTES);
    /* one file fits exactly to the last byte */
    size_t exact = make_file(f1, sizeof f1, &G1, 0, VOL_BYTES - 72 - 24 - 4 - 4 - 2 * 2, "x", 0xff);
    assert_int_equal(exact, VOL_BYTES - 72);
    items[0].size = exact;
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 1, &r), FV_OK);
    assert_int_equal(r.end, VOL_BYTES);
    size_t over =
        make_file(f1, sizeof f1, &G1, 0, VOL_BYTES - 72 - 24 - 4 - 4 - 2 * 2 + 1, "x", 0xff);
    items[0].size = over;
    /* (one more data byte: 4 more with the next section's alignment) */
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 1, &r), FV_E_NO_ROOM);
    assert_int_equal(r.missing, 4);

    /* a fixed file that would move */
    memcpy(v, before, VOL_BYTES);
    size_t nf = make_file(f2, sizeof f2, &G2, FFS_ATTR_FIXED, 10, "fixed", 0xff);
    struct fv_layout_file fixed = { f2, nf, 0x100 };
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, &fixed, 1, &r), FV_E_FIXED);
    assert_int_equal(r.failed, 0);
    fixed.offset = fv.files_offset; /* where it lands anyway: fine */
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, &fixed, 1, &r), FV_OK);
}

/* The volume top file ends at the volume's end, a pad file before it. */
static void volume_top_file(void **state)
{
    (void)state;
    static uint8_t v[VOL_BYTES], f1[512], vtf[256];
    struct fv_volume fv;
    make_volume(v, VOL_BYTES, &PI_GUID_FFS2, 0xff, false);
    assert_int_equal(fv_volume_parse(v, VOL_BYTES, &fv), FV_OK);
    size_t n1 = make_file(f1, sizeof f1, &G1, 0, 10, "a", 0xff);
    memset(vtf, 0x90, sizeof vtf);
    assert_int_equal(ffs_file_finish(vtf, 64, &PI_GUID_VTF, FFS_TYPE_RAW, 0, 0xff, false), 24);
    struct fv_layout_file items[2] = { { f1, n1, 0 }, { vtf, 64, 0 } };
    struct fv_layout_result r;
    assert_int_equal(fv_layout(v, &fv, fv.files_offset, items, 2, &r), FV_OK);
    assert_int_equal(r.end, VOL_BYTES);
    assert_memory_equal(v + VOL_BYTES - 64, vtf, 64);
    uint64_t pos = fv.files_offset, err;
    struct ffs_file f;
    int files = 0;
    while (fv_file_next(v, &fv, &pos, &f, &err) == 1)
        files++;
    assert_int_equal(files, 3); /* a, pad, top file */
    assert_true(pi_guid_equal(&f.name, &PI_GUID_VTF));
}

static void large_files(void **state)
{
    (void)state;
    size_t len = FFS_SIZE_SMALL_MAX + 1024;
    uint8_t *f = calloc(1, len + 64);
    /* an FFS2 volume cannot hold it */
    assert_int_equal(ffs_file_finish(f, len, &G1, FFS_TYPE_RAW, 0, 0xff, false), FV_E_TOO_LARGE);
    /* FFS3: EFI_FFS_FILE_HEADER2, ExtendedSize at 24 */
    assert_int_equal(ffs_file_finish(f, len, &G1, FFS_TYPE_RAW, 0, 0xff, true), 32);
    assert_int_equal(f[19] & FFS_ATTR_LARGE_FILE, FFS_ATTR_LARGE_FILE);
    assert_int_equal(f[20] | f[21] | f[22], 0);
    struct ffs_file ff;
    assert_int_equal(ffs_file_parse(f, len, 0xff, true, &ff), FV_OK);
    assert_int_equal(ff.header_bytes, 32);
    assert_int_equal(ff.size, len);
    assert_int_equal(ffs_file_parse(f, len, 0xff, false, &ff), FV_E_LARGE_FILE);
    assert_int_equal(ffs_file_parse(f, len - 1, 0xff, true, &ff), FV_E_FILE_SIZE);
    /* an extended-size section: 0xffffff then the size in 4 more bytes */
    long end = ffs_section_write(f, len + 64, 0, FFS_SECTION_RAW, NULL, FFS_SECTION_SIZE_ESCAPE);
    assert_int_equal(end, FFS_SECTION_SIZE_ESCAPE + 8);
    assert_int_equal(f[0] & f[1] & f[2], 0xff);
    uint64_t pos = 0, err;
    struct ffs_section s;
    assert_int_equal(ffs_section_next(f, (uint64_t)end, &pos, &s, &err), 1);
    assert_int_equal(s.header_bytes, 8);
    assert_int_equal(s.size, (uint64_t)end);
    pos = 0;
    assert_int_equal(ffs_section_next(f, (uint64_t)end - 1, &pos, &s, &err), FV_E_SECTION_SIZE);
    free(f);
}

static void guided_sections(void **state)
{
    (void)state;
    uint8_t b[128];
    static const uint8_t payload[5] = { 9, 8, 7, 6, 5 };
    long end = ffs_guided_section_write(b, sizeof b, 0, &PI_GUID_LZMA,
                                        FFS_GUIDED_PROCESSING_REQUIRED, payload, sizeof payload);
    /* common header, GUID, DataOffset = 24, Attributes = 1, data */
    assert_int_equal(end, 29);
    assert_int_equal(b[0], 29);
    assert_int_equal(b[3], FFS_SECTION_GUID_DEFINED);
    assert_memory_equal(b + 4, PI_GUID_LZMA.b, 16);
    assert_int_equal(b[20], 24);
    assert_int_equal(b[22], 1);
    uint64_t pos = 0, err;
    struct ffs_section s;
    assert_int_equal(ffs_section_next(b, (uint64_t)end, &pos, &s, &err), 1);
    assert_true(pi_guid_equal(&s.guid, &PI_GUID_LZMA));
    assert_int_equal(s.data_offset, 24);
    assert_int_equal(s.guid_attributes, FFS_GUIDED_PROCESSING_REQUIRED);
    assert_memory_equal(b + s.data_offset, payload, 5);
    /* DataOffset inside the header: refused */
    b[20] = 8;
    pos = 0;
    assert_int_equal(ffs_section_next(b, (uint64_t)end, &pos, &s, &err), FV_E_SECTION_SIZE);
    assert_int_equal(err, 0);
    /* a section size smaller than its header */
    b[0] = 3;
    pos = 0;
    assert_int_equal(ffs_section_next(b, (uint64_t)end, &pos, &s, &err), FV_E_SECTION_SIZE);
    /* out of room */
    assert_int_equal(ffs_section_write(b, 8, 2, FFS_SECTION_RAW, payload, 5), FV_E_SPACE);
    /* a UI name of other characters: '?' */
    static const uint8_t ucs2[] = { 'a', 0, 0xe9, 0, 0x42, 0x26, 'z', 0, 0, 0 };
    char t[8];
    assert_int_equal(ffs_ui_text(ucs2, sizeof ucs2, t, sizeof t), 4);
    assert_string_equal(t, "a??z");
    assert_string_equal(ffs_type_name(FFS_TYPE_DRIVER), "DRIVER");
    assert_string_equal(ffs_type_name(0xc5), "OEM");
    assert_string_equal(ffs_section_type_name(FFS_SECTION_PE32), "PE32");
    assert_string_equal(fv_strerror(FV_E_NO_ROOM), "the volume has no room");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(guids),
        cmocka_unit_test(volume_header),
        cmocka_unit_test(files_and_sections),
        cmocka_unit_test(alignment),
        cmocka_unit_test(layout_pads),
        cmocka_unit_test(layout_refusals),
        cmocka_unit_test(volume_top_file),
        cmocka_unit_test(large_files),
        cmocka_unit_test(guided_sections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
