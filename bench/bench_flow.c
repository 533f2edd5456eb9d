/* `ptboot bench --pt FILE --pages PREFIX|--raw SPEC [--filter LO-HI]
 * [--rounds N] [--verify]`: instruction-flow throughput of libptd's flow
 * layer against libipt's instruction decoder (pt_insn_next) and block
 * decoder (pt_blk_next), on the same trace and code, in one run. Rounds
 * alternate between them and the best round of each counts. Prints
 *   bench: flow file=<name> insns=<n> ptboot_minsn=<x> libipt_insn_minsn=<y> libipt_blk_minsn=<z>
 *   bench: flow-nocache file=<name> insns=<n> ptboot_minsn=<x>
 * The first ptboot rate is libptd's block API with its instruction and
 * block caches (1 MiB each), the second the block API with no cache (the
 * on-target case). libipt gets its fastest setup: the code as file
 * sections (pt_image_add_file, so its block cache works); ptboot reads
 * through its callback over the same bytes in memory. Before timing, the
 * block API (with and without caches) is checked against the instruction
 * API on the same trace; --verify does only that. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#include "decoder/ptd_flow.h"
#include "bench/bench_flow.h"
#include "host/flow_opts.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int bench_is_flow(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--pages") || !strcmp(argv[i], "--raw"))
            return 1;
    return 0;
}

#define BENCH_BLOCKS 0x10000u     /* a flag of ours in cfg.flags: use blocks */

static uint64_t run_ptboot(struct ptd_flow *f, const struct ptd_flow_config *cfg)
{
    uint64_t n = 0;
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
            if (cfg->flags & BENCH_BLOCKS) {
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
 * blk.ip and ending at blk.last_ip, with only the last one a branch; the
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
                in.iclass == PTD_FLOW_ICLASS_ERROR || (!last && in.iclass != PTD_ICLASS_OTHER) ||
                (!last && sti != 0))
                bad = 1;
        }
    }
    if (bad)
        fprintf(stderr, "%s: %s: block API differs from the instruction API after %llu blocks, %llu instructions (status %d / %d, offset %llu)\n",
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

struct pref {
    uint64_t addr;
    uint64_t idx;
};

static int pref_cmp(const void *a, const void *b)
{
    const struct pref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* libipt's image from the same inputs, as file sections. */
static int lib_image(struct pt_image *img, int argc, char **argv, const char *prog)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--pages")) {
            char dump[4096], addrf[4096];
            uint8_t *ab;
            size_t as;
            char err[512];
            snprintf(dump, sizeof(dump), "%s.dump", argv[i + 1]);
            snprintf(addrf, sizeof(addrf), "%s.addr", argv[i + 1]);
            if (flow_read_file(addrf, &ab, &as, err, sizeof(err)) < 0) {
                fprintf(stderr, "%s: %s\n", prog, err);
                return -1;
            }
            size_t n = as / 8;
            struct pref *p = calloc(n ? n : 1, sizeof(*p));
            for (size_t k = 0; k < n; k++) {
                uint64_t a = 0;
                for (int j = 0; j < 8; j++)
                    a |= (uint64_t)ab[k * 8 + j] << (8 * j);
                p[k].addr = a;
                p[k].idx = k;
            }
            qsort(p, n, sizeof(*p), pref_cmp);
            /* runs contiguous both in memory and in the file: one section */
            for (size_t k = 0; k < n;) {
                size_t e = k;
                while (e + 1 < n && p[e + 1].addr == p[e].addr + 4096 && p[e + 1].idx == p[e].idx + 1)
                    e++;
                if (pt_image_add_file(img, dump, p[k].idx * 4096, (e - k + 1) * 4096, NULL, p[k].addr) < 0) {
                    fprintf(stderr, "%s: libipt refuses section %s at %#llx\n", prog, dump,
                            (unsigned long long)p[k].addr);
                    free(p);
                    free(ab);
                    return -1;
                }
                k = e + 1;
            }
            free(p);
            free(ab);
        } else if (!strcmp(argv[i], "--raw")) {
            /* FILE[:FROM[-TO]]:BASE */
            char buf[4096], *c, *r;
            uint64_t base, from = 0, to = 0;
            snprintf(buf, sizeof(buf), "%s", argv[i + 1]);
            c = strrchr(buf, ':');
            if (!c)
                return -1;
            *c = 0;
            base = strtoull(c + 1, NULL, 0);
            r = strrchr(buf, ':');
            if (r) {
                char *d;
                *r++ = 0;
                d = strchr(r, '-');
                from = strtoull(r, NULL, 0);
                if (d)
                    to = strtoull(d + 1, NULL, 0);
            }
            if (pt_image_add_file(img, buf, from, to ? to - from : UINT64_MAX, NULL, base) < 0) {
                fprintf(stderr, "%s: libipt refuses %s\n", prog, argv[i + 1]);
                return -1;
            }
        }
    }
    return 0;
}

int bench_flow(int argc, char **argv)
{
    const char *prog = "ptboot bench";
    struct flow_opts fo;
    struct lib_setup ls;
    struct ptd_flow *f;
    long rounds = 5;
    int verify_only = 0;
    double best[3] = {1e30, 1e30, 1e30};
    uint64_t n[3] = {0, 0, 0};
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
    ls.image = pt_image_alloc("bench");
    if (!ls.image || lib_image(ls.image, argc, argv, prog) < 0) {
        flow_opts_free(&fo);
        return 1;
    }
    f = malloc(sizeof(*f));
    /* code in place (flow_opts_finish set cfg.map), as ptboot flow and
     * summary read it */
    struct ptd_flow_config nocache = fo.cfg;
    double best_nc = 1e30;
    nocache.cache = NULL;
    nocache.cache_size = 0;
    nocache.bcache = NULL;
    nocache.bcache_size = 0;
    /* with caches: decoded instructions and basic blocks, 1 MiB each */
    void *bmem = malloc(FLOW_CACHE_BYTES);
    fo.cfg.bcache = bmem;
    fo.cfg.bcache_size = bmem ? FLOW_CACHE_BYTES : 0;
    fo.cfg.flags |= BENCH_BLOCKS;
    nocache.flags |= BENCH_BLOCKS;
    if (check_blocks(&fo.cfg, "with caches", prog) < 0 || check_blocks(&nocache, "without caches", prog) < 0) {
        pt_image_free(ls.image);
        free(bmem);
        free(f);
        flow_opts_free(&fo);
        return 1;
    }
    if (verify_only)
        rounds = 0;
    for (long r = 0; r < rounds; r++) {
        double tn = now_s();
        (void)run_ptboot(f, &nocache);
        double t0 = now_s();
        if (t0 - tn < best_nc) best_nc = t0 - tn;
        n[0] = run_ptboot(f, &fo.cfg);
        double t1 = now_s();
        n[1] = run_libipt_insn(&ls);
        double t2 = now_s();
        n[2] = run_libipt_blk(&ls);
        double t3 = now_s();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
        if (t3 - t2 < best[2]) best[2] = t3 - t2;
    }
    if (rounds && (n[0] != n[1] || n[0] != n[2]))
        fprintf(stderr, "%s: warning: instruction counts differ (ptboot %llu, libipt insn %llu, blk %llu)\n",
                prog, (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)n[2]);
    name = strrchr(fo.pt, '/');
    name = name ? name + 1 : fo.pt;
    {
        /* name the trace by its folder when the file is the usual trace.pt */
        static char nm[256];
        const char *slash = strrchr(fo.pt, '/');
        if (slash && !strcmp(name, "trace.pt")) {
            const char *s = slash;
            while (s > fo.pt && s[-1] != '/')
                s--;
            snprintf(nm, sizeof(nm), "%.*s", (int)(slash - s), s);
            name = nm;
        }
    }
    if (verify_only) {
        printf("bench: flow-verify file=%s ok (blocks with and without caches equal the instruction flow)\n", name);
        pt_image_free(ls.image);
        free(bmem);
        free(f);
        flow_opts_free(&fo);
        return 0;
    }
    printf("bench: flow file=%s insns=%llu ptboot_minsn=%.1f libipt_insn_minsn=%.1f libipt_blk_minsn=%.1f\n",
           name, (unsigned long long)n[0], (double)n[0] / best[0] / 1e6, (double)n[1] / best[1] / 1e6,
           (double)n[2] / best[2] / 1e6);
    printf("bench: flow-nocache file=%s insns=%llu ptboot_minsn=%.1f\n", name, (unsigned long long)n[0],
           (double)n[0] / best_nc / 1e6);
    pt_image_free(ls.image);
    free(bmem);
    free(f);
    flow_opts_free(&fo);
    return 0;
}
