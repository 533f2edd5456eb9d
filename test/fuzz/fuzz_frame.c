/* libFuzzer target over the serial framing (decoder/ptd_frame.h) and the
 * host's recovery of a whole log (host/serial_recover.h, what `ptboot
 * serial` runs, in its dry mode: reports only, nothing written).
 *
 * Byte 0 selects the property:
 *   - even: the rest is a serial log. Every line goes through the frame
 *     parser (whose fields must stay in their documented bounds), then the
 *     whole log through the recovery (ASan/UBSan watch both). With bit 1
 *     set, every frame line's CRC is made right first: the mutations then
 *     forge intact lines with any sizes, offsets, counts and ids;
 *   - odd: round trip. Bytes 1..4 choose the payload per line, the kind,
 *     the id and the name's length; the name is made printable from the
 *     next bytes and the rest is the file. The encoder's lines parse back
 *     as begin, data lines in order and end, with the file's bytes, size,
 *     CRC, kind and name; the recovery of that log finds one whole file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_frame.h"
#include "decoder/ptd_pkt.h"
#include "host/serial_recover.h"
#include "host/serial_repair.h"

#define LOG_MAX (1u << 20)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* the recovery reports on stdout: thousands of lines a second */
    if (!freopen("/dev/null", "w", stdout))
        abort();
    return 0;
}

static void check_rec(const struct ptd_frame_rec *r, enum ptd_frame_type t)
{
    if (r->type != t)
        abort();
    switch (t) {
    case PTD_FRAME_DATA:
        if (r->len > PTD_FRAME_PAYLOAD_MAX)
            abort();
        break;
    case PTD_FRAME_BEGIN:
    case PTD_FRAME_END:
        if (memchr(r->name, 0, sizeof r->name) == NULL || !r->name[0])
            abort();
        for (const char *p = r->name; *p; p++)
            if (*p <= ' ' || *p > '~')
                abort();
        if (t == PTD_FRAME_BEGIN && !ptd_frame_kind_name(r->kind))
            abort();
        break;
    case PTD_FRAME_CORRUPT:
        if (r->damage != PTD_FRAME_BAD_CRC && r->damage != PTD_FRAME_BAD_SYNTAX)
            abort();
        break;
    case PTD_FRAME_NONE: break;
    }
}

/* The rebuilds `ptboot serial` makes of an incomplete capture
 * (host/serial_repair.h) over every incomplete file of the log: a sideband
 * from its whole text lines, a code snapshot from it and the next file. */
static void repair(const struct serial_ctx *c)
{
    for (size_t i = 0; i < c->nfiles; i++) {
        const struct sfile *f = &c->files[i];
        if (f->whole || !f->ngood || f->size > (1u << 20))
            continue;
        struct serial_range *r;
        size_t nr = host_serial_ranges(f, &r), len;
        uint8_t *data = host_serial_bytes(f);
        struct serial_sideband_repair rep;
        char *t = serial_repair_sideband(data, f->size, r, nr, &len, &rep);
        if (t && (len == 0 || t[len - 1] != '\n'))
            abort(); /* a rebuilt sideband ends with its end line */
        free(t);
        if (i + 1 < c->nfiles && c->files[i + 1].ngood && c->files[i + 1].size <= (1u << 20)) {
            const struct sfile *g = &c->files[i + 1];
            struct serial_range *gr;
            size_t ngr = host_serial_ranges(g, &gr), of;
            uint8_t *gd = host_serial_bytes(g), *od, *oa;
            size_t kept =
                serial_repair_code(data, f->size, r, nr, gd, g->size, gr, ngr, &od, &oa, &of);
            if (kept > of)
                abort();
            free(od);
            free(oa);
            free(gd);
            free(gr);
        }
        free(data);
        free(r);
    }
}

static void recover(const uint8_t *log, size_t size, size_t expect_whole)
{
    struct serial_ctx c = {
        .prog = "fuzz_frame", .dir = NULL, .quiet = true, .max_segments = SERIAL_MAX_SEGMENTS
    };
    host_serial_take_log(&c, log, size);
    size_t whole = host_serial_finish(&c);
    if (whole > c.nfiles || (expect_whole && (c.nfiles != 1 || whole != 1)))
        abort();
    repair(&c);
    host_serial_free(&c);
}

/* Rewrites the line CRC (the last field, 8 hex digits after the last
 * space) of every line holding the prefix to the CRC32 of the text from
 * '@' up to and including that space. */
static void forge_crcs(char *t, size_t size)
{
    size_t start = 0;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && t[i] != '\n' && t[i] != '\r')
            continue;
        size_t end = i, sp;
        char *at = NULL;
        for (size_t k = start; k + PTD_FRAME_PREFIX_LEN <= end && !at; k++)
            if (!memcmp(t + k, PTD_FRAME_PREFIX, PTD_FRAME_PREFIX_LEN))
                at = t + k;
        for (sp = end; sp > start && t[sp - 1] != ' '; sp--)
            ;
        if (at && sp > (size_t)(at - t) && end - sp == 8) {
            static const char hex[] = "0123456789abcdef";
            uint32_t crc = ptd_crc32(0, at, (size_t)(t + sp - at));
            for (int d = 0; d < 8; d++)
                t[sp + (size_t)d] = hex[(crc >> (28 - 4 * d)) & 15];
        }
        start = i + 1;
    }
}

static void parse_log(const uint8_t *data, size_t size, bool forge)
{
    static struct ptd_frame_rec rec;
    static uint8_t copy[LOG_MAX];
    size_t start = 0;
    if (forge) {
        if (size > LOG_MAX)
            size = LOG_MAX;
        memcpy(copy, data, size);
        forge_crcs((char *)copy, size);
        data = copy;
    }
    for (size_t i = 0; i <= size; i++) {
        if (i < size && data[i] != '\n' && data[i] != '\r')
            continue;
        if (i > start)
            check_rec(&rec, ptd_frame_parse((const char *)data + start, i - start, &rec));
        start = i + 1;
    }
    recover(data, size, 0);
}

static void round_trip(const uint8_t *data, size_t size)
{
    static char log[LOG_MAX];
    static uint8_t back[LOG_MAX];
    static struct ptd_frame_rec rec;
    struct ptd_frame_enc e;
    char name[PTD_FRAME_NAME_MAX + 1];
    size_t loglen = 0, got = 0;
    uint64_t skip = 0;
    uint32_t seq = 0;
    bool begun = false, ended = false;

    if (size < 4)
        return;
    uint32_t payload = data[0] % (PTD_FRAME_PAYLOAD_MAX + 1); /* 0: the default */
    enum ptd_frame_kind kind = data[1] & 1 ? PTD_FRAME_KIND_PT : PTD_FRAME_KIND_RAW;
    uint32_t id = data[2] * 0x01010101u;
    size_t nlen = 1 + data[3] % PTD_FRAME_NAME_MAX;
    data += 4;
    size -= 4;
    if (nlen > size)
        nlen = size;
    for (size_t i = 0; i < nlen; i++)
        name[i] = (char)('!' + data[i] % ('~' - '!' + 1));
    name[nlen] = 0;
    if (!nlen)
        strcpy(name, "x");
    data += nlen;
    size -= nlen;
    if (size > LOG_MAX / 4)
        size = LOG_MAX / 4;

    if (ptd_frame_enc_init(&e, id, name, data, size, kind, payload) < 0)
        abort();
    uint32_t expect_lines = ptd_frame_enc_count(&e);
    for (size_t n; (n = ptd_frame_enc_lines(&e, log + loglen, LOG_MAX - loglen)) > 0;)
        loglen += n;
    if (loglen + PTD_FRAME_LINE_MAX >= LOG_MAX)
        abort(); /* LOG_MAX/4 bytes of file fit in base64 lines */

    for (size_t start = 0, i; start < loglen; start = i + 1) {
        for (i = start; log[i] != '\n'; i++)
            ;
        if (i - start >= PTD_FRAME_LINE_MAX)
            abort();
        switch (ptd_frame_parse(log + start, i - start, &rec)) {
        case PTD_FRAME_BEGIN:
            if (begun || rec.id != id || rec.size != size || rec.kind != kind ||
                rec.file_crc != ptd_crc32(0, data, size) || strcmp(rec.name, name))
                abort();
            begun = true;
            break;
        case PTD_FRAME_DATA:
            if (!begun || ended || rec.id != id || rec.seq != seq++ || rec.offset != got ||
                rec.len == 0 || got + rec.len > size || memcmp(data + got, rec.payload, rec.len))
                abort();
            if (kind == PTD_FRAME_KIND_PT) {
                /* a line flagged P starts at a PSB (not one inside the
                 * last P line's PSB: 02 82 repeats), and no line runs
                 * across a PSB */
                /* (searches bounded to the line: linear in the file) */
                size_t win = got + rec.len + PTD_PSB_SIZE - 1;
                if (win > size)
                    win = size;
                uint64_t from = got > skip ? got : skip;
                bool at = from < win && ptd_psb_find(data, win, (size_t)from) == (int64_t)got;
                if (rec.psb != at)
                    abort();
                if (at)
                    skip = got + PTD_PSB_SIZE;
                from = got + 1 > skip ? got + 1 : skip;
                int64_t q = from < win ? ptd_psb_find(data, win, (size_t)from) : -1;
                if (q >= 0 && (uint64_t)q < got + rec.len)
                    abort();
            } else if (rec.psb) {
                abort();
            }
            memcpy(back + got, rec.payload, rec.len);
            got += rec.len;
            break;
        case PTD_FRAME_END:
            if (!begun || ended || rec.id != id || rec.lines != seq || rec.size != size ||
                strcmp(rec.name, name))
                abort();
            ended = true;
            break;
        default: abort();
        }
    }
    if (!ended || got != size || seq != expect_lines || memcmp(back, data, size))
        abort();
    recover((const uint8_t *)log, loglen, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        round_trip(data + 1, size - 1);
    else
        parse_log(data + 1, size - 1, data[0] & 2);
    return 0;
}
