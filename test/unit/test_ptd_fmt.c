/* Unit tests of decoder/ptd_fmt.c: ptdump's line for every packet kind
 * (lines from libipt's dump-all-packets expected output; tracking columns
 * laid out as ptdump's print_buffer() prints them), options, the dump loop
 * with errors, resync and last-IP diagnostics. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_fmt.h"

static void expect_line(uint32_t flags, uint64_t off, struct ptd_pkt p, const char *want)
{
    struct ptd_fmt_options opt = { .flags = flags };
    struct ptd_fmt_state st;
    uint8_t raw[PTD_PKT_MAX_SIZE];
    char line[PTD_FMT_LINE_MAX];
    int n = ptd_enc_packet(raw, sizeof raw, &p);

    assert_true(n > 0);
    p.size = (uint8_t)n;
    ptd_fmt_state_init(&st);
    n = ptd_fmt_packet(line, sizeof line, &opt, &st, off, &p, raw, NULL, 0);
    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(line, want);
}

#define PK(kind, payload, a, aux, flags) ptd_pkt_make(PTD_PKT_##kind, payload, a, aux, flags)

static void test_all_kinds(void **state)
{
    (void)state;
    expect_line(0, 0x2, PK(PSB, 0, 0, 0, 0), "0000000000000002  psb");
    expect_line(0, 0x12, PK(PAD, 0, 0, 0, 0), "0000000000000012  pad");
    expect_line(0, 0x15, PK(TNT8, 0x11, 5, 0, 0), "0000000000000015  tnt.8      !...!");
    expect_line(0, 0x16, PK(TNT64, 0x49324c9324cdull, 47, 0, 0),
                "0000000000000016  tnt.64     !..!..!..!!..!..!..!!..!..!..!!..!..!..!!..!!.!");
    expect_line(0, 0x2c, PK(TIP, 0x1001, 2, 0, 0), "000000000000002c  tip        2: ????????00001001");
    expect_line(0, 0x35, PK(TIP_PGE, 0xffffffff2000ull, 3, 0, 0), "0000000000000035  tip.pge    3: ffffffffffff2000");
    expect_line(0, 0x1, PK(TIP_PGD, 0, 0, 0, 0), "0000000000000001  tip.pgd    0: ????????????????");
    expect_line(0, 0x1, PK(FUP, 0x1002, 1, 0, 0), "0000000000000001  fup        1: ????????????1002");
    expect_line(0, 0x1, PK(FUP, 0xffffffff4000ull, 4, 0, 0), "0000000000000001  fup        4: ????ffffffff4000");
    expect_line(0, 0x1, PK(FUP, 0x00cccccccccc4000ull, 6, 0, 0), "0000000000000001  fup        6: 00cccccccccc4000");
    expect_line(0, 0x7e, PK(MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL), "000000000000007e  mode.exec  cs.l");
    expect_line(0, 0x7e, PK(MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL | PTD_PKTF_CSD), "000000000000007e  mode.exec  cs.d, cs.l");
    expect_line(0, 0x7e, PK(MODE_EXEC, 0, 0, 0, 0), "000000000000007e  mode.exec");
    expect_line(0, 0x80, PK(MODE_TSX, 0, 0, 0, PTD_PKTF_INTX), "0000000000000080  mode.tsx   intx");
    expect_line(0, 0x80, PK(MODE_TSX, 0, 0, 0, PTD_PKTF_INTX | PTD_PKTF_ABRT), "0000000000000080  mode.tsx   intx, abrt");
    expect_line(0, 0x86, PK(PIP, 0xafafa0, 0, 0, 0),
                "0000000000000086  pip        afafa0                    cr3  0000000000afafa0");
    expect_line(0, 0x86, PK(PIP, 0xafafa0, 0, 0, PTD_PKTF_NR),
                "0000000000000086  pip        afafa0, nr                cr3  0000000000afafa0");
    expect_line(0, 0x96, PK(TSC, 0x12345, 0, 0, 0), "0000000000000096  tsc        12345");
    expect_line(0, 0x9e, PK(CBR, 0x24, 0, 0, 0), "000000000000009e  cbr        24");
    expect_line(0, 0xa2, PK(TMA, 0x12, 0, 0x34, 0), "00000000000000a2  tma        12, 34");
    expect_line(0, 0xa9, PK(MTC, 0x94, 0, 0, 0), "00000000000000a9  mtc        94");
    expect_line(0, 0xab, PK(CYC, 0x57, 0, 0, 0), "00000000000000ab  cyc        57");
    expect_line(0, 0xaf, PK(VMCS, 0xabcd000, 0, 0, 0),
                "00000000000000af  vmcs       abcd000                   vmcs 000000000abcd000");
    expect_line(0, 0xb6, PK(MNT, 0x2a2242e5d4c3b2a1ull, 0, 0, 0), "00000000000000b6  mnt        2a2242e5d4c3b2a1");
    expect_line(0, 0xd3, PK(EXSTOP, 0, 0, 0, PTD_PKTF_IP), "00000000000000d3  exstop     ip");
    expect_line(0, 0xd3, PK(EXSTOP, 0, 0, 0, 0), "00000000000000d3  exstop");
    expect_line(0, 0xd5, PK(MWAIT, 0xb, 0, 1, 0), "00000000000000d5  mwait      0000000b, 00000001");
    expect_line(0, 0xe3, PK(PWRE, 0, 0xf, 0xf, PTD_PKTF_HW), "00000000000000e3  pwre       c0.0, hw");
    expect_line(0, 0xe7, PK(PWRX, 0, 0, 5, PTD_PKTF_WR_INT), "00000000000000e7  pwrx       int: c1, c6");
    expect_line(0, 0xe7, PK(PWRX, 0, 1, 2, PTD_PKTF_WR_STORE), "00000000000000e7  pwrx        st: c2, c3");
    expect_line(0, 0xe7, PK(PWRX, 0, 1, 2, PTD_PKTF_WR_HW | PTD_PKTF_WR_INT), "00000000000000e7  pwrx       bad: c2, c3");
    expect_line(0, 0xfc, PK(PTW, 0x90abcdef, 0, 0, PTD_PKTF_IP), "00000000000000fc  ptw        0: 90abcdef, ip");
    expect_line(0, 0xfc, PK(PTW, 0x1234567890abcdefull, 1, 0, 0), "00000000000000fc  ptw        1: 1234567890abcdef");
    expect_line(0, 0x112, PK(OVF, 0, 0, 0, 0), "0000000000000112  ovf");
    expect_line(0, 0x112, PK(STOP, 0, 0, 0, 0), "0000000000000112  stop");
    expect_line(0, 0x112, PK(PSBEND, 0, 0, 0, 0), "0000000000000112  psbend");
    /* newer than libipt 2.0.5: ptdump 2.1's cfe/evd lines */
    expect_line(0, 0x112, PK(CFE, 0, 2, 0, 0), "0000000000000112  cfe        2                         type iret");
    expect_line(0, 0x11e, PK(CFE, 0, 1, 14, 0), "000000000000011e  cfe        1: 14                     type intr");
    expect_line(0, 0x122, PK(EVD, 0xf00baa, 2, 0, 0), "0000000000000122  evd        2: f00baa                 type vmxr");
    expect_line(0, 0x1, PK(BBP, 0, 5, 0, PTD_PKTF_SZ4), "0000000000000001  bbp        type 5, sz 4");
    expect_line(0, 0x1, PK(BEP, 0, 0, 0, PTD_PKTF_IP), "0000000000000001  bep        ip");
}

static void test_options(void **state)
{
    (void)state;
    expect_line(PTD_FMT_NO_OFFSET | PTD_FMT_RAW, 0, PK(PSB, 0, 0, 0, 0), "02820282028202820282028202820282  psb");
    expect_line(PTD_FMT_RAW, 0x10, PK(FUP, 0x100000, 3, 0, 0),
                "0000000000000010  7d000010000000                    fup        3: 0000000000100000");
    expect_line(PTD_FMT_NO_OFFSET, 0x10, PK(TNT8, 6, 3, 0, 0), "tnt.8      !!.");
    expect_line(PTD_FMT_EXEC_MODE, 0x17, PK(MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL),
                "0000000000000017  mode.exec  cs.l                      em   64-bit");
    expect_line(PTD_FMT_EXEC_MODE, 0x17, PK(MODE_EXEC, 0, 0, 0, PTD_PKTF_CSD),
                "0000000000000017  mode.exec  cs.d                      em   32-bit");
    /* no payload: the opcode is not padded, the empty payload is */
    expect_line(PTD_FMT_EXEC_MODE, 0x17, PK(MODE_EXEC, 0, 0, 0, 0),
                "0000000000000017  mode.exec                           em   16-bit");
    expect_line(PTD_FMT_LASTIP, 0x10, PK(FUP, 0x100000, 3, 0, 0),
                "0000000000000010  fup        3: 0000000000100000       ip   0000000000100000");

    /* hidden packets */
    struct ptd_fmt_options o = { .flags = PTD_FMT_NO_PAD | PTD_FMT_NO_TIMING };
    struct ptd_fmt_state st;
    char line[PTD_FMT_LINE_MAX];
    struct ptd_pkt p = PK(PAD, 0, 0, 0, 0);
    ptd_fmt_state_init(&st);
    p.size = 1;
    assert_int_equal(ptd_fmt_packet(line, sizeof line, &o, &st, 0, &p, NULL, NULL, 0), 0);
    p = PK(MTC, 1, 0, 0, 0);
    assert_int_equal(ptd_fmt_packet(line, sizeof line, &o, &st, 0, &p, NULL, NULL, 0), 0);
    o.flags = PTD_FMT_NO_CYC;
    p = PK(CYC, 1, 0, 0, 0);
    assert_int_equal(ptd_fmt_packet(line, sizeof line, &o, &st, 0, &p, NULL, NULL, 0), 0);
    p = PK(TSC, 1, 0, 0, 0);
    assert_true(ptd_fmt_packet(line, sizeof line, &o, &st, 0, &p, NULL, NULL, 0) > 0);
    /* too small a buffer */
    o.flags = 0;
    assert_int_equal(ptd_fmt_packet(line, 10, &o, &st, 0, &p, NULL, NULL, 0), -PTD_ERR_NOSPC);
}

static void test_error_line(void **state)
{
    (void)state;
    char line[PTD_FMT_LINE_MAX];
    assert_int_equal(ptd_fmt_error(line, sizeof line, 0x17, "error decoding packet", -PTD_ERR_BAD_OPC), 43);
    assert_string_equal(line, "[17: error decoding packet: unknown opcode]");
}

/* Dump a whole buffer; returns the lines joined with '\n'. */
static void dump_all(uint32_t flags, const uint8_t *buf, size_t n, char *out, size_t cap)
{
    struct ptd_dump d;
    struct ptd_fmt_options opt = { .flags = flags };
    char line[PTD_FMT_LINE_MAX];
    size_t used = 0;
    int r;

    ptd_dump_init(&d, &opt);
    assert_int_equal(ptd_dump_feed(&d, buf, n), 0);
    out[0] = 0;
    while ((r = ptd_dump_line(&d, line, sizeof line)) > 0) {
        assert_true(used + (size_t)r + 2 < cap);
        memcpy(out + used, line, (size_t)r);
        used += (size_t)r;
        out[used++] = '\n';
        out[used] = 0;
    }
    assert_int_equal(r, 0);
}

static void test_dump_loop(void **state)
{
    (void)state;
    uint8_t buf[128];
    struct ptd_encoder e;
    struct ptd_pkt p;
    char out[4096];

    /* ptdump-bad_opc-resync: junk, PSB, bad opcode, PSB */
    memset(buf, 0, sizeof buf);
    ptd_enc_init(&e, buf, sizeof buf);
    for (int i = 0; i < 7; i++) {
        p = PK(PAD, 0, 0, 0, 0);
        ptd_enc_next(&e, &p);
    }
    p = PK(PSB, 0, 0, 0, 0);
    ptd_enc_next(&e, &p);                 /* 0x07 */
    buf[0x17] = 0xd9;                     /* unknown opcode at 0x17 */
    e.pos = buf + 0x18;
    ptd_enc_next(&e, &p);                 /* psb at 0x18 */
    p = PK(TIP, 0x1234, 1, 0, 0);
    ptd_enc_next(&e, &p);                 /* before any IP after the resync */
    size_t n = (size_t)ptd_enc_offset(&e);

    dump_all(0, buf, n, out, sizeof out);
    assert_string_equal(out,
        "0000000000000007  psb\n"
        "[17: error decoding packet: unknown opcode]\n"
        "0000000000000018  psb\n"
        "0000000000000028  tip        1: ????????????1234\n");

    /* --lastip: the diagnostic comes first, then the packet */
    dump_all(PTD_FMT_LASTIP | PTD_FMT_NO_OFFSET, buf, n, out, sizeof out);
    assert_string_equal(out,
        "psb\n"
        "[17: error decoding packet: unknown opcode]\n"
        "psb\n"
        "tip        1: ????????????1234       ip   0000000000001234\n");

    /* --no-sync from offset 0 shows the PADs; --quiet only the error */
    dump_all(PTD_FMT_NO_SYNC | PTD_FMT_QUIET, buf, n, out, sizeof out);
    assert_string_equal(out, "[17: error decoding packet: unknown opcode]\n");

    /* a TIP with IPBytes 001 before any IP: "no ip" */
    uint8_t b2[32];
    ptd_enc_init(&e, b2, sizeof b2);
    p = PK(PSB, 0, 0, 0, 0);
    ptd_enc_next(&e, &p);
    p = PK(TIP_PGD, 0, 0, 0, 0);
    ptd_enc_next(&e, &p);
    dump_all(PTD_FMT_LASTIP, b2, (size_t)ptd_enc_offset(&e), out, sizeof out);
    assert_string_equal(out,
        "0000000000000000  psb\n"
        "[10: error tracking last-ip: no ip]\n"
        "0000000000000010  tip.pgd    0: ????????????????       ip   <unavailable>\n");

    /* truncated packet at the end: ptdump stops silently */
    b2[16] = 0x19;   /* TSC needs 8 bytes */
    dump_all(0, b2, 18, out, sizeof out);
    assert_string_equal(out, "0000000000000000  psb\n");
    /* no PSB at all: nothing */
    dump_all(0, b2 + 16, 2, out, sizeof out);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_kinds),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_error_line),
        cmocka_unit_test(test_dump_loop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
