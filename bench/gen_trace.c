/* Synthetic Intel PT trace from libptd's encoder.
 *
 * Default (flow): what a CPU writes for a simulated program: PSB+ headers
 * (PSB, MODE.TSX, PIP, VMCS, CBR, TSC, MODE.Exec, FUP, PSBEND) every few KiB,
 * runs of conditional branches packed into TNT-8 (sometimes TNT-64), a TIP
 * with a compressed IP for each indirect branch or return, TIP.PGD/TIP.PGE
 * when the flow leaves and re-enters the traced range, PAD runs between
 * packet groups as in the real traces, MTC/CYC timing, and now and then the
 * rarer packets.
 * --uniform: every packet kind drawn independently (a worst case for branch
 * prediction; used by the tests for coverage).
 *
 * usage: gen_trace [--size BYTES] [--seed N] [--corrupt N] [--uniform]
 *                  [--all-kinds] [--chaos] OUT
 *   --corrupt N   overwrite N random bytes after generating
 *   --all-kinds   with --uniform: also CFE, EVD, BBP/BIP/BEP (libipt 2.0.5
 *                 does not know them); the flow does not write them
 *   --chaos       IP packets with random IPBytes and payloads (not a valid
 *                 flow: exercises last-IP tracking before any full IP) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_enc.h"

#define NSITES 256

static uint64_t s = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

static int put(struct ptd_encoder *e, uint8_t kind, uint64_t payload, uint8_t a, uint32_t aux,
               uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, aux, flags);
    return ptd_enc_next(e, &p);
}

int main(int argc, char **argv)
{
    size_t size = 64u << 20;
    uint64_t corrupt = 0;
    int all = 0, chaos = 0, uniform = 0;
    const char *out = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--size") && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
            s = strtoull(argv[++i], NULL, 0) * 0x9e3779b97f4a7c15ull | 1;
        else if (!strcmp(argv[i], "--corrupt") && i + 1 < argc)
            corrupt = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--all-kinds"))
            all = 1;
        else if (!strcmp(argv[i], "--chaos"))
            chaos = uniform = 1;
        else if (!strcmp(argv[i], "--uniform"))
            uniform = 1;
        else if (argv[i][0] != '-')
            out = argv[i];
        else {
            fprintf(stderr, "gen_trace: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr,
                "usage: gen_trace [--size BYTES] [--seed N] [--corrupt N] [--all-kinds] OUT\n");
        return 2;
    }
    /* the simulated program: sites in a few functions of a 1 MiB image */
    struct site {
        uint64_t ip;
        uint64_t bits;
        uint8_t ntnt, pads;
        uint16_t next[2];
    } sites[NSITES];
    unsigned cur = 0;
    /* (only for the flow: --uniform keeps its random sequence) */
    for (unsigned i = 0; i < NSITES && !uniform; i++) {
        static const uint8_t padlen[] = { 0, 1, 2, 2, 2, 3, 4, 7, 9, 12 };
        sites[i].ip = 0x400000 + (i / 16) * 0x10000 + (rnd() & 0xfff0);
        sites[i].ntnt = (uint8_t)(rnd() % 12);
        sites[i].bits = rnd();
        sites[i].pads = padlen[rnd() % sizeof padlen];
        /* mostly stay in the function (loops), sometimes call out */
        sites[i].next[0] = (uint16_t)((i & ~15u) | (rnd() % 16));
        sites[i].next[1] = (uint16_t)(rnd() % NSITES);
    }

    uint8_t *buf = malloc(size + 64);
    if (!buf)
        return 1;
    struct ptd_encoder e;
    ptd_enc_init(&e, buf, size);

    uint64_t ip = 0x401000, last = 0, next_psb = 0;
    int have_last = 0;
    for (;;) {
        uint64_t off = ptd_enc_offset(&e), pl;
        unsigned ipc;
        int r = 0;
        if (off >= next_psb) {
            r |= put(&e, PTD_PKT_PSB, 0, 0, 0, 0);
            have_last = 0;
            r |= put(&e, PTD_PKT_MODE_TSX, 0, 0, 0, 0);
            r |= put(&e, PTD_PKT_PIP, (rnd() & 0xfffffff) << 12, 0, 0, PTD_PKTF_NR);
            r |= put(&e, PTD_PKT_VMCS, (rnd() & 0xffffff) << 12, 0, 0, 0);
            r |= put(&e, PTD_PKT_CBR, 0x21, 0, 0, 0);
            r |= put(&e, PTD_PKT_TSC, rnd() & 0xffffffffffffffull, 0, 0, 0);
            r |= put(&e, PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
            ipc = ptd_enc_ip_compress(last, have_last, ip, &pl);
            r |= put(&e, PTD_PKT_FUP, pl, (uint8_t)ipc, 0, 0);
            last = ip;
            have_last = 1;
            r |= put(&e, PTD_PKT_PSBEND, 0, 0, 0, 0);
            next_psb = off + 4096 + rnd() % 4096;
            if (r < 0)
                break;
            continue;
        }
        if (!uniform) {
            /* One step of a simulated program: the current site's
             * conditional branches (a fixed pattern, rarely flipped), an
             * indirect branch or return to one of its two successors, and
             * the PADs that follow it. Programs loop, so the packet
             * sequences repeat as in a real trace. */
            const struct site *st = &sites[cur];
            unsigned ntnt = st->ntnt;
            uint64_t pattern = st->bits ^ (rnd() % 16 == 0 ? 1ull << (rnd() % 12) : 0);
            while (ntnt && r >= 0) {
                uint8_t n = (uint8_t)(ntnt > 6 ? 6 : ntnt);
                r = put(&e, PTD_PKT_TNT8, pattern & ((1u << n) - 1), n, 0, 0);
                pattern >>= n;
                ntnt -= n;
            }
            cur = st->next[rnd() % 8 < 6 ? 0 : 1];
            ip = sites[cur].ip;
            if (rnd() % 128 == 0 && r >= 0) {
                /* leave the traced range and come back */
                r = put(&e, PTD_PKT_TIP_PGD, 0, PTD_IPC_SUPPRESSED, 0, 0);
                ipc = ptd_enc_ip_compress(last, 0, ip, &pl);
                if (r >= 0)
                    r = put(&e, PTD_PKT_TIP_PGE, pl, (uint8_t)ipc, 0, 0);
            } else if (r >= 0) {
                ipc = ptd_enc_ip_compress(last, have_last, ip, &pl);
                r = put(&e, PTD_PKT_TIP, pl, (uint8_t)ipc, 0, 0);
            }
            last = ip;
            have_last = 1;
            if (rnd() % 64 == 0 && r >= 0) {
                uint8_t n = (uint8_t)(20 + rnd() % 28);
                r = put(&e, PTD_PKT_TNT64, rnd() & ((1ull << n) - 1), n, 0, 0);
            }
            if (rnd() % 32 == 0 && r >= 0)
                r = put(&e, PTD_PKT_MTC, rnd() & 0xff, 0, 0, 0);
            if (rnd() % 64 == 0 && r >= 0)
                r = put(&e, PTD_PKT_CYC, rnd() & 0xfff, 0, 0, 0);
            if (rnd() % 512 == 0 && r >= 0) {
                static const uint8_t rare[] = { PTD_PKT_PTW,   PTD_PKT_MODE_TSX, PTD_PKT_EXSTOP,
                                                PTD_PKT_MWAIT, PTD_PKT_PWRE,     PTD_PKT_PWRX,
                                                PTD_PKT_FUP };
                uint8_t k = rare[rnd() % sizeof rare];
                if (k == PTD_PKT_FUP) {
                    ipc = ptd_enc_ip_compress(last, have_last, ip, &pl);
                    r = put(&e, k, pl, (uint8_t)ipc, 0, 0);
                } else if (k == PTD_PKT_PWRX) {
                    r = put(&e, k, 0, 1, 2, PTD_PKTF_WR_INT);
                } else {
                    r = put(&e, k, rnd() & 0xff, 0, 0, 0);
                }
            }
            for (unsigned i = sites[cur].pads; i > 0 && r >= 0; i--)
                r = put(&e, PTD_PKT_PAD, 0, 0, 0, 0);
            if (r < 0)
                break;
            continue;
        }
        unsigned k = (unsigned)(rnd() % 1000);
        if (k < 330) {
            r = put(&e, PTD_PKT_PAD, 0, 0, 0, 0);
        } else if (k < 650) {
            uint8_t n = (uint8_t)(1 + rnd() % 6);
            r = put(&e, PTD_PKT_TNT8, rnd() & ((1u << n) - 1), n, 0, 0);
        } else if (k < 900) {
            /* branch somewhere near, sometimes far */
            unsigned kind = rnd() % 20 == 0   ? PTD_PKT_TIP_PGE
                            : rnd() % 20 == 0 ? PTD_PKT_TIP_PGD
                                              : PTD_PKT_TIP;
            uint64_t step = rnd() % 8 == 0 ? rnd() & 0x7ffffff : rnd() & 0x3fff;
            ip = (rnd() & 1) ? ip + step : ip - step;
            ip &= 0x7fffffffffffull;
            if (chaos) {
                static const uint8_t ipcs[] = { 0, 1, 2, 3, 4, 6 };
                uint8_t c = ipcs[rnd() % 6];
                int nb = ptd_ipc_size(c);
                r = put(&e, (uint8_t)kind, nb ? rnd() & (~0ull >> (64 - 8 * nb)) : 0, c, 0, 0);
            } else if (kind == PTD_PKT_TIP_PGD && rnd() % 2) {
                r = put(&e, PTD_PKT_TIP_PGD, 0, PTD_IPC_SUPPRESSED, 0, 0);
            } else {
                ipc = ptd_enc_ip_compress(last, have_last, ip, &pl);
                r = put(&e, (uint8_t)kind, pl, (uint8_t)ipc, 0, 0);
                last = ip;
                have_last = 1;
            }
        } else if (k < 930) {
            uint8_t n = (uint8_t)(1 + rnd() % 47);
            r = put(&e, PTD_PKT_TNT64, rnd() & ((1ull << n) - 1), n, 0, 0);
        } else if (k < 950) {
            r = put(&e, PTD_PKT_MTC, rnd() & 0xff, 0, 0, 0);
        } else if (k < 965) {
            r = put(&e, PTD_PKT_CYC, rnd() & ((1ull << (rnd() % 20)) - 1), 0, 0, 0);
        } else if (k < 970) {
            r = put(&e, PTD_PKT_TMA, rnd() & 0xffff, 0, (uint32_t)(rnd() & 0x1ff), 0);
        } else if (k < 975) {
            r = put(&e, PTD_PKT_TSC, rnd() & 0xffffffffffffffull, 0, 0, 0);
        } else if (k < 980) {
            ipc = ptd_enc_ip_compress(last, have_last, ip, &pl);
            r = put(&e, PTD_PKT_FUP, pl, (uint8_t)ipc, 0, 0);
            last = ip;
            have_last = 1;
        } else if (k < 984) {
            r = put(&e, PTD_PKT_MODE_EXEC, 0, 0, 0, (uint8_t)(rnd() % 3));
        } else if (k < 986) {
            r = put(&e, PTD_PKT_MODE_TSX, 0, 0, 0, (uint8_t)(rnd() % 3));
        } else if (k < 988) {
            r = put(&e, PTD_PKT_PTW, rnd() & 0xffffffff, 0, 0, (uint8_t)(rnd() & 1));
        } else if (k < 989) {
            r = put(&e, PTD_PKT_MWAIT, rnd() & 0xff, 0, (uint32_t)(rnd() & 3), 0);
        } else if (k < 990) {
            r = put(&e, PTD_PKT_PWRE, 0, (uint8_t)(rnd() & 0xf), (uint32_t)(rnd() & 0xf), 0);
        } else if (k < 991) {
            r = put(&e, PTD_PKT_PWRX, 0, (uint8_t)(rnd() & 0xf), (uint32_t)(rnd() & 0xf),
                    PTD_PKTF_WR_INT);
        } else if (k < 992) {
            r = put(&e, PTD_PKT_EXSTOP, 0, 0, 0, (uint8_t)(rnd() & 1));
        } else if (k < 993) {
            r = put(&e, PTD_PKT_OVF, 0, 0, 0, 0);
            have_last = 0;
        } else if (k < 994) {
            r = put(&e, PTD_PKT_STOP, 0, 0, 0, 0);
        } else if (k < 995) {
            r = put(&e, PTD_PKT_MNT, rnd(), 0, 0, 0);
        } else if (all && k < 997) {
            r = put(&e, PTD_PKT_CFE, 0, (uint8_t)(1 + rnd() % 13), (uint32_t)(rnd() & 0xff),
                    (uint8_t)(rnd() & 1));
        } else if (all && k < 998) {
            r = put(&e, PTD_PKT_EVD, rnd(), (uint8_t)(rnd() % 3), 0, 0);
        } else if (all) {
            uint8_t sz4 = rnd() & 1;
            r = put(&e, PTD_PKT_BBP, 0, (uint8_t)(rnd() & 0x1f), 0, sz4);
            for (int i = (int)(rnd() % 4); i >= 0 && r >= 0; i--)
                r = put(&e, PTD_PKT_BIP, rnd() & (sz4 ? 0xffffffffull : ~0ull),
                        (uint8_t)(rnd() & 0x1f), 0, sz4);
            if (r >= 0)
                r = put(&e, PTD_PKT_BEP, 0, 0, 0, (uint8_t)(rnd() & 1));
        } else {
            r = put(&e, PTD_PKT_PAD, 0, 0, 0, 0);
        }
        if (r < 0)
            break;
    }
    size_t n = (size_t)ptd_enc_offset(&e);
    for (uint64_t i = 0; i < corrupt && n; i++)
        buf[rnd() % n] = (uint8_t)rnd();
    FILE *f = fopen(out, "wb");
    if (!f || fwrite(buf, 1, n, f) != n || fclose(f) != 0) {
        perror(out);
        return 1;
    }
    free(buf);
    return 0;
}
