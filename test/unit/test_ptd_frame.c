/* decoder/ptd_frame.c: CRC-32 against published check values, encoder and
 * parser round trips, the PSB cuts, and every kind of damage a line can
 * take on a serial console. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "decoder/ptd_frame.h"
#include "decoder/ptd_pkt.h"

static uint32_t crc_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
    }
    return ~c;
}

/* Check values of CRC-32/ISO-HDLC (the "check" of the CRC catalogue for
 * "123456789", and zlib's crc32() of the other strings). */
static void crc32_vectors(void **state)
{
    (void)state;
    assert_int_equal(ptd_crc32(0, "123456789", 9), 0xcbf43926u);
    assert_int_equal(ptd_crc32(0, "", 0), 0);
    assert_int_equal(ptd_crc32(0, "a", 1), 0xe8b7be43u);
    assert_int_equal(ptd_crc32(0, "The quick brown fox jumps over the lazy dog", 43), 0x414fa339u);
    /* incremental = one shot */
    assert_int_equal(ptd_crc32(ptd_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
    /* the table, against the bitwise definition, on every byte value */
    uint8_t b[512];
    for (int i = 0; i < 512; i++)
        b[i] = (uint8_t)(i * 7 + (i >> 8));
    for (size_t n = 0; n <= sizeof b; n += 37)
        assert_int_equal(ptd_crc32(0, b, n), crc_bitwise(b, n));
}

/* ---- helpers ------------------------------------------------------------------- */

#define MAX_LINES 4096

struct parsed {
    size_t nlines;
    struct ptd_frame_rec begin, end;
    uint8_t *data; /* reassembled */
    uint64_t next_off;
    uint32_t next_seq;
    size_t psb_lines;
    uint64_t psb_offs[256];
};

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Encodes data into a text (cap bytes per call) and returns it (malloc). */
static char *encode(const uint8_t *data, size_t size, enum ptd_frame_kind kind, uint32_t payload,
                    size_t cap, uint32_t *count)
{
    struct ptd_frame_enc e;
    size_t total = 0, alloc = 2048 + size * 64;
    char *text = malloc(alloc);
    char *buf = malloc(cap);
    size_t n;
    assert_int_equal(ptd_frame_enc_init(&e, 3, "trace.pt", data, size, kind, payload), 0);
    *count = ptd_frame_enc_count(&e);
    while ((n = ptd_frame_enc_lines(&e, buf, cap)) > 0) {
        assert_true(total + n < alloc);
        memcpy(text + total, buf, n);
        total += n;
    }
    text[total] = 0;
    free(buf);
    return text;
}

/* Parses every line of text, checks the structure, reassembles the data. */
static void parse_all(const char *text, uint64_t size, struct parsed *p)
{
    struct ptd_frame_rec r;
    memset(p, 0, sizeof *p);
    p->data = calloc(1, size + 1);
    for (const char *s = text; *s;) {
        const char *nl = strchr(s, '\n');
        assert_non_null(nl);
        size_t len = (size_t)(nl - s);
        assert_true(len < PTD_FRAME_LINE_MAX);
        enum ptd_frame_type t = ptd_frame_parse(s, len, &r);
        if (p->nlines == 0) {
            assert_int_equal(t, PTD_FRAME_BEGIN);
            p->begin = r;
        } else if (t == PTD_FRAME_END) {
            p->end = r;
            assert_int_equal(nl[1], 0); /* the last line */
        } else {
            assert_int_equal(t, PTD_FRAME_DATA);
            assert_int_equal(r.id, 3);
            assert_int_equal(r.seq, p->next_seq);
            assert_int_equal(r.offset, p->next_off);
            assert_true(r.offset + r.len <= size);
            memcpy(p->data + r.offset, r.payload, r.len);
            if (r.psb) {
                assert_true(p->psb_lines < 256);
                p->psb_offs[p->psb_lines++] = r.offset;
            }
            p->next_seq++;
            p->next_off += r.len;
        }
        p->nlines++;
        s = nl + 1;
    }
}

static void round_trip_one(size_t size, enum ptd_frame_kind kind, uint32_t payload, size_t cap)
{
    uint8_t *data = calloc(1, size + 1);
    for (size_t i = 0; i < size; i++)
        data[i] = (uint8_t)rnd();
    uint32_t count;
    char *text = encode(data, size, kind, payload, cap, &count);
    struct parsed p;
    parse_all(text, size, &p);
    assert_int_equal(p.begin.type, PTD_FRAME_BEGIN);
    assert_string_equal(p.begin.name, "trace.pt");
    assert_int_equal(p.begin.size, size);
    assert_int_equal(p.begin.kind, kind);
    assert_int_equal(p.begin.file_crc, crc_bitwise(data, size));
    assert_int_equal(p.end.type, PTD_FRAME_END);
    assert_string_equal(p.end.name, "trace.pt");
    assert_int_equal(p.end.size, size);
    assert_int_equal(p.end.file_crc, p.begin.file_crc);
    assert_int_equal(p.end.lines, p.next_seq);
    assert_int_equal(count, p.next_seq);
    assert_int_equal(p.next_off, size);
    uint32_t pl = payload ? payload : PTD_FRAME_PAYLOAD_DEFAULT;
    assert_int_equal(p.next_seq, (size + pl - 1) / pl); /* random data: no PSB cuts */
    assert_memory_equal(p.data, data, size);
    free(p.data);
    free(text);
    free(data);
}

static void round_trips(void **state)
{
    (void)state;
    static const size_t sizes[] = { 0, 1, 2, 3, 4, 95, 96, 97, 191, 192, 193, 1000, 65537 };
    static const uint32_t payloads[] = { 0, 1, 2, 3, 57, 96, 100, 192 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (size_t j = 0; j < sizeof payloads / sizeof payloads[0]; j++) {
            if (sizes[i] / (payloads[j] ? payloads[j] : 96) > 3000)
                continue;
            round_trip_one(sizes[i], PTD_FRAME_KIND_RAW, payloads[j], PTD_FRAME_LINE_MAX);
            round_trip_one(sizes[i], PTD_FRAME_KIND_PT, payloads[j], 8192);
        }
}

static void put_psb(uint8_t *b, size_t at, size_t repeats)
{
    for (size_t k = 0; k < repeats; k++) {
        b[at + 2 * k] = 0x02;
        b[at + 2 * k + 1] = 0x82;
    }
}

/* Lines of a pt file are cut at every PSB and the line starting there is
 * flagged; a raw file is cut only every payload bytes. */
static void psb_cuts(void **state)
{
    (void)state;
    enum {
        SIZE = 2000
    };
    uint8_t data[SIZE];
    for (size_t i = 0; i < SIZE; i++)
        data[i] = (uint8_t)(0x10 + rnd() % 0x60); /* never 0x02 */
    static const size_t psbs[] = { 0, 40, 96, 200, 290, SIZE - 16 };
    for (size_t i = 0; i < sizeof psbs / sizeof psbs[0]; i++)
        put_psb(data, psbs[i], 8);
    put_psb(data, 700, 24); /* a run of 3 PSBs' worth of pattern */

    uint32_t count;
    char *text = encode(data, SIZE, PTD_FRAME_KIND_PT, 96, 4096, &count);
    struct parsed p;
    parse_all(text, SIZE, &p);
    assert_memory_equal(p.data, data, SIZE);
    assert_int_equal(count, p.next_seq);
    /* flagged lines: exactly the PSBs ptd_psb_find reports, skipping
     * PSB_SIZE past each (a run of the pattern is one sync point per 16 bytes) */
    uint64_t expect[32];
    size_t ne = 0;
    for (int64_t q = ptd_psb_find(data, SIZE, 0); q >= 0;
         q = ptd_psb_find(data, SIZE, (size_t)q + PTD_PSB_SIZE))
        expect[ne++] = (uint64_t)q;
    assert_int_equal(ne, 9); /* 6 single + 3 in the run */
    assert_int_equal(p.psb_lines, ne);
    for (size_t i = 0; i < ne; i++)
        assert_int_equal(p.psb_offs[i], expect[i]);
    free(p.data);
    free(text);

    /* the same bytes as raw: full lines, no flags */
    text = encode(data, SIZE, PTD_FRAME_KIND_RAW, 96, 4096, &count);
    parse_all(text, SIZE, &p);
    assert_int_equal(p.psb_lines, 0);
    assert_int_equal(p.next_seq, (SIZE + 95) / 96);
    free(p.data);
    free(text);
}

/* ---- damage ---------------------------------------------------------------------- */

static void one_line(char *out, size_t cap, char which)
{
    uint8_t data[150];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13);
    struct ptd_frame_enc e;
    char buf[4096];
    assert_int_equal(
        ptd_frame_enc_init(&e, 7, "sideband.bin", data, sizeof data, PTD_FRAME_KIND_RAW, 96), 0);
    size_t n = ptd_frame_enc_lines(&e, buf, sizeof buf);
    buf[n] = 0;
    /* lines: B, D0, D1, E */
    const char *s = buf;
    int skip = which == 'B' ? 0 : which == 'D' ? 2 : 3; /* D: the second data line (seq 1) */
    for (int i = 0; i < skip; i++)
        s = strchr(s, '\n') + 1;
    size_t len = (size_t)(strchr(s, '\n') - s);
    assert_true(len < cap);
    memcpy(out, s, len);
    out[len] = 0;
}

/* Every single-character change and every truncation of each kind of line
 * is caught; hints name the line where they can. */
static void every_corruption(void **state)
{
    (void)state;
    static const char kinds[] = { 'B', 'D', 'E' };
    struct ptd_frame_rec r;
    for (size_t k = 0; k < 3; k++) {
        char line[PTD_FRAME_LINE_MAX], bad[PTD_FRAME_LINE_MAX];
        one_line(line, sizeof line, kinds[k]);
        size_t len = strlen(line);
        enum ptd_frame_type good = kinds[k] == 'B'   ? PTD_FRAME_BEGIN
                                   : kinds[k] == 'D' ? PTD_FRAME_DATA
                                                     : PTD_FRAME_END;
        assert_int_equal(ptd_frame_parse(line, len, &r), good);
        for (size_t i = 0; i < len; i++) {
            static const char subst[] = { 'A', '0', ' ', '=', '\x7f', '@' };
            for (size_t s = 0; s < sizeof subst; s++) {
                if (line[i] == subst[s])
                    continue;
                memcpy(bad, line, len);
                bad[i] = subst[s];
                enum ptd_frame_type t = ptd_frame_parse(bad, len, &r);
                if (i < PTD_FRAME_PREFIX_LEN) {
                    /* a damaged prefix: not recognised as a frame line */
                    assert_int_equal(t, PTD_FRAME_NONE);
                    continue;
                }
                if (i == len - 1 && subst[s] == ' ') {
                    /* a trailing blank is trimmed: the CRC field is short */
                    assert_int_equal(t, PTD_FRAME_CORRUPT);
                    continue;
                }
                assert_int_equal(t, PTD_FRAME_CORRUPT);
                assert_true(r.damage == PTD_FRAME_BAD_CRC || r.damage == PTD_FRAME_BAD_SYNTAX);
                if (kinds[k] == 'D' && i > 20) { /* payload or CRC hit: seq still readable */
                    assert_true(r.hint_seq);
                    assert_int_equal(r.seq, 1);
                    assert_int_equal(r.hint_type, 'D');
                    assert_true(r.hint_id);
                    assert_int_equal(r.id, 7);
                    assert_true(r.hint_offset);
                    assert_int_equal(r.offset, 96);
                }
            }
        }
        /* truncations: a line cut anywhere is not a valid line */
        for (size_t cut = 0; cut < len; cut++) {
            enum ptd_frame_type t = ptd_frame_parse(line, cut, &r);
            assert_true(t == PTD_FRAME_NONE || t == PTD_FRAME_CORRUPT);
            if (cut >= PTD_FRAME_PREFIX_LEN)
                assert_int_equal(t, PTD_FRAME_CORRUPT);
        }
        /* a dropped character */
        for (size_t i = PTD_FRAME_PREFIX_LEN; i < len; i++) {
            memcpy(bad, line, i);
            memcpy(bad + i, line + i + 1, len - i - 1);
            assert_int_equal(ptd_frame_parse(bad, len - 1, &r), PTD_FRAME_CORRUPT);
        }
    }
}

/* Lines whose CRC is right but whose fields are not (a sender bug or a
 * forged line) are syntax errors, not data. */
static void bad_fields_good_crc(void **state)
{
    (void)state;
    static const char *bodies[] = {
        "@PTF1 D 1 0 0 - QUJD=",          /* base64 length not a multiple of 4 */
        "@PTF1 D 1 0 0 - QU=D",           /* data after padding */
        "@PTF1 D 1 0 0 - QU*D",           /* not the alphabet */
        "@PTF1 D 1 00 0 - QUJD",          /* leading zero in a decimal */
        "@PTF1 D 1 0 0 X QUJD",           /* unknown flag */
        "@PTF1 D 1 0 0x0 - QUJD",         /* 0x in the offset */
        "@PTF1 D 1 4294967296 0 - QUJD",  /* seq beyond 32 bits */
        "@PTF1 D 1 0 0 -  QUJD",          /* two spaces */
        "@PTF1 D 1 0 0 -",                /* a field missing */
        "@PTF1 D 1 0 0 - QUJD x",         /* a field too many */
        "@PTF1 X 1 0 0 - QUJD",           /* unknown type */
        "@PTF1 B 1 a.pt 10 0000000g pt",  /* bad file crc */
        "@PTF1 B 1 a.pt 10 00000000 elf", /* unknown kind */
        "@PTF1 B 1 a234567890123456789012345678901234567890123456789012345678901234X 1 "
        "00000000 pt",                   /* 65 chars */
        "@PTF1 E 1 a.pt -1 10 00000000", /* negative count */
    };
    struct ptd_frame_rec r;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char line[PTD_FRAME_LINE_MAX];
        int n = snprintf(line, sizeof line, "%s ", bodies[i]);
        n += snprintf(line + n, sizeof line - (size_t)n, "%08x", ptd_crc32(0, line, (size_t)n));
        assert_int_equal(ptd_frame_parse(line, (size_t)n, &r), PTD_FRAME_CORRUPT);
        assert_int_equal(r.damage, PTD_FRAME_BAD_SYNTAX);
    }
    /* the same way, a good one parses */
    char line[PTD_FRAME_LINE_MAX];
    int n = snprintf(line, sizeof line, "@PTF1 D 1 4294967295 ffffffffffff P QUJD ");
    n += snprintf(line + n, sizeof line - (size_t)n, "%08x", ptd_crc32(0, line, (size_t)n));
    assert_int_equal(ptd_frame_parse(line, (size_t)n, &r), PTD_FRAME_DATA);
    assert_int_equal(r.seq, 4294967295u);
    assert_int_equal(r.offset, 0xffffffffffffull);
    assert_true(r.psb);
    assert_int_equal(r.len, 3);
    assert_memory_equal(r.payload, "ABC", 3);
}

/* Other output around frame lines: text before the prefix on the same
 * line, CR LF and CR endings, blank lines, ANSI escapes, lines without a
 * prefix, the bare prefix. */
static void noise(void **state)
{
    (void)state;
    char line[PTD_FRAME_LINE_MAX], noisy[PTD_FRAME_LINE_MAX + 64];
    struct ptd_frame_rec r;
    one_line(line, sizeof line, 'D');
    int n = snprintf(noisy, sizeof noisy, "\x1b[=3h\x1b[0mBdsDxe: @PTF0 %s\r\n", line);
    assert_int_equal(ptd_frame_parse(noisy, (size_t)n, &r), PTD_FRAME_DATA);
    assert_int_equal(r.seq, 1);
    assert_int_equal(r.offset, 96);
    assert_int_equal(r.len, 54);
    n = snprintf(noisy, sizeof noisy, "%s\r", line);
    assert_int_equal(ptd_frame_parse(noisy, (size_t)n, &r), PTD_FRAME_DATA);
    n = snprintf(noisy, sizeof noisy, "%s  \t\n", line);
    assert_int_equal(ptd_frame_parse(noisy, (size_t)n, &r), PTD_FRAME_DATA);
    /* noise inside the line */
    n = snprintf(noisy, sizeof noisy, "%.30sFSOpen: Open 'x' Success\r\n%s", line, line + 30);
    assert_int_equal(ptd_frame_parse(noisy, (size_t)n, &r), PTD_FRAME_CORRUPT);
    assert_int_equal(ptd_frame_parse("", 0, &r), PTD_FRAME_NONE);
    assert_int_equal(ptd_frame_parse("ptboot: exit status=0\r\n", 23, &r), PTD_FRAME_NONE);
    assert_int_equal(ptd_frame_parse("@PTF", 4, &r), PTD_FRAME_NONE);
    assert_int_equal(ptd_frame_parse("@PTF1 ", 6, &r), PTD_FRAME_CORRUPT);
    assert_int_equal(ptd_frame_parse("@PTF1 \r\n", 8, &r), PTD_FRAME_CORRUPT);
    assert_int_equal(ptd_frame_parse("@PTF1 D", 7, &r), PTD_FRAME_CORRUPT);
    /* a damaged type letter: type unknown, seq and offset still read */
    one_line(line, sizeof line, 'D');
    line[6] = '~';
    assert_int_equal(ptd_frame_parse(line, strlen(line), &r), PTD_FRAME_CORRUPT);
    assert_int_equal(r.hint_type, 0);
    assert_true(r.hint_seq && r.hint_offset && r.hint_id);
    assert_int_equal(r.seq, 1);
    assert_int_equal(r.offset, 96);
    /* a damaged begin line: its name is not read as a seq */
    one_line(line, sizeof line, 'B');
    line[strlen(line) - 1] ^= 1;
    assert_int_equal(ptd_frame_parse(line, strlen(line), &r), PTD_FRAME_CORRUPT);
    assert_int_equal(r.damage, PTD_FRAME_BAD_CRC);
    assert_int_equal(r.hint_type, 'B');
    assert_false(r.hint_seq);
}

static void bad_init(void **state)
{
    (void)state;
    struct ptd_frame_enc e;
    uint8_t d[4] = { 0 };
    char buf[PTD_FRAME_LINE_MAX];
    assert_int_equal(ptd_frame_enc_init(&e, 1, "", d, 4, PTD_FRAME_KIND_RAW, 0), -1);
    assert_int_equal(ptd_frame_enc_init(&e, 1, "a b", d, 4, PTD_FRAME_KIND_RAW, 0), -1);
    assert_int_equal(ptd_frame_enc_init(&e, 1, NULL, d, 4, PTD_FRAME_KIND_RAW, 0), -1);
    assert_int_equal(ptd_frame_enc_init(&e, 1, "a\tb", d, 4, PTD_FRAME_KIND_RAW, 0), -1);
    assert_int_equal(
        ptd_frame_enc_init(&e, 1, "x", d, 4, PTD_FRAME_KIND_RAW, PTD_FRAME_PAYLOAD_MAX + 1), -1);
    assert_int_equal(ptd_frame_enc_init(&e, 1, "x", d, 4, (enum ptd_frame_kind)5, 0), -1);
    assert_int_equal(ptd_frame_enc_init(&e, 1, "x", NULL, 4, PTD_FRAME_KIND_RAW, 0), -1);
    char name[PTD_FRAME_NAME_MAX + 2];
    memset(name, 'n', sizeof name);
    name[PTD_FRAME_NAME_MAX] = 0;
    assert_int_equal(ptd_frame_enc_init(&e, 1, name, d, 4, PTD_FRAME_KIND_RAW, 0), 0);
    name[PTD_FRAME_NAME_MAX] = 'n';
    name[PTD_FRAME_NAME_MAX + 1] = 0;
    assert_int_equal(ptd_frame_enc_init(&e, 1, name, d, 4, PTD_FRAME_KIND_RAW, 0), -1);
    /* a buffer below one line's worth makes no progress and does not write */
    assert_int_equal(ptd_frame_enc_init(&e, 1, "x", d, 4, PTD_FRAME_KIND_RAW, 0), 0);
    assert_int_equal(ptd_frame_enc_lines(&e, buf, sizeof buf - 1), 0);
    assert_true(ptd_frame_enc_lines(&e, buf, sizeof buf) > 0);
    assert_string_equal(ptd_frame_kind_name(PTD_FRAME_KIND_PT), "pt");
    assert_null(ptd_frame_kind_name(9));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(crc32_vectors),
        cmocka_unit_test(round_trips),
        cmocka_unit_test(psb_cuts),
        cmocka_unit_test(every_corruption),
        cmocka_unit_test(bad_fields_good_crc),
        cmocka_unit_test(noise),
        cmocka_unit_test(bad_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
