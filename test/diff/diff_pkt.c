/* Differential test of the packet layer against libipt (Debian libipt-dev):
 * random packet streams, written by our encoder and by libipt's pt_enc, with
 * and without corrupted bytes, decoded by both packet decoders. Every packet
 * must decode to the same kind, payload, size and offset; errors and the
 * resynchronisation point after them must agree. Both encoders must write
 * the same bytes for the same packet.
 *
 * usage: diff_pkt [streams] [seed]     (prints the seed on failure) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_pkt.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static uint64_t rnd_bits(unsigned bits)
{
    return bits >= 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

/* Kinds libipt 2.0.5 knows. */
static const uint8_t common_kinds[] = {
    PTD_PKT_PAD,      PTD_PKT_PSB,     PTD_PKT_PSBEND,  PTD_PKT_TNT8, PTD_PKT_TNT64,
    PTD_PKT_TIP,      PTD_PKT_TIP_PGE, PTD_PKT_TIP_PGD, PTD_PKT_FUP,  PTD_PKT_MODE_EXEC,
    PTD_PKT_MODE_TSX, PTD_PKT_PIP,     PTD_PKT_TSC,     PTD_PKT_MTC,  PTD_PKT_TMA,
    PTD_PKT_CYC,      PTD_PKT_VMCS,    PTD_PKT_OVF,     PTD_PKT_CBR,  PTD_PKT_STOP,
    PTD_PKT_PTW,      PTD_PKT_MWAIT,   PTD_PKT_PWRE,    PTD_PKT_PWRX, PTD_PKT_EXSTOP,
    PTD_PKT_MNT,
};
#define NCOMMON (sizeof common_kinds / sizeof common_kinds[0])

static void random_pkt(struct ptd_pkt *p, uint8_t kind)
{
    static const uint8_t ipcs[] = { 0, 1, 2, 3, 4, 6 };
    memset(p, 0, sizeof *p);
    p->kind = kind;
    switch (kind) {
    case PTD_PKT_TNT8:
        p->a = (uint8_t)(1 + rnd() % 6);
        p->payload = rnd_bits(p->a);
        break;
    case PTD_PKT_TNT64:
        p->a = (uint8_t)(1 + rnd() % 47);
        p->payload = rnd_bits(p->a);
        break;
    case PTD_PKT_TIP:
    case PTD_PKT_TIP_PGE:
    case PTD_PKT_TIP_PGD:
    case PTD_PKT_FUP:
        p->a = ipcs[rnd() % 6];
        p->payload = rnd_bits(8 * (unsigned)ptd_ipc_size(p->a));
        break;
    case PTD_PKT_MODE_EXEC: p->flags = (uint8_t)(rnd() & 3); break;
    case PTD_PKT_MODE_TSX: p->flags = (uint8_t)(rnd() & 3); break;
    case PTD_PKT_PIP:
        p->payload = rnd_bits(47) << 5;
        p->flags = rnd() & 1;
        break;
    case PTD_PKT_TSC: p->payload = rnd_bits(56); break;
    case PTD_PKT_MTC: p->payload = rnd_bits(8); break;
    case PTD_PKT_TMA:
        p->payload = rnd_bits(16);
        p->aux = (uint32_t)rnd_bits(9);
        break;
    case PTD_PKT_CYC: p->payload = rnd_bits((unsigned)(rnd() % 62)); break;
    case PTD_PKT_VMCS: p->payload = rnd_bits(40) << 12; break;
    case PTD_PKT_CBR: p->payload = rnd_bits(8); break;
    case PTD_PKT_PTW:
        p->a = rnd() & 1;
        p->flags = rnd() & 1;
        p->payload = rnd_bits(p->a ? 64 : 32);
        break;
    case PTD_PKT_MWAIT:
        p->payload = rnd_bits(32);
        p->aux = (uint32_t)rnd_bits(32);
        break;
    case PTD_PKT_PWRE:
        p->a = (uint8_t)rnd_bits(4);
        p->aux = (uint32_t)rnd_bits(4);
        p->flags = rnd() & 1;
        break;
    case PTD_PKT_PWRX: {
        static const uint8_t wr[] = { 1, 4, 8 };
        p->a = (uint8_t)rnd_bits(4);
        p->aux = (uint32_t)rnd_bits(4);
        p->flags = wr[rnd() % 3];
        break;
    }
    case PTD_PKT_EXSTOP:
    case PTD_PKT_BEP: p->flags = rnd() & 1; break;
    case PTD_PKT_MNT: p->payload = rnd(); break;
    case PTD_PKT_BBP:
        p->a = (uint8_t)rnd_bits(5);
        p->flags = rnd() & 1;
        break;
    case PTD_PKT_CFE:
        p->a = (uint8_t)rnd_bits(5);
        p->aux = (uint32_t)rnd_bits(8);
        p->flags = rnd() & 1;
        break;
    case PTD_PKT_EVD:
        p->a = (uint8_t)rnd_bits(6);
        p->payload = rnd();
        break;
    default: break;
    }
}

/* Our packet -> libipt's. */
static void to_lib(const struct ptd_pkt *p, struct pt_packet *l)
{
    memset(l, 0, sizeof *l);
    switch (p->kind) {
    case PTD_PKT_PAD: l->type = ppt_pad; break;
    case PTD_PKT_PSB: l->type = ppt_psb; break;
    case PTD_PKT_PSBEND: l->type = ppt_psbend; break;
    case PTD_PKT_OVF: l->type = ppt_ovf; break;
    case PTD_PKT_STOP: l->type = ppt_stop; break;
    case PTD_PKT_TNT8: l->type = ppt_tnt_8; goto tnt;
    case PTD_PKT_TNT64:
        l->type = ppt_tnt_64;
    tnt:
        l->payload.tnt.bit_size = p->a;
        l->payload.tnt.payload = p->payload;
        break;
    case PTD_PKT_TIP: l->type = ppt_tip; goto ip;
    case PTD_PKT_TIP_PGE: l->type = ppt_tip_pge; goto ip;
    case PTD_PKT_TIP_PGD: l->type = ppt_tip_pgd; goto ip;
    case PTD_PKT_FUP:
        l->type = ppt_fup;
    ip:
        l->payload.ip.ipc = (enum pt_ip_compression)p->a;
        l->payload.ip.ip = p->payload;
        break;
    case PTD_PKT_MODE_EXEC:
        l->type = ppt_mode;
        l->payload.mode.leaf = pt_mol_exec;
        l->payload.mode.bits.exec.csl = p->flags & 1;
        l->payload.mode.bits.exec.csd = (p->flags >> 1) & 1;
        break;
    case PTD_PKT_MODE_TSX:
        l->type = ppt_mode;
        l->payload.mode.leaf = pt_mol_tsx;
        l->payload.mode.bits.tsx.intx = p->flags & 1;
        l->payload.mode.bits.tsx.abrt = (p->flags >> 1) & 1;
        break;
    case PTD_PKT_PIP:
        l->type = ppt_pip;
        l->payload.pip.cr3 = p->payload;
        l->payload.pip.nr = p->flags & 1;
        break;
    case PTD_PKT_TSC:
        l->type = ppt_tsc;
        l->payload.tsc.tsc = p->payload;
        break;
    case PTD_PKT_MTC:
        l->type = ppt_mtc;
        l->payload.mtc.ctc = (uint8_t)p->payload;
        break;
    case PTD_PKT_TMA:
        l->type = ppt_tma;
        l->payload.tma.ctc = (uint16_t)p->payload;
        l->payload.tma.fc = (uint16_t)p->aux;
        break;
    case PTD_PKT_CYC:
        l->type = ppt_cyc;
        l->payload.cyc.value = p->payload;
        break;
    case PTD_PKT_VMCS:
        l->type = ppt_vmcs;
        l->payload.vmcs.base = p->payload;
        break;
    case PTD_PKT_CBR:
        l->type = ppt_cbr;
        l->payload.cbr.ratio = (uint8_t)p->payload;
        break;
    case PTD_PKT_PTW:
        l->type = ppt_ptw;
        l->payload.ptw.plc = p->a;
        l->payload.ptw.ip = p->flags & 1;
        l->payload.ptw.payload = p->payload;
        break;
    case PTD_PKT_MWAIT:
        l->type = ppt_mwait;
        l->payload.mwait.hints = (uint32_t)p->payload;
        l->payload.mwait.ext = p->aux;
        break;
    case PTD_PKT_PWRE:
        l->type = ppt_pwre;
        l->payload.pwre.state = p->a;
        l->payload.pwre.sub_state = (uint8_t)p->aux;
        l->payload.pwre.hw = p->flags & 1;
        break;
    case PTD_PKT_PWRX:
        l->type = ppt_pwrx;
        l->payload.pwrx.last = p->a;
        l->payload.pwrx.deepest = (uint8_t)p->aux;
        l->payload.pwrx.interrupt = !!(p->flags & PTD_PKTF_WR_INT);
        l->payload.pwrx.store = !!(p->flags & PTD_PKTF_WR_STORE);
        l->payload.pwrx.autonomous = !!(p->flags & PTD_PKTF_WR_HW);
        break;
    case PTD_PKT_EXSTOP:
        l->type = ppt_exstop;
        l->payload.exstop.ip = p->flags & 1;
        break;
    case PTD_PKT_MNT:
        l->type = ppt_mnt;
        l->payload.mnt.payload = p->payload;
        break;
    case PTD_PKT_INVALID: l->type = ppt_invalid; break;
    default: l->type = ppt_unknown; break;
    }
}

static int cmp_libipt20;

/* Compare our decoded packet with libipt's: 0 if equal. */
static int same(const struct ptd_pkt *p, const struct pt_packet *l, char *why, size_t n)
{
    struct pt_packet m;
    to_lib(p, &m);
    if (m.type != l->type) {
        snprintf(why, n, "type ours=%d libipt=%d", m.type, l->type);
        return 1;
    }
    if (p->size != l->size) {
        snprintf(why, n, "size ours=%u libipt=%u", p->size, l->size);
        return 1;
    }
    switch (l->type) {
    case ppt_tnt_8:
    case ppt_tnt_64:
        if (m.payload.tnt.bit_size != l->payload.tnt.bit_size ||
            m.payload.tnt.payload != l->payload.tnt.payload) {
            snprintf(why, n, "tnt ours=%u/%" PRIx64 " libipt=%u/%" PRIx64, m.payload.tnt.bit_size,
                     m.payload.tnt.payload, l->payload.tnt.bit_size, l->payload.tnt.payload);
            return 1;
        }
        return 0;
    case ppt_tip:
    case ppt_tip_pge:
    case ppt_tip_pgd:
    case ppt_fup:
        if (m.payload.ip.ipc != l->payload.ip.ipc || m.payload.ip.ip != l->payload.ip.ip) {
            snprintf(why, n, "ip ours=%d/%" PRIx64 " libipt=%d/%" PRIx64, m.payload.ip.ipc,
                     m.payload.ip.ip, l->payload.ip.ipc, l->payload.ip.ip);
            return 1;
        }
        return 0;
    case ppt_mode:
        if (m.payload.mode.leaf != l->payload.mode.leaf) {
            snprintf(why, n, "mode leaf");
            return 1;
        }
        if (l->payload.mode.leaf == pt_mol_exec
                ? (m.payload.mode.bits.exec.csl != l->payload.mode.bits.exec.csl ||
                   m.payload.mode.bits.exec.csd != l->payload.mode.bits.exec.csd)
                : (m.payload.mode.bits.tsx.intx != l->payload.mode.bits.tsx.intx ||
                   m.payload.mode.bits.tsx.abrt != l->payload.mode.bits.tsx.abrt)) {
            snprintf(why, n, "mode bits");
            return 1;
        }
        return 0;
    case ppt_pip:
        if (m.payload.pip.cr3 != l->payload.pip.cr3 || m.payload.pip.nr != l->payload.pip.nr) {
            snprintf(why, n, "pip ours=%" PRIx64 " libipt=%" PRIx64, m.payload.pip.cr3,
                     l->payload.pip.cr3);
            return 1;
        }
        return 0;
    case ppt_tsc:
        if (m.payload.tsc.tsc != l->payload.tsc.tsc) {
            snprintf(why, n, "tsc");
            return 1;
        }
        return 0;
    case ppt_mtc:
        if (m.payload.mtc.ctc != l->payload.mtc.ctc) {
            snprintf(why, n, "mtc");
            return 1;
        }
        return 0;
    case ppt_tma:
        if (m.payload.tma.ctc != l->payload.tma.ctc || m.payload.tma.fc != l->payload.tma.fc) {
            snprintf(why, n, "tma ours=%x,%x libipt=%x,%x", m.payload.tma.ctc, m.payload.tma.fc,
                     l->payload.tma.ctc, l->payload.tma.fc);
            return 1;
        }
        return 0;
    case ppt_cyc:
        if (m.payload.cyc.value != l->payload.cyc.value) {
            snprintf(why, n, "cyc ours=%" PRIx64 " libipt=%" PRIx64, m.payload.cyc.value,
                     l->payload.cyc.value);
            return 1;
        }
        return 0;
    case ppt_vmcs:
        if (m.payload.vmcs.base != l->payload.vmcs.base) {
            snprintf(why, n, "vmcs");
            return 1;
        }
        return 0;
    case ppt_cbr:
        if (m.payload.cbr.ratio != l->payload.cbr.ratio) {
            snprintf(why, n, "cbr");
            return 1;
        }
        return 0;
    case ppt_ptw:
        if (m.payload.ptw.plc != l->payload.ptw.plc || m.payload.ptw.ip != l->payload.ptw.ip ||
            m.payload.ptw.payload != l->payload.ptw.payload) {
            snprintf(why, n, "ptw");
            return 1;
        }
        return 0;
    case ppt_mwait:
        if (m.payload.mwait.hints != l->payload.mwait.hints ||
            m.payload.mwait.ext != l->payload.mwait.ext) {
            snprintf(why, n, "mwait ours=%x,%x libipt=%x,%x", m.payload.mwait.hints,
                     m.payload.mwait.ext, l->payload.mwait.hints, l->payload.mwait.ext);
            return 1;
        }
        return 0;
    case ppt_pwre:
        /* HW: the SDM puts it in byte 2 bit 7, libipt 2.0.5 in bit 3: compared
         * only when ours decodes as libipt 2.0 does. */
        if (m.payload.pwre.state != l->payload.pwre.state ||
            m.payload.pwre.sub_state != l->payload.pwre.sub_state ||
            (cmp_libipt20 && m.payload.pwre.hw != l->payload.pwre.hw)) {
            snprintf(why, n, "pwre ours=%u.%u/%u libipt=%u.%u/%u", m.payload.pwre.state,
                     m.payload.pwre.sub_state, m.payload.pwre.hw, l->payload.pwre.state,
                     l->payload.pwre.sub_state, l->payload.pwre.hw);
            return 1;
        }
        return 0;
    case ppt_pwrx:
        if (m.payload.pwrx.last != l->payload.pwrx.last ||
            m.payload.pwrx.deepest != l->payload.pwrx.deepest ||
            m.payload.pwrx.interrupt != l->payload.pwrx.interrupt ||
            m.payload.pwrx.store != l->payload.pwrx.store ||
            m.payload.pwrx.autonomous != l->payload.pwrx.autonomous) {
            snprintf(why, n, "pwrx ours=%u,%u,%u%u%u libipt=%u,%u,%u%u%u", m.payload.pwrx.last,
                     m.payload.pwrx.deepest, m.payload.pwrx.interrupt, m.payload.pwrx.store,
                     m.payload.pwrx.autonomous, l->payload.pwrx.last, l->payload.pwrx.deepest,
                     l->payload.pwrx.interrupt, l->payload.pwrx.store, l->payload.pwrx.autonomous);
            return 1;
        }
        return 0;
    case ppt_exstop:
        if (m.payload.exstop.ip != l->payload.exstop.ip) {
            snprintf(why, n, "exstop");
            return 1;
        }
        return 0;
    case ppt_mnt:
        if (m.payload.mnt.payload != l->payload.mnt.payload) {
            snprintf(why, n, "mnt");
            return 1;
        }
        return 0;
    default: return 0;
    }
}

static int map_err(int e)
{
    return e == -PTD_ERR_TRUNCATED ? -pte_eos : e;
}

static uint64_t cur_seed;
static long n_packets, n_errors, n_newer;

/* Opcode bytes of those kinds at off (the packet may be truncated). */
static int newer_opcode(const uint8_t *buf, size_t size, uint64_t off,
                        const struct ptd_pkt_decoder *d)
{
    if (d->in_block && (buf[off] & 7) == 4)
        return 1;
    if (buf[off] == PTD_OPC_TRIG)
        return 1;
    if (buf[off] != 0x02 || off + 1 >= size)
        return 0;
    switch (buf[off + 1]) {
    case 0x63:
    case 0x33:
    case 0xb3:
    case 0x13:
    case 0x53: return 1;
    default: return 0;
    }
}

/* Kinds libipt 2.0.5 does not know (it reports "unknown opcode"). */
static int newer_kind(uint8_t kind)
{
    return kind == PTD_PKT_BBP || kind == PTD_PKT_BIP || kind == PTD_PKT_BEP ||
           kind == PTD_PKT_CFE || kind == PTD_PKT_EVD || kind == PTD_PKT_TRIG;
}

static int fail(const char *what, uint64_t off, const char *why)
{
    printf("diff_pkt: MISMATCH (%s) at offset 0x%" PRIx64 ": %s\n", what, off, why);
    printf("diff_pkt: reproduce with: diff_pkt 1 %" PRIu64 "\n", cur_seed);
    return 1;
}

/* Decode buf with both decoders the way ptdump does (sync, decode, resync
 * after errors) and compare every step. */
static int compare_decoders(const uint8_t *buf, size_t size, int no_sync, unsigned errata)
{
    struct pt_config cfg;
    struct pt_packet_decoder *lib;
    struct ptd_pkt_decoder ours;
    char why[256];
    int lr, or_, steps = 0;

    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)buf;
    cfg.end = (uint8_t *)buf + size;
    cfg.errata.skd007 = !!(errata & PTD_ERRATUM_SKD007);
    cfg.errata.skz84 = !!(errata & PTD_ERRATUM_SKZ84);
    lib = pt_pkt_alloc_decoder(&cfg);
    ptd_pkt_init(&ours, buf, size);
    /* every other stream as libipt 2.0 decodes: no cut at newer packets */
    cmp_libipt20 = (int)(cur_seed & 1);
    /* libipt 2.0.5's packet decoder leaves SKD007 to its query decoder;
     * ours applies it as current libipt's (test_ptd_pkt's test_skd007),
     * except in libipt 2.0 mode */
    ptd_pkt_set_errata(&ours, cmp_libipt20 ? errata : errata & ~(unsigned)PTD_ERRATUM_SKD007);
    ptd_pkt_set_libipt20(&ours, cmp_libipt20);

    if (no_sync) {
        lr = pt_pkt_sync_set(lib, 0);
        or_ = ptd_pkt_sync_set(&ours, 0);
    } else {
        lr = pt_pkt_sync_forward(lib);
        or_ = ptd_pkt_sync_forward(&ours);
    }
    for (;;) {
        uint64_t loff, ooff;
        if (lr != map_err(or_)) {
            snprintf(why, sizeof why, "sync result ours=%d libipt=%d", or_, lr);
            pt_pkt_free_decoder(lib);
            return fail("sync", 0, why);
        }
        if (lr < 0)
            break;
        /* decode until an error */
        for (;;) {
            struct pt_packet lp;
            struct ptd_pkt op;
            pt_pkt_get_offset(lib, &loff);
            ooff = ptd_pkt_offset(&ours);
            if (loff != ooff) {
                snprintf(why, sizeof why, "offset ours=%" PRIx64 " libipt=%" PRIx64, ooff, loff);
                pt_pkt_free_decoder(lib);
                return fail("offset", loff, why);
            }
            lr = pt_pkt_next(lib, &lp, sizeof lp);
            or_ = ptd_pkt_next(&ours, &op);
            if (lr == -pte_bad_opc &&
                ((or_ > 0 && newer_kind(op.kind)) || newer_opcode(buf, size, loff, &ours))) {
                /* a packet newer than libipt 2.0.5: stop comparing here */
                n_newer++;
                pt_pkt_free_decoder(lib);
                return 0;
            }
            /* SKZ84 at the very end: libipt's 8-byte invalid packet runs
             * past the buffer, ours stops at its end; both end there */
            if (or_ > 0 && op.kind == PTD_PKT_INVALID && lr == 8 && ooff + (uint64_t)or_ == size) {
                pt_pkt_free_decoder(lib);
                return 0;
            }
            if (lr != map_err(or_)) {
                int k = snprintf(why, sizeof why, "result ours=%d (%s) libipt=%d (%s) bytes:", or_,
                                 or_ < 0 ? ptd_errstr(or_) : "ok", lr,
                                 lr < 0 ? pt_errstr(pt_errcode(lr)) : "ok");
                for (uint64_t i = loff; i < size && i < loff + 16 && k < 200; i++)
                    k += snprintf(why + k, sizeof why - (size_t)k, " %02x", buf[i]);
                pt_pkt_free_decoder(lib);
                return fail("decode", loff, why);
            }
            if (lr < 0)
                break;
            n_packets++;
            if (same(&op, &lp, why, sizeof why)) {
                pt_pkt_free_decoder(lib);
                return fail("packet", loff, why);
            }
            if (++steps > 1000000)
                break;
        }
        if (lr == -pte_eos)
            break;
        n_errors++;
        lr = pt_pkt_sync_forward(lib);
        or_ = ptd_pkt_sync_forward(&ours);
        if (lr == 0) {
            pt_pkt_get_offset(lib, &loff);
            ooff = ptd_pkt_offset(&ours);
            if (or_ == 0 && loff != ooff) {
                snprintf(why, sizeof why, "resync ours=%" PRIx64 " libipt=%" PRIx64, ooff, loff);
                pt_pkt_free_decoder(lib);
                return fail("resync", loff, why);
            }
        }
    }
    pt_pkt_free_decoder(lib);
    return 0;
}

/* Our batch decoder (the fast path) must give what ptd_pkt_next() gives,
 * with and without the offsets array (the benchmark and the query layer
 * call it without: a different code path). */
static int check_batch(const uint8_t *buf, size_t size, int no_sync, unsigned errata)
{
    struct ptd_pkt_decoder a, b;
    struct ptd_pkt out[300];
    uint64_t offs[300];
    size_t max = 1 + rnd() % 300;
    char why[160];
    int ra, rb, st;

    ptd_pkt_init(&a, buf, size);
    ptd_pkt_init(&b, buf, size);
    ptd_pkt_set_errata(&a, errata);
    ptd_pkt_set_errata(&b, errata);
    ra = no_sync ? ptd_pkt_sync_set(&a, 0) : ptd_pkt_sync_forward(&a);
    rb = no_sync ? ptd_pkt_sync_set(&b, 0) : ptd_pkt_sync_forward(&b);
    if (ra != rb)
        return fail("batch-sync", 0, "sync differs");
    uint64_t *want_offs = (rnd() & 1) ? offs : NULL;
    while (ra == 0) {
        size_t n = ptd_pkt_next_batch(&b, out, want_offs, max, &st);
        for (size_t i = 0; i < n; i++) {
            struct ptd_pkt p;
            uint64_t off = ptd_pkt_offset(&a);
            ra = ptd_pkt_next(&a, &p);
            if (ra <= 0 || (want_offs && off != offs[i]) || p.kind != out[i].kind ||
                p.payload != out[i].payload || p.meta != out[i].meta) {
                snprintf(why, sizeof why,
                         "next %d %s/%" PRIx64 " batch %s/%" PRIx64 " (%s offsets)", ra,
                         ptd_pkt_kinds[p.kind].name, p.payload, ptd_pkt_kinds[out[i].kind].name,
                         out[i].payload, want_offs ? "with" : "without");
                return fail("batch", off, why);
            }
        }
        if (ptd_pkt_offset(&a) != ptd_pkt_offset(&b) && st == 0)
            return fail("batch-position", ptd_pkt_offset(&a), "position after the batch differs");
        if (st == 0)
            continue;
        ra = ptd_pkt_next(&a, &out[0]);
        if (ra != st || ptd_pkt_offset(&a) != ptd_pkt_offset(&b)) {
            snprintf(why, sizeof why, "error next %d batch %d", ra, st);
            return fail("batch-error", ptd_pkt_offset(&a), why);
        }
        if (st == -PTD_ERR_EOS)
            break;
        ra = ptd_pkt_sync_forward(&a);
        rb = ptd_pkt_sync_forward(&b);
        if (ra != rb || ptd_pkt_offset(&a) != ptd_pkt_offset(&b))
            return fail("batch-resync", ptd_pkt_offset(&a), "resync differs");
    }
    return 0;
}

static int gen_stream(uint8_t *buf, size_t cap, size_t *size, int use_libipt, int all_kinds)
{
    struct ptd_encoder e;
    struct pt_config cfg;
    struct pt_encoder *le = NULL;
    int npk = 1 + (int)(rnd() % 300);

    ptd_enc_init(&e, buf, cap);
    if (use_libipt) {
        pt_config_init(&cfg);
        cfg.begin = buf;
        cfg.end = buf + cap;
        le = pt_alloc_encoder(&cfg);
    }
    for (int i = 0; i < npk; i++) {
        struct ptd_pkt p;
        uint8_t kind = (i == 0 || rnd() % 40 == 0) ? PTD_PKT_PSB
                       : all_kinds                 ? (uint8_t)(1 + rnd() % (PTD_PKT_INVALID - 1))
                                                   : common_kinds[rnd() % NCOMMON];
        if (kind == PTD_PKT_BIP)
            kind = PTD_PKT_TNT8;
        random_pkt(&p, kind);
        if (use_libipt && kind == PTD_PKT_PWRE)
            p.flags = 0; /* see the PWRE note in same() */
        if (use_libipt) {
            struct pt_packet lp;
            uint8_t mine[PTD_PKT_MAX_SIZE];
            uint64_t before, after;
            int n = ptd_enc_packet(mine, sizeof mine, &p);
            to_lib(&p, &lp);
            pt_enc_get_offset(le, &before);
            if (pt_enc_next(le, &lp) < 0)
                break;
            pt_enc_get_offset(le, &after);
            if (n < 0 || (uint64_t)n != after - before || memcmp(mine, buf + before, (size_t)n)) {
                char why[128];
                snprintf(why, sizeof why,
                         "encoders disagree on kind %s (ours %d bytes, libipt %" PRIu64 ")",
                         ptd_pkt_kinds[kind].name, n, after - before);
                pt_free_encoder(le);
                return fail("encode", before, why);
            }
        } else {
            if (ptd_enc_next(&e, &p) < 0)
                break;
        }
    }
    if (use_libipt) {
        uint64_t off;
        pt_enc_get_offset(le, &off);
        *size = (size_t)off;
        pt_free_encoder(le);
    } else {
        *size = (size_t)ptd_enc_offset(&e);
    }
    return 0;
}

/* Round trip through our encoder and decoder for all kinds (BBP/BIP/BEP,
 * CFE, EVD included, which libipt 2.0.5 does not know). */
static int roundtrip_all(uint8_t *buf, size_t cap)
{
    struct ptd_pkt in[64], out;
    struct ptd_encoder e;
    struct ptd_pkt_decoder d;
    int n = 0, in_block = 0, sz4 = 0;

    ptd_enc_init(&e, buf, cap);
    for (int i = 0; i < 64; i++) {
        uint8_t kind = (uint8_t)(1 + rnd() % (PTD_PKT_INVALID - 1));
        if (kind == PTD_PKT_BIP && !in_block)
            kind = PTD_PKT_BBP;
        if (in_block && (kind == PTD_PKT_TNT8 || kind == PTD_PKT_CYC))
            kind = PTD_PKT_BEP; /* TNT-8 bytes x..x100 would read as BIP */
        random_pkt(&in[n], kind);
        if (kind == PTD_PKT_BIP) {
            in[n].a = (uint8_t)rnd_bits(5);
            in[n].flags = (uint8_t)sz4;
            in[n].payload = rnd_bits(sz4 ? 32 : 64);
        }
        if (ptd_enc_next(&e, &in[n]) < 0)
            return fail("roundtrip-encode", ptd_enc_offset(&e), ptd_pkt_kinds[kind].name);
        if (kind == PTD_PKT_BBP) {
            in_block = 1;
            sz4 = in[n].flags & 1;
        }
        if (kind == PTD_PKT_BEP || kind == PTD_PKT_PSB || kind == PTD_PKT_OVF)
            in_block = 0;
        n++;
    }
    ptd_pkt_init(&d, buf, (size_t)ptd_enc_offset(&e));
    for (int i = 0; i < n; i++) {
        uint64_t off = ptd_pkt_offset(&d);
        int r = ptd_pkt_next(&d, &out);
        char why[160];
        if (r < 0) {
            snprintf(why, sizeof why, "packet %d (%s): %s", i, ptd_pkt_kinds[in[i].kind].name,
                     ptd_errstr(r));
            return fail("roundtrip-decode", off, why);
        }
        if (out.kind != in[i].kind || out.payload != in[i].payload || out.a != in[i].a ||
            out.aux != in[i].aux || (out.flags != in[i].flags && in[i].kind != PTD_PKT_BIP)) {
            snprintf(why, sizeof why,
                     "packet %d: in %s %" PRIx64 "/%u/%u/%u out %s %" PRIx64 "/%u/%u/%u", i,
                     ptd_pkt_kinds[in[i].kind].name, in[i].payload, in[i].a, in[i].aux, in[i].flags,
                     ptd_pkt_kinds[out.kind].name, out.payload, out.a, out.aux, out.flags);
            return fail("roundtrip", off, why);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    long streams = argc > 1 ? strtol(argv[1], NULL, 0) : 4000;
    uint64_t seed0 = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed1234abcdull;
    static uint8_t buf[1 << 16];
    long corrupted = 0;

    for (long s = 0; s < streams; s++) {
        size_t size;
        int mode;
        cur_seed = seed0 + (uint64_t)s;
        rng_state = cur_seed * 0x9e3779b97f4a7c15ull | 1;
        mode = (int)(rnd() % 6);
        if (roundtrip_all(buf, sizeof buf))
            return 1;
        if (mode == 5) {
            /* random bytes with PSBs sprinkled in */
            size = 16 + rnd() % 2048;
            for (size_t i = 0; i < size; i++)
                buf[i] = (uint8_t)rnd();
            for (int k = (int)(rnd() % 4); k >= 0; k--) {
                size_t at = rnd() % (size - 15);
                for (int i = 0; i < 16; i += 2) {
                    buf[at + i] = 0x02;
                    buf[at + i + 1] = 0x82;
                }
            }
            /* errata material: CYC+OVF (SKD007), TMA with reserved bits (SKZ84) */
            for (int k = (int)(rnd() % 8); k >= 0; k--) {
                size_t at = rnd() % (size - 8);
                if (rnd() & 1) {
                    buf[at] = (uint8_t)(0x07 | (rnd() & 0xf8));
                    buf[at + 1] = 0x02;
                    buf[at + 2] = 0xf3;
                } else {
                    buf[at] = 0x02;
                    buf[at + 1] = 0x73;
                    buf[at + 4] = (uint8_t)(rnd() & 1);
                    buf[at + 6] = (uint8_t)rnd();
                }
            }
        } else {
            if (gen_stream(buf, sizeof buf, &size, mode & 1, 0))
                return 1;
            if (mode >= 2) {
                /* corrupt: flip bytes, maybe truncate */
                int flips = 1 + (int)(rnd() % 4);
                for (int i = 0; i < flips && size; i++)
                    buf[rnd() % size] = (uint8_t)rnd();
                if (rnd() % 3 == 0 && size)
                    size -= rnd() % (size < 16 ? size : 16);
                corrupted++;
            }
        }
        {
            int no_sync = (int)(rnd() & 1);
            unsigned r = rnd() % 4 == 0 ? (unsigned)(rnd() & 3) : 0;
            unsigned errata =
                ((r & 1) ? PTD_ERRATUM_SKD007 : 0) | ((r & 2) ? PTD_ERRATUM_SKZ84 : 0);
            if (compare_decoders(buf, size, no_sync, errata) ||
                check_batch(buf, size, no_sync, errata))
                return 1;
        }
    }
    printf("diff_pkt: ok: %ld streams (%ld corrupted), %ld packets and %ld errors agree with libipt"
           " (%ld streams cut at a packet newer than libipt 2.0.5), seed %" PRIu64 "\n",
           streams, corrupted, n_packets, n_errors, n_newer, seed0);
    return 0;
}
