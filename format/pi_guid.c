#include "format/pi_guid.h"

/* The stored form of a GUID written d1-d2-d3-d4[0..1]-d4[2..7]. */
#define PI_GUID_INIT(d1, d2, d3, a, b, c, d, e, f, g, h)                                           \
    {                                                                                              \
        {                                                                                          \
            (uint8_t)(d1), (uint8_t)((d1) >> 8), (uint8_t)((d1) >> 16), (uint8_t)((d1) >> 24),     \
                (uint8_t)(d2), (uint8_t)((d2) >> 8), (uint8_t)(d3), (uint8_t)((d3) >> 8), a, b, c, \
                d, e, f, g, h                                                                      \
        }                                                                                          \
    }

const struct pi_guid PI_GUID_FFS2 =
    PI_GUID_INIT(0x8c8ce578, 0x8a3d, 0x4f1c, 0x99, 0x35, 0x89, 0x61, 0x85, 0xc3, 0x2d, 0xd3);
const struct pi_guid PI_GUID_FFS3 =
    PI_GUID_INIT(0x5473c07a, 0x3dcb, 0x4dca, 0xbd, 0x6f, 0x1e, 0x96, 0x89, 0xe7, 0x34, 0x9a);
const struct pi_guid PI_GUID_NV_DATA =
    PI_GUID_INIT(0xfff12b8d, 0x7696, 0x4c8b, 0xa9, 0x85, 0x27, 0x47, 0x07, 0x5b, 0x4f, 0x50);
const struct pi_guid PI_GUID_LZMA =
    PI_GUID_INIT(0xee4e5898, 0x3914, 0x4259, 0x9d, 0x6e, 0xdc, 0x7b, 0xd7, 0x94, 0x03, 0xcf);
const struct pi_guid PI_GUID_LZMAF86 =
    PI_GUID_INIT(0xd42ae6bd, 0x1352, 0x4bfb, 0x90, 0x9a, 0xca, 0x72, 0xa6, 0xea, 0xe8, 0x89);
const struct pi_guid PI_GUID_APRIORI_DXE =
    PI_GUID_INIT(0xfc510ee7, 0xffdc, 0x11d4, 0xbd, 0x41, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81);
const struct pi_guid PI_GUID_APRIORI_PEI =
    PI_GUID_INIT(0x1b45cc0a, 0x156a, 0x428a, 0xaf, 0x62, 0x49, 0x86, 0x4d, 0xa0, 0xe6, 0xe6);
const struct pi_guid PI_GUID_VTF =
    PI_GUID_INIT(0x1ba0062e, 0xc779, 0x4582, 0x85, 0x66, 0x33, 0x6a, 0xe8, 0xf7, 0x8f, 0x09);
const struct pi_guid PI_GUID_CPU_ARCH =
    PI_GUID_INIT(0x26baccb1, 0x6f42, 0x11d4, 0xbc, 0xe7, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81);

bool pi_guid_equal(const struct pi_guid *a, const struct pi_guid *b)
{
    for (size_t i = 0; i < PI_GUID_BYTES; i++)
        if (a->b[i] != b->b[i])
            return false;
    return true;
}

bool pi_guid_is_filled(const struct pi_guid *g, uint8_t fill)
{
    for (size_t i = 0; i < PI_GUID_BYTES; i++)
        if (g->b[i] != fill)
            return false;
    return true;
}

/* The text form's byte order: d1 and d2, d3 reversed, d4 in order. */
static const uint8_t text_order[PI_GUID_BYTES] = { 3, 2, 1,  0,  5,  4,  7,  6,
                                                   8, 9, 10, 11, 12, 13, 14, 15 };
/* Text positions after which a '-' follows (in stored-byte count). */
static bool dash_after(size_t i)
{
    return i == 3 || i == 5 || i == 7 || i == 9;
}

void pi_guid_format(const struct pi_guid *g, char out[PI_GUID_TEXT_BYTES])
{
    static const char hex[] = "0123456789abcdef";
    size_t k = 0;
    for (size_t i = 0; i < PI_GUID_BYTES; i++) {
        uint8_t v = g->b[text_order[i]];
        out[k++] = hex[v >> 4];
        out[k++] = hex[v & 15];
        if (dash_after(i))
            out[k++] = '-';
    }
    out[k] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int pi_guid_parse(const char *s, size_t len, struct pi_guid *g)
{
    if (len != PI_GUID_TEXT_BYTES - 1)
        return -1;
    size_t k = 0;
    for (size_t i = 0; i < PI_GUID_BYTES; i++) {
        int hi = hex_digit(s[k]), lo = hex_digit(s[k + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        g->b[text_order[i]] = (uint8_t)(hi << 4 | lo);
        k += 2;
        if (dash_after(i) && s[k++] != '-')
            return -1;
    }
    return 0;
}

const char *pi_guid_name(const struct pi_guid *g)
{
    static const struct {
        const struct pi_guid *g;
        const char *name;
    } known[] = {
        { &PI_GUID_FFS2, "ffs2" },
        { &PI_GUID_FFS3, "ffs3" },
        { &PI_GUID_NV_DATA, "nvram" },
        { &PI_GUID_LZMA, "lzma" },
        { &PI_GUID_LZMAF86, "lzmaf86" },
        { &PI_GUID_APRIORI_DXE, "apriori-dxe" },
        { &PI_GUID_APRIORI_PEI, "apriori-pei" },
        { &PI_GUID_VTF, "volume-top-file" },
        { &PI_GUID_CPU_ARCH, "cpu-arch-protocol" },
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (pi_guid_equal(g, known[i].g))
            return known[i].name;
    return NULL;
}
