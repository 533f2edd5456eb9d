/* Packets as words, for tests that check a trace unit's output against what
 * the SDM says a CPU writes (test_ptd_tracer, test_soft_unit): the stream is
 * decoded with ptd_pkt, IPs resolved with ptd_last_ip, and each packet shown
 * as one word: PSB PSBEND MODE64 TSC(t) TNT.! (. not taken, ! taken, oldest
 * first) TIP(ip) PGE(ip) PGD(ip) PGD(-) FUP(ip) STOP, KINDn for any other.
 * Header-only (each test is one program); include after <cmocka.h>. */
#ifndef PTBOOT_TEST_PKT_WORDS_H
#define PTBOOT_TEST_PKT_WORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/ptd_pkt.h"

/* The words of buf[0..n) into out (cap bytes), separated by one space;
 * PAD packets left out if skip_pad. Fails the test on a decode error or an
 * IP that cannot be resolved. Returns out. */
static inline const char *pkt_words(const uint8_t *buf, size_t n, bool skip_pad, char *out,
                                    size_t cap)
{
    struct ptd_pkt_decoder d;
    struct ptd_last_ip lip;
    struct ptd_pkt p;
    size_t o = 0;
    out[0] = 0;
    ptd_pkt_init(&d, buf, n);
    ptd_last_ip_init(&lip);
    for (;;) {
        int r = ptd_pkt_next(&d, &p);
        char w[64];
        uint64_t ip = 0;
        if (r == -PTD_ERR_EOS)
            break;
        assert_true(r > 0);
        if (p.kind == PTD_PKT_PAD && skip_pad)
            continue;
        switch (p.kind) {
        case PTD_PKT_PSB:
            ptd_last_ip_init(&lip);
            snprintf(w, sizeof w, "PSB");
            break;
        case PTD_PKT_PSBEND: snprintf(w, sizeof w, "PSBEND"); break;
        case PTD_PKT_STOP: snprintf(w, sizeof w, "STOP"); break;
        case PTD_PKT_TSC: snprintf(w, sizeof w, "TSC(%llx)", (unsigned long long)p.payload); break;
        case PTD_PKT_MTC: snprintf(w, sizeof w, "MTC(%llx)", (unsigned long long)p.payload); break;
        case PTD_PKT_TMA:
            snprintf(w, sizeof w, "TMA(%llx,%x)", (unsigned long long)p.payload, (unsigned)p.aux);
            break;
        case PTD_PKT_MODE_EXEC:
            snprintf(w, sizeof w, "MODE%s",
                     (p.flags & PTD_PKTF_CSL)   ? "64"
                     : (p.flags & PTD_PKTF_CSD) ? "32"
                                                : "16");
            break;
        case PTD_PKT_TNT8: {
            int k = 0;
            w[k++] = 'T';
            w[k++] = 'N';
            w[k++] = 'T';
            for (int i = p.a - 1; i >= 0; i--)
                w[k++] = (p.payload >> i & 1) ? '!' : '.';
            w[k] = 0;
            break;
        }
        case PTD_PKT_TIP:
        case PTD_PKT_TIP_PGE:
        case PTD_PKT_TIP_PGD:
        case PTD_PKT_FUP: {
            const char *name = p.kind == PTD_PKT_TIP       ? "TIP"
                               : p.kind == PTD_PKT_TIP_PGE ? "PGE"
                               : p.kind == PTD_PKT_TIP_PGD ? "PGD"
                                                           : "FUP";
            assert_int_equal(ptd_last_ip_update(&lip, p.a, p.payload), 0);
            if (p.a == PTD_IPC_SUPPRESSED) {
                snprintf(w, sizeof w, "%s(-)", name);
            } else {
                assert_int_equal(ptd_last_ip_query(&lip, &ip), 0);
                snprintf(w, sizeof w, "%s(%llx)", name, (unsigned long long)ip);
            }
            break;
        }
        default: snprintf(w, sizeof w, "KIND%u", p.kind); break;
        }
        o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? " " : "", w);
    }
    return out;
}

#endif
