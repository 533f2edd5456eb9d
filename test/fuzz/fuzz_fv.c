/* libFuzzer target over the firmware-volume readers and writers: arbitrary
 * bytes as a flash image through format/fv.c and format/ffs.c directly
 * (every volume, file and section; errors carry offsets inside what was
 * read; files laid out again where the volume was valid read back as the
 * same files) and through host/fv_image.c (the tree, LZMA sections unpacked
 * with a small bound), adding a file to the first volume of files and
 * writing the image again: either a reason is given or the result reads
 * back whole, at the input's size.
 *
 * Seeds: FUZZ_FV_SEEDS=DIR writes small images built here with the
 * writers under test (a DXE-like volume; the same nested in an LZMA section
 * of an outer volume, as OVMF does; an FFS3 volume; a variable store), and
 * exits; test/fuzz/fuzz_fv.sh also adds OVMF's SEC volume. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ffs.h"
#include "format/fv.h"
#include "host/fv_image.h"
#include "host/fv_lzma.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MAX_FILES 4096

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void walk_sections(const uint8_t *list, uint64_t len, int depth)
{
    uint64_t pos = 0, err = 0, last = 0;
    struct ffs_section s;
    for (int guard = 0;; guard++) {
        int rc = ffs_section_next(list, len, &pos, &s, &err);
        if (rc <= 0) {
            check(rc == 0 || (err <= len && fv_strerror(rc)));
            return;
        }
        check(guard < (int)len && s.offset >= last && s.offset + s.size <= len &&
              s.size >= s.header_bytes);
        check(s.data_offset >= s.header_bytes && s.data_offset <= s.size);
        check(pos == s.offset + s.size);
        last = pos;
        if (s.type == FFS_SECTION_USER_INTERFACE) {
            char t[32];
            size_t n =
                ffs_ui_text(list + s.offset + s.data_offset, s.size - s.data_offset, t, sizeof t);
            check(n < sizeof t && strlen(t) == n);
        }
        if (depth < 4 && (s.type == FFS_SECTION_COMPRESSION ||
                          (s.type == FFS_SECTION_GUID_DEFINED &&
                           !(s.guid_attributes & FFS_GUIDED_PROCESSING_REQUIRED))))
            walk_sections(list + s.offset + s.data_offset, s.size - s.data_offset, depth + 1);
    }
}

static struct fv_layout_file files[MAX_FILES];
static struct ffs_file seen[MAX_FILES];

/* One volume at p: walk, and lay its files out again into a copy. */
static void check_volume(const uint8_t *p, uint64_t avail)
{
    struct fv_volume v;
    if (fv_volume_parse(p, avail, &v) != FV_OK)
        return;
    check(v.length <= avail && v.header_length <= v.length && v.files_offset <= v.length);
    if (!fv_has_files(&v))
        return;
    uint64_t pos = v.files_offset, err = 0, prev = 0;
    size_t n = 0;
    bool all_valid = true;
    int rc;
    struct ffs_file f;
    while ((rc = fv_file_next(p, &v, &pos, &f, &err)) == 1) {
        check(f.offset >= prev && f.offset % FFS_FILE_ALIGN == 0 && f.size >= f.header_bytes &&
              f.offset + f.size <= v.length && pos == f.offset + f.size);
        prev = pos;
        if (f.state == FFS_FILE_VALID && f.type != FFS_TYPE_PAD && f.type != FFS_TYPE_RAW)
            walk_sections(p + f.offset + f.header_bytes, f.size - f.header_bytes, 0);
        all_valid &= f.state == FFS_FILE_VALID;
        if (f.type != FFS_TYPE_PAD && n < MAX_FILES) {
            files[n] = (struct fv_layout_file){ p + f.offset, f.size, f.offset };
            seen[n++] = f;
        }
    }
    if (rc < 0) {
        check(err <= v.length && fv_strerror(rc));
        return;
    }
    if (!all_valid || n == MAX_FILES)
        return;
    uint8_t *copy = malloc(v.length ? v.length : 1);
    memcpy(copy, p, v.length);
    struct fv_layout_result r;
    rc = fv_layout(copy, &v, v.files_offset, files, n, &r);
    if (rc == FV_OK) {
        /* the same files, in order, reading back whole */
        struct fv_volume v2;
        check(fv_volume_parse(copy, v.length, &v2) == FV_OK);
        pos = v2.files_offset;
        size_t k = 0;
        while ((rc = fv_file_next(copy, &v2, &pos, &f, &err)) == 1) {
            if (f.type == FFS_TYPE_PAD)
                continue;
            check(k < n && pi_guid_equal(&f.name, &seen[k].name) && f.size == seen[k].size &&
                  f.type == seen[k].type && (f.offset + f.header_bytes) % f.data_align == 0);
            k++;
        }
        check(rc == 0 && k == n);
    } else {
        check(rc == FV_E_NO_ROOM || rc == FV_E_FIXED || rc == FV_E_TOO_LARGE);
    }
    free(copy);
}

static int first_files_volume(struct fv_node *n, void *ctx)
{
    if (n->kind == FV_NODE_VOLUME && n->parsed && fv_has_files(&n->vol)) {
        *(struct fv_node **)ctx = n;
        return 1;
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    for (size_t off = 0; off + FV_HEADER_FIXED_BYTES <= size; off += 8)
        check_volume(buf + off, size - off);

    struct fv_image im;
    fv_image_load(&im, buf, size, 1u << 20);
    struct fv_node *vol = NULL;
    if (!im.errors && fv_image_walk(&im, first_files_volume, &vol)) {
        uint8_t file[64];
        static const struct pi_guid name = { { 0x5a, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
                                               15 } };
        long end = ffs_section_write(file + FFS_HEADER_BYTES, sizeof file - FFS_HEADER_BYTES, 0,
                                     FFS_SECTION_RAW, (const uint8_t *)"fuzz", 4);
        check(end > 0);
        check(ffs_file_finish(file, FFS_HEADER_BYTES + (uint64_t)end, &name, FFS_TYPE_FREEFORM, 0,
                              vol->vol.erased, vol->vol.fs == FV_FS_FFS3) == FFS_HEADER_BYTES);
        check(fv_volume_add(vol, file, FFS_HEADER_BYTES + (uint64_t)end) != NULL);
        struct fv_build b;
        char err[400] = "";
        if (fv_image_build(&im, &b, err, sizeof err) == 0) {
            check(b.len == size);
            free(b.out);
        } else {
            check(err[0] != '\0');
        }
    }
    fv_image_free(&im);
    free(buf);
    return 0;
}

/* ---- seeds ---- */

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

/* A volume header (PI 1.8 Vol. 3 section 3.2.1) over len erased bytes. */
static void seed_volume(uint8_t *v, uint32_t len, const struct pi_guid *fs)
{
    memset(v, 0xff, len);
    memset(v, 0, 72);
    memcpy(v + 16, fs->b, 16);
    put32(v + 32, len);
    memcpy(v + 40, "_FVH", 4);
    put32(v + 44, 0x0004feff);
    put16(v + 48, 72);
    v[55] = 2;
    put32(v + 56, len / 512);
    put32(v + 60, 512);
    fv_header_checksum_fix(v, 72);
}

/* A file of sections written by the caller into list[0..len). */
static size_t seed_file(uint8_t *out, const struct pi_guid *name, uint8_t type, uint8_t attr,
                        const uint8_t *list, size_t len)
{
    memcpy(out + FFS_HEADER_BYTES, list, len);
    ffs_file_finish(out, FFS_HEADER_BYTES + len, name, type, attr, 0xff, false);
    return FFS_HEADER_BYTES + len;
}

static void seed_write(const char *dir, const char *name, const uint8_t *p, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(p, 1, n, f) != n || fclose(f))
        exit(1);
}

/* An 8 KiB volume: a driver (depex, code, UI, RAW), a 512-byte aligned
 * file after a pad. */
static size_t seed_inner(uint8_t *v)
{
    static const struct pi_guid a = { { 0xa1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                        16 } };
    static const struct pi_guid b = { { 0xb1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                        16 } };
    uint8_t list[512], f1[600], f2[600];
    static const uint8_t depex[] = { 0x06, 0x08 };
    uint8_t code[64];
    memset(code, 0xc3, sizeof code);
    long e = ffs_section_write(list, sizeof list, 0, FFS_SECTION_DXE_DEPEX, depex, sizeof depex);
    e = ffs_section_write(list, sizeof list, (size_t)e, FFS_SECTION_PE32, code, sizeof code);
    e = ffs_ui_section_write(list, sizeof list, (size_t)e, "SeedDxe");
    e = ffs_section_write(list, sizeof list, (size_t)e, FFS_SECTION_RAW, (const uint8_t *)"words",
                          5);
    size_t n1 = seed_file(f1, &a, FFS_TYPE_DRIVER, FFS_ATTR_CHECKSUM, list, (size_t)e);
    e = ffs_section_write(list, sizeof list, 0, FFS_SECTION_RAW, code, 40);
    size_t n2 = seed_file(f2, &b, FFS_TYPE_FREEFORM, 0x18, list, (size_t)e);
    seed_volume(v, 8192, &PI_GUID_FFS2);
    struct fv_volume fv;
    fv_volume_parse(v, 8192, &fv);
    struct fv_layout_file items[2] = { { f1, n1, 0 }, { f2, n2, 0 } };
    struct fv_layout_result r;
    if (fv_layout(v, &fv, fv.files_offset, items, 2, &r))
        exit(1);
    return 8192;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *dir = getenv("FUZZ_FV_SEEDS");
    if (!dir)
        return 0;
    static uint8_t inner[8192], outer[16384], list[16384], file[16384];
    size_t n = seed_inner(inner);
    seed_write(dir, "volume", inner, n);
    /* OVMF's nesting: an FV_IMAGE file, an LZMA section, a FIRMWARE_VOLUME_IMAGE section */
    long e = ffs_section_write(list, sizeof list, 0, FFS_SECTION_FIRMWARE_VOLUME_IMAGE, inner, n);
    uint8_t *packed;
    size_t packed_len;
    char err[160];
    if (fv_lzma_encode(NULL, list, (size_t)e, &packed, &packed_len, err, sizeof err))
        exit(1);
    long g = ffs_guided_section_write(file, sizeof file, 0, &PI_GUID_LZMA,
                                      FFS_GUIDED_PROCESSING_REQUIRED, packed, packed_len);
    free(packed);
    static const struct pi_guid fvf = { { 0xf1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
                                          16 } };
    uint8_t whole[16384];
    size_t fl = seed_file(whole, &fvf, FFS_TYPE_FIRMWARE_VOLUME_IMAGE, 0, file, (size_t)g);
    seed_volume(outer, sizeof outer, &PI_GUID_FFS2);
    struct fv_volume fv;
    fv_volume_parse(outer, sizeof outer, &fv);
    struct fv_layout_file item = { whole, fl, 0 };
    struct fv_layout_result r;
    if (fv_layout(outer, &fv, fv.files_offset, &item, 1, &r))
        exit(1);
    seed_write(dir, "nested-lzma", outer, sizeof outer);
    /* FFS3 and a variable store */
    seed_volume(outer, 4096, &PI_GUID_FFS3);
    seed_write(dir, "ffs3-empty", outer, 4096);
    seed_volume(outer, 4096, &PI_GUID_NV_DATA);
    seed_write(dir, "nvram", outer, 4096);
    exit(0);
}
