/* build/ptboot-bench (`ptboot bench` runs it): the benchmarks against
 * libipt, a program of their own so that build/ptboot does not link libipt.
 * With code (--pages/--raw) the flow benchmark (bench/bench_flow.c);
 * otherwise the throughput of libptd's packet layer against libipt's
 * packet decoder (pt_pkt_next) on the same buffer in one run.
 * Both decode every packet (sync at the first PSB, resync after errors);
 * rounds alternate between the two and the best round of each counts, so
 * a noisy machine hurts both alike. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "decoder/ptd_num.h"
#include "decoder/ptd_pkt.h"
#include "bench/bench_flow.h"
#include "host/cmd_dump.h"

/* The thread's CPU time: a round is not charged for the time the thread
 * waited for a core (this machine is shared), only for its own work. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t run_ptboot(const uint8_t *buf, size_t size)
{
    struct ptd_pkt_decoder d;
    struct ptd_pkt out[256];
    uint64_t packets = 0;
    int st;

    ptd_pkt_init(&d, buf, size);
    if (ptd_pkt_sync_forward(&d) < 0)
        return 0;
    for (;;) {
        packets += ptd_pkt_next_batch(&d, out, NULL, 256, &st);
        if (st == 0)
            continue;
        if (st == -PTD_ERR_EOS || st == -PTD_ERR_TRUNCATED || ptd_pkt_resync(&d, NULL) < 0)
            break;
    }
    return packets;
}

static uint64_t run_libipt(const uint8_t *buf, size_t size)
{
    struct pt_config cfg;
    struct pt_packet_decoder *d;
    struct pt_packet p;
    uint64_t packets = 0;

    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)buf;
    cfg.end = (uint8_t *)buf + size;
    d = pt_pkt_alloc_decoder(&cfg);
    if (!d)
        return 0;
    if (pt_pkt_sync_forward(d) >= 0) {
        for (;;) {
            int r = pt_pkt_next(d, &p, sizeof p);
            if (r >= 0) {
                packets++;
                continue;
            }
            if (r == -pte_eos || pt_pkt_sync_forward(d) < 0)
                break;
        }
    }
    pt_pkt_free_decoder(d);
    return packets;
}

static void bench_usage(FILE *out)
{
    fprintf(
        out,
        "usage: ptboot bench --pt FILE [--rounds N] [--min-bytes N]\n"
        "       ptboot bench --pt FILE (--pages PREFIX | --raw FILE[:FROM[-TO]]:BASE)...\n"
        "                    [--filter LO-HI] [--cpu f/m] [--rounds N] [--verify | --libipt-only]\n"
        "                    [--libipt-setup iscache|callback|file]\n"
        "(the program is build/ptboot-bench, built by `make bench`; it takes the same options)\n"
        "\n"
        "Decodes FILE with ptboot's packet layer and with libipt's packet decoder,\n"
        "alternating, and prints the best throughput of each:\n"
        "  bench: packets file=<name> ptboot_mbps=<x> libipt_mbps=<y> ratio=<x/y>\n"
        "  --rounds N     rounds per decoder (default 7)\n"
        "  --min-bytes N  bytes decoded per round, repeating small files (default 64M;\n"
        "                 a K, M or G suffix multiplies by 2^10, 2^20, 2^30)\n"
        "\n"
        "With code (--pages or --raw, and the other trace options of ptboot flow):\n"
        "the instruction flow against libipt's instruction and block decoders,\n"
        "after checking that ptboot's block and instruction APIs agree:\n"
        "  bench: flow file=<name> insns=<n> ptboot_minsn=<x> libipt_insn_minsn=<y> "
        "libipt_blk_minsn=<z>\n"
        "               libipt=<version> setup=<setup>\n"
        "  bench: flow-nocache file=<name> insns=<n> ptboot_minsn=<x>\n"
        "  --rounds N     rounds per decoder (default 5)\n"
        "  --verify       only the check: 'bench: flow-verify file=<name> ok (...)'\n"
        "  --libipt-only  only libipt's decoders: 'bench: flow-libipt file=<name> insns=<n>\n"
        "                 libipt_insn_minsn=<y> libipt_blk_minsn=<z> libipt=<version> "
        "setup=<setup>'\n"
        "  --libipt-setup how libipt gets the code: iscache (default, its fastest: an\n"
        "                 image-section cache), callback (a read-memory callback),\n"
        "                 file (file sections, no cache: the setup before issue 13)\n");
}

/* A whole number as every ptboot command reads it (decoder/ptd_num.h: 0x
 * hex, else decimal, K/M/G taken; suffixes is kept for the callers);
 * anything else (\"x\", \"-1\", \"7rounds\") is refused. */
static int parse_count(const char *s, int suffixes, unsigned long long *out)
{
    uint64_t v;
    (void)suffixes;
    if (!ptd_num_parse(s, PTD_NUM_AUTO, &v))
        return -1;
    *out = v;
    return 0;
}

/* argv[0] is the program (or "bench" when `ptboot bench` runs it); the
 * options follow. */
int main(int argc, char **argv)
{
    const char *prog = "ptboot bench";
    const char *file = NULL;
    long rounds = 7;
    unsigned long long min_bytes = 64ull << 20;

    /* with a code image (--pages/--raw): the instruction-flow benchmark */
    if (bench_is_flow(argc, argv))
        return bench_flow(argc, argv);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            bench_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--pt") && i + 1 < argc) {
            file = argv[++i];
        } else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            unsigned long long v;
            if (parse_count(argv[++i], 0, &v) < 0 || v < 1 || v > 1000000) {
                fprintf(stderr, "%s: --rounds wants a number from 1 to 1000000, not '%s'\n", prog,
                        argv[i]);
                return 2;
            }
            rounds = (long)v;
        } else if (!strcmp(argv[i], "--min-bytes") && i + 1 < argc) {
            if (parse_count(argv[++i], 1, &min_bytes) < 0) {
                fprintf(stderr,
                        "%s: --min-bytes wants a byte count (N, 0xN, NK, NM, NG), not '%s'\n", prog,
                        argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "%s: unknown or incomplete option: %s\n", prog, argv[i]);
            bench_usage(stderr);
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "%s: --pt FILE is required\n", prog);
        bench_usage(stderr);
        return 2;
    }
    if (rounds < 1)
        rounds = 1;

    uint8_t *buf;
    size_t size;
    if (host_load_file(prog, file, &buf, &size) < 0)
        return 1;
    if (!size) {
        fprintf(stderr, "%s: %s is empty\n", prog, file);
        free(buf);
        return 1;
    }
    uint64_t reps = min_bytes / size + 1;
    uint64_t n_ours = run_ptboot(buf, size), n_lib = run_libipt(buf, size);
    if (n_ours != n_lib)
        fprintf(stderr, "%s: warning: packet counts differ (ptboot %llu, libipt %llu)\n", prog,
                (unsigned long long)n_ours, (unsigned long long)n_lib);

    double best_ours = 1e30, best_lib = 1e30;
    volatile uint64_t sink = 0;
    for (long r = 0; r < rounds; r++) {
        double t0 = now_s();
        for (uint64_t k = 0; k < reps; k++)
            sink += run_ptboot(buf, size);
        double t1 = now_s();
        for (uint64_t k = 0; k < reps; k++)
            sink += run_libipt(buf, size);
        double t2 = now_s();
        if (t1 - t0 < best_ours)
            best_ours = t1 - t0;
        if (t2 - t1 < best_lib)
            best_lib = t2 - t1;
    }
    (void)sink;
    double mb = (double)size * (double)reps / 1e6;
    double ours = mb / best_ours, lib = mb / best_lib;
    printf("bench: packets file=%s ptboot_mbps=%.1f libipt_mbps=%.1f ratio=%.2f\n", file, ours, lib,
           ours / lib);
    free(buf);
    return 0;
}
