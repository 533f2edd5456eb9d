/* libFuzzer target for the packet layer, the encoder and the formatter
 * (clang -fsanitize=fuzzer,address,undefined). Any input must decode
 * without reading out of bounds or looping; and:
 *  - the batch decoder gives the packets and errors ptd_pkt_next() gives;
 *  - every decoded packet re-encodes, and the re-encoded bytes decode to the
 *    same packet (kind, payload, fields);
 *  - the dump loop ends, with lines that fit PTD_FMT_LINE_MAX.
 * The first input byte picks the dump options. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_fmt.h"
#include "decoder/ptd_pkt.h"

#define CHECK(c)              \
    do {                      \
        if (!(c))             \
            __builtin_trap(); \
    } while (0)

static void check_reencode(const struct ptd_pkt *p, uint8_t in_block_sz4)
{
    uint8_t b[PTD_PKT_MAX_SIZE];
    struct ptd_pkt q = *p, r;
    struct ptd_pkt_decoder d;
    int n;

    if (p->kind == PTD_PKT_INVALID)
        return; /* an erratum's corrupted packet has no encoding */
    if (p->kind == PTD_PKT_BIP)
        q.flags = in_block_sz4;
    n = ptd_enc_packet(b, sizeof b, &q);
    CHECK(n > 0);
    if (p->kind == PTD_PKT_BIP)
        return; /* needs its BBP to decode */
    ptd_pkt_init(&d, b, (size_t)n);
    CHECK(ptd_pkt_next(&d, &r) == n);
    CHECK(r.kind == p->kind && r.payload == p->payload && r.a == p->a && r.aux == p->aux);
    /* flags: PWRX keeps all four wake bits, others their defined bits */
    CHECK(r.flags == p->flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ptd_pkt_decoder a, b;
    struct ptd_pkt out[64];
    uint64_t offs[64];
    uint32_t flags = 0;
    int ra, st;

    if (size >= 2 && (data[0] & 0x80)) {
        flags = (uint32_t)data[0] | (uint32_t)data[1] << 8;
        data += 2;
        size -= 2;
    }

    /* next() against batch, through errors and resyncs */
    ptd_pkt_init(&a, data, size);
    ptd_pkt_init(&b, data, size);
    unsigned errata =
        ((flags >> 9) & 1 ? PTD_ERRATUM_SKD007 : 0) | ((flags >> 10) & 1 ? PTD_ERRATUM_SKZ84 : 0);
    ptd_pkt_set_errata(&a, errata);
    ptd_pkt_set_errata(&b, errata);
    ptd_pkt_set_libipt20(&a, (flags >> 11) & 1);
    ptd_pkt_set_libipt20(&b, (flags >> 11) & 1);
    ra = (flags & 1) ? ptd_pkt_sync_set(&a, 0) : ptd_pkt_sync_forward(&a);
    CHECK(ra == ((flags & 1) ? ptd_pkt_sync_set(&b, 0) : ptd_pkt_sync_forward(&b)));
    for (size_t guard = 0; ra == 0 && guard <= size + 1; guard++) {
        size_t n = ptd_pkt_next_batch(&b, out, offs, 1 + (flags >> 1) % 64, &st);
        for (size_t i = 0; i < n; i++) {
            struct ptd_pkt p;
            uint64_t off = ptd_pkt_offset(&a);
            uint8_t sz4 = a.block_sz4;
            int r = ptd_pkt_next(&a, &p);
            CHECK(r > 0 && off == offs[i] && p.meta == out[i].meta && p.payload == out[i].payload);
            CHECK(off + (uint64_t)r <= size);
            check_reencode(&p, sz4);
        }
        if (st == 0)
            continue;
        CHECK(ptd_pkt_next(&a, &out[0]) == st);
        CHECK(ptd_pkt_offset(&a) == ptd_pkt_offset(&b));
        if (st == -PTD_ERR_EOS)
            break;
        uint64_t skipped, before = ptd_pkt_offset(&a);
        ra = ptd_pkt_resync(&a, &skipped);
        CHECK(ra == ptd_pkt_resync(&b, NULL));
        CHECK(ra < 0 || ptd_pkt_offset(&a) == ptd_pkt_offset(&b));
        CHECK(ra < 0 || ptd_pkt_offset(&a) + 15 >= before);
    }

    /* the whole dump */
    struct ptd_dump dump;
    struct ptd_fmt_options opt = { .flags = (flags & 0x1ff) | ((flags >> 2) & PTD_FMT_LIBIPT20),
                                   .errata = ((flags >> 9) & 1 ? PTD_ERRATUM_SKD007 : 0) |
                                             ((flags >> 10) & 1 ? PTD_ERRATUM_SKZ84 : 0) };
    /* time tracking (--time/--tcal and their options) from bits 12..15 */
    static const uint32_t time_modes[4] = {
        0,
        PTD_FMT_TIME,
        PTD_FMT_TCAL | PTD_FMT_TIME_DELTA,
        PTD_FMT_TIME | PTD_FMT_TIME_DELTA | PTD_FMT_NO_WALL_CLOCK,
    };
    opt.flags |= time_modes[(flags >> 12) & 3];
    opt.flags |= (flags & (1u << 14)) ? PTD_FMT_KEEP_TCAL_ON_OVF : 0;
    opt.flags |= (flags & (1u << 15)) ? PTD_FMT_NO_TCAL : 0;
    opt.time.mtc_freq = (uint8_t)((flags >> 1) & 15);
    opt.time.nom_freq = (uint8_t)(flags >> 4);
    opt.time.cpuid_0x15_eax = (flags >> 5) & 3;
    opt.time.cpuid_0x15_ebx = 1 + ((flags >> 7) & 0x1ff);
    opt.time.errata = (flags >> 9) & 1 ? PTD_ERRATUM_SKL168 : 0;
    char line[PTD_FMT_LINE_MAX];
    int n;
    size_t lines = 0;
    ptd_dump_init(&dump, &opt);
    ptd_dump_feed(&dump, data, size);
    while ((n = ptd_dump_line(&dump, line, sizeof line)) > 0) {
        CHECK((size_t)n < sizeof line && line[n] == 0 && strlen(line) == (size_t)n);
        CHECK(++lines <= 5 * size + 2); /* a 1-byte CYC: up to 3 time diagnostics */
    }
    CHECK(n == 0);
    return 0;
}
