/* format/load_option.c: EFI_LOAD_OPTION and device-path bytes. The expected
 * encodings are written out here byte by byte from the UEFI 2.10 layouts
 * (section 3.1.3 EFI_LOAD_OPTION; section 10.3.5.4 Media File Path node;
 * section 10.3.1 End node), not produced by the code under test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "format/load_option.h"

/* File path node for "\a.efi": type 4, subtype 4, length 4 + 7*2 = 18. */
static const uint8_t file_node[] = {
    0x04, 0x04, 0x12, 0x00, '\\', 0, 'a', 0, '.', 0, 'e', 0, 'f', 0, 'i', 0, 0, 0,
};
static const uint8_t end_node[] = { 0x7f, 0xff, 0x04, 0x00 };

/* A PCI node as a device's path would start (type 1 subtype 1, length 6:
 * function 2, device 0x1f) followed by End. */
static const uint8_t dev_path[] = { 0x01, 0x01, 0x06, 0x00, 0x02, 0x1f, 0x7f, 0xff, 0x04, 0x00 };

static void file_path_after_device(void **state)
{
    (void)state;
    uint8_t out[64];
    long n = device_path_append_file(out, sizeof out, dev_path, sizeof dev_path, "\\a.efi");
    uint8_t want[6 + sizeof file_node + sizeof end_node];
    memcpy(want, dev_path, 6);
    memcpy(want + 6, file_node, sizeof file_node);
    memcpy(want + 6 + sizeof file_node, end_node, sizeof end_node);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(device_path_size(out, (size_t)n), n);

    char text[32];
    assert_int_equal(device_path_file_text(out, (size_t)n, text, sizeof text), 6);
    assert_string_equal(text, "\\a.efi");
    /* no device path: the file node alone */
    n = device_path_append_file(out, sizeof out, NULL, 0, "\\a.efi");
    assert_int_equal(n, sizeof file_node + sizeof end_node);
    assert_memory_equal(out, file_node, sizeof file_node);
    /* one byte short of room */
    assert_int_equal(
        device_path_append_file(out, sizeof want - 1, dev_path, sizeof dev_path, "\\a.efi"),
        PTB_LO_E_SPACE);
    assert_int_equal(device_path_append_file(out, sizeof out, NULL, 0, "\\\x01"), PTB_LO_E_TEXT);
}

static void option_bytes_as_the_spec_lays_them_out(void **state)
{
    (void)state;
    uint8_t dp[sizeof file_node + sizeof end_node];
    memcpy(dp, file_node, sizeof file_node);
    memcpy(dp + sizeof file_node, end_node, sizeof end_node);
    const uint8_t opt[] = { '-', 0, 'x', 0, 0, 0 };
    uint8_t want[] = {
        0x01,      0x00, 0x00, 0x00,         /* Attributes: LOAD_OPTION_ACTIVE */
        sizeof dp, 0x00,                     /* FilePathListLength = 22 */
        'p',       0,    't',  0,    0,   0, /* Description L"pt" */
        0x04,      0x04, 0x12, 0x00,         /* FilePathList: file node */
        '\\',      0,    'a',  0,    '.', 0,    'e',  0,    'f',
        0,         'i',  0,    0,    0,   0x7f, 0xff, 0x04, 0x00, /* End Entire */
        '-',       0,    'x',  0,    0,   0,                      /* OptionalData */
    };
    uint8_t out[128];
    long n =
        load_option_encode(out, sizeof out, PTB_LO_ACTIVE, "pt", dp, sizeof dp, opt, sizeof opt);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(out, want, sizeof want);
    assert_int_equal(load_option_encode(out, sizeof want - 1, PTB_LO_ACTIVE, "pt", dp, sizeof dp,
                                        opt, sizeof opt),
                     PTB_LO_E_SPACE);

    struct load_option lo;
    size_t off;
    assert_int_equal(load_option_decode(want, sizeof want, &lo, &off), 0);
    assert_int_equal(lo.attributes, PTB_LO_ACTIVE);
    assert_true(ucs2_equals(lo.description, lo.desc_chars, "pt"));
    assert_false(ucs2_equals(lo.description, lo.desc_chars, "p"));
    assert_ptr_equal(lo.file_path, want + 12);
    assert_int_equal(lo.file_path_len, sizeof dp);
    assert_ptr_equal(lo.optional, want + 12 + sizeof dp);
    assert_int_equal(lo.optional_len, sizeof opt);
    char text[8];
    assert_int_equal(ucs2_to_ascii(lo.optional, lo.optional_len, text, sizeof text), 2);
    assert_string_equal(text, "-x");
}

static void empty_description_and_no_optional_data(void **state)
{
    (void)state;
    const uint8_t want[] = { 0x09, 0x00, 0x00, 0x00, 0x04, 0x00, 0, 0, 0x7f, 0xff, 0x04, 0x00 };
    uint8_t out[32];
    long n = load_option_encode(out, sizeof out, PTB_LO_ACTIVE | PTB_LO_HIDDEN, "", end_node,
                                sizeof end_node, NULL, 0);
    assert_int_equal(n, sizeof want);
    assert_memory_equal(out, want, sizeof want);
    struct load_option lo;
    size_t off;
    assert_int_equal(load_option_decode(want, sizeof want, &lo, &off), 0);
    assert_int_equal(lo.desc_chars, 0);
    assert_int_equal(lo.optional_len, 0);
}

static void bad_options_report_where(void **state)
{
    (void)state;
    struct load_option lo;
    size_t off;
    const uint8_t short_head[] = { 1, 0, 0, 0, 4 };
    assert_int_equal(load_option_decode(short_head, sizeof short_head, &lo, &off), PTB_LO_E_SHORT);
    /* description never ends */
    const uint8_t no_nul[] = { 1, 0, 0, 0, 4, 0, 'a', 0, 'b', 0, 'c' };
    assert_int_equal(load_option_decode(no_nul, sizeof no_nul, &lo, &off), PTB_LO_E_DESC);
    assert_int_equal(off, 10);
    /* FilePathListLength 8 but only 4 bytes follow */
    const uint8_t long_path[] = { 1, 0, 0, 0, 8, 0, 0, 0, 0x7f, 0xff, 4, 0 };
    assert_int_equal(load_option_decode(long_path, sizeof long_path, &lo, &off), PTB_LO_E_PATHLEN);
    assert_int_equal(off, 4);
    /* a node of length 2 (below its own header) */
    const uint8_t tiny_node[] = { 1, 0, 0, 0, 4, 0, 0, 0, 0x04, 0x04, 2, 0 };
    assert_int_equal(load_option_decode(tiny_node, sizeof tiny_node, &lo, &off), PTB_LO_E_NODE);
    assert_int_equal(off, 8);
    /* a node running past the list */
    const uint8_t past[] = { 1, 0, 0, 0, 4, 0, 0, 0, 0x04, 0x04, 6, 0, 0, 0 };
    assert_int_equal(load_option_decode(past, sizeof past, &lo, &off), PTB_LO_E_NODE);
    /* a list of whole nodes but no End */
    const uint8_t no_end[] = { 1, 0, 0, 0, 4, 0, 0, 0, 0x01, 0x01, 4, 0 };
    assert_int_equal(load_option_decode(no_end, sizeof no_end, &lo, &off), PTB_LO_E_NOEND);
    /* every truncation of a good option fails cleanly, none reads past len */
    uint8_t good[64];
    long n = load_option_encode(good, sizeof good, 1, "d", end_node, sizeof end_node, NULL, 0);
    assert_true(n > 0);
    for (long cut = 0; cut < n; cut++)
        assert_true(load_option_decode(good, (size_t)cut, &lo, &off) < 0);
}

static void names_and_orders(void **state)
{
    (void)state;
    assert_int_equal(load_option_number("Driver0000", "Driver"), 0);
    assert_int_equal(load_option_number("Driver00AF", "Driver"), 0xaf);
    assert_int_equal(load_option_number("Driver00af", "Driver"),
                     -1); /* firmware writes uppercase */
    assert_int_equal(load_option_number("Driver000", "Driver"), -1);
    assert_int_equal(load_option_number("Driver00000", "Driver"), -1);
    assert_int_equal(load_option_number("Boot0001", "Driver"), -1);
    assert_int_equal(load_option_number("DriverOrder", "Driver"), -1);
    char name[16];
    load_option_name(name, sizeof name, "Driver", 0x1a);
    assert_string_equal(name, "Driver001A");

    uint16_t order[4] = { 3, 1, 3, 2 };
    long n = load_option_order_prepend(order, 4, 4, 3); /* 3 moves to the front, once */
    assert_int_equal(n, 3);
    assert_int_equal(order[0], 3);
    assert_int_equal(order[1], 1);
    assert_int_equal(order[2], 2);
    n = load_option_order_prepend(order, 3, 4, 7);
    assert_int_equal(n, 4);
    assert_int_equal(order[0], 7);
    assert_int_equal(load_option_order_prepend(order, 4, 4, 9), -1);
    assert_int_equal(load_option_order_remove(order, 4, 1), 3);
    assert_int_equal(order[0], 7);
    assert_int_equal(order[1], 3);
    assert_int_equal(order[2], 2);
}

static bool used_below_three(void *ctx, unsigned n)
{
    (void)ctx;
    return n < 3;
}

static void free_number(void **state)
{
    (void)state;
    assert_int_equal(load_option_free_number(used_below_three, NULL), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(file_path_after_device),
        cmocka_unit_test(option_bytes_as_the_spec_lays_them_out),
        cmocka_unit_test(empty_description_and_no_optional_data),
        cmocka_unit_test(bad_options_report_where),
        cmocka_unit_test(names_and_orders),
        cmocka_unit_test(free_number),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
