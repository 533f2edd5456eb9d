/* Unit tests of decoder/ptd_qry.c and decoder/ptd_flow.c on hand-built
 * traces: one rule each (TNT order, FUP+TIP interrupt, MODE.Exec binding,
 * PSB+ status, OVF, TIP.PGD/PGE and RESUMED, compressed returns, call +0,
 * bad queries, errors and resync, the instruction-per-call budget), plus
 * the error strings against libipt's pt_errstr(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <intel-pt.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_flow.h"
#include "decoder/ptd_qry.h"

/* ---- a tiny trace writer ---- */
struct tw {
    uint8_t buf[512];
    struct ptd_encoder e;
    uint64_t last;
    int have;
};

static void tw_init(struct tw *t)
{
    ptd_enc_init(&t->e, t->buf, sizeof(t->buf));
    t->have = 0;
}

static void pkt(struct tw *t, uint8_t kind, uint64_t payload, uint8_t a, uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, 0, flags);
    assert_true(ptd_enc_next(&t->e, &p) > 0);
    if (kind == PTD_PKT_PSB)
        t->have = 0;
}

static void ipp(struct tw *t, uint8_t kind, uint64_t ip)
{
    uint64_t pl;
    unsigned ipc = ptd_enc_ip_compress(t->last, t->have, ip, &pl);
    t->last = ip;
    t->have = 1;
    pkt(t, kind, pl, (uint8_t)ipc, 0);
}

static void psb(struct tw *t, int fup, uint64_t ip)
{
    pkt(t, PTD_PKT_PSB, 0, 0, 0);
    pkt(t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    if (fup)
        ipp(t, PTD_PKT_FUP, ip);
    pkt(t, PTD_PKT_PSBEND, 0, 0, 0);
}

/* TNT-8 with bits given oldest first as a string of 0/1 */
static void tnt(struct tw *t, const char *bits)
{
    uint64_t v = 0;
    uint8_t n = 0;
    for (; *bits; bits++, n++)
        v = (v << 1) | (uint64_t)(*bits == '1');
    pkt(t, PTD_PKT_TNT8, v, n, 0);
}

static size_t tw_size(struct tw *t)
{
    return (size_t)ptd_enc_offset(&t->e);
}

/* ---- code ---- */
static uint8_t code[0x200];
#define CODE_BASE 0x1000u

static int rd(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    if (ip < CODE_BASE || ip >= CODE_BASE + sizeof(code))
        return 0;
    size_t n = CODE_BASE + sizeof(code) - ip;
    if (n > size)
        n = size;
    memcpy(buf, code + (ip - CODE_BASE), n);
    return (int)n;
}

/* Run the ptxed loop; the result as text: "i<ip>" per instruction, "e<type>"
 * per event ('r' suffix for resumed), "x<code>" per error, space separated. */
static char out[4096];
static unsigned cpu_family, cpu_model; /* 0: no CPU (no errata) */

/* PTD_TEST_WRITE=DIR: each trace run also goes to DIR/qN.pt with its code
 * in DIR/qN.bin (at CODE_BASE), so a ptxed can be run on the very traces
 * the tests check (the expected outputs that only current libipt gives
 * were recorded that way). */
static void write_trace(struct tw *t)
{
    static unsigned n;
    const char *dir = getenv("PTD_TEST_WRITE");
    char path[512];
    FILE *fp;
    if (!dir)
        return;
    snprintf(path, sizeof path, "%s/q%u.pt", dir, n);
    fp = fopen(path, "wb");
    if (fp) {
        fwrite(t->buf, 1, tw_size(t), fp);
        fclose(fp);
    }
    snprintf(path, sizeof path, "%s/q%u.bin", dir, n);
    fp = fopen(path, "wb");
    if (fp) {
        fwrite(code, 1, sizeof code, fp);
        fclose(fp);
    }
    fprintf(stderr, "wrote q%u (cpu %u/%u)\n", n, cpu_family, cpu_model);
    n++;
}

static void run(struct tw *t, size_t max_insns)
{
    static struct ptd_flow f;
    struct ptd_flow_config cfg;
    char *p = out;
    size_t insns = 0;
    write_trace(t);
    memset(&cfg, 0, sizeof(cfg));
    cfg.trace = t->buf;
    cfg.size = tw_size(t);
    cfg.read = rd;
    if (cpu_family)
        cfg.errata = ptd_errata_cpu(cpu_family, cpu_model);
    assert_int_equal(ptd_flow_init(&f, &cfg), 0);
    out[0] = 0;
    for (int rounds = 0; rounds < 20; rounds++) {
        struct ptd_flow_insn in;
        struct ptd_event ev;
        int st = ptd_flow_sync_forward(&f);
        if (st == -PTD_ERR_EOS)
            break;
        if (st < 0) {
            p += sprintf(p, "x%d ", -st);
            continue;
        }
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT)) {
                st = ptd_flow_event(&f, &ev);
                if (st >= 0 && !(ev.flags & PTD_EVF_STATUS_UPDATE))
                    p += sprintf(p, "e%u%s ", ev.type, (ev.flags & PTD_EVF_RESUMED) ? "r" : "");
            }
            if (st < 0 || (st & PTD_ST_EOS))
                break;
            st = ptd_flow_next(&f, &in);
            /* an event the instruction flow could not announce ahead */
            if (st == -PTD_ERR_EVENT_IGNORED) {
                st = PTD_ST_EVENT;
                continue;
            }
            if (in.iclass != PTD_FLOW_ICLASS_ERROR) {
                p += sprintf(p, "i%llx ", (unsigned long long)in.ip);
                if (++insns >= max_insns)
                    return;
            }
            if (st < 0)
                break;
        }
        if (st >= 0 || st == -PTD_ERR_EOS)
            break;
        p += sprintf(p, "x%d ", -st);
    }
}

/* The same loop over libipt's instruction decoder, same text. */
static int lib_rd(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
    int n = rd(ctx, ip, buf, size);
    (void)asid;
    return n ? n : -pte_nomap;
}

static char lib_out[4096];
static void run_libipt(struct tw *t, size_t max_insns)
{
    struct pt_config cfg;
    struct pt_insn_decoder *d;
    char *p = lib_out;
    size_t insns = 0;
    pt_config_init(&cfg);
    cfg.begin = t->buf;
    cfg.end = t->buf + tw_size(t);
    if (cpu_family) {
        cfg.cpu.vendor = pcv_intel;
        cfg.cpu.family = (uint16_t)cpu_family;
        cfg.cpu.model = (uint8_t)cpu_model;
        assert_int_equal(pt_cpu_errata(&cfg.errata, &cfg.cpu), 0);
    }
    d = pt_insn_alloc_decoder(&cfg);
    assert_non_null(d);
    pt_image_set_callback(pt_insn_get_image(d), lib_rd, NULL);
    lib_out[0] = 0;
    for (int rounds = 0; rounds < 20; rounds++) {
        struct pt_insn in;
        struct pt_event ev;
        int st = pt_insn_sync_forward(d);
        if (st == -pte_eos)
            break;
        if (st < 0) {
            p += sprintf(p, "x%d ", -st);
            continue;
        }
        for (;;) {
            while (st >= 0 && (st & pts_event_pending)) {
                st = pt_insn_event(d, &ev, sizeof(ev));
                if (st >= 0 && !ev.status_update)
                    p +=
                        sprintf(p, "e%u%s ", ev.type,
                                (ev.type == ptev_enabled && ev.variant.enabled.resumed) ? "r" : "");
            }
            if (st < 0 || (st & pts_eos))
                break;
            memset(&in, 0, sizeof(in));
            st = pt_insn_next(d, &in, sizeof(in));
            if (st >= 0 || in.iclass != ptic_error) {
                p += sprintf(p, "i%llx ", (unsigned long long)in.ip);
                if (++insns >= max_insns)
                    goto done;
            }
            if (st < 0)
                break;
        }
        if (st >= 0 || st == -pte_eos)
            break;
        p += sprintf(p, "x%d ", -st);
    }
done:
    pt_insn_free_decoder(d);
}

/* ptboot's flow, checked against libipt's on the same trace */
static void run_both(struct tw *t, size_t max_insns)
{
    run(t, max_insns);
    run_libipt(t, max_insns);
    assert_string_equal(out, lib_out);
}

/* ptboot's flow where current libipt differs from Debian's 2.0.5: the
 * output current libipt's ptxed gives on the same trace (recorded with
 * PTD_TEST_WRITE), and 2.0.5's for the record. */
static void run_current(struct tw *t, size_t max_insns, const char *want, const char *libipt205)
{
    run(t, max_insns);
    run_libipt(t, max_insns);
    assert_string_equal(out, want);
    assert_string_equal(lib_out, libipt205);
}

static void put(uint64_t ip, const char *hex)
{
    uint8_t *c = code + (ip - CODE_BASE);
    unsigned v;
    while (sscanf(hex, "%2x", &v) == 1) {
        *c++ = (uint8_t)v;
        hex += 2;
        while (*hex == ' ')
            hex++;
    }
}

static int setup(void **state)
{
    (void)state;
    cpu_family = 0;
    cpu_model = 0;
    memset(code, 0xcc, sizeof(code));
    return 0;
}

/* ---- tests ---- */

static void test_errstr_matches_libipt(void **state)
{
    (void)state;
    static const int codes[] = { PTD_ERR_BAD_CONTEXT,
                                 PTD_ERR_BAD_QUERY,
                                 PTD_ERR_NOMAP,
                                 PTD_ERR_BAD_INSN,
                                 PTD_ERR_RETSTACK_EMPTY,
                                 PTD_ERR_BAD_RETCOMP,
                                 PTD_ERR_BAD_STATUS_UPDATE,
                                 PTD_ERR_NO_ENABLE,
                                 PTD_ERR_EVENT_IGNORED,
                                 PTD_ERR_EOS,
                                 PTD_ERR_NOSYNC,
                                 PTD_ERR_BAD_OPC,
                                 PTD_ERR_NOIP };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        assert_string_equal(ptd_errstr(-codes[i]), pt_errstr((enum pt_error_code)codes[i]));
}

/* jz +2 twice, then the trace disables at the third instruction */
static void test_tnt_then_async_disable(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "74 02 90 90 74 00 90"); /* jz 1004; nop; nop; jz 1006; nop */
    tw_init(&t);
    psb(&t, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1000);
    tnt(&t, "10");
    ipp(&t, PTD_PKT_FUP, 0x1006);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "e0 i1000 i1004 e2 ");
}

/* FUP + TIP: an interrupt before the instruction at the FUP's IP */
static void test_interrupt(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90");
    put(0x1100, "48 cf"); /* iretq */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    ipp(&t, PTD_PKT_TIP, 0x1100);
    ipp(&t, PTD_PKT_TIP, 0x1001);
    ipp(&t, PTD_PKT_FUP, 0x1002);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e3 i1100 i1001 e2 ");
}

/* MODE.Exec before the TIP of a far jump: the event comes after the jump,
 * the far jump's query still gets the TIP */
static void test_mode_exec_binds_to_tip(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "ff 28"); /* jmp far [rax] */
    put(0x1080, "90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSD);
    ipp(&t, PTD_PKT_TIP, 0x1080);
    ipp(&t, PTD_PKT_FUP, 0x1081);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e7 i1080 e2 ");
}

/* compressed return: taken bit pops the call stack; call +0 pushes nothing */
static void test_compressed_return(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "e8 00 00 00 00 e8 0b 00 00 00 90"); /* call +0; call 1015; nop */
    put(0x1015, "c3");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    tnt(&t, "1");
    ipp(&t, PTD_PKT_FUP, 0x100a);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 i1005 i1015 e2 ");
}

/* a return with no call before it and a taken bit: an error, then resync at
 * the next PSB */
static void test_retstack_empty_and_resync(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "c3");
    put(0x1010, "90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    tnt(&t, "1");
    /* the PSB+ right behind the TNT is read ahead with it: resync finds
     * the one after (as libipt) */
    psb(&t, 1, 0x1010);
    psb(&t, 1, 0x1010);
    ipp(&t, PTD_PKT_FUP, 0x1011);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 x20 i1010 e2 ");
}

/* TIP.PGD with the target IP binds to the direct call that goes there;
 * tracing resumes at the same IP: RESUMED */
static void test_filter_exit_and_resume(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 e8 fa 0f 00 00 90"); /* nop; call 2000; nop */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    ipp(&t, PTD_PKT_TIP_PGD, 0x2000);
    ipp(&t, PTD_PKT_TIP_PGE, 0x2000);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 i1001 e1 e0r ");
}

/* OVF then FUP: tracing resumes at the FUP */
static void test_overflow(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_OVF, 0, 0, 0);
    ipp(&t, PTD_PKT_FUP, 0x1002);
    ipp(&t, PTD_PKT_FUP, 0x1003);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "e6 i1002 e2 ");
}

/* a loop with no branch never ends by itself: one instruction per call,
 * the caller's budget stops it */
static void test_budget(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 eb fd"); /* nop; jmp 1000 */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_PAD, 0, 0, 0);
    ipp(&t, PTD_PKT_FUP, 0x1000);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 1000);
    /* the FUP binds at the first visit of 1000: the rounds are invisible */
    assert_string_equal(out, "e2 ");
}

/* a conditional branch where the trace has a TIP: bad query, then end */
static void test_bad_query(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "74 00");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    ipp(&t, PTD_PKT_TIP, 0x1000);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 x8 ");
}

/* no code mapped: nomap, nothing printed for the instruction */
static void test_nomap(void **state)
{
    struct tw t;
    (void)state;
    tw_init(&t);
    psb(&t, 1, 0x5000);
    tnt(&t, "1");
    run_both(&t, 100);
    assert_string_equal(out, "x13 ");
}

/* TSX: begin (speculative instructions), abort (the FUP also starts the
 * branch to the abort handler) */
static void test_tsx_abort(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90 90 90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    pkt(&t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_ABRT);
    ipp(&t, PTD_PKT_FUP, 0x1002);
    ipp(&t, PTD_PKT_TIP, 0x1004);
    ipp(&t, PTD_PKT_FUP, 0x1005);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e8 i1001 e8 e3 i1004 e2 ");
}

/* TSX commit: the FUP is used up by the event */
static void test_tsx_commit(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90 74 00 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    pkt(&t, PTD_PKT_MODE_TSX, 0, 0, 0);
    ipp(&t, PTD_PKT_FUP, 0x1003);
    tnt(&t, "1");
    ipp(&t, PTD_PKT_FUP, 0x1006);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e8 i1001 i1002 e8 i1003 i1004 e2 ");
}

/* Overflow errata, per CPU as libipt chooses them (and without a CPU: the
 * same trace is an error): APL11 (OVF + TIP.PGD), APL12 (OVF + FUP +
 * TIP.PGE), SKD010 (OVF + TIP, no FUP). */
static void ovf_trace(struct tw *t, int kind)
{
    tw_init(t);
    psb(t, 1, 0x1000);
    pkt(t, PTD_PKT_OVF, 0, 0, 0);
    if (kind == 0) {
        pkt(t, PTD_PKT_TIP_PGD, 0, 0, 0);
        ipp(t, PTD_PKT_TIP_PGE, 0x1002);
    } else if (kind == 1) {
        ipp(t, PTD_PKT_FUP, 0x1001);
        ipp(t, PTD_PKT_TIP_PGE, 0x1002);
    } else {
        ipp(t, PTD_PKT_TIP, 0x1002);
    }
    ipp(t, PTD_PKT_FUP, 0x1004);
    pkt(t, PTD_PKT_TIP_PGD, 0, 0, 0);
}

static void test_overflow_errata(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90 90 90");
    ovf_trace(&t, 0);
    run_both(&t, 100);
    assert_string_equal(out, "x6 ");
    cpu_family = 6, cpu_model = 0x5c;
    run_both(&t, 100);
    assert_string_equal(out, "e6 e0 i1002 i1003 e2 ");
    cpu_family = 0;
    ovf_trace(&t, 1);
    run_both(&t, 100);
    assert_string_equal(out, "e6 x6 ");
    cpu_family = 6, cpu_model = 0x5f;
    run_both(&t, 100);
    assert_string_equal(out, "e6 e0 i1002 i1003 e2 ");
    cpu_family = 0;
    ovf_trace(&t, 2);
    run_both(&t, 100);
    assert_string_equal(out, "x6 ");
    cpu_family = 6, cpu_model = 0x4e;
    run_both(&t, 100);
    assert_string_equal(out, "e6 i1002 i1003 e2 ");
}

/* SKD007: an OVF right after the first byte of a 2-byte CYC (07 02 f3: the
 * CYC's second byte is the OVF's first); with the erratum (Skylake) the CYC
 * is dropped and the OVF seen, without it f3 is one more CYC and the
 * overflow is lost. With it, as libipt with the same CPU. */
static void test_skd007(void **state)
{
    struct tw t;
    size_t at;
    (void)state;
    put(0x1000, "90 90 90 90 90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    at = tw_size(&t);
    pkt(&t, PTD_PKT_CYC, 0x20, 0, 0);
    pkt(&t, PTD_PKT_OVF, 0, 0, 0);
    assert_int_equal(tw_size(&t), at + 4);
    assert_int_equal(t.buf[at], 0x07);
    assert_int_equal(t.buf[at + 1], 0x02);
    t.buf[at + 2] = 0xf3; /* the OVF cut the CYC: 07 02 f3 */
    t.e.pos--;
    ipp(&t, PTD_PKT_FUP, 0x1002);
    ipp(&t, PTD_PKT_FUP, 0x1004);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    /* without the erratum the overflow is lost (ptboot and libipt then
     * disagree on the stray FUPs: not compared) */
    run(&t, 100);
    assert_null(strstr(out, "e6 "));
    cpu_family = 6, cpu_model = 0x4e;
    run_both(&t, 100);
    assert_string_equal(out, "e6 i1002 i1003 e2 ");
}

/* SKD022: FUP + TIP.PGD at VMLAUNCH/VMRESUME is a disable after it */
static void test_skd022(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 0f 01 c2 90 0f 01 c3 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1004);
    ipp(&t, PTD_PKT_FUP, 0x1005);
    ipp(&t, PTD_PKT_TIP_PGD, 0x2000);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e2 e0 i1004 e2 ");
    cpu_family = 6, cpu_model = 0x4e;
    run_both(&t, 100);
    assert_string_equal(out, "i1000 i1001 e1 e0 i1004 i1005 e1 ");
}

/* BDM70: a PSB+ written while tracing was off holds a FUP, and TIP.PGE
 * follows. Without the erratum the FUP enables tracing and the TIP.PGE is
 * out of context (libipt: "unexpected packet context", as on the real
 * avscript_32 trace); with a Broadwell or Skylake, as libipt with that
 * CPU, the FUP is ignored and tracing starts at the TIP.PGE. Both at the
 * first PSB+ and at one after a TIP.PGD. */
static void bdm70_trace(struct tw *t)
{
    tw_init(t);
    psb(t, 1, 0x1000);
    pkt(t, PTD_PKT_PAD, 0, 0, 0);
    ipp(t, PTD_PKT_TIP_PGE, 0x1002);
    ipp(t, PTD_PKT_FUP, 0x1004);
    pkt(t, PTD_PKT_TIP_PGD, 0, 0, 0);
    psb(t, 1, 0x1008);
    pkt(t, PTD_PKT_CBR, 0x20, 0, 0);
    ipp(t, PTD_PKT_TIP_PGE, 0x1001);
    /* tracing is on at this PSB+: its FUP is where it is (no erratum) */
    psb(t, 1, 0x1002);
    ipp(t, PTD_PKT_FUP, 0x1003);
    pkt(t, PTD_PKT_TIP_PGD, 0, 0, 0);
}

static void test_bdm70(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90 90 90 90 90 90 90");
    bdm70_trace(&t);
    /* current libipt resumes at the third PSB+ (tracing on there) after
     * the error at the second; 2.0.5 does not get that far */
    run_current(&t, 100, "x6 e18 x6 i1002 e2 ", "x6 e18 x6 ");
    assert_null(strstr(out, "i1003 "));
    cpu_family = 6, cpu_model = 0x3d; /* Broadwell */
    run_both(&t, 100);
    assert_string_equal(out, "e0 i1002 i1003 e2 e18 e0 i1001 i1002 e2 ");
    cpu_family = 6, cpu_model = 0x5e; /* Skylake */
    run_both(&t, 100);
    assert_string_equal(out, "e0 i1002 i1003 e2 e18 e0 i1001 i1002 e2 ");
}

/* BDM64, its TSX part: an abort right after a branch that needed trace
 * may corrupt that branch's trace. The taken JE goes to 0x1012, from which
 * the abort's IP (0x1006) cannot be reached without trace: with a
 * Broadwell, as libipt, the flow goes to the abort's IP (the abort event
 * there, then the branch to the handler); without it both see the
 * mismatch. A second abort after a branch from which its IP can be reached
 * (JE not taken) is left alone. */
static void bdm64_tsx_trace(struct tw *t)
{
    tw_init(t);
    psb(t, 1, 0x1000);
    pkt(t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
    ipp(t, PTD_PKT_FUP, 0x1000);
    tnt(t, "1");
    pkt(t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_ABRT);
    ipp(t, PTD_PKT_FUP, 0x1006);
    ipp(t, PTD_PKT_TIP, 0x1030);
    pkt(t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
    ipp(t, PTD_PKT_FUP, 0x1030);
    tnt(t, "0");
    pkt(t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_ABRT);
    ipp(t, PTD_PKT_FUP, 0x1034);
    ipp(t, PTD_PKT_TIP, 0x1040);
    ipp(t, PTD_PKT_FUP, 0x1041);
    pkt(t, PTD_PKT_TIP_PGD, 0, 0, 0);
}

static void test_bdm64_tsx(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "74 10 90 90 90 90 90 90");
    put(0x1012, "0f 0b"); /* UD2 where the JE lands */
    put(0x1030, "74 10 90 90 90 90");
    put(0x1040, "90 90 90");
    bdm64_tsx_trace(&t);
    run_both(&t, 100);
    assert_null(strstr(out, "i1006 "));
    cpu_family = 6, cpu_model = 0x3d;
    run_both(&t, 100);
    assert_string_equal(out, "e8 i1000 e8 e3 e8 i1030 i1032 i1033 e8 e3 i1040 e2 ");
}

/* MODE.TSX while tracing is off has no FUP: an event of its own, no IP
 * (libipt's standalone TSX event); the flow is speculative afterwards. */
static void test_tsx_while_disabled(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 90 90 90 90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    pkt(&t, PTD_PKT_MODE_TSX, 0, 0, PTD_PKTF_INTX);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1003);
    ipp(&t, PTD_PKT_FUP, 0x1004);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 e2 e8 e0 i1003 e2 ");
}

/* PTWRITE: the PTW packet (with its IP bit: a FUP with the PTWRITE's own
 * IP follows) binds to the PTWRITE instruction and is reported after it,
 * as libipt's instruction decoder binds it; without the IP bit to the next
 * PTWRITE instruction the flow meets. */
static void test_ptwrite(void **state)
{
    struct tw t;
    (void)state;
    /* nop; ptwrite eax (F3 0F AE E0); nop; ptwrite eax; nop */
    put(0x1000, "90 f3 0f ae e0 90 f3 0f ae e0 90 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_PTW, 0x1234, 0, PTD_PKTF_IP);
    ipp(&t, PTD_PKT_FUP, 0x1001);
    pkt(&t, PTD_PKT_PTW, 0x5678, 0, 0);
    ipp(&t, PTD_PKT_FUP, 0x100b);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 i1001 e16 i1005 i1006 e16 i100a e2 ");
}

/* A far call (INT3, SYSCALL, INT n, CALL far m, INT1, VMCALL) that leaves
 * the traced range returns to its next instruction: a TIP.PGE there is
 * "resumed", as after a near indirect call and as libipt says; a far JMP
 * or IRETQ does not return: "enabled". (The TIP.PGD without IP binds to
 * the far transfer; with the handler's IP too.) */
static void far_exit(uint64_t at, uint64_t next, int pgd_ip)
{
    struct tw t;
    char want[128];
    tw_init(&t);
    psb(&t, 1, at - 1);
    if (pgd_ip)
        ipp(&t, PTD_PKT_TIP_PGD, 0x5000);
    else
        pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, next);
    ipp(&t, PTD_PKT_FUP, next);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    snprintf(want, sizeof(want), "i%llx i%llx e1 e0r e2 ", (unsigned long long)(at - 1),
             (unsigned long long)at);
    assert_string_equal(out, want);
}

static void test_far_call_resumes(void **state)
{
    struct tw t;
    (void)state;
    /* nop; int3 | nop; syscall | nop; int 3 | nop; call far [0x3000] */
    put(0x1000, "90 cc");
    put(0x1010, "90 0f 05");
    put(0x1020, "90 cd 03");
    put(0x1030, "90 ff 1c 25 00 30 00 00");
    put(0x1040, "90 f1");       /* nop; int1 */
    put(0x1050, "90 0f 01 c1"); /* nop; vmcall */
    far_exit(0x1001, 0x1002, 1);
    far_exit(0x1041, 0x1042, 0);
    far_exit(0x1051, 0x1054, 1);
    far_exit(0x1001, 0x1002, 0);
    far_exit(0x1011, 0x1013, 0);
    far_exit(0x1021, 0x1023, 1);
    far_exit(0x1031, 0x1038, 0);
    /* nop; jmp far [0x3000]; nop | nop; iretq: not calls */
    put(0x1100, "90 ff 2c 25 00 30 00 00 90");
    put(0x1110, "90 48 cf 90");
    tw_init(&t);
    psb(&t, 1, 0x1100);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1108);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1100 i1101 e1 e0 i1108 i1109 e1 "); /* 1109: int3 (fill) */
    tw_init(&t);
    psb(&t, 1, 0x1110);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1113);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    run_both(&t, 100);
    assert_string_equal(out, "i1110 i1111 e1 e0 i1113 i1114 e1 ");
}

/* The trace ends right after an event's packet (a full stop-on-full
 * buffer cuts it anywhere): the events are reported as far as libipt
 * reports them. After TIP.PGD + MODE.Exec neither reports the disable
 * (the MODE.Exec waits for the TIP.PGE it binds to; the query layer
 * used to report the PGD here and libipt did not). */
static void test_cut_after_event(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 cc 90");
    /* ... TIP.PGD, TIP.PGE | */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1002);
    run_both(&t, 100);
    assert_string_equal(out, "i1000 i1001 e1 e0r ");
    /* ... TIP.PGD, MODE.Exec | */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    pkt(&t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    /* the disable is reported (current libipt); 2.0.5 lost it with the
     * MODE.Exec that waits for a TIP at the end */
    run_current(&t, 100, "i1000 i1001 e1 ", "i1000 i1001 ");
    /* ... TIP.PGD, MODE.Exec, TIP.PGE | */
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_TIP_PGD, 0, 0, 0);
    pkt(&t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1002);
    /* the mode did not change (PSB+ said 64-bit): current libipt makes no
     * event of it */
    run_current(&t, 100, "i1000 i1001 e1 e0r ", "i1000 i1001 e1 e0r e7 ");
    /* PSB+ without FUP, MODE.Exec, TIP.PGE | */
    tw_init(&t);
    psb(&t, 0, 0);
    pkt(&t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    ipp(&t, PTD_PKT_TIP_PGE, 0x1002);
    run_current(&t, 100, "e0 ", "e0 e7 ");
}

/* MODE.Exec right before TIP.PGD: the SDM never writes that pair (Vol. 3C
 * "Packet Generation under Different Enable Conditions", far branch with
 * PacketEn 1 -> 0: PIP?, TIP.PGD, TraceStop?; MODE.Exec goes with a TIP
 * while tracing or with the TIP.PGE that resumes it), so ptboot's query
 * layer rejects it: bad packet context. libipt takes the MODE.Exec as an
 * event bound to the TIP.PGD and loses the far call and the disable: it
 * does not decode that trace either (docs/flow.md, deliberate
 * difference). */
static void test_mode_exec_before_pgd(void **state)
{
    struct tw t;
    (void)state;
    put(0x1000, "90 cc 90");
    tw_init(&t);
    psb(&t, 1, 0x1000);
    pkt(&t, PTD_PKT_MODE_EXEC, 0, 0, PTD_PKTF_CSL);
    ipp(&t, PTD_PKT_TIP_PGD, 0x5000);
    run(&t, 100);
    run_libipt(&t, 100);
    assert_string_equal(out, "x6 ");
    /* libipt: no instruction of the far call's block, no disable */
    assert_null(strstr(lib_out, "i1001"));
    assert_null(strstr(lib_out, "e1 "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errstr_matches_libipt),
        cmocka_unit_test_setup(test_tnt_then_async_disable, setup),
        cmocka_unit_test_setup(test_interrupt, setup),
        cmocka_unit_test_setup(test_mode_exec_binds_to_tip, setup),
        cmocka_unit_test_setup(test_compressed_return, setup),
        cmocka_unit_test_setup(test_retstack_empty_and_resync, setup),
        cmocka_unit_test_setup(test_filter_exit_and_resume, setup),
        cmocka_unit_test_setup(test_overflow, setup),
        cmocka_unit_test_setup(test_budget, setup),
        cmocka_unit_test_setup(test_bad_query, setup),
        cmocka_unit_test_setup(test_nomap, setup),
        cmocka_unit_test_setup(test_tsx_abort, setup),
        cmocka_unit_test_setup(test_tsx_commit, setup),
        cmocka_unit_test_setup(test_overflow_errata, setup),
        cmocka_unit_test_setup(test_skd007, setup),
        cmocka_unit_test_setup(test_skd022, setup),
        cmocka_unit_test_setup(test_bdm70, setup),
        cmocka_unit_test_setup(test_bdm64_tsx, setup),
        cmocka_unit_test_setup(test_tsx_while_disabled, setup),
        cmocka_unit_test_setup(test_ptwrite, setup),
        cmocka_unit_test_setup(test_far_call_resumes, setup),
        cmocka_unit_test_setup(test_cut_after_event, setup),
        cmocka_unit_test_setup(test_mode_exec_before_pgd, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
