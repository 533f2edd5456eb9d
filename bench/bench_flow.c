/* `ptboot bench --pt FILE --pages PREFIX|--raw SPEC [--filter LO-HI]
 * [--rounds N] [--verify] [--libipt-setup iscache|callback|file]`:
 * instruction-flow throughput of libptd's flow layer against libipt's
 * instruction decoder (pt_insn_next) and block decoder (pt_blk_next), on
 * the same trace and code, in one run. Rounds alternate between them and
 * the best round of each counts. Prints
 *   bench: flow file=<name> insns=<n> ptboot_minsn=<x> libipt_insn_minsn=<y> libipt_blk_minsn=<z> libipt=<version> setup=<setup>
 *   bench: flow-nocache file=<name> insns=<n> ptboot_minsn=<x>
 *   bench: flow-count file=<name> insns=<n> ptboot_minsn=<x>
 * The first ptboot rate is libptd's block API with its block cache, the
 * second the block API with no cache, the third the counting loop `flow
 * --quiet` takes (ptd_flow_run_blocks: blocks counted, not handed out)
 * with the block cache. libipt gets its fastest documented setup
 * (bench/libipt_image.h): the code in an image-section cache, which keeps
 * the sections mapped with their block caches between rounds; measured
 * against a read-memory callback and plain file sections (the two other
 * setups, for comparison) it is the fastest for both of libipt's decoders
 * (docs/performance.md). ptboot reads through its map callback over the
 * same bytes in memory. Before timing, the block API (with and without
 * caches) is checked against the instruction API on the same trace;
 * --verify does only that. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "decoder/ptd_flow.h"
#include "bench/bench_flow.h"
#include "bench/libipt_image.h"
#include "host/flow_opts.h"

/* The thread's CPU time: a round is not charged for the time the thread
 * waited for a core (this machine is shared), only for its own work. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int bench_is_flow(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--pages") || !strcmp(argv[i], "--raw"))
            return 1;
    return 0;
}

#define BENCH_BLOCKS 0x10000u /* a flag of ours in cfg.flags: use blocks */

/* One decode of the whole trace; the instructions decoded. count: the
 * counting loop `ptboot flow --quiet` takes (ptd_flow_run_blocks, as
 * decoder/ptd_fmt_flow.c drives it: blocks counted, none handed out);
 * else the block API (BENCH_BLOCKS) or the instruction API. */
static uint64_t run_ptboot(struct ptd_flow *f, const struct ptd_flow_config *cfg, bool count)
{
    uint64_t n = 0;
    struct ptd_flow_run run;
    memset(&run, 0, sizeof(run));
    ptd_flow_init(f, cfg);
    for (;;) {
        struct ptd_flow_insn insn;
        struct ptd_event ev;
        int st = ptd_flow_sync_forward(f);
        if (st == -PTD_ERR_EOS)
            break;
        if (st < 0)
            break;
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT))
                st = ptd_flow_event(f, &ev);
            if (st < 0 || (st & PTD_ST_EOS))
                break;
            if (count) {
                st = ptd_flow_run_blocks(f, &run, 4096);
                n = run.insns;
            } else if (cfg->flags & BENCH_BLOCKS) {
                struct ptd_flow_block blk;
                st = ptd_flow_next_block(f, &blk);
                n += blk.ninsn;
            } else {
                st = ptd_flow_next(f, &insn);
                if (insn.iclass != PTD_FLOW_ICLASS_ERROR)
                    n++;
            }
            if (st < 0)
                break;
        }
        if (st == -PTD_ERR_EOS || (st >= 0 && (st & PTD_ST_EOS)))
            break;
    }
    return n;
}

/* The block API against the instruction API on the same trace: every
 * block's instructions are the next ninsn of ptd_flow_next's, starting at
 * blk.ip and ending at blk.last_ip, with only the last one a branch that
 * needs trace (a block runs on over direct jumps and calls, as libipt's); the
 * statuses and errors at the same places. Run before timing, so a fast
 * path that loses an instruction cannot hide in the numbers. Returns 0 or
 * -1 (printed). */
static int check_blocks(const struct ptd_flow_config *cfg, const char *what, const char *prog)
{
    struct ptd_flow *fi = malloc(sizeof(*fi)), *fb = malloc(sizeof(*fb));
    struct ptd_flow_config ci = *cfg;
    uint64_t blocks = 0, insns = 0;
    int sti = 0, stb = 0, bad = 0;

    ci.flags &= ~BENCH_BLOCKS;
    ci.cache = NULL;
    ci.bcache = NULL;
    if (!fi || !fb) {
        free(fi);
        free(fb);
        return -1;
    }
    ptd_flow_init(fi, &ci);
    ptd_flow_init(fb, cfg);
    /* both sides step through syncs, events and errors in lock step */
    sti = ptd_flow_sync_forward(fi);
    stb = ptd_flow_sync_forward(fb);
    while (!bad) {
        struct ptd_event evi, evb;
        if (sti != stb) {
            bad = 1;
            break;
        }
        if (sti < 0) {
            if (sti == -PTD_ERR_EOS)
                break;
            sti = ptd_flow_sync_forward(fi);
            stb = ptd_flow_sync_forward(fb);
            continue;
        }
        if (sti & PTD_ST_EVENT) {
            sti = ptd_flow_event(fi, &evi);
            stb = ptd_flow_event(fb, &evb);
            if (sti >= 0 && (evi.type != evb.type || evi.ip != evb.ip))
                bad = 1;
            continue;
        }
        if (sti & PTD_ST_EOS)
            break;
        struct ptd_flow_block blk;
        stb = ptd_flow_next_block(fb, &blk);
        blocks++;
        if (blk.ninsn == 0) {
            struct ptd_flow_insn in;
            sti = ptd_flow_next(fi, &in);
            if (in.iclass != PTD_FLOW_ICLASS_ERROR || in.ip != blk.ip)
                bad = 1;
            continue;
        }
        for (uint32_t k = 0; k < blk.ninsn && !bad; k++) {
            struct ptd_flow_insn in;
            sti = ptd_flow_next(fi, &in);
            insns++;
            bool last = k + 1 == blk.ninsn;
            if ((k == 0 && in.ip != blk.ip) || (last && in.ip != blk.last_ip) ||
                in.iclass == PTD_FLOW_ICLASS_ERROR ||
                (!last && in.iclass != PTD_ICLASS_OTHER && in.iclass != PTD_ICLASS_DIRECT_JUMP &&
                 in.iclass != PTD_ICLASS_DIRECT_CALL) ||
                (!last && sti != 0))
                bad = 1;
        }
    }
    if (bad)
        fprintf(stderr,
                "%s: %s: block API differs from the instruction API after %llu blocks, %llu "
                "instructions (status %d / %d, offset %llu)\n",
                prog, what, (unsigned long long)blocks, (unsigned long long)insns, sti, stb,
                (unsigned long long)ptd_flow_offset(fi));
    free(fi);
    free(fb);
    return bad ? -1 : 0;
}

struct lib_setup {
    struct pt_config cfg;
    struct pt_image *image;
};

/* "2.0.5": the libipt this process runs (a LD_LIBRARY_PATH may pick
 * another build than the one compiled against). */
static const char *lib_version(void)
{
    static char v[48];
    struct pt_version pv = pt_library_version();
    snprintf(v, sizeof(v), "%u.%u.%u%s%s", pv.major, pv.minor, (unsigned)pv.patch,
             pv.ext && *pv.ext ? "-" : "", pv.ext ? pv.ext : "");
    return v;
}

static uint64_t run_libipt_insn(struct lib_setup *ls)
{
    struct pt_insn_decoder *d = pt_insn_alloc_decoder(&ls->cfg);
    uint64_t n = 0;
    if (!d)
        return 0;
    pt_insn_set_image(d, ls->image);
    for (;;) {
        struct pt_insn insn;
        struct pt_event ev;
        int st = pt_insn_sync_forward(d);
        if (st < 0)
            break;
        for (;;) {
            while (st >= 0 && (st & pts_event_pending))
                st = pt_insn_event(d, &ev, sizeof(ev));
            if (st < 0 || (st & pts_eos))
                break;
            st = pt_insn_next(d, &insn, sizeof(insn));
            if (st < 0) {
                if (insn.iclass != ptic_error)
                    n++;
                break;
            }
            n++;
        }
        if (st == -pte_eos || (st >= 0 && (st & pts_eos)))
            break;
    }
    pt_insn_free_decoder(d);
    return n;
}

static uint64_t run_libipt_blk(struct lib_setup *ls)
{
    struct pt_block_decoder *d = pt_blk_alloc_decoder(&ls->cfg);
    uint64_t n = 0;
    if (!d)
        return 0;
    pt_blk_set_image(d, ls->image);
    for (;;) {
        struct pt_block blk;
        struct pt_event ev;
        int st = pt_blk_sync_forward(d);
        if (st < 0)
            break;
        for (;;) {
            while (st >= 0 && (st & pts_event_pending))
                st = pt_blk_event(d, &ev, sizeof(ev));
            if (st < 0 || (st & pts_eos))
                break;
            st = pt_blk_next(d, &blk, sizeof(blk));
            n += blk.ninsn;
            if (st < 0)
                break;
        }
        if (st == -pte_eos || (st >= 0 && (st & pts_eos)))
            break;
    }
    pt_blk_free_decoder(d);
    return n;
}

/* The trace's name in the lines: its file's, or its folder's when the
 * file is the usual trace.pt. */
static const char *trace_name(const char *path)
{
    static char nm[256];
    const char *name = strrchr(path, '/'), *slash = name;
    name = name ? name + 1 : path;
    if (slash && !strcmp(name, "trace.pt")) {
        const char *s = slash;
        while (s > path && s[-1] != '/')
            s--;
        snprintf(nm, sizeof(nm), "%.*s", (int)(slash - s), s);
        return nm;
    }
    return name;
}

/* libipt's decoders alone (--libipt-only), best of rounds each: the
 * same figures as the flow line's, from another process (libipt's speed
 * here differs from process to process: bench/flow.sh runs several). */
static void libipt_only_rounds(struct lib_setup *ls, long rounds, const char *name, int setup)
{
    double best_insn = 1e30, best_blk = 1e30;
    uint64_t n_insn = 0, n_blk = 0;
    for (long r = 0; r < rounds; r++) {
        double t0 = now_s();
        n_insn = run_libipt_insn(ls);
        double t1 = now_s();
        n_blk = run_libipt_blk(ls);
        double t2 = now_s();
        if (t1 - t0 < best_insn)
            best_insn = t1 - t0;
        if (t2 - t1 < best_blk)
            best_blk = t2 - t1;
    }
    printf("bench: flow-libipt file=%s insns=%llu libipt_insn_minsn=%.1f libipt_blk_minsn=%.1f "
           "libipt=%s setup=%s\n",
           name, (unsigned long long)n_blk, (double)n_insn / best_insn / 1e6,
           (double)n_blk / best_blk / 1e6, lib_version(),
           bench_lib_setup_name((enum bench_lib_setup)setup));
}

int bench_flow(int argc, char **argv)
{
    const char *prog = "ptboot bench";
    struct flow_opts fo;
    struct lib_setup ls;
    struct bench_lib_image li;
    int setup = BENCH_LIB_ISCACHE;
    struct ptd_flow *f;
    long rounds = 5;
    int verify_only = 0, libipt_only = 0;
    double best[3] = { 1e30, 1e30, 1e30 };
    uint64_t n[3] = { 0, 0, 0 };
    const char *name;

    flow_opts_init(&fo);
    for (int i = 1; i < argc; i++) {
        int r = flow_opts_parse(&fo, argc, argv, &i, prog);
        if (r < 0) {
            flow_opts_free(&fo);
            return 2;
        }
        if (r > 0)
            continue;
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = strtol(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--verify")) {
            verify_only = 1;
        } else if (!strcmp(argv[i], "--libipt-only")) {
            libipt_only = 1;
        } else if (!strcmp(argv[i], "--libipt-setup") && i + 1 < argc) {
            setup = bench_lib_setup_parse(argv[++i]);
            if (setup < 0) {
                fprintf(stderr, "%s: --libipt-setup wants iscache, callback or file, not '%s'\n",
                        prog, argv[i]);
                flow_opts_free(&fo);
                return 2;
            }
        } else {
            fprintf(stderr, "%s: unknown option for the flow benchmark: %s\n", prog, argv[i]);
            flow_opts_free(&fo);
            return 2;
        }
    }
    if (flow_opts_finish(&fo, prog) < 0) {
        flow_opts_free(&fo);
        return 1;
    }
    if (rounds < 1)
        rounds = 1;
    pt_config_init(&ls.cfg);
    ls.cfg.begin = fo.trace;
    ls.cfg.end = fo.trace + fo.tsize;
    if (fo.cfg.nfilter) {
        ls.cfg.addr_filter.config.ctl.addr0_cfg = 1;
        ls.cfg.addr_filter.addr0_a = fo.cfg.filter_lo[0];
        ls.cfg.addr_filter.addr0_b = fo.cfg.filter_hi[0];
    }
    if (fo.have_cpu) {
        ls.cfg.cpu.vendor = pcv_intel;
        ls.cfg.cpu.family = (uint16_t)fo.family;
        ls.cfg.cpu.model = (uint8_t)fo.model;
        pt_cpu_errata(&ls.cfg.errata, &ls.cfg.cpu);
    }
    if (bench_lib_image_build(&li, (enum bench_lib_setup)setup, argc, argv, &fo.img, prog) < 0) {
        bench_lib_image_free(&li);
        flow_opts_free(&fo);
        return 1;
    }
    ls.image = li.image;
    if (libipt_only) {
        libipt_only_rounds(&ls, rounds, trace_name(fo.pt), setup);
        bench_lib_image_free(&li);
        flow_opts_free(&fo);
        return 0;
    }
    f = malloc(sizeof(*f));
    /* code in place (flow_opts_finish set cfg.map), as ptboot flow and
     * summary read it */
    struct ptd_flow_config nocache = fo.cfg;
    double best_nc = 1e30, best_count = 1e30;
    uint64_t n_count = 0;
    nocache.cache = NULL;
    nocache.cache_size = 0;
    nocache.bcache = NULL;
    nocache.bcache_size = 0;
    /* with the block cache (the size of the image's, flow_opts_finish),
     * as `ptboot flow` decodes when it prints no disassembly: no
     * decoded-instruction cache then (host/cmd_flow.c) */
    fo.cfg.cache = NULL;
    fo.cfg.cache_size = 0;
    fo.cfg.flags |= BENCH_BLOCKS;
    nocache.flags |= BENCH_BLOCKS;
    if (check_blocks(&fo.cfg, "with caches", prog) < 0 ||
        check_blocks(&nocache, "without caches", prog) < 0) {
        bench_lib_image_free(&li);
        free(f);
        flow_opts_free(&fo);
        return 1;
    }
    if (verify_only)
        rounds = 0;
    for (long r = 0; r < rounds; r++) {
        double tn = now_s();
        (void)run_ptboot(f, &nocache, false);
        double t0 = now_s();
        if (t0 - tn < best_nc)
            best_nc = t0 - tn;
        n[0] = run_ptboot(f, &fo.cfg, false);
        double t1 = now_s();
        n[1] = run_libipt_insn(&ls);
        double t2 = now_s();
        n[2] = run_libipt_blk(&ls);
        double t3 = now_s();
        if (t1 - t0 < best[0])
            best[0] = t1 - t0;
        if (t2 - t1 < best[1])
            best[1] = t2 - t1;
        if (t3 - t2 < best[2])
            best[2] = t3 - t2;
    }
    /* the counting loop in rounds of its own (between the block API's
     * rounds it slowed those by a third on foo) */
    for (long r = 0; r < rounds; r++) {
        double t0 = now_s();
        n_count = run_ptboot(f, &fo.cfg, true);
        double t1 = now_s();
        if (t1 - t0 < best_count)
            best_count = t1 - t0;
        (void)run_libipt_blk(&ls);
    }
    if (rounds && (n[0] != n[1] || n[0] != n[2] || n[0] != n_count))
        fprintf(stderr,
                "%s: warning: instruction counts differ (ptboot %llu, counted %llu, libipt insn "
                "%llu, blk %llu)\n",
                prog, (unsigned long long)n[0], (unsigned long long)n_count,
                (unsigned long long)n[1], (unsigned long long)n[2]);
    name = trace_name(fo.pt);
    if (verify_only) {
        printf("bench: flow-verify file=%s ok (blocks with and without caches equal the "
               "instruction flow)\n",
               name);
        bench_lib_image_free(&li);
        free(f);
        flow_opts_free(&fo);
        return 0;
    }
    printf("bench: flow file=%s insns=%llu ptboot_minsn=%.1f libipt_insn_minsn=%.1f "
           "libipt_blk_minsn=%.1f libipt=%s setup=%s\n",
           name, (unsigned long long)n[0], (double)n[0] / best[0] / 1e6,
           (double)n[1] / best[1] / 1e6, (double)n[2] / best[2] / 1e6, lib_version(),
           bench_lib_setup_name((enum bench_lib_setup)setup));
    printf("bench: flow-nocache file=%s insns=%llu ptboot_minsn=%.1f\n", name,
           (unsigned long long)n[0], (double)n[0] / best_nc / 1e6);
    printf("bench: flow-count file=%s insns=%llu ptboot_minsn=%.1f\n", name,
           (unsigned long long)n_count, (double)n_count / best_count / 1e6);
    bench_lib_image_free(&li);
    free(f);
    flow_opts_free(&fo);
    return 0;
}
