/* EDK2's LZMA section data through liblzma (host/fv_lzma.h). */
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fv_lzma.h"

/* The properties byte is (pb * 5 + lp) * 9 + lc (LZMA's own encoding). */
#define LZMA_PROPS_BYTE_MAX (9 * 5 * 5)
/* EDK2's LzmaCompress defaults: lc=3, lp=0, pb=2, 16 MiB dictionary. */
#define EDK2_LC   3
#define EDK2_LP   0
#define EDK2_PB   2
#define EDK2_DICT (1u << 24)

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t rd64(const uint8_t *p)
{
    return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int props_decode(const uint8_t *p, lzma_options_lzma *o, char *err, size_t err_len)
{
    unsigned d = p[0];
    if (d >= LZMA_PROPS_BYTE_MAX) {
        snprintf(err, err_len, "LZMA properties byte 0x%02x is out of range", d);
        return -1;
    }
    memset(o, 0, sizeof *o);
    if (lzma_lzma_preset(o, 6)) {
        snprintf(err, err_len, "liblzma has no preset 6");
        return -1;
    }
    o->lc = d % 9;
    d /= 9;
    o->lp = d % 5;
    o->pb = d / 5;
    o->dict_size = rd32(p + 1);
    return 0;
}

int fv_lzma_decode(const uint8_t *in, size_t len, size_t max_out, uint8_t **out, size_t *out_len,
                   char *err, size_t err_len)
{
    *out = NULL;
    *out_len = 0;
    if (len < FV_LZMA_HEADER_BYTES) {
        snprintf(err, err_len, "LZMA data of %zu bytes is shorter than its 13-byte header", len);
        return -1;
    }
    lzma_options_lzma o;
    if (props_decode(in, &o, err, err_len))
        return -1;
    uint64_t size = rd64(in + FV_LZMA_PROPS_BYTES);
    if (size > max_out) {
        snprintf(err, err_len, "LZMA data claims to unpack to %llu bytes (more than %zu)",
                 (unsigned long long)size, max_out);
        return -1;
    }
    /* A dictionary larger than the output is never used: keep the
     * decoder's memory to what this section can need. */
    if (o.dict_size > size)
        o.dict_size = (uint32_t)size;
    if (o.dict_size < LZMA_DICT_SIZE_MIN)
        o.dict_size = LZMA_DICT_SIZE_MIN;
    o.ext_flags = LZMA_LZMA1EXT_ALLOW_EOPM;
    lzma_set_ext_size(o, size);
    lzma_filter filters[2] = { { LZMA_FILTER_LZMA1EXT, &o }, { LZMA_VLI_UNKNOWN, NULL } };
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_ret r = lzma_raw_decoder(&s, filters);
    if (r != LZMA_OK) {
        snprintf(err, err_len, "liblzma refuses the properties (lc=%u lp=%u pb=%u): error %d", o.lc,
                 o.lp, o.pb, (int)r);
        return -1;
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) {
        lzma_end(&s);
        snprintf(err, err_len, "no memory for %llu bytes", (unsigned long long)size);
        return -1;
    }
    s.next_in = in + FV_LZMA_HEADER_BYTES;
    s.avail_in = len - FV_LZMA_HEADER_BYTES;
    s.next_out = buf;
    s.avail_out = size;
    r = lzma_code(&s, LZMA_FINISH);
    size_t got = size - s.avail_out;
    lzma_end(&s);
    if (r != LZMA_STREAM_END || got != size) {
        snprintf(err, err_len, "LZMA data is corrupt (%s after %zu of %llu bytes)",
                 r == LZMA_DATA_ERROR  ? "data error"
                 : r == LZMA_BUF_ERROR ? "input ends early"
                                       : "stopped",
                 got, (unsigned long long)size);
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = size;
    return 0;
}

int fv_lzma_encode(const uint8_t *props, const uint8_t *in, size_t len, uint8_t **out,
                   size_t *out_len, char *err, size_t err_len)
{
    static const uint8_t edk2[FV_LZMA_PROPS_BYTES] = {
        (EDK2_PB * 5 + EDK2_LP) * 9 + EDK2_LC,
        (uint8_t)EDK2_DICT,
        (uint8_t)(EDK2_DICT >> 8),
        (uint8_t)(EDK2_DICT >> 16),
        (uint8_t)(EDK2_DICT >> 24),
    };
    *out = NULL;
    *out_len = 0;
    if (!props)
        props = edk2;
    lzma_options_lzma o;
    if (props_decode(props, &o, err, err_len))
        return -1;
    if (o.dict_size < LZMA_DICT_SIZE_MIN)
        o.dict_size = LZMA_DICT_SIZE_MIN;
    o.ext_flags = 0; /* no end marker: the header gives the size */
    lzma_filter filters[2] = { { LZMA_FILTER_LZMA1EXT, &o }, { LZMA_VLI_UNKNOWN, NULL } };
    lzma_stream s = LZMA_STREAM_INIT;
    lzma_ret r = lzma_raw_encoder(&s, filters);
    if (r != LZMA_OK) {
        snprintf(err, err_len, "liblzma cannot encode with lc=%u lp=%u pb=%u dict=%u: error %d",
                 o.lc, o.lp, o.pb, o.dict_size, (int)r);
        return -1;
    }
    /* LZMA can grow incompressible data a little: room for that. */
    size_t cap = FV_LZMA_HEADER_BYTES + len + len / 64 + 4096;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        lzma_end(&s);
        snprintf(err, err_len, "no memory for %zu bytes", cap);
        return -1;
    }
    memcpy(buf, props, FV_LZMA_PROPS_BYTES);
    for (int i = 0; i < 8; i++)
        buf[FV_LZMA_PROPS_BYTES + i] = (uint8_t)((uint64_t)len >> (8 * i));
    s.next_in = in;
    s.avail_in = len;
    s.next_out = buf + FV_LZMA_HEADER_BYTES;
    s.avail_out = cap - FV_LZMA_HEADER_BYTES;
    r = lzma_code(&s, LZMA_FINISH);
    size_t produced = cap - FV_LZMA_HEADER_BYTES - s.avail_out;
    lzma_end(&s);
    if (r != LZMA_STREAM_END) {
        snprintf(err, err_len, "LZMA encoding failed: error %d", (int)r);
        free(buf);
        return -1;
    }
    *out = buf;
    *out_len = FV_LZMA_HEADER_BYTES + produced;
    return 0;
}
