/* libFuzzer target over the image and boot-option parsers of the capture
 * path: arbitrary bytes through pe_info_parse() (format/pe_info.h) as an image
 * in memory and as a file, through elf_info_parse() and every program header
 * it then gives (format/elf_info.h, --elf), and through load_option_decode() with the
 * device-path helpers (format/load_option.h). Nothing may be read outside the
 * buffer (ASan/UBSan); what is returned stays inside it: names are
 * NUL-terminated, a decoded option's parts lie within the bytes, one after
 * the other, and errors carry an offset inside them. */
#include <stdlib.h>
#include <string.h>

#include "format/elf_info.h"
#include "format/load_option.h"
#include "format/pe_info.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_pe(const uint8_t *data, size_t size, enum pe_layout layout)
{
    struct pe_info pi;
    int rc = pe_info_parse(data, size, layout, &pi);
    if (rc > 0 || rc < PE_INFO_E_SECTIONS || !pe_info_strerror(rc))
        abort();
    if (rc < 0)
        return;
    if (!memchr(pi.name, 0, sizeof pi.name) || !memchr(pi.pdb_path, 0, sizeof pi.pdb_path))
        abort();
    if (pi.name[0] && !pi.codeview)
        abort();
}

static void check_elf(const uint8_t *data, size_t size)
{
    struct elf_info ei;
    int rc = elf_info_parse(data, size, &ei);
    if (rc > 0 || rc < ELF_INFO_E_XNUM || !elf_info_strerror(rc))
        abort();
    if (rc < 0)
        return;
    if (ei.phnum && (ei.phoff > size || (uint64_t)ei.phnum * ei.phentsize > size - ei.phoff))
        abort();
    for (uint32_t i = 0; i < ei.phnum; i++) {
        struct elf_segment seg;
        elf_info_segment(&ei, data, i, &seg);
    }
}

static bool inside(const uint8_t *p, size_t n, const uint8_t *buf, size_t len)
{
    return p >= buf && (size_t)(p - buf) <= len && n <= len - (size_t)(p - buf);
}

static void check_option(const uint8_t *data, size_t size)
{
    struct load_option lo;
    size_t err_off = SIZE_MAX;
    char text[256];
    int rc = load_option_decode(data, size, &lo, &err_off);
    if (rc < 0) {
        if (rc < PTB_LO_E_TEXT || err_off > size || !load_option_strerror(rc))
            abort();
        return;
    }
    if (!inside(lo.description, 2 * lo.desc_chars + 2, data, size) ||
        !inside(lo.file_path, lo.file_path_len, data, size) ||
        !inside(lo.optional, lo.optional_len, data, size) ||
        lo.description != data + PTB_LO_HEAD_BYTES ||
        lo.file_path != lo.description + 2 * lo.desc_chars + 2 ||
        lo.optional != lo.file_path + lo.file_path_len ||
        lo.optional + lo.optional_len != data + size)
        abort();
    long dp = device_path_size(lo.file_path, lo.file_path_len);
    if (dp > (long)lo.file_path_len || dp == 0)
        abort();
    long n = device_path_file_text(lo.file_path, lo.file_path_len, text, sizeof text);
    if (n >= (long)sizeof text || (n >= 0 && strlen(text) != (size_t)n))
        abort();
    n = ucs2_to_ascii(lo.description, 2 * lo.desc_chars, text, sizeof text);
    if (n >= 0 && ((size_t)n != lo.desc_chars || strlen(text) != (size_t)n))
        abort();
    n = ucs2_to_ascii(lo.optional, lo.optional_len, text, sizeof text);
    if (n >= (long)sizeof text)
        abort();
    /* a decoded option's text, encoded again, decodes to the same parts */
    if (dp > 0 && ucs2_to_ascii(lo.description, 2 * lo.desc_chars, text, sizeof text) >= 0) {
        static uint8_t again[1 << 17];
        long m = load_option_encode(again, sizeof again, lo.attributes, text, lo.file_path,
                                    lo.file_path_len, lo.optional, lo.optional_len);
        struct load_option lo2;
        if (m != (long)size || memcmp(again, data, size) ||
            load_option_decode(again, (size_t)m, &lo2, &err_off) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* copies of exactly size bytes: ASan sees any read past the end */
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    check_pe(buf, size, PE_LAYOUT_MEMORY);
    check_pe(buf, size, PE_LAYOUT_FILE);
    check_elf(buf, size);
    check_option(buf, size);
    free(buf);
    return 0;
}
