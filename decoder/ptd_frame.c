/* libptd serial framing (the format: decoder/ptd_frame.h, docs/serial.md).
 * Numbers and base64 are written by hand: the decoder has no libc. */
#include "decoder/ptd_frame.h"
#include "decoder/ptd_num.h"
#include "decoder/ptd_pkt.h"

/* ---- CRC-32 (IEEE) ------------------------------------------------------------ */

/* crc_table[i]: the CRC of byte i under the reflected polynomial 0xEDB88320
 * (test/unit/test_ptd_frame.c recomputes it bit by bit). */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu, 0xe963a535u,
    0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u, 0x09b64c2bu, 0x7eb17cbdu,
    0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u, 0xf3b97148u, 0x84be41deu, 0x1adad47du,
    0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u, 0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu,
    0x14015c4fu, 0x63066cd9u, 0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u,
    0xa2677172u, 0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u, 0x26d930acu,
    0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u, 0xcfba9599u, 0xb8bda50fu,
    0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u, 0x2f6f7c87u, 0x58684c11u, 0xc1611dabu,
    0xb6662d3du, 0x76dc4190u, 0x01db7106u, 0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu,
    0x9fbfe4a5u, 0xe8b8d433u, 0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu,
    0x086d3d2du, 0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u, 0x8bbeb8eau,
    0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u, 0x4db26158u, 0x3ab551ceu,
    0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u, 0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au,
    0x346ed9fcu, 0xad678846u, 0xda60b8d0u, 0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u,
    0x5005713cu, 0x270241aau, 0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u,
    0xce61e49fu, 0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au, 0xead54739u,
    0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u, 0x0d6d6a3eu, 0x7a6a5aa8u,
    0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u, 0xf00f9344u, 0x8708a3d2u, 0x1e01f268u,
    0x6906c2feu, 0xf762575du, 0x806567cbu, 0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u,
    0x10da7a5au, 0x67dd4accu, 0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u,
    0xa1d1937eu, 0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u, 0x316e8eefu,
    0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u, 0xcc0c7795u, 0xbb0b4703u,
    0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u, 0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u,
    0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du, 0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au,
    0x9c0906a9u, 0xeb0e363fu, 0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu,
    0x0cb61b38u, 0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u, 0x88085ae6u,
    0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u, 0x616bffd3u, 0x166ccf45u,
    0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u, 0xa7672661u, 0xd06016f7u, 0x4969474du,
    0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu, 0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u,
    0x47b2cf7fu, 0x30b5ffe9u, 0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u,
    0xcdd70693u, 0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

uint32_t ptd_crc32(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = crc_table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

/* ---- base64 (RFC 4648 section 4, with padding) ------------------------------- */

static const char b64_alphabet[64] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static size_t b64_encode(char *out, const uint8_t *in, size_t len)
{
    size_t o = 0, i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
        out[o++] = b64_alphabet[v >> 18];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = b64_alphabet[(v >> 6) & 63];
        out[o++] = b64_alphabet[v & 63];
    }
    if (i < len) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)in[i + 1] << 8;
        out[o++] = b64_alphabet[v >> 18];
        out[o++] = b64_alphabet[(v >> 12) & 63];
        out[o++] = i + 1 < len ? b64_alphabet[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    return o;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Decodes len characters (a multiple of 4, '=' only as the last one or
 * two) into out (room for max bytes); returns the byte count or -1. */
static int b64_decode(uint8_t *out, size_t max, const char *in, size_t len)
{
    size_t o = 0;
    if (len == 0 || len % 4)
        return -1;
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = in[i + k];
            if (c == '=' && i + 4 == len && k >= 2) {
                v[k] = 0;
                pad++;
                continue;
            }
            if (pad) /* data after padding */
                return -1;
            v[k] = b64_value(c);
            if (v[k] < 0)
                return -1;
        }
        uint32_t w =
            (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
        size_t n = 3 - (size_t)pad;
        if (o + n > max)
            return -1;
        out[o++] = (uint8_t)(w >> 16);
        if (n > 1)
            out[o++] = (uint8_t)(w >> 8);
        if (n > 2)
            out[o++] = (uint8_t)w;
    }
    return (int)o;
}

/* ---- numbers -------------------------------------------------------------------- */

static size_t put_dec(char *out, uint64_t v)
{
    char tmp[20];
    size_t n = 0, o = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        out[o++] = tmp[--n];
    return o;
}

static const char hex_digits[16] = "0123456789abcdef";

static size_t put_hex(char *out, uint64_t v)
{
    char tmp[16];
    size_t n = 0, o = 0;
    do {
        tmp[n++] = hex_digits[v & 15];
        v >>= 4;
    } while (v);
    while (n)
        out[o++] = tmp[--n];
    return o;
}

static size_t put_hex32(char *out, uint32_t v)
{
    for (int i = 0; i < 8; i++)
        out[i] = hex_digits[(v >> (28 - 4 * i)) & 15];
    return 8;
}

static size_t put_str(char *out, const char *s)
{
    size_t n = 0;
    while (s[n]) {
        out[n] = s[n];
        n++;
    }
    return n;
}

/* ---- encoder --------------------------------------------------------------------- */

enum {
    PHASE_BEGIN,
    PHASE_DATA,
    PHASE_END,
    PHASE_DONE
};

static bool name_ok(const char *name)
{
    size_t n = 0;
    if (!name)
        return false;
    for (; name[n]; n++)
        if (n >= PTD_FRAME_NAME_MAX || name[n] <= ' ' || name[n] > '~')
            return false;
    return n > 0;
}

const char *ptd_frame_kind_name(unsigned kind)
{
    return kind == PTD_FRAME_KIND_PT ? "pt" : kind == PTD_FRAME_KIND_RAW ? "raw" : 0;
}

/* The first PSB at or after from, or size. */
static uint64_t psb_at_or_after(const struct ptd_frame_enc *e, uint64_t from)
{
    if (e->kind != PTD_FRAME_KIND_PT || from >= e->size)
        return e->size;
    int64_t q = ptd_psb_find(e->data, (size_t)e->size, (size_t)from);
    return q < 0 ? e->size : (uint64_t)q;
}

int ptd_frame_enc_init(struct ptd_frame_enc *e, uint32_t id, const char *name, const uint8_t *data,
                       uint64_t size, enum ptd_frame_kind kind, uint32_t payload)
{
    if (!payload)
        payload = PTD_FRAME_PAYLOAD_DEFAULT;
    if (!name_ok(name) || payload > PTD_FRAME_PAYLOAD_MAX || (!data && size) ||
        (kind != PTD_FRAME_KIND_PT && kind != PTD_FRAME_KIND_RAW))
        return -1;
    e->data = data;
    e->size = size;
    e->pos = 0;
    e->name = name;
    e->id = id;
    e->seq = 0;
    e->payload = payload;
    e->kind = (uint8_t)kind;
    e->phase = PHASE_BEGIN;
    e->file_crc = ptd_crc32(0, data, (size_t)size);
    e->next_psb = psb_at_or_after(e, 0);
    return 0;
}

/* The end of the data line starting at e->pos (whose PSB flag is psb), and
 * the PSB after it in *next. */
static uint64_t line_end(const struct ptd_frame_enc *e, bool psb, uint64_t *next)
{
    uint64_t end = e->pos + e->payload;
    uint64_t n = e->next_psb;
    if (end > e->size)
        end = e->size;
    if (n <= e->pos) /* passed it (or standing on it): the one after */
        n = psb_at_or_after(e, e->pos + (psb ? PTD_PSB_SIZE : 1));
    *next = n;
    return n < end ? n : end;
}

uint32_t ptd_frame_enc_count(const struct ptd_frame_enc *e)
{
    struct ptd_frame_enc w = *e;
    uint32_t lines = 0;
    w.pos = 0;
    w.next_psb = psb_at_or_after(&w, 0);
    while (w.pos < w.size) {
        uint64_t next;
        w.pos = line_end(&w, w.pos == w.next_psb, &next);
        w.next_psb = next;
        lines++;
    }
    return lines;
}

/* Appends the line CRC and the newline to the line at out[0..n). */
static size_t finish_line(char *out, size_t n)
{
    out[n++] = ' ';
    n += put_hex32(out + n, ptd_crc32(0, out, n));
    out[n++] = '\n';
    return n;
}

static size_t put_head(char *out, char type, uint32_t id)
{
    size_t n = put_str(out, PTD_FRAME_PREFIX);
    out[n++] = type;
    out[n++] = ' ';
    n += put_dec(out + n, id);
    out[n++] = ' ';
    return n;
}

size_t ptd_frame_enc_lines(struct ptd_frame_enc *e, char *buf, size_t cap)
{
    size_t used = 0;
    while (cap - used >= PTD_FRAME_LINE_MAX && e->phase != PHASE_DONE) {
        char *out = buf + used;
        size_t n;
        if (e->phase == PHASE_BEGIN) {
            n = put_head(out, 'B', e->id);
            n += put_str(out + n, e->name);
            out[n++] = ' ';
            n += put_dec(out + n, e->size);
            out[n++] = ' ';
            n += put_hex32(out + n, e->file_crc);
            out[n++] = ' ';
            n += put_str(out + n, ptd_frame_kind_name(e->kind));
            e->phase = e->size ? PHASE_DATA : PHASE_END;
        } else if (e->phase == PHASE_DATA) {
            bool psb = e->pos == e->next_psb;
            uint64_t next, end = line_end(e, psb, &next);
            n = put_head(out, 'D', e->id);
            n += put_dec(out + n, e->seq);
            out[n++] = ' ';
            n += put_hex(out + n, e->pos);
            out[n++] = ' ';
            out[n++] = psb ? 'P' : '-';
            out[n++] = ' ';
            n += b64_encode(out + n, e->data + e->pos, (size_t)(end - e->pos));
            e->pos = end;
            e->next_psb = next;
            e->seq++;
            if (e->pos >= e->size)
                e->phase = PHASE_END;
        } else {
            n = put_head(out, 'E', e->id);
            n += put_str(out + n, e->name);
            out[n++] = ' ';
            n += put_dec(out + n, e->seq);
            out[n++] = ' ';
            n += put_dec(out + n, e->size);
            out[n++] = ' ';
            n += put_hex32(out + n, e->file_crc);
            e->phase = PHASE_DONE;
        }
        used += finish_line(out, n);
    }
    return used;
}

/* ---- parser ----------------------------------------------------------------------- */

/* A field of a line: text[0..len). */
struct field {
    const char *s;
    size_t len;
};

static bool parse_dec(struct field f, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (f.len == 0 || f.len > 20 || (f.len > 1 && f.s[0] == '0'))
        return false;
    for (size_t i = 0; i < f.len; i++) {
        unsigned d = (unsigned)(f.s[i] - '0');
        if (d > 9 || v > (max - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = v;
    return true;
}

static bool parse_hex(struct field f, size_t maxdigits, uint64_t *out)
{
    return ptd_num_parse_hex(f.s, f.len, maxdigits, out);
}

static bool parse_crc(struct field f, uint32_t *out)
{
    uint64_t v;
    if (f.len != 8 || !parse_hex(f, 8, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

static bool parse_name(struct field f, char *out)
{
    if (f.len == 0 || f.len > PTD_FRAME_NAME_MAX)
        return false;
    for (size_t i = 0; i < f.len; i++) {
        if (f.s[i] <= ' ' || f.s[i] > '~')
            return false;
        out[i] = f.s[i];
    }
    out[f.len] = 0;
    return true;
}

/* Splits s[0..len) at single spaces into at most max fields; returns the
 * count, or max + 1 when there are more (or an empty field). */
static size_t split(const char *s, size_t len, struct field *f, size_t max)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && s[i] != ' ')
            continue;
        if (n == max || i == start)
            return max + 1;
        f[n].s = s + start;
        f[n].len = i - start;
        n++;
        start = i + 1;
    }
    return n;
}

static void rec_clear(struct ptd_frame_rec *r)
{
    r->type = PTD_FRAME_NONE;
    r->damage = PTD_FRAME_OK;
    r->hint_id = r->hint_seq = r->hint_offset = false;
    r->hint_type = 0;
    r->id = r->seq = r->len = r->lines = r->file_crc = 0;
    r->offset = r->size = 0;
    r->psb = false;
    r->kind = 0;
    r->name[0] = 0;
}

static enum ptd_frame_type corrupt(struct ptd_frame_rec *r, enum ptd_frame_damage why)
{
    r->type = PTD_FRAME_CORRUPT;
    r->damage = why;
    return r->type;
}

/* Reads the type letter, id and (data lines) seq of a line before its CRC
 * is checked, as hints for reporting a damaged line. */
static void read_hints(const char *s, size_t len, struct ptd_frame_rec *r)
{
    struct field f[4];
    size_t n = 0, start = 0;
    uint64_t v;
    for (size_t i = 0; i <= len && n < 4; i++) {
        if (i < len && s[i] != ' ')
            continue;
        f[n].s = s + start;
        f[n].len = i - start;
        n++;
        start = i + 1;
    }
    if (n < 2)
        return;
    /* a type letter that is none of B, D, E was itself damaged: unknown */
    if (f[0].len == 1 && (f[0].s[0] == 'B' || f[0].s[0] == 'D' || f[0].s[0] == 'E'))
        r->hint_type = f[0].s[0];
    if (parse_dec(f[1], UINT32_MAX, &v)) {
        r->hint_id = true;
        r->id = (uint32_t)v;
    }
    /* seq and offset where a data line has them (B and E have a name there) */
    bool data = r->hint_type == 'D' || !r->hint_type;
    if (data && n >= 3 && parse_dec(f[2], UINT32_MAX, &v)) {
        r->hint_seq = true;
        r->seq = (uint32_t)v;
    }
    if (data && n >= 4 && parse_hex(f[3], 16, &v)) {
        r->hint_offset = true;
        r->offset = v;
    }
}

enum ptd_frame_type ptd_frame_parse(const char *line, size_t len, struct ptd_frame_rec *rec)
{
    static const char prefix[] = PTD_FRAME_PREFIX;
    const char *t = 0;
    struct field f[8];
    uint64_t v, v2;
    uint32_t crc;
    size_t n, k;

    rec_clear(rec);
    for (size_t i = 0; i + PTD_FRAME_PREFIX_LEN <= len && !t; i++) {
        if (line[i] != '@')
            continue;
        for (k = 1; k < PTD_FRAME_PREFIX_LEN && line[i + k] == prefix[k]; k++)
            ;
        if (k == PTD_FRAME_PREFIX_LEN)
            t = line + i;
    }
    if (!t)
        return PTD_FRAME_NONE;
    len -= (size_t)(t - line);
    while (len &&
           (t[len - 1] == '\n' || t[len - 1] == '\r' || t[len - 1] == ' ' || t[len - 1] == '\t'))
        len--;
    if (len <= PTD_FRAME_PREFIX_LEN) /* the prefix and nothing after it */
        return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
    const char *body = t + PTD_FRAME_PREFIX_LEN;
    size_t blen = len - PTD_FRAME_PREFIX_LEN;
    read_hints(body, blen, rec);

    /* The line CRC: the last field, over everything before it. */
    for (k = len; k > PTD_FRAME_PREFIX_LEN && t[k - 1] != ' '; k--)
        ;
    if (k <= PTD_FRAME_PREFIX_LEN || len - k != 8)
        return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
    struct field cf = { t + k, 8 };
    if (!parse_crc(cf, &crc))
        return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
    if (ptd_crc32(0, t, k) != crc)
        return corrupt(rec, PTD_FRAME_BAD_CRC);

    n = split(body, k - 1 - PTD_FRAME_PREFIX_LEN, f, 6);
    if (n != 6 || f[0].len != 1 || !parse_dec(f[1], UINT32_MAX, &v))
        return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
    rec->id = (uint32_t)v;
    switch (f[0].s[0]) {
    case 'B':
        if (!parse_name(f[2], rec->name) || !parse_dec(f[3], UINT64_MAX, &rec->size) ||
            !parse_crc(f[4], &rec->file_crc))
            return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
        if (f[5].len == 2 && f[5].s[0] == 'p' && f[5].s[1] == 't')
            rec->kind = PTD_FRAME_KIND_PT;
        else if (f[5].len == 3 && f[5].s[0] == 'r' && f[5].s[1] == 'a' && f[5].s[2] == 'w')
            rec->kind = PTD_FRAME_KIND_RAW;
        else
            return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
        rec->type = PTD_FRAME_BEGIN;
        break;
    case 'D': {
        int got;
        if (!parse_dec(f[2], UINT32_MAX, &v) || !parse_hex(f[3], 16, &v2) || f[4].len != 1 ||
            (f[4].s[0] != 'P' && f[4].s[0] != '-'))
            return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
        got = b64_decode(rec->payload, PTD_FRAME_PAYLOAD_MAX, f[5].s, f[5].len);
        if (got <= 0 || v2 + (uint64_t)got < v2)
            return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
        rec->seq = (uint32_t)v;
        rec->offset = v2;
        rec->psb = f[4].s[0] == 'P';
        rec->len = (uint32_t)got;
        rec->type = PTD_FRAME_DATA;
        break;
    }
    case 'E':
        if (!parse_name(f[2], rec->name) || !parse_dec(f[3], UINT32_MAX, &v) ||
            !parse_dec(f[4], UINT64_MAX, &rec->size) || !parse_crc(f[5], &rec->file_crc))
            return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
        rec->lines = (uint32_t)v;
        rec->type = PTD_FRAME_END;
        break;
    default: return corrupt(rec, PTD_FRAME_BAD_SYNTAX);
    }
    return rec->type;
}
