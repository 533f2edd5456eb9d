/* host/flow_image.c: page dumps as the flow tools see them. A dump is
 * mapped, and runs of pages that follow each other both in the file and in
 * memory are used in place; every other arrangement is copied. Whatever
 * the file's order, every address must read the bytes of its page, and a
 * raw file laid over mapped pages must win where it overlaps. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/flow_image.h"

#define PAGE 4096u

static char dir[64];

/* writes PREFIX.dump (page k filled with its fill byte) and PREFIX.addr */
static void write_dump(const char *prefix, const uint64_t *addr, const uint8_t *fill, size_t n)
{
    char path[128];
    uint8_t page[PAGE];
    snprintf(path, sizeof path, "%s.dump", prefix);
    FILE *d = fopen(path, "wb");
    snprintf(path, sizeof path, "%s.addr", prefix);
    FILE *a = fopen(path, "wb");
    assert_non_null(d);
    assert_non_null(a);
    for (size_t k = 0; k < n; k++) {
        memset(page, fill[k], sizeof page);
        page[0] = (uint8_t)k; /* which page of the file */
        assert_int_equal(fwrite(page, 1, PAGE, d), PAGE);
        for (unsigned j = 0; j < 8; j++)
            fputc((int)(addr[k] >> (8 * j)) & 0xff, a);
    }
    fclose(d);
    fclose(a);
}

static void expect_page(struct flow_image *img, uint64_t addr, uint8_t file_index, uint8_t fill)
{
    uint8_t got[PAGE];
    assert_int_equal(flow_image_read(img, addr, got, PAGE), PAGE);
    assert_int_equal(got[0], file_index);
    assert_int_equal(got[1], fill);
    assert_int_equal(got[PAGE - 1], fill);
}

static void test_orders(void **state)
{
    (void)state;
    char prefix[128];
    snprintf(prefix, sizeof prefix, "%s/p", dir);
    /* a run in file order (0x10000..0x12000), a run in memory whose pages
     * are out of file order (0x20000: file pages 4, 3, 5), a lone page
     * (0x30000) */
    const uint64_t addr[] = { 0x10000, 0x11000, 0x12000, 0x21000, 0x20000, 0x22000, 0x30000 };
    const uint8_t fill[] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6 };
    write_dump(prefix, addr, fill, 7);
    struct flow_image img;
    flow_image_init(&img);
    assert_int_equal(flow_image_add_pages(&img, prefix), 0);
    expect_page(&img, 0x10000, 0, 0xa0);
    expect_page(&img, 0x11000, 1, 0xa1);
    expect_page(&img, 0x12000, 2, 0xa2);
    expect_page(&img, 0x20000, 4, 0xa4);
    expect_page(&img, 0x21000, 3, 0xa3);
    expect_page(&img, 0x22000, 5, 0xa5);
    expect_page(&img, 0x30000, 6, 0xa6);
    /* indexed in place, never copied: a run in file order is one segment
     * in the dump's bytes; pages out of file order are a segment each,
     * still in the dump's bytes */
    uint64_t base;
    size_t size;
    const uint8_t *file = img.files[0].data, *p;
    assert_int_equal(img.nfiles, 1);
    assert_int_equal(img.files[0].mapped, input_file_how() == INPUT_MAP);
    assert_non_null(p = flow_image_map(&img, 0x11234, &base, &size));
    assert_true(base == 0x10000 && size == 3 * PAGE && p == file);
    assert_int_equal(img.nsegs, 5);
    for (size_t i = 0; i < img.nsegs; i++)
        assert_null(img.segs[i].owned);
    assert_non_null(p = flow_image_ptr(&img, 0x21000, &size));
    assert_true(size == PAGE && p == file + 3 * PAGE);
    assert_non_null(p = flow_image_ptr(&img, 0x20010, &size));
    assert_true(size == PAGE - 0x10 && p == file + 4 * PAGE + 0x10);
    /* the map callback gives the pages that touch as one region (the
     * decoder's blocks then end where libipt's do), copied once, when
     * first asked for, and only those */
    assert_int_equal(img.njoined, 0);
    assert_non_null(p = flow_image_map(&img, 0x21000, &base, &size));
    assert_true(base == 0x20000 && size == 3 * PAGE);
    assert_true(p[0] == 4 && p[1] == 0xa4 && p[PAGE] == 3 && p[PAGE + 1] == 0xa3 &&
                p[2 * PAGE] == 5);
    assert_true(flow_image_map(&img, 0x22fff, &base, &size) == p && base == 0x20000);
    assert_int_equal(img.njoined, 1);
    assert_non_null(flow_image_map(&img, 0x30000, &base, &size));
    assert_true(base == 0x30000 && size == PAGE);
    assert_int_equal(img.njoined, 1);
    /* a read goes on across pages that touch in memory but not in the file */
    uint8_t across[16];
    assert_int_equal(flow_image_read(&img, 0x20ff8, across, 16), 16);
    assert_true(across[0] == 0xa4 && across[7] == 0xa4 && across[8] == 3 && across[9] == 0xa3);
    assert_int_equal(flow_image_read(&img, 0x22ff8, across, 16), 8);
    uint8_t b;
    assert_int_equal(flow_image_read(&img, 0x13000, &b, 1), 0);
    flow_image_free(&img);
    /* a repeated address is refused (format/code_image.h), mapped or not */
    const uint64_t dup[] = { 0x10000, 0x11000, 0x10000 };
    write_dump(prefix, dup, fill, 3);
    flow_image_init(&img);
    assert_int_equal(flow_image_add_pages(&img, prefix), -1);
    assert_non_null(strstr(img.err, prefix));
    flow_image_free(&img);
}

/* raw bytes over mapped pages: merged, the raw bytes win */
static void test_raw_over_mapped(void **state)
{
    (void)state;
    char prefix[128], raw[160], spec[200];
    snprintf(prefix, sizeof prefix, "%s/q", dir);
    const uint64_t addr[] = { 0x40000, 0x41000 };
    const uint8_t fill[] = { 0xb0, 0xb1 };
    write_dump(prefix, addr, fill, 2);
    snprintf(raw, sizeof raw, "%s/raw.bin", dir);
    FILE *r = fopen(raw, "wb");
    assert_non_null(r);
    for (int i = 0; i < 16; i++)
        fputc(0xee, r);
    fclose(r);
    struct flow_image img;
    flow_image_init(&img);
    assert_int_equal(flow_image_add_pages(&img, prefix), 0);
    snprintf(spec, sizeof spec, "%s:0x40ff8", raw);
    assert_int_equal(flow_image_add_raw(&img, spec), 0);
    uint8_t got[32];
    assert_int_equal(flow_image_read(&img, 0x40ff0, got, 32), 32);
    for (int i = 0; i < 8; i++)
        assert_int_equal(got[i], 0xb0);
    for (int i = 8; i < 24; i++)
        assert_int_equal(got[i], 0xee);
    assert_int_equal(got[24], 0xb1);
    /* the pages around it keep their bytes (page 0 starts with its index) */
    assert_int_equal(flow_image_read(&img, 0x40000, got, 2), 2);
    assert_true(got[0] == 0 && got[1] == 0xb0);
    flow_image_free(&img);
    /* the file is unchanged (the mapping was private, the merge a copy) */
    snprintf(spec, sizeof spec, "%s.dump", prefix);
    FILE *d = fopen(spec, "rb");
    assert_non_null(d);
    assert_int_equal(fseek(d, 0xff8, SEEK_SET), 0);
    assert_int_equal(fgetc(d), 0xb0);
    fclose(d);
}

static void test_map_file(void **state)
{
    (void)state;
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/t.pt", dir);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("trace bytes", f);
    fclose(f);
    uint8_t *buf;
    size_t size;
    int mapped = flow_map_file(path, &buf, &size, err, sizeof err);
    assert_int_equal(mapped, 1);
    assert_int_equal(size, 11);
    assert_memory_equal(buf, "trace bytes", 11);
    flow_release_file(buf, size, mapped);
    /* an empty file is read (nothing to map) */
    f = fopen(path, "wb");
    fclose(f);
    assert_int_equal(flow_map_file(path, &buf, &size, err, sizeof err), 0);
    assert_int_equal(size, 0);
    flow_release_file(buf, size, 0);
    snprintf(path, sizeof path, "%s/missing", dir);
    assert_int_equal(flow_map_file(path, &buf, &size, err, sizeof err), -1);
    assert_non_null(strstr(err, "missing"));
}

/* the read path (pipes; PTBOOT_INPUT=read) gives what the mapped one does */
static void test_orders_read(void **state)
{
    setenv("PTBOOT_INPUT", "read", 1);
    assert_int_equal(input_file_how(), INPUT_READ);
    test_orders(state);
    test_raw_over_mapped(state);
    unsetenv("PTBOOT_INPUT");
    assert_int_equal(input_file_how(), INPUT_MAP);
}

/* a FIFO cannot be mapped: read until its writer closes, the same bytes */
static void test_fifo(void **state)
{
    (void)state;
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *w = fopen(path, "wb");
        for (int i = 0; w && i < 100000; i++)
            fputc(i & 0xff, w);
        _exit(w && fclose(w) == 0 ? 0 : 1);
    }
    struct input_file f;
    assert_int_equal(input_file_open(&f, path, INPUT_MAP, err, sizeof err), 0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    assert_int_equal(f.mapped, 0);
    assert_int_equal(f.size, 100000);
    for (int i = 0; i < 100000; i++)
        if (f.data[i] != (i & 0xff))
            fail_msg("byte %d", i);
    assert_int_equal(f.data[f.size], 0);
    input_file_close(&f);
    /* a directory is said to be one */
    assert_int_equal(input_file_open(&f, dir, INPUT_MAP, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
}

/* pages well behind a sequential reader are given back, and read again
 * from the file if touched (a sparse 96 MiB file: no disk used) */
static void test_done(void **state)
{
    (void)state;
    char path[128], err[256];
    const size_t size = 96u << 20;
    snprintf(path, sizeof path, "%s/big.pt", dir);
    FILE *w = fopen(path, "wb");
    assert_non_null(w);
    assert_int_equal(fseek(w, 0x123, SEEK_SET), 0);
    fputc(0x5a, w);
    assert_int_equal(fseek(w, (long)size - 1, SEEK_SET), 0);
    fputc(0xa5, w);
    assert_int_equal(fclose(w), 0);
    struct input_file f;
    assert_int_equal(input_file_open(&f, path, INPUT_MAP, err, sizeof err), 0);
    assert_int_equal(f.mapped, 1);
    assert_int_equal(f.data[0x123], 0x5a);
    input_file_done(&f, 1u << 20); /* too close to the start: kept */
    assert_int_equal(f.released, 0);
    input_file_done(&f, size - 1);
    assert_true(f.released > 0 && f.released <= size - (16u << 20));
    assert_int_equal(f.data[0x123], 0x5a);
    assert_int_equal(f.data[size - 1], 0xa5);
    input_file_close(&f);
    /* a read buffer is kept whole */
    assert_int_equal(input_file_open(&f, path, INPUT_READ, err, sizeof err), 0);
    input_file_done(&f, size - 1);
    assert_int_equal(f.released, 0);
    assert_int_equal(f.data[0x123], 0x5a);
    input_file_close(&f);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_flow_image.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders),   cmocka_unit_test(test_raw_over_mapped),
        cmocka_unit_test(test_map_file), cmocka_unit_test(test_orders_read),
        cmocka_unit_test(test_fifo),     cmocka_unit_test(test_done),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[96];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        rc = 1;
    return rc;
}
