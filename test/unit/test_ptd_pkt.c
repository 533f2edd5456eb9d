/* Unit tests of decoder/ptd_pkt.c and decoder/ptd_enc.c: every packet kind
 * from known bytes, every IP compression case, malformed and truncated
 * packets, PSB search and resynchronisation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_pkt.h"

static int decode1(const uint8_t *b, size_t n, struct ptd_pkt *p)
{
    struct ptd_pkt_decoder d;
    ptd_pkt_init(&d, b, n);
    return ptd_pkt_next(&d, p);
}

/* Decode `bytes`, expect one packet of `kind` using all the bytes, then
 * check that every shorter prefix is reported as truncated and that the
 * encoder writes the same bytes back. */
static void check(const uint8_t *bytes, size_t n, uint8_t kind, struct ptd_pkt *out)
{
    struct ptd_pkt p;
    uint8_t enc[PTD_PKT_MAX_SIZE];
    int r = decode1(bytes, n, &p);

    assert_int_equal(r, (int)n);
    assert_int_equal(p.kind, kind);
    assert_int_equal(p.size, n);
    for (size_t k = 1; k < n; k++) {
        struct ptd_pkt q;
        assert_int_equal(decode1(bytes, k, &q), -PTD_ERR_TRUNCATED);
    }
    assert_int_equal(ptd_enc_packet(enc, sizeof enc, &p), (int)n);
    assert_memory_equal(enc, bytes, n);
    assert_int_equal(ptd_enc_packet(enc, n - 1, &p), -PTD_ERR_NOSPC);
    if (out)
        *out = p;
}

static void test_fixed_packets(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t pad[] = { 0x00 };
    static const uint8_t psbend[] = { 0x02, 0x23 };
    static const uint8_t ovf[] = { 0x02, 0xf3 };
    static const uint8_t stop[] = { 0x02, 0x83 };
    uint8_t psb[16];
    for (int i = 0; i < 16; i += 2) {
        psb[i] = 0x02;
        psb[i + 1] = 0x82;
    }
    check(pad, 1, PTD_PKT_PAD, NULL);
    check(psb, 16, PTD_PKT_PSB, NULL);
    check(psbend, 2, PTD_PKT_PSBEND, NULL);
    check(ovf, 2, PTD_PKT_OVF, NULL);
    check(stop, 2, PTD_PKT_STOP, &p);
    /* a broken PSB pattern is a bad packet */
    psb[9] = 0x83;
    assert_int_equal(decode1(psb, 16, &p), -PTD_ERR_BAD_PACKET);
}

static void test_tnt(void **state)
{
    (void)state;
    struct ptd_pkt p;
    /* 0x88 = 1000100 0: stop bit 6 (of the shifted value), bits 000100:
     * ptdump's "!...!" example is 0x...; check a few by hand */
    static const uint8_t t1[] = { 0x04 }; /* one bit, not taken */
    static const uint8_t t2[] = { 0x06 }; /* one bit, taken */
    static const uint8_t t6[] = { 0xa2 }; /* 1 010001: 6 bits 010001 */
    check(t1, 1, PTD_PKT_TNT8, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.payload, 0);
    check(t2, 1, PTD_PKT_TNT8, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.payload, 1);
    check(t6, 1, PTD_PKT_TNT8, &p);
    assert_int_equal(p.a, 6);
    assert_int_equal(p.payload, 0x11);

    static const uint8_t t64[] = { 0x02, 0xa3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    check(t64, 8, PTD_PKT_TNT64, &p);
    assert_int_equal(p.a, 47);
    assert_int_equal(p.payload, 0x7fffffffffffull);
    static const uint8_t t64_1[] = { 0x02, 0xa3, 0x02, 0, 0, 0, 0, 0 };
    static const uint8_t t64_stop[] = { 0x02, 0xa3, 0x01, 0, 0, 0, 0, 0 };
    assert_int_equal(decode1(t64_stop, 8, &p), -PTD_ERR_BAD_PACKET);
    check(t64_1, 8, PTD_PKT_TNT64, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.payload, 0);
    /* no stop bit: bad packet */
    static const uint8_t t64_0[] = { 0x02, 0xa3, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(decode1(t64_0, 8, &p), -PTD_ERR_BAD_PACKET);
    /* encoder rejects bad bit counts */
    uint8_t b[16];
    struct ptd_pkt q = ptd_pkt_make(PTD_PKT_TNT8, 0, 7, 0, 0);
    assert_int_equal(ptd_enc_packet(b, sizeof b, &q), -PTD_ERR_BAD_PACKET);
    q = ptd_pkt_make(PTD_PKT_TNT8, 0, 0, 0, 0);
    assert_int_equal(ptd_enc_packet(b, sizeof b, &q), -PTD_ERR_BAD_PACKET);
    q = ptd_pkt_make(PTD_PKT_TNT64, 0, 48, 0, 0);
    assert_int_equal(ptd_enc_packet(b, sizeof b, &q), -PTD_ERR_BAD_PACKET);
}

static void test_ip_packets(void **state)
{
    (void)state;
    static const uint8_t kinds[] = { PTD_PKT_TIP, PTD_PKT_TIP_PGE, PTD_PKT_TIP_PGD, PTD_PKT_FUP };
    static const uint8_t opcs[] = { 0x0d, 0x11, 0x01, 0x1d };
    static const unsigned ipcs[] = { 0, 1, 2, 3, 4, 6 };
    for (unsigned k = 0; k < 4; k++) {
        for (unsigned i = 0; i < 6; i++) {
            uint8_t b[9] = {
                (uint8_t)(opcs[k] | ipcs[i] << 5), 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88
            };
            int n = ptd_ipc_size(ipcs[i]);
            struct ptd_pkt p;
            check(b, 1 + (size_t)n, kinds[k], &p);
            assert_int_equal(p.a, ipcs[i]);
            assert_int_equal(p.payload, n ? 0x8877665544332211ull & (~0ull >> (64 - 8 * n)) : 0);
        }
        /* IPBytes 101 and 111 are reserved */
        for (unsigned ipc = 5; ipc <= 7; ipc += 2) {
            uint8_t b[9] = { (uint8_t)(opcs[k] | ipc << 5) };
            struct ptd_pkt p;
            assert_int_equal(decode1(b, 9, &p), -PTD_ERR_BAD_PACKET);
            p = ptd_pkt_make(kinds[k], 0, (uint8_t)ipc, 0, 0);
            assert_int_equal(ptd_enc_packet(b, sizeof b, &p), -PTD_ERR_BAD_PACKET);
        }
    }
}

static void test_last_ip(void **state)
{
    (void)state;
    struct ptd_last_ip l;
    uint64_t ip = 0;
    ptd_last_ip_init(&l);
    assert_int_equal(ptd_last_ip_query(&l, &ip), -PTD_ERR_NOIP);
    /* suppressed before any IP: still no IP */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_SUPPRESSED, 0), 0);
    assert_int_equal(ptd_last_ip_query(&l, &ip), -PTD_ERR_NOIP);
    /* 011: sign-extend bit 47 */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_SEXT_48, 0xffffffff1000ull), 0);
    assert_int_equal(ptd_last_ip_query(&l, &ip), 0);
    assert_int_equal(ip, 0xffffffffffff1000ull);
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_SEXT_48, 0x7fffffff1000ull), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0x00007fffffff1000ull);
    /* 001: replace bits 15:0 */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_UPDATE_16, 0xabcd), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0x00007fffffffabcdull);
    /* 010: replace bits 31:0 */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_UPDATE_32, 0x12345678), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0x00007fff12345678ull);
    /* 100: replace bits 47:0, keep 63:48 */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_FULL, 0xcccc000000000000ull), 0);
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_UPDATE_48, 0xcccccccc4000ull), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0xcccccccccccc4000ull);
    /* 110: full */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_FULL, 0x00cccccccccc4000ull), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0x00cccccccccc4000ull);
    /* 000: suppressed, then an update restores */
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_SUPPRESSED, 0), 0);
    assert_int_equal(ptd_last_ip_query(&l, &ip), -PTD_ERR_IP_SUPPRESSED);
    assert_int_equal(ptd_last_ip_update(&l, PTD_IPC_UPDATE_16, 0x1111), 0);
    ptd_last_ip_query(&l, &ip);
    assert_int_equal(ip, 0x00cccccccccc1111ull);
    /* reserved */
    assert_int_equal(ptd_last_ip_update(&l, 5, 0), -PTD_ERR_BAD_PACKET);
    assert_int_equal(ptd_last_ip_update(&l, 7, 0), -PTD_ERR_BAD_PACKET);
}

static void test_ip_compress(void **state)
{
    (void)state;
    uint64_t pl;
    assert_int_equal(ptd_enc_ip_compress(0x401000, 1, 0x401234, &pl), PTD_IPC_UPDATE_16);
    assert_int_equal(pl, 0x1234);
    assert_int_equal(ptd_enc_ip_compress(0x401000, 1, 0x7ff01234, &pl), PTD_IPC_UPDATE_32);
    assert_int_equal(pl, 0x7ff01234);
    assert_int_equal(ptd_enc_ip_compress(0x401000, 1, 0x7fff00001234ull, &pl), PTD_IPC_SEXT_48);
    assert_int_equal(ptd_enc_ip_compress(0x401000, 0, 0x401234, &pl), PTD_IPC_SEXT_48);
    assert_int_equal(ptd_enc_ip_compress(0xffffffff81000000ull, 1, 0xffff800000001000ull, &pl),
                     PTD_IPC_SEXT_48);
    assert_int_equal(pl, 0x800000001000ull);
    assert_int_equal(ptd_enc_ip_compress(0x00cc000000000000ull, 1, 0x00cc000012345678ull, &pl),
                     PTD_IPC_UPDATE_32);
    assert_int_equal(ptd_enc_ip_compress(0x00cc000000000000ull, 1, 0x00cc100012345678ull, &pl),
                     PTD_IPC_UPDATE_48);
    assert_int_equal(ptd_enc_ip_compress(0, 0, 0x00cc100012345678ull, &pl), PTD_IPC_FULL);
    /* round trip through last-IP for a walk of addresses */
    struct ptd_last_ip l;
    uint64_t last = 0, got;
    int have = 0;
    static const uint64_t ips[] = { 0x401000,
                                    0x401010,
                                    0x7ffff7a00000ull,
                                    0x7ffff7a01234ull,
                                    0xffffffff81000000ull,
                                    0x00cc000000001000ull,
                                    0x00cc00000000f000ull,
                                    0x400000,
                                    0xffff800000000000ull };
    ptd_last_ip_init(&l);
    for (size_t i = 0; i < sizeof ips / sizeof ips[0]; i++) {
        unsigned ipc = ptd_enc_ip_compress(last, have, ips[i], &pl);
        assert_int_equal(ptd_last_ip_update(&l, ipc, pl), 0);
        assert_int_equal(ptd_last_ip_query(&l, &got), 0);
        assert_int_equal(got, ips[i]);
        last = ips[i];
        have = 1;
    }
}

static void test_mode_pip_timing(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t mexec[] = { 0x99, 0x01 };
    static const uint8_t mexec32[] = { 0x99, 0x02 };
    static const uint8_t mtsx[] = { 0x99, 0x21 };
    static const uint8_t mtsx_abrt[] = { 0x99, 0x22 };
    static const uint8_t mbad[] = { 0x99, 0x40 };
    check(mexec, 2, PTD_PKT_MODE_EXEC, &p);
    assert_int_equal(p.flags, PTD_PKTF_CSL);
    check(mexec32, 2, PTD_PKT_MODE_EXEC, &p);
    assert_int_equal(p.flags, PTD_PKTF_CSD);
    check(mtsx, 2, PTD_PKT_MODE_TSX, &p);
    assert_int_equal(p.flags, PTD_PKTF_INTX);
    check(mtsx_abrt, 2, PTD_PKT_MODE_TSX, &p);
    assert_int_equal(p.flags, PTD_PKTF_ABRT);
    assert_int_equal(decode1(mbad, 2, &p), -PTD_ERR_BAD_PACKET);

    /* PIP: CR3 0xafafa0 with NR, as libipt's encoder writes it */
    static const uint8_t pip[] = { 0x02, 0x43, 0xfb, 0xfa, 0x0a, 0, 0, 0 };
    check(pip, 8, PTD_PKT_PIP, &p);
    assert_int_equal(p.payload, 0xafafa0);
    assert_int_equal(p.flags, PTD_PKTF_NR);

    static const uint8_t tsc[] = { 0x19, 0x45, 0x23, 0x01, 0, 0, 0, 0x80 };
    check(tsc, 8, PTD_PKT_TSC, &p);
    assert_int_equal(p.payload, 0x80000000012345ull);
    static const uint8_t mtc[] = { 0x59, 0x94 };
    check(mtc, 2, PTD_PKT_MTC, &p);
    assert_int_equal(p.payload, 0x94);
    static const uint8_t tma[] = { 0x02, 0x73, 0x34, 0x12, 0x00, 0xab, 0x01 };
    check(tma, 7, PTD_PKT_TMA, &p);
    assert_int_equal(p.payload, 0x1234);
    assert_int_equal(p.aux, 0x1ab);
    static const uint8_t tma_rsvd[] = { 0x02, 0x73, 0x34, 0x12, 0x00, 0xab, 0x03 };
    assert_int_equal(decode1(tma_rsvd, 7, &p), -PTD_ERR_BAD_PACKET);
    static const uint8_t cbr[] = { 0x02, 0x03, 0x24, 0x00 };
    check(cbr, 4, PTD_PKT_CBR, &p);
    assert_int_equal(p.payload, 0x24);
    static const uint8_t vmcs[] = { 0x02, 0xc8, 0xcd, 0xab, 0, 0, 0 };
    check(vmcs, 7, PTD_PKT_VMCS, &p);
    assert_int_equal(p.payload, 0xabcd000);
}

static void test_cyc(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t c1[] = { 0xbf, 0x04 }; /* libipt's encoding of 0x57 */
    check(c1, 2, PTD_PKT_CYC, &p);
    assert_int_equal(p.payload, 0x57);
    static const uint8_t c0[] = { 0x03 };
    check(c0, 1, PTD_PKT_CYC, &p);
    assert_int_equal(p.payload, 0);
    /* the longest CYC: 5 + 8 x 7 bits */
    uint8_t cmax[9] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
    check(cmax, 9, PTD_PKT_CYC, &p);
    assert_int_equal(p.payload, (1ull << 61) - 1);
    /* a 9th extension byte cannot fit a 64-bit counter */
    uint8_t clong[12] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe };
    assert_int_equal(decode1(clong, sizeof clong, &p), -PTD_ERR_BAD_PACKET);
}

static void test_power_ptw_mnt(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t mwait[] = { 0x02, 0xc2, 0x0b, 0, 0, 0, 0x01, 0, 0, 0 };
    check(mwait, 10, PTD_PKT_MWAIT, &p);
    assert_int_equal(p.payload, 0xb);
    assert_int_equal(p.aux, 1);
    static const uint8_t pwre[] = { 0x02, 0x22, 0x80,
                                    0x10 }; /* c1.0, hw (SDM: HW is byte 2 bit 7) */
    check(pwre, 4, PTD_PKT_PWRE, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.aux, 0);
    assert_int_equal(p.flags, PTD_PKTF_HW);
    static const uint8_t pwrx[] = { 0x02, 0xa2, 0x05, 0x01, 0, 0, 0 }; /* int: c1, c6 */
    check(pwrx, 7, PTD_PKT_PWRX, &p);
    assert_int_equal(p.a, 0);
    assert_int_equal(p.aux, 5);
    assert_int_equal(p.flags, PTD_PKTF_WR_INT);
    static const uint8_t exstop[] = { 0x02, 0x62 };
    static const uint8_t exstop_ip[] = { 0x02, 0xe2 };
    check(exstop, 2, PTD_PKT_EXSTOP, &p);
    assert_int_equal(p.flags, 0);
    check(exstop_ip, 2, PTD_PKT_EXSTOP, &p);
    assert_int_equal(p.flags, PTD_PKTF_IP);
    static const uint8_t ptw4[] = { 0x02, 0x92, 0xef, 0xcd, 0xab, 0x90 };
    check(ptw4, 6, PTD_PKT_PTW, &p);
    assert_int_equal(p.a, 0);
    assert_int_equal(p.flags, PTD_PKTF_IP);
    assert_int_equal(p.payload, 0x90abcdef);
    static const uint8_t ptw8[] = { 0x02, 0x32, 1, 2, 3, 4, 5, 6, 7, 8 };
    check(ptw8, 10, PTD_PKT_PTW, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.payload, 0x0807060504030201ull);
    static const uint8_t ptw_bad[] = { 0x02, 0x52, 1, 2, 3, 4, 5, 6, 7, 8 };
    assert_int_equal(decode1(ptw_bad, 10, &p), -PTD_ERR_BAD_PACKET);
    static const uint8_t mnt[] = {
        0x02, 0xc3, 0x88, 0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0x42, 0x22, 0x2a
    };
    check(mnt, 11, PTD_PKT_MNT, &p);
    assert_int_equal(p.payload, 0x2a2242e5d4c3b2a1ull);
    static const uint8_t mnt_bad[] = { 0x02, 0xc3, 0x89, 0, 0, 0, 0, 0, 0, 0, 0 };
    assert_int_equal(decode1(mnt_bad, 11, &p), -PTD_ERR_BAD_OPC);
}

static void test_event_block_packets(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t cfe[] = { 0x02, 0x13, 0x81, 0x0e }; /* INTR, vector 14, IP */
    check(cfe, 4, PTD_PKT_CFE, &p);
    assert_int_equal(p.a, 1);
    assert_int_equal(p.aux, 14);
    assert_int_equal(p.flags, PTD_PKTF_IP);
    static const uint8_t evd[] = { 0x02, 0x53, 0x02, 0xaa, 0x0b, 0xf0, 0, 0, 0, 0, 0 };
    check(evd, 11, PTD_PKT_EVD, &p);
    assert_int_equal(p.a, 2);
    assert_int_equal(p.payload, 0xf00baa);
    static const uint8_t bbp[] = { 0x02, 0x63, 0x85 };
    check(bbp, 3, PTD_PKT_BBP, &p);
    assert_int_equal(p.a, 5);
    assert_int_equal(p.flags, PTD_PKTF_SZ4);
    static const uint8_t bep[] = { 0x02, 0xb3 };
    check(bep, 2, PTD_PKT_BEP, &p);
    assert_int_equal(p.flags, PTD_PKTF_IP);

    /* inside a block, x..x100 bytes are BIP; outside they are TNT-8 */
    static const uint8_t blk[] = { 0x02, 0x63, 0x80, 0x1c, 1, 2, 3, 4, 0x02, 0x33, 0x1c };
    struct ptd_pkt_decoder d;
    ptd_pkt_init(&d, blk, sizeof blk);
    assert_int_equal(ptd_pkt_next(&d, &p), 3);
    assert_int_equal(p.kind, PTD_PKT_BBP);
    assert_int_equal(ptd_pkt_next(&d, &p), 5);
    assert_int_equal(p.kind, PTD_PKT_BIP);
    assert_int_equal(p.a, 3);
    assert_int_equal(p.payload, 0x04030201);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_int_equal(p.kind, PTD_PKT_BEP);
    assert_int_equal(ptd_pkt_next(&d, &p), 1);
    assert_int_equal(p.kind, PTD_PKT_TNT8);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_EOS);
    /* 8-byte BIP */
    static const uint8_t blk8[] = { 0x02, 0x63, 0x00, 0x04, 1, 2, 3, 4, 5, 6, 7, 8 };
    ptd_pkt_init(&d, blk8, sizeof blk8);
    assert_int_equal(ptd_pkt_next(&d, &p), 3);
    assert_int_equal(ptd_pkt_next(&d, &p), 9);
    assert_int_equal(p.payload, 0x0807060504030201ull);
    ptd_pkt_init(&d, blk8, sizeof blk8 - 1);
    assert_int_equal(ptd_pkt_next(&d, &p), 3);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_TRUNCATED);
}

static void test_unknown_opcodes(void **state)
{
    (void)state;
    struct ptd_pkt p;
    /* 1-byte opcodes with bits 1:0 = 01 that are not TIP/FUP/TSC/MTC/MODE/
     * TRIG (0xc9: the one libipt's encoder uses as a bad opcode) */
    static const uint8_t bad1[] = { 0x05, 0x09, 0x15, 0x45, 0x25, 0x29, 0xc9 };
    for (size_t i = 0; i < sizeof bad1; i++) {
        uint8_t b[16] = { bad1[i] };
        struct ptd_pkt_decoder d;
        ptd_pkt_init(&d, b, sizeof b);
        assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_BAD_OPC);
        assert_int_equal(ptd_pkt_offset(&d), 0); /* stays at the bad byte */
    }
    static const uint8_t bad2[] = { 0x00, 0x01, 0x02, 0x04, 0x40, 0x82 + 1, 0xff };
    for (size_t i = 0; i < sizeof bad2; i++) {
        uint8_t b[16] = { 0x02, bad2[i] };
        if (bad2[i] == 0x83)
            continue; /* TraceStop */
        assert_int_equal(decode1(b, sizeof b, &p), -PTD_ERR_BAD_OPC);
    }
    /* every 2-byte opcode is classified consistently with the table */
    for (unsigned e = 0; e < 256; e++) {
        uint8_t b[16] = { 0x02, (uint8_t)e };
        for (int i = 2; i < 16; i++)
            b[i] = (i & 1) ? 0x82 : 0x02;
        int r = decode1(b, sizeof b, &p);
        if (r > 0) {
            const struct ptd_pkt_kind_info *k = &ptd_pkt_kinds[p.kind];
            assert_int_equal(k->opc, 0x02);
            assert_int_equal(e & k->ext_mask, k->ext);
        }
    }
    /* empty buffer */
    assert_int_equal(decode1((const uint8_t *)"", 0, &p), -PTD_ERR_EOS);
}

static void test_sync_and_resync(void **state)
{
    (void)state;
    uint8_t b[96];
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    uint64_t skipped = 0;

    memset(b, 0, sizeof b);
    b[5] = 0x05; /* an unknown opcode at 5 */
    for (int i = 0; i < 16; i += 2) {
        b[40 + i] = 0x02;
        b[41 + i] = 0x82;
    }
    b[56] = 0x02;
    b[57] = 0x23; /* psbend */
    assert_int_equal(ptd_psb_find(b, sizeof b, 0), 40);
    assert_int_equal(ptd_psb_find(b, sizeof b, 41), -PTD_ERR_EOS);

    ptd_pkt_init(&d, b, sizeof b);
    assert_int_equal(ptd_pkt_sync_forward(&d), 0);
    assert_int_equal(ptd_pkt_offset(&d), 40);
    assert_int_equal(ptd_pkt_next(&d, &p), 16);
    assert_int_equal(p.kind, PTD_PKT_PSB);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_int_equal(p.kind, PTD_PKT_PSBEND);
    /* no further PSB */
    assert_int_equal(ptd_pkt_sync_forward(&d), -PTD_ERR_EOS);

    /* decode from 0, hit the bad opcode, resync to the PSB */
    ptd_pkt_init(&d, b, sizeof b);
    ptd_pkt_sync_set(&d, 0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(ptd_pkt_next(&d, &p), 1);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_BAD_OPC);
    assert_int_equal(ptd_pkt_offset(&d), 5);
    assert_int_equal(ptd_pkt_resync(&d, &skipped), 0);
    assert_int_equal(ptd_pkt_offset(&d), 40);
    assert_int_equal(skipped, 35);
    /* a PSB at an odd offset is found too */
    memset(b, 0, sizeof b);
    for (int i = 0; i < 16; i += 2) {
        b[13 + i] = 0x02;
        b[14 + i] = 0x82;
    }
    ptd_pkt_init(&d, b, sizeof b);
    assert_int_equal(ptd_pkt_sync_forward(&d), 0);
    assert_int_equal(ptd_pkt_offset(&d), 13);
    /* truncated PSB at the end: none */
    ptd_pkt_init(&d, b, 13 + 15);
    assert_int_equal(ptd_pkt_sync_forward(&d), -PTD_ERR_EOS);
    assert_int_equal(ptd_pkt_sync_set(&d, 1000), -PTD_ERR_EOS);
}

static void test_batch(void **state)
{
    (void)state;
    uint8_t b[64];
    struct ptd_encoder e;
    struct ptd_pkt in[6], out[8];
    uint64_t offs[8];
    int st;

    in[0] = ptd_pkt_make(PTD_PKT_PSB, 0, 0, 0, 0);
    in[1] = ptd_pkt_make(PTD_PKT_FUP, 0x401000, PTD_IPC_SEXT_48, 0, 0);
    in[2] = ptd_pkt_make(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
    in[3] = ptd_pkt_make(PTD_PKT_PSBEND, 0, 0, 0, 0);
    in[4] = ptd_pkt_make(PTD_PKT_TNT8, 0x5, 3, 0, 0);
    in[5] = ptd_pkt_make(PTD_PKT_TIP_PGD, 0, PTD_IPC_SUPPRESSED, 0, 0);
    ptd_enc_init(&e, b, sizeof b);
    for (int i = 0; i < 6; i++)
        assert_true(ptd_enc_next(&e, &in[i]) > 0);
    struct ptd_pkt_decoder d;
    ptd_pkt_init(&d, b, (size_t)ptd_enc_offset(&e));
    assert_int_equal(ptd_pkt_next_batch(&d, out, offs, 3, &st), 3);
    assert_int_equal(st, 0);
    assert_int_equal(offs[1], 16);
    assert_int_equal(ptd_pkt_next_batch(&d, out + 3, offs + 3, 5, &st), 3);
    assert_int_equal(st, -PTD_ERR_EOS);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(out[i].kind, in[i].kind);
        assert_int_equal(out[i].payload, in[i].payload);
        assert_int_equal(out[i].a, in[i].a);
    }
    assert_int_equal(offs[5], 16 + 7 + 2 + 2 + 1);
}

static void test_errata(void **state)
{
    (void)state;
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    /* a TMA with a reserved bit set, a bogus byte, then PAD */
    static const uint8_t b[] = { 0x02, 0x73, 0x34, 0x12, 0x00, 0xab, 0x03, 0x99, 0x00 };

    assert_true(ptd_errata_cpu(6, 0x55) & PTD_ERRATUM_SKZ84);
    assert_true(ptd_errata_cpu(19, 1) & PTD_ERRATUM_SKZ84);
    assert_true(ptd_errata_cpu(6, 0x5e) & PTD_ERRATUM_SKD007);
    assert_false(ptd_errata_cpu(6, 0x3d) & (PTD_ERRATUM_SKZ84 | PTD_ERRATUM_SKD007));
    assert_int_equal(ptd_errata_cpu(15, 0x55), 0);

    ptd_pkt_init(&d, b, sizeof b);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_BAD_PACKET);
    ptd_pkt_set_errata(&d, PTD_ERRATUM_SKZ84);
    assert_int_equal(ptd_pkt_next(&d, &p), 8);
    assert_int_equal(p.kind, PTD_PKT_INVALID);
    assert_int_equal(ptd_pkt_next(&d, &p), 1);
    assert_int_equal(p.kind, PTD_PKT_PAD);
    /* cut by the end of the buffer: what is there */
    ptd_pkt_init(&d, b, 7);
    ptd_pkt_set_errata(&d, PTD_ERRATUM_SKZ84);
    assert_int_equal(ptd_pkt_next(&d, &p), 7);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_EOS);
    /* the encoder has no encoding for it */
    uint8_t out[16];
    assert_int_equal(ptd_enc_packet(out, sizeof out, &p), -PTD_ERR_BAD_OPC);
}

static void test_libipt20(void **state)
{
    (void)state;
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    static const uint8_t cfe[] = { 0x02, 0x13, 0x81, 0x0e };
    static const uint8_t evd[] = { 0x02, 0x53, 0x02, 0, 0, 0, 0, 0, 0, 0, 0 };
    static const uint8_t bbp[] = { 0x02, 0x63, 0x85 };
    static const uint8_t bep[] = { 0x02, 0x33 };
    const uint8_t *v[] = { cfe, evd, bbp, bep };
    const size_t n[] = { sizeof cfe, sizeof evd, sizeof bbp, sizeof bep };

    for (int i = 0; i < 4; i++) {
        ptd_pkt_init(&d, v[i], n[i]);
        assert_int_equal(ptd_pkt_next(&d, &p), (int)n[i]);
        ptd_pkt_init(&d, v[i], n[i]);
        ptd_pkt_set_libipt20(&d, 1);
        assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_BAD_OPC);
    }
}

/* TRIG (SDM "Trigger Tracing"): 3 bytes, or 5 with a valid ICNT; the
 * fields as libipt reads them (trbv, ip, icntv, mult, icnt). */
static void test_trig(void **state)
{
    (void)state;
    struct ptd_pkt p;
    static const uint8_t trig[] = { 0xd9, 0x20, 0x03 }; /* trig 03, mult */
    static const uint8_t trig_icnt[] = { 0xd9, 0xe0, 0xa1, 0x17,
                                         0x00 }; /* a1, ip, mult, icnt: 23 */
    static const uint8_t trig_icnt0[] = { 0xd9, 0x40, 0x1a, 0x00, 0x00 }; /* 1a, icnt: 0 */
    check(trig, 3, PTD_PKT_TRIG, &p);
    assert_int_equal(p.a, 0x03);
    assert_int_equal(p.flags, PTD_PKTF_MULT);
    assert_int_equal(p.aux, 0);
    check(trig_icnt, 5, PTD_PKT_TRIG, &p);
    assert_int_equal(p.a, 0xa1);
    assert_int_equal(p.flags, PTD_PKTF_IP | PTD_PKTF_ICNTV | PTD_PKTF_MULT);
    assert_int_equal(p.aux, 23);
    check(trig_icnt0, 5, PTD_PKT_TRIG, &p);
    assert_int_equal(p.flags, PTD_PKTF_ICNTV);
    assert_int_equal(p.aux, 0);
    /* an ICNT needs ICNTV (the encoder refuses it otherwise) */
    uint8_t out[8];
    p = ptd_pkt_make(PTD_PKT_TRIG, 0, 1, 5, 0);
    assert_int_equal(ptd_enc_packet(out, sizeof out, &p), -PTD_ERR_BAD_PACKET);
    /* libipt 2.0 did not know it: an unknown opcode */
    struct ptd_pkt_decoder d;
    ptd_pkt_init(&d, trig, sizeof trig);
    ptd_pkt_set_libipt20(&d, 1);
    assert_int_equal(ptd_pkt_next(&d, &p), -PTD_ERR_BAD_OPC);
}

/* SKD007: a 2-byte CYC whose second byte is 0x02 and that is followed by
 * 0xf3 is an OVF that cut a CYC short: with the erratum the packet layer
 * gives the OVF at the CYC's offset, 3 bytes in the trace (current libipt's
 * packet decoder); without it, or in libipt 2.0 mode, the CYCs as they are. */
static void test_skd007(void **state)
{
    (void)state;
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    static const uint8_t b[] = { 0xf7, 0x02, 0xf3, 0x00 };
    ptd_pkt_init(&d, b, sizeof b);
    ptd_pkt_set_errata(&d, PTD_ERRATUM_SKD007);
    assert_int_equal(ptd_pkt_next(&d, &p), 3);
    assert_int_equal(p.kind, PTD_PKT_OVF);
    assert_int_equal(p.size, 2);
    assert_int_equal(ptd_pkt_offset(&d), 3);
    assert_int_equal(ptd_pkt_next(&d, &p), 1);
    assert_int_equal(p.kind, PTD_PKT_PAD);
    /* the batch decoder too */
    struct ptd_pkt out[4];
    uint64_t offs[4];
    int st;
    ptd_pkt_init(&d, b, sizeof b);
    ptd_pkt_set_errata(&d, PTD_ERRATUM_SKD007);
    assert_int_equal(ptd_pkt_next_batch(&d, out, offs, 4, &st), 2);
    assert_int_equal(out[0].kind, PTD_PKT_OVF);
    assert_int_equal(offs[1], 3);
    /* no erratum: two CYCs */
    ptd_pkt_init(&d, b, sizeof b);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_int_equal(p.kind, PTD_PKT_CYC);
    assert_int_equal(p.payload, 0x3e);
    ptd_pkt_init(&d, b, sizeof b);
    ptd_pkt_set_errata(&d, PTD_ERRATUM_SKD007);
    ptd_pkt_set_libipt20(&d, 1);
    assert_int_equal(ptd_pkt_next(&d, &p), 2);
    assert_int_equal(p.kind, PTD_PKT_CYC);
    /* not the pattern: a second byte other than 0x02, or no 0xf3 after */
    static const uint8_t c[] = { 0xf7, 0x04, 0xf3 }, e[] = { 0xf7, 0x02, 0xf2 },
                         f[] = { 0xf7, 0x02 };
    const uint8_t *v[] = { c, e, f };
    const size_t n[] = { sizeof c, sizeof e, sizeof f };
    for (int i = 0; i < 3; i++) {
        ptd_pkt_init(&d, v[i], n[i]);
        ptd_pkt_set_errata(&d, PTD_ERRATUM_SKD007);
        assert_int_equal(ptd_pkt_next(&d, &p), 2);
        assert_int_equal(p.kind, PTD_PKT_CYC);
    }
}

/* PWRE's HW flag: the SDM's byte 2 bit 7 by default, libipt's bit 3 on
 * request (and with libipt 2.0), and the encoder writes either. */
static void test_pwre_hw_bit(void **state)
{
    (void)state;
    struct ptd_pkt_decoder d;
    struct ptd_pkt p;
    static const uint8_t sdm[] = { 0x02, 0x22, 0x80, 0x10 }, lib[] = { 0x02, 0x22, 0x08, 0x10 };
    ptd_pkt_init(&d, lib, sizeof lib);
    assert_int_equal(ptd_pkt_next(&d, &p), 4);
    assert_int_equal(p.flags, 0);
    ptd_pkt_init(&d, lib, sizeof lib);
    ptd_pkt_set_pwre_bit3(&d, 1);
    assert_int_equal(ptd_pkt_next(&d, &p), 4);
    assert_int_equal(p.flags, PTD_PKTF_HW);
    ptd_pkt_init(&d, sdm, sizeof sdm);
    ptd_pkt_set_pwre_bit3(&d, 1);
    assert_int_equal(ptd_pkt_next(&d, &p), 4);
    assert_int_equal(p.flags, 0);
    uint8_t out[8];
    p = ptd_pkt_make(PTD_PKT_PWRE, 0, 1, 0, PTD_PKTF_HW | PTD_PKTF_HW_BIT3);
    assert_int_equal(ptd_enc_packet(out, sizeof out, &p), 4);
    assert_memory_equal(out, lib, 4);
}

static void test_errstr(void **state)
{
    (void)state;
    assert_string_equal(ptd_errstr(-PTD_ERR_BAD_OPC), "unknown opcode");
    assert_string_equal(ptd_errstr(-PTD_ERR_BAD_PACKET), "unknown packet");
    assert_string_equal(ptd_errstr(PTD_ERR_EOS), "reached end of trace stream");
    assert_string_equal(ptd_errstr(12345), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixed_packets),
        cmocka_unit_test(test_tnt),
        cmocka_unit_test(test_ip_packets),
        cmocka_unit_test(test_last_ip),
        cmocka_unit_test(test_ip_compress),
        cmocka_unit_test(test_mode_pip_timing),
        cmocka_unit_test(test_cyc),
        cmocka_unit_test(test_power_ptw_mnt),
        cmocka_unit_test(test_event_block_packets),
        cmocka_unit_test(test_unknown_opcodes),
        cmocka_unit_test(test_sync_and_resync),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_errata),
        cmocka_unit_test(test_libipt20),
        cmocka_unit_test(test_trig),
        cmocka_unit_test(test_skd007),
        cmocka_unit_test(test_pwre_hw_bit),
        cmocka_unit_test(test_errstr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
