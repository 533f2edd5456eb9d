#include "format/load_option.h"
#include "format/text.h"

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static bool printable(unsigned c)
{
    return c >= 0x20 && c <= 0x7e;
}

long device_path_size(const uint8_t *dp, size_t max)
{
    size_t off = 0;
    /* Each node is at least 4 bytes, so this loop runs at most max/4 times. */
    while (off + PTB_DP_HEADER_BYTES <= max) {
        uint16_t n = get16(dp + off + 2);
        if (n < PTB_DP_HEADER_BYTES || n > max - off)
            return PTB_LO_E_NODE;
        uint8_t type = dp[off];
        off += n;
        if (type == PTB_DP_TYPE_END)
            return (long)off;
    }
    return off == max ? PTB_LO_E_NOEND : PTB_LO_E_NODE;
}

int load_option_decode(const uint8_t *buf, size_t len, struct load_option *lo, size_t *err_off)
{
    bytes_zero(lo, sizeof *lo);
    *err_off = 0;
    if (len < PTB_LO_HEAD_BYTES)
        return PTB_LO_E_SHORT;
    lo->attributes = get32(buf);
    size_t path_len = get16(buf + 4);
    /* Description: CHAR16s up to and including a NUL (section 3.1.3). */
    size_t off = PTB_LO_HEAD_BYTES;
    for (;;) {
        if (off + 2 > len) {
            *err_off = off;
            return PTB_LO_E_DESC;
        }
        if (get16(buf + off) == 0)
            break;
        off += 2;
    }
    lo->description = buf + PTB_LO_HEAD_BYTES;
    lo->desc_chars = (off - PTB_LO_HEAD_BYTES) / 2;
    off += 2;
    if (path_len > len - off) {
        *err_off = 4;
        return PTB_LO_E_PATHLEN;
    }
    /* The list must at least hold one well-formed instance: a firmware
     * walks it node by node (section 10.2). */
    long first = device_path_size(buf + off, path_len);
    if (first < 0) {
        *err_off = off;
        return (int)first;
    }
    lo->file_path = buf + off;
    lo->file_path_len = path_len;
    lo->optional = buf + off + path_len;
    lo->optional_len = len - off - path_len;
    return PTB_LO_OK;
}

long load_option_encode(uint8_t *out, size_t cap, uint32_t attributes, const char *desc,
                        const uint8_t *dp, size_t dp_len, const uint8_t *optional,
                        size_t optional_len)
{
    size_t dl = text_len(desc);
    for (size_t i = 0; i < dl; i++)
        if (!printable((unsigned char)desc[i]))
            return PTB_LO_E_TEXT;
    if (dp_len > 0xffff)
        return PTB_LO_E_SPACE;
    size_t total = PTB_LO_HEAD_BYTES + 2 * (dl + 1) + dp_len + optional_len;
    if (total > cap)
        return PTB_LO_E_SPACE;
    put32(out, attributes);
    put16(out + 4, (uint16_t)dp_len);
    uint8_t *p = out + PTB_LO_HEAD_BYTES;
    for (size_t i = 0; i <= dl; i++, p += 2)
        put16(p, (uint16_t)(unsigned char)desc[i]);
    if (dp_len)
        bytes_copy(p, dp, dp_len);
    p += dp_len;
    if (optional_len)
        bytes_copy(p, optional, optional_len);
    return (long)total;
}

long device_path_append_file(uint8_t *out, size_t cap, const uint8_t *dev, size_t dev_len,
                             const char *path)
{
    size_t keep = 0;
    if (dev_len) {
        long n = device_path_size(dev, dev_len);
        if (n < 0)
            return n;
        keep = (size_t)n - PTB_DP_HEADER_BYTES; /* drop the End node */
    }
    size_t pl = text_len(path);
    for (size_t i = 0; i < pl; i++)
        if (!printable((unsigned char)path[i]))
            return PTB_LO_E_TEXT;
    size_t node = PTB_DP_HEADER_BYTES + 2 * (pl + 1);
    if (node > 0xffff)
        return PTB_LO_E_TEXT;
    size_t total = keep + node + PTB_DP_HEADER_BYTES;
    if (total > cap)
        return PTB_LO_E_SPACE;
    bytes_move(out, dev, keep);
    uint8_t *p = out + keep;
    p[0] = PTB_DP_TYPE_MEDIA;
    p[1] = PTB_DP_SUBTYPE_FILE_PATH;
    put16(p + 2, (uint16_t)node);
    p += PTB_DP_HEADER_BYTES;
    for (size_t i = 0; i <= pl; i++, p += 2)
        put16(p, (uint16_t)(unsigned char)path[i]);
    p[0] = PTB_DP_TYPE_END;
    p[1] = PTB_DP_SUBTYPE_END_ENTIRE;
    put16(p + 2, PTB_DP_HEADER_BYTES);
    return (long)total;
}

long device_path_file_text(const uint8_t *dp, size_t len, char *out, size_t cap)
{
    const uint8_t *last = NULL;
    size_t last_len = 0, off = 0;
    if (cap)
        out[0] = '\0';
    while (off + PTB_DP_HEADER_BYTES <= len) {
        uint16_t n = get16(dp + off + 2);
        if (n < PTB_DP_HEADER_BYTES || n > len - off)
            return PTB_LO_E_NODE;
        if (dp[off] == PTB_DP_TYPE_END)
            break;
        if (dp[off] == PTB_DP_TYPE_MEDIA && dp[off + 1] == PTB_DP_SUBTYPE_FILE_PATH) {
            last = dp + off + PTB_DP_HEADER_BYTES;
            last_len = n - PTB_DP_HEADER_BYTES;
        }
        off += n;
    }
    if (!last)
        return 0;
    return ucs2_to_ascii(last, last_len, out, cap);
}

bool ucs2_equals(const uint8_t *ucs2, size_t chars, const char *ascii)
{
    size_t n = text_len(ascii);
    if (n != chars)
        return false;
    for (size_t i = 0; i < n; i++)
        if (get16(ucs2 + 2 * i) != (unsigned char)ascii[i])
            return false;
    return true;
}

long ucs2_from_ascii(uint8_t *out, size_t cap, const char *ascii)
{
    size_t n = text_len(ascii);
    if (2 * (n + 1) > cap)
        return PTB_LO_E_SPACE;
    for (size_t i = 0; i < n; i++)
        if (!printable((unsigned char)ascii[i]))
            return PTB_LO_E_TEXT;
    for (size_t i = 0; i <= n; i++)
        put16(out + 2 * i, (uint16_t)(unsigned char)ascii[i]);
    return (long)(2 * (n + 1));
}

long ucs2_to_ascii(const uint8_t *ucs2, size_t bytes, char *out, size_t cap)
{
    if (bytes % 2 || cap == 0)
        return PTB_LO_E_TEXT;
    size_t n = 0;
    for (size_t i = 0; i + 1 < bytes; i += 2) {
        uint16_t c = get16(ucs2 + i);
        if (c == 0)
            break;
        if (!printable(c) || n + 1 >= cap) {
            out[0] = '\0';
            return PTB_LO_E_TEXT;
        }
        out[n++] = (char)c;
    }
    out[n] = '\0';
    return (long)n;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int load_option_number(const char *name, const char *prefix)
{
    size_t pl = text_len(prefix);
    if (text_len(name) != pl + 4 || !bytes_equal(name, prefix, pl))
        return -1;
    int v = 0;
    for (size_t i = 0; i < 4; i++) {
        int d = hex_digit(name[pl + i]);
        if (d < 0)
            return -1;
        v = v << 4 | d;
    }
    return v;
}

void load_option_name(char *name, size_t cap, const char *prefix, unsigned number)
{
    struct text_out o;
    text_out_init(&o, name, cap);
    text_out_str(&o, prefix);
    text_out_hex(&o, number & 0xffffu, 4, true);
}

long load_option_order_prepend(uint16_t *order, size_t count, size_t cap, uint16_t number)
{
    count = load_option_order_remove(order, count, number);
    if (count + 1 > cap)
        return -1;
    bytes_move(order + 1, order, count * sizeof *order);
    order[0] = number;
    return (long)(count + 1);
}

size_t load_option_order_remove(uint16_t *order, size_t count, uint16_t number)
{
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (order[i] != number)
            order[n++] = order[i];
    return n;
}

long load_option_free_number(bool (*used)(void *ctx, unsigned number), void *ctx)
{
    for (unsigned i = 0; i <= 0xffff; i++)
        if (!used(ctx, i))
            return (long)i;
    return -1;
}

const char *load_option_strerror(int err)
{
    switch (err) {
    case PTB_LO_OK: return "ok";
    case PTB_LO_E_SPACE: return "does not fit";
    case PTB_LO_E_SHORT: return "shorter than Attributes and FilePathListLength";
    case PTB_LO_E_DESC: return "Description has no NUL";
    case PTB_LO_E_PATHLEN: return "FilePathListLength runs past the end";
    case PTB_LO_E_NODE: return "bad device path node length";
    case PTB_LO_E_NOEND: return "device path without an End node";
    case PTB_LO_E_TEXT: return "text is not printable ASCII or too long";
    }
    return "unknown error";
}
