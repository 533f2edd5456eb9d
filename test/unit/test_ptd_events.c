/* The rules libptd's query and flow layers take from current libipt's event
 * and block decoders (docs/flow.md), one per test, category by category of
 * issue #12: the errata scans (SKD010, APL11, APL12), OVF and PSB+, PIP and
 * VMCS at asynchronous branches and TIP.PGD, power events and their
 * binding, TRIG with its instruction count, MODE.Exec's IF bit, Event
 * Trace's CFE/EVD, ptxed's block options and counts, --resync-on-error,
 * error offsets and status updates.
 *
 * Each trace is written with libptd's encoder over a few instructions of
 * code, decoded through the driver `ptboot flow` and `ptboot.efi flow` run
 * (decoder/ptd_fmt_flow.h) with ptxed's options, and the lines are compared
 * with what current libipt's ptxed prints for the same trace, code and
 * options: facts recorded by running it (test/unit/ptd_events_expected.h;
 * PTD_TEST_WRITE=DIR writes every case as DIR/<name>.pt, .bin (the code,
 * at 0x1000) and .opts, which is how they were recorded). Where libipt
 * 2.0.5 (CI's) decodes a case alike, test/flow/events_205.sh compares it
 * with build/test/libipt_flow too (the cases it lists). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_errata.h"
#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_opts.h"
#include "decoder/ptd_time.h"

#include "test/unit/ptd_events_expected.h"

/* ---- a trace writer ---- */
struct tw {
    uint8_t buf[1024];
    struct ptd_encoder e;
    uint64_t last;
    int have;
};
static struct tw T;

static void tw_init(void)
{
    ptd_enc_init(&T.e, T.buf, sizeof(T.buf));
    T.have = 0;
}

static void pk(uint8_t kind, uint64_t payload, uint8_t a, uint32_t aux, uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, aux, flags);
    assert_true(ptd_enc_next(&T.e, &p) > 0);
    if (kind == PTD_PKT_PSB)
        T.have = 0;
}

/* an IP packet (TIP, TIP.PGE, TIP.PGD, FUP) with the IP compressed
 * against the last one */
static void ipk(uint8_t kind, uint64_t ip)
{
    uint64_t pl;
    unsigned ipc = ptd_enc_ip_compress(T.last, T.have, ip, &pl);
    T.last = ip;
    T.have = 1;
    pk(kind, pl, (uint8_t)ipc, 0, 0);
}

/* the same with the IP suppressed */
static void ipk_none(uint8_t kind)
{
    pk(kind, 0, 0, 0, 0);
}

static void mode64(void)
{
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
}

/* PSB+ with MODE.Exec 64-bit and, if enabled, a FUP at ip */
static void psb(int enabled, uint64_t ip)
{
    pk(PTD_PKT_PSB, 0, 0, 0, 0);
    mode64();
    if (enabled)
        ipk(PTD_PKT_FUP, ip);
    pk(PTD_PKT_PSBEND, 0, 0, 0, 0);
}

/* TNT-8, bits oldest first as a string of 0/1 */
static void tnt(const char *bits)
{
    uint64_t v = 0;
    uint8_t n = 0;
    for (; *bits; bits++, n++)
        v = (v << 1) | (uint64_t)(*bits == '1');
    pk(PTD_PKT_TNT8, v, n, 0, 0);
}

/* ---- code at 0x1000 ---- */
#define CODE_BASE 0x1000u
static uint8_t code[0x1000];

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

/* the code is one section, as ptxed's --raw file */
static const uint8_t *map(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    (void)ctx;
    if (ip < CODE_BASE || ip >= CODE_BASE + sizeof(code))
        return NULL;
    *base = CODE_BASE;
    *size = sizeof(code);
    return code;
}

static int setup(void **state)
{
    (void)state;
    memset(code, 0x90, sizeof(code)); /* NOPs */
    tw_init();
    return 0;
}

/* ---- running a case ---- */
static void write_case(const char *name, const char *opts)
{
    const char *dir = getenv("PTD_TEST_WRITE");
    char path[512];
    FILE *fp;
    if (!dir)
        return;
    snprintf(path, sizeof path, "%s/%s.pt", dir, name);
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite(T.buf, 1, (size_t)ptd_enc_offset(&T.e), fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/%s.bin", dir, name);
    fp = fopen(path, "wb");
    assert_non_null(fp);
    fwrite(code, 1, sizeof code, fp);
    fclose(fp);
    snprintf(path, sizeof path, "%s/%s.opts", dir, name);
    fp = fopen(path, "w");
    assert_non_null(fp);
    fprintf(fp, "%s\n", opts);
    fclose(fp);
}

static char got[16384];

/* Decode the trace written so far with ptxed's options opts (flow words,
 * --cpu F/M, --mtc-freq N, --cpuid-0x15.eax N, --cpuid-0x15.ebx N) into
 * got[], one line each, as `ptboot flow --no-inst` prints them. */
static void decode(const char *opts)
{
    static struct ptd_flow f;
    static struct ptd_flow_lines L;
    static uint64_t bcache[PTD_FLOW_BCACHE_BYTES(sizeof(code), 1) / 8 + 1];
    static struct ptd_time_config tcfg;
    struct ptd_flow_config cfg;
    struct ptd_flow_opts fo;
    char words[256], *w, *save = NULL;
    bool cpu_unknown = false;
    size_t len = 0;

    memset(&cfg, 0, sizeof cfg);
    memset(&fo, 0, sizeof fo);
    memset(&tcfg, 0, sizeof tcfg);
    snprintf(words, sizeof words, "%s", opts);
    for (w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (ptd_opts_flow_word(&fo, w))
            continue;
        char *v = strtok_r(NULL, " ", &save);
        assert_non_null(v);
        if (!strcmp(w, "--cpu")) {
            bool has;
            unsigned fam, mod;
            assert_true(ptd_opts_parse_cpu(v, &has, &fam, &mod));
            cpu_unknown = has && !ptd_errata_of_cpu(fam, mod, false, &cfg.errata);
        } else if (!strcmp(w, "--mtc-freq")) {
            tcfg.mtc_freq = (uint8_t)strtoul(v, NULL, 0);
        } else if (!strcmp(w, "--cpuid-0x15.eax")) {
            tcfg.cpuid_0x15_eax = (uint32_t)strtoul(v, NULL, 0);
        } else if (!strcmp(w, "--cpuid-0x15.ebx")) {
            tcfg.cpuid_0x15_ebx = (uint32_t)strtoul(v, NULL, 0);
        } else {
            fail_msg("unknown option %s", w);
        }
    }
    tcfg.errata = cfg.errata;
    cfg.trace = T.buf;
    cfg.size = (size_t)ptd_enc_offset(&T.e);
    cfg.read = rd;
    cfg.map = map;
    cfg.bcache = bcache;
    cfg.bcache_size = sizeof bcache;
    cfg.time = &tcfg;
    /* the block cache's memory was zero when the program started and is
     * used again by every case: the cache's mark says what is no longer
     * zero (a case after the first is wrong without it) */
    cfg.flags = ptd_opts_flow_flags(&fo) | PTD_FLOW_F_BCACHE_ZEROED;
    assert_int_equal(ptd_flow_init(&f, &cfg), 0);
    ptd_flow_lines_init(&L, &f, fo.fmt);
    L.cpu_unknown = cpu_unknown;
    got[0] = 0;
    for (;;) {
        char line[PTD_FMT_FLOW_LINE_MAX];
        enum ptd_flow_line_kind kind;
        int n = ptd_flow_lines_next(&L, line, sizeof line, &kind);
        assert_true(n >= 0);
        if (!n)
            break;
        assert_true(len + (size_t)n + 2 < sizeof got);
        memcpy(got + len, line, (size_t)n);
        len += (size_t)n;
        got[len++] = '\n';
        got[len] = 0;
    }
    if (fo.stat) {
        bool insns, blocks;
        ptd_opts_flow_stats(&fo, &insns, &blocks);
        if (insns)
            len += (size_t)snprintf(got + len, sizeof got - len, "insn: %llu.\n",
                                    (unsigned long long)L.insns);
        if (blocks)
            len += (size_t)snprintf(got + len, sizeof got - len, "blocks:\t%llu.\n",
                                    (unsigned long long)L.blocks);
    }
}

/* The case's lines as current libipt's ptxed prints them. */
static void check(const char *name, const char *opts, const char *want)
{
    write_case(name, opts);
    decode(opts);
    if (getenv("PTD_TEST_WRITE"))
        return; /* recording: every case written, none compared */
    if (strcmp(got, want))
        fail_msg("%s (%s): ptboot printed\n%s-- current libipt's ptxed prints\n%s", name, opts, got,
                 want);
}

/* ---- D. errata scans after OVF (SKD010, APL11, APL12) ---- */

/* An OVF whose FUP the CPU dropped (SKD010): with a Skylake's errata the
 * TIP that follows gives the IP where tracing resumed; without, no FUP is
 * an overflow without IP (tracing off) and the TIP an error. Timing
 * packets between are skipped by the scan. */
static void test_skd010(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0"); /* nop; nop; jmp rax */
    psb(1, 0x1000);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    pk(PTD_PKT_MTC, 0x12, 0, 0, 0);
    pk(PTD_PKT_CYC, 5, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    check("skd010-cpu", "--cpu 6/78 --event:ip", EXP_skd010_cpu);
    check("skd010-none", "--event:ip", EXP_skd010_none);
}

/* APL12: after an OVF a FUP that is not where tracing resumed, the
 * TIP.PGE after it is; with a Goldmont's errata the FUP is passed over. */
static void test_apl12(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1002);
    pk(PTD_PKT_MTC, 0x1, 0, 0, 0);
    ipk(PTD_PKT_TIP_PGE, 0x1000);
    ipk(PTD_PKT_TIP, 0x1001);
    check("apl12-cpu", "--cpu 6/92 --event:ip", EXP_apl12_cpu);
    check("apl12-none", "--event:ip", EXP_apl12_none);
}

/* APL11: an OVF followed by TIP.PGD (tracing was off): with a Goldmont's
 * errata the TIP.PGD is ignored. */
static void test_apl11(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    pk(PTD_PKT_PAD, 0, 0, 0, 0);
    ipk_none(PTD_PKT_TIP_PGD);
    ipk(PTD_PKT_TIP_PGE, 0x1000);
    ipk(PTD_PKT_TIP, 0x1001);
    check("apl11-cpu", "--cpu 6/92 --event:ip", EXP_apl11_cpu);
    check("apl11-none", "--event:ip", EXP_apl11_none);
}

/* ---- E. OVF and PSB+ ---- */

/* An OVF inside PSB+ ends it (no PSBEND): the overflow binds to the FUP
 * after it. */
static void test_ovf_in_psb(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    pk(PTD_PKT_PSB, 0, 0, 0, 0);
    mode64();
    ipk(PTD_PKT_FUP, 0x1000);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    check("ovf-in-psb", "--event:ip", EXP_ovf_in_psb);
}

/* An OVF drops the events waiting for their packet (a MODE.TSX waiting for
 * its FUP): they are lost with the trace the overflow lost. */
static void test_ovf_flushes(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_MODE_TSX, 0, 0, 0, PTD_PKTF_INTX);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    check("ovf-flushes", "--event:ip", EXP_ovf_flushes);
}

/* An OVF while tracing is off resumes with TIP.PGE; the overflow has no
 * IP. */
static void test_ovf_disabled(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_TIP_PGE, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    check("ovf-disabled", "--event:ip", EXP_ovf_disabled);
}

/* ---- F. PIP and VMCS at an asynchronous branch and at TIP.PGD ---- */

static void test_pip_vmcs_async(void **state)
{
    (void)state;
    put(0x1000, "90 90 90 ff e0");
    psb(1, 0x1000);
    ipk(PTD_PKT_FUP, 0x1002);
    pk(PTD_PKT_PIP, 0x12340, 0, 0, 0);
    pk(PTD_PKT_VMCS, 0xabc000, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    ipk(PTD_PKT_FUP, 0x1001);
    pk(PTD_PKT_PIP, 0x56780, 0, 0, PTD_PKTF_NR);
    ipk_none(PTD_PKT_TIP_PGD);
    check("pip-vmcs-async", "--event:ip", EXP_pip_vmcs_async);
}

static void test_pip_at_pgd(void **state)
{
    (void)state;
    put(0x1000, "90 0f 22 d8 90 ff e0"); /* nop; mov cr3, rax; nop; jmp rax */
    psb(1, 0x1000);
    pk(PTD_PKT_PIP, 0x9980, 0, 0, 0);
    ipk_none(PTD_PKT_TIP_PGD);
    ipk(PTD_PKT_TIP_PGE, 0x1004);
    pk(PTD_PKT_VMCS, 0x77000, 0, 0, 0);
    ipk(PTD_PKT_TIP_PGD, 0x1000);
    check("pip-at-pgd", "--event:ip", EXP_pip_at_pgd);
}

/* ---- G. power events ---- */

/* MWAIT and EXSTOP with IP bind to the FUP; PWRE and PWRX come as they
 * are; the HW flag of PWRE from bit 7 (the SDM) or, with --libipt-pwre,
 * bit 3 as libipt reads it. */
static void test_power(void **state)
{
    (void)state;
    put(0x1000, "90 0f 01 c9 90 ff e0"); /* nop; mwait; nop; jmp rax */
    psb(1, 0x1000);
    pk(PTD_PKT_MWAIT, 0x21, 0, 1, 0);
    pk(PTD_PKT_PWRE, 0, 2, 1, PTD_PKTF_HW);
    pk(PTD_PKT_EXSTOP, 0, 0, 0, PTD_PKTF_IP);
    ipk(PTD_PKT_FUP, 0x1001);
    pk(PTD_PKT_PWRX, 0, 2, 1, PTD_PKTF_WR_INT);
    pk(PTD_PKT_PWRE, 0, 1, 0, PTD_PKTF_HW | PTD_PKTF_HW_BIT3);
    pk(PTD_PKT_EXSTOP, 0, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    check("power-libipt-pwre", "--event:ip --libipt-pwre", EXP_power_libipt_pwre);
    /* by default the HW flag is bit 7 (the SDM's PWRE table): the first
     * PWRE is hardware-initiated; libipt, reading bit 3, says it is not
     * (its line lacks " hw"), nothing else differs */
    static const char sdm[] = "0000000000001000\n"
                              "[mwait 21 1, ip: 0000000000001001]\n"
                              "[exstop, ip: 0000000000001001]\n"
                              "[pwre c3.2 hw]\n"
                              "[pwrx int: c3 (c2)]\n"
                              "[exstop]\n"
                              "0000000000001001\n"
                              "0000000000001004\n"
                              "0000000000001005\n"
                              "[end of trace]\n";
    check("power-sdm", "--event:ip", sdm);
    char lib[sizeof sdm];
    const char *hw = strstr(sdm, " hw]");
    size_t at = (size_t)(hw - sdm);
    memcpy(lib, sdm, at);
    strcpy(lib + at, hw + 3);
    assert_string_equal(lib, EXP_power_sdm);
}

/* An OVF drops a pending MWAIT (waiting for its FUP). */
static void test_ovf_flushes_mwait(void **state)
{
    (void)state;
    put(0x1000, "90 0f 01 c9 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_MWAIT, 0x10, 0, 0, 0);
    pk(PTD_PKT_EXSTOP, 0, 0, 0, PTD_PKTF_IP);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1004);
    ipk(PTD_PKT_TIP, 0x1000);
    check("ovf-flushes-mwait", "--event:ip", EXP_ovf_flushes_mwait);
}

/* ---- H. TRIG ---- */

/* ICNT counts from the last IP packet (here the TIP) or the branch that
 * took a TNT packet's last bit; the event comes before the instruction it
 * counts to; a TRIG is the next one's anchor. */
static void test_trig_icnt(void **state)
{
    (void)state;
    /* 1000: nop x3; jmp rax -> 1010: nop; nop; jz 1000 (74 ec) */
    put(0x1000, "90 90 90 ff e0");
    put(0x1010, "90 90 74 ec");
    psb(1, 0x1000);
    ipk(PTD_PKT_TIP, 0x1010);
    pk(PTD_PKT_TRIG, 0, 0x1a, 1, PTD_PKTF_ICNTV);
    pk(PTD_PKT_TRIG, 0, 0x2b, 1, PTD_PKTF_ICNTV | PTD_PKTF_MULT);
    tnt("1");
    pk(PTD_PKT_TRIG, 0, 0x3c, 2, PTD_PKTF_ICNTV);
    ipk(PTD_PKT_FUP, 0x1003);
    ipk_none(PTD_PKT_TIP_PGD);
    check("trig-icnt", "--event:ip", EXP_trig_icnt);
    check("trig-icnt-insn", "--insn-decoder", EXP_trig_icnt_insn);
}

/* TRIG with IP takes the FUP after it (a TRIG without ICNTV has no IP and
 * is reported at once); while tracing is off, as it comes. */
static void test_trig_ip(void **state)
{
    (void)state;
    put(0x1000, "7e 02 f4 f4 ff d0"); /* jle 1004; hlt; hlt; call rax */
    psb(1, 0x1000);
    tnt("1");
    pk(PTD_PKT_TRIG, 0, 0x05, 0, 0);
    pk(PTD_PKT_TRIG, 0, 0xa1, 0, PTD_PKTF_IP | PTD_PKTF_ICNTV);
    ipk(PTD_PKT_FUP, 0x1004);
    ipk(PTD_PKT_TIP_PGD, 0x2000);
    pk(PTD_PKT_TRIG, 0, 0x06, 0, 0);
    ipk(PTD_PKT_TIP_PGE, 0x1000);
    check("trig-ip", "--event:ip", EXP_trig_ip);
}

/* A TRIG whose count is past its anchor, or with IP and a count, is a bad
 * packet. */
static void test_trig_bad(void **state)
{
    (void)state;
    put(0x1000, "90 90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_TRIG, 0, 0x11, 0, PTD_PKTF_IP | PTD_PKTF_ICNTV);
    ipk(PTD_PKT_FUP, 0x1002);
    ipk(PTD_PKT_TIP, 0x1000);
    psb(1, 0x1000);
    pk(PTD_PKT_TRIG, 0, 0x22, 3, PTD_PKTF_IP | PTD_PKTF_ICNTV);
    ipk(PTD_PKT_FUP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    check("trig-bad", "--event:ip", EXP_trig_bad);
}

/* ---- I. MODE.Exec's IF bit ---- */

/* With Event Trace, STI/CLI show as MODE.Exec + FUP: an iflags event
 * when IF changes (--event:iflags), none when nothing changes; an exec
 * mode event only when CS.L/CS.D change. */
static void test_mode_exec_if(void **state)
{
    (void)state;
    put(0x1000, "90 fb 90 fa 90 ff e0"); /* nop; sti; nop; cli; nop; jmp rax */
    pk(PTD_PKT_PSB, 0, 0, 0, 0);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
    ipk(PTD_PKT_FUP, 0x1000);
    pk(PTD_PKT_PSBEND, 0, 0, 0, 0);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL | PTD_PKTF_IF);
    ipk(PTD_PKT_FUP, 0x1002);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL | PTD_PKTF_IF);
    ipk(PTD_PKT_FUP, 0x1003);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
    ipk(PTD_PKT_FUP, 0x1004);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
    ipk(PTD_PKT_TIP, 0x1000);
    ipk_none(PTD_PKT_TIP_PGD);
    check("mode-exec-if", "--event:ip --event:iflags", EXP_mode_exec_if);
    check("mode-exec-if-off", "--event:ip", EXP_mode_exec_if_off);
}

/* ---- J. Event Trace: CFE and EVD ---- */

/* An interrupt (#PF with CR2, bound to the FUP of FUP + TIP), its IRET
 * (after the IRET instruction), a software interrupt (before its INT) and
 * a SYSCALL. */
static void test_cfe_interrupt(void **state)
{
    (void)state;
    put(0x1000, "90 90 cd 80 90 0f 05 90 f4"); /* nop; nop; int 0x80; nop; syscall; nop */
    put(0x1100, "90 48 cf");                   /* handler: nop; iretq */
    psb(1, 0x1000);
    pk(PTD_PKT_EVD, 0x7f00dead000ull, 0, 0, 0); /* CR2 */
    pk(PTD_PKT_CFE, 0, 1, 14, 0);               /* INTR 14 */
    ipk(PTD_PKT_FUP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1100);
    pk(PTD_PKT_CFE, 0, 2, 0, 0); /* IRET */
    ipk(PTD_PKT_TIP, 0x1001);
    pk(PTD_PKT_CFE, 0, 14, 0x80, PTD_PKTF_IP); /* SWINTR 0x80 */
    ipk(PTD_PKT_FUP, 0x1002);
    ipk(PTD_PKT_TIP, 0x1100);
    pk(PTD_PKT_CFE, 0, 2, 0, 0);
    ipk(PTD_PKT_TIP, 0x1004);
    pk(PTD_PKT_CFE, 0, 15, 0, PTD_PKTF_IP); /* SYSCALL */
    ipk(PTD_PKT_FUP, 0x1005);
    ipk(PTD_PKT_TIP, 0x1007);
    ipk(PTD_PKT_FUP, 0x1008);
    ipk_none(PTD_PKT_TIP_PGD);
    check("cfe-interrupt", "--event:ip", EXP_cfe_interrupt);
    check("cfe-interrupt-insn", "--insn-decoder", EXP_cfe_interrupt_insn);
}

/* A VM exit with its qualification and reason (EVD), the VM entry at
 * VMRESUME; SMI and RSM; INIT and SIPI while tracing is off. */
static void test_cfe_vmx(void **state)
{
    (void)state;
    put(0x1000, "90 0f 01 c3 90 f4"); /* nop; vmresume; nop; hlt */
    put(0x1100, "90 90 ff e0");       /* host: nop; nop; jmp rax */
    psb(1, 0x1000);
    pk(PTD_PKT_CFE, 0, 7, 0, 0); /* VMENTRY */
    pk(PTD_PKT_VMCS, 0x5000, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1004);
    pk(PTD_PKT_EVD, 0x11, 1, 0, 0);        /* VMXQ */
    pk(PTD_PKT_EVD, 0x30, 2, 0, 0);        /* VMXR */
    pk(PTD_PKT_CFE, 0, 8, 0, PTD_PKTF_IP); /* VMEXIT */
    ipk(PTD_PKT_FUP, 0x1005);
    ipk(PTD_PKT_TIP, 0x1100);
    pk(PTD_PKT_CFE, 0, 3, 0, PTD_PKTF_IP); /* SMI */
    ipk(PTD_PKT_FUP, 0x1101);
    ipk_none(PTD_PKT_TIP_PGD);
    pk(PTD_PKT_CFE, 0, 4, 0, 0);    /* RSM */
    pk(PTD_PKT_CFE, 0, 6, 0, 0);    /* INIT */
    pk(PTD_PKT_CFE, 0, 5, 0x9a, 0); /* SIPI */
    ipk(PTD_PKT_TIP_PGE, 0x1101);
    ipk(PTD_PKT_TIP, 0x1000);
    check("cfe-vmx", "--event:ip", EXP_cfe_vmx);
}

/* EVD rules: a second EVD of the same field, or one for a CFE that takes
 * none, is an unexpected packet context at that packet. */
static void test_evd_errors(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    psb(1, 0x1000);
    pk(PTD_PKT_EVD, 0x1000, 0, 0, 0);
    pk(PTD_PKT_EVD, 0x2000, 0, 0, 0);
    pk(PTD_PKT_CFE, 0, 1, 14, 0);
    ipk(PTD_PKT_FUP, 0x1001);
    ipk(PTD_PKT_TIP, 0x1000);
    psb(1, 0x1000);
    pk(PTD_PKT_EVD, 0x1000, 0, 0, 0);
    pk(PTD_PKT_CFE, 0, 2, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    check("evd-errors", "--event:ip", EXP_evd_errors);
}

/* ---- L. ptxed's block options ---- */

/* A loop with a direct call and a backward jump: the first pass fills the
 * block cache (blocks end after the call and at the backward jump), later
 * passes run over them; --stat's counts; the end-on options. */
static void test_blocks(void **state)
{
    (void)state;
    /* 1000: nop; call 1010; nop; jnz 1000 (75 f9)... ; 1010: nop; nop; ret */
    put(0x1000, "90 e8 0a 00 00 00 90 eb 02 90 90 75 f3");
    put(0x1010, "90 90 c3");
    put(0x100d, "90 ff e0");
    psb(1, 0x1000);
    tnt("1111");
    tnt("1111");
    tnt("10");
    ipk(PTD_PKT_TIP, 0x1000);
    ipk(PTD_PKT_FUP, 0x1001);
    ipk_none(PTD_PKT_TIP_PGD);
    check("blocks", "--stat --block:show-blocks", EXP_blocks);
    check("blocks-end-on", "--stat --block:show-blocks --block:end-on-call --block:end-on-jump",
          EXP_blocks_end_on);
    check("blocks-insn", "--stat --insn-decoder", EXP_blocks_insn);
    check("blocks-stat-blocks", "--stat:blocks --quiet", EXP_blocks_stat_blocks);
}

/* The time calibration over an OVF: reset, or kept with
 * --block:keep-tcal-on-ovf. */
static void test_keep_tcal(void **state)
{
    (void)state;
    put(0x1000, "90 90 ff e0");
    pk(PTD_PKT_PSB, 0, 0, 0, 0);
    mode64();
    pk(PTD_PKT_TSC, 0x100000, 0, 0, 0);
    pk(PTD_PKT_TMA, 0x1000 / 84, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1000);
    pk(PTD_PKT_PSBEND, 0, 0, 0, 0);
    pk(PTD_PKT_MTC, 0x1, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    pk(PTD_PKT_MTC, 0x2, 0, 0, 0);
    pk(PTD_PKT_OVF, 0, 0, 0, 0);
    ipk(PTD_PKT_FUP, 0x1001);
    pk(PTD_PKT_MTC, 0x3, 0, 0, 0);
    pk(PTD_PKT_CYC, 100, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    ipk_none(PTD_PKT_TIP_PGD);
    check("keep-tcal", "--time --event:time --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168",
          EXP_keep_tcal);
    check("keep-tcal-on",
          "--time --event:time --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 "
          "--block:keep-tcal-on-ovf",
          EXP_keep_tcal_on);
}

/* ---- M. errors: --resync-on-error, offsets, status updates ---- */

/* A TIP where the code needs a TNT bit: the error, then the next PSB; with
 * --resync-on-error the flow resumes at the next event that tells where
 * it is (the TIP itself here), printing an IP-less PTWRITE it cannot pass
 * on the way. */
static void test_resync(void **state)
{
    (void)state;
    put(0x1000, "90 74 02 90 90 90 ff e0"); /* nop; jz 1005; nop; nop; nop; jmp rax */
    psb(1, 0x1000);
    ipk(PTD_PKT_TIP, 0x1000);
    pk(PTD_PKT_PTW, 0xabcd, 0, 0, 0);
    tnt("0");
    ipk(PTD_PKT_TIP, 0x1003);
    ipk(PTD_PKT_FUP, 0x1004);
    ipk(PTD_PKT_TIP, 0x1000);
    tnt("1");
    ipk(PTD_PKT_TIP, 0x1000);
    check("resync-off", "--event:ip", EXP_resync_off);
    check("resync-on", "--event:ip --resync-on-error", EXP_resync_on);
    check("resync-on-insn", "--insn-decoder --resync-on-error", EXP_resync_on_insn);
}

/* Status updates that contradict the flow: a PSB+ without FUP (tracing
 * off) while it is on, a PSB+ with another execution mode: bad status
 * update (libipt 2.0.5 takes them as they come). */
static void test_bad_status_update(void **state)
{
    (void)state;
    put(0x1000, "90 90 90 90 ff e0");
    psb(1, 0x1000);
    psb(0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    psb(1, 0x1000);
    ipk(PTD_PKT_TIP, 0x1000);
    pk(PTD_PKT_PSB, 0, 0, 0, 0);
    pk(PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSD);
    ipk(PTD_PKT_FUP, 0x1000);
    pk(PTD_PKT_PSBEND, 0, 0, 0, 0);
    ipk(PTD_PKT_TIP, 0x1000);
    check("bad-status-update", "--event:ip --offset", EXP_bad_status_update);
}

/* A CPU the errata table lacks: the config error line first. */
static void test_unknown_cpu(void **state)
{
    (void)state;
    put(0x1000, "90 ff e0");
    psb(1, 0x1000);
    ipk(PTD_PKT_TIP, 0x1000);
    check("unknown-cpu", "--cpu 6/1", EXP_unknown_cpu);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_skd010, setup),
        cmocka_unit_test_setup(test_apl12, setup),
        cmocka_unit_test_setup(test_apl11, setup),
        cmocka_unit_test_setup(test_ovf_in_psb, setup),
        cmocka_unit_test_setup(test_ovf_flushes, setup),
        cmocka_unit_test_setup(test_ovf_disabled, setup),
        cmocka_unit_test_setup(test_pip_vmcs_async, setup),
        cmocka_unit_test_setup(test_pip_at_pgd, setup),
        cmocka_unit_test_setup(test_power, setup),
        cmocka_unit_test_setup(test_ovf_flushes_mwait, setup),
        cmocka_unit_test_setup(test_trig_icnt, setup),
        cmocka_unit_test_setup(test_trig_ip, setup),
        cmocka_unit_test_setup(test_trig_bad, setup),
        cmocka_unit_test_setup(test_mode_exec_if, setup),
        cmocka_unit_test_setup(test_cfe_interrupt, setup),
        cmocka_unit_test_setup(test_cfe_vmx, setup),
        cmocka_unit_test_setup(test_evd_errors, setup),
        cmocka_unit_test_setup(test_blocks, setup),
        cmocka_unit_test_setup(test_keep_tcal, setup),
        cmocka_unit_test_setup(test_resync, setup),
        cmocka_unit_test_setup(test_bad_status_update, setup),
        cmocka_unit_test_setup(test_unknown_cpu, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
