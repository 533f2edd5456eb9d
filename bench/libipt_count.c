/* build/bench/libipt_count: a plain libipt program, the baseline of
 * `make bench-flow`. It does what `ptboot flow --quiet --stat` does, the
 * way libipt's documentation says to: load the code as file sections into
 * an image-section cache (pt_iscache_add_file + pt_image_add_cached, a
 * cache limit set), decode with the block decoder (--insn: the instruction
 * decoder), count the instructions, print "insn: <n>." as ptxed --stat.
 *
 *   libipt_count --pt FILE --pages PREFIX [--filter LO-HI] [--insn] [--rounds N]
 *
 * With --rounds N (N > 1) it decodes N times with the same image and also
 * prints the best round's rate, to check the benchmark's libipt figures
 * against a program that shares no code with it:
 *   libipt-count: file=<FILE> decoder=<blk|insn> insns=<n> minsn=<x> libipt=<version>
 * It uses nothing of ptboot's: only libc and libipt. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <intel-pt.h>

#define PAGE 4096u

/* The thread's CPU time: a round is not charged for the time the thread
 * waited for a core (this machine is shared), only for its own work. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint8_t *load(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(buf = malloc((size_t)n + 1)) || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "libipt_count: cannot read %s\n", path);
        free(buf);
        buf = NULL;
    } else {
        *size = (size_t)n;
    }
    if (f)
        fclose(f);
    return buf;
}

/* PREFIX.dump at the addresses of PREFIX.addr: one section per run of
 * pages that follow each other both in the file and in memory. */
static int add_pages(struct pt_image *image, struct pt_image_section_cache *iscache,
                     const char *prefix)
{
    char dump[4096], addrs[4096];
    size_t asize;
    uint8_t *a;

    snprintf(dump, sizeof(dump), "%s.dump", prefix);
    snprintf(addrs, sizeof(addrs), "%s.addr", prefix);
    if (!(a = load(addrs, &asize)))
        return -1;
    size_t n = asize / 8;
    uint64_t *va = malloc((n ? n : 1) * sizeof(*va));
    if (!va) {
        free(a);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        va[k] = 0;
        for (unsigned j = 0; j < 8; j++)
            va[k] |= (uint64_t)a[k * 8 + j] << (8 * j);
    }
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0;) {
        size_t e = k;
        while (e + 1 < n && va[e + 1] == va[e] + PAGE)
            e++;
        int isid = pt_iscache_add_file(iscache, dump, k * PAGE, (e - k + 1) * PAGE, va[k]);
        if (isid < 0 || pt_image_add_cached(image, iscache, isid, NULL) < 0) {
            fprintf(stderr, "libipt_count: libipt refuses %s at %#" PRIx64 "\n", dump, va[k]);
            rc = -1;
        }
        k = e + 1;
    }
    /* every section stays mapped: its bytes plus libipt's block cache (a
     * 4-byte entry per byte) fit with room to spare */
    if (rc == 0 && pt_iscache_set_limit(iscache, (uint64_t)n * PAGE * 16 + (1u << 20)) < 0)
        rc = -1;
    free(va);
    free(a);
    return rc;
}

static uint64_t count_blocks(const struct pt_config *cfg, struct pt_image *image)
{
    struct pt_block_decoder *d = pt_blk_alloc_decoder(cfg);
    uint64_t n = 0;

    if (!d)
        return 0;
    pt_blk_set_image(d, image);
    for (;;) {
        int st = pt_blk_sync_forward(d);
        if (st < 0)
            break;
        for (;;) {
            struct pt_event ev;
            struct pt_block blk;
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

static uint64_t count_insns(const struct pt_config *cfg, struct pt_image *image)
{
    struct pt_insn_decoder *d = pt_insn_alloc_decoder(cfg);
    uint64_t n = 0;

    if (!d)
        return 0;
    pt_insn_set_image(d, image);
    for (;;) {
        int st = pt_insn_sync_forward(d);
        if (st < 0)
            break;
        for (;;) {
            struct pt_event ev;
            struct pt_insn insn;
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

static int usage(void)
{
    fprintf(
        stderr,
        "usage: libipt_count --pt FILE --pages PREFIX [--filter LO-HI] [--insn] [--rounds N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *pt = NULL, *pages = NULL;
    uint64_t lo = 0, hi = 0;
    int have_filter = 0, insn = 0;
    long rounds = 1;

    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--insn")) {
            insn = 1;
        } else if (!v) {
            return usage();
        } else if (!strcmp(argv[i], "--pt")) {
            pt = argv[++i];
        } else if (!strcmp(argv[i], "--pages")) {
            pages = argv[++i];
        } else if (!strcmp(argv[i], "--rounds")) {
            rounds = strtol(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--filter")) {
            char *dash;
            lo = strtoull(argv[++i], &dash, 16);
            if (*dash != '-')
                return usage();
            hi = strtoull(dash + 1, NULL, 16);
            have_filter = 1;
        } else {
            return usage();
        }
    }
    if (!pt || !pages || rounds < 1)
        return usage();

    size_t tsize;
    uint8_t *trace = load(pt, &tsize);
    struct pt_image *image = pt_image_alloc(NULL);
    struct pt_image_section_cache *iscache = pt_iscache_alloc(NULL);
    if (!trace || !image || !iscache || add_pages(image, iscache, pages) < 0)
        return 1;

    struct pt_config cfg;
    pt_config_init(&cfg);
    cfg.begin = trace;
    cfg.end = trace + tsize;
    if (have_filter) {
        cfg.addr_filter.config.ctl.addr0_cfg = 1; /* FilterEn (SDM: IA32_RTIT_CTL.ADDR0_CFG) */
        cfg.addr_filter.addr0_a = lo;
        cfg.addr_filter.addr0_b = hi;
    }
    uint64_t n = 0;
    double best = 1e30;
    for (long r = 0; r < rounds; r++) {
        double t0 = now_s();
        n = insn ? count_insns(&cfg, image) : count_blocks(&cfg, image);
        double t = now_s() - t0;
        if (t < best)
            best = t;
    }
    printf("insn: %" PRIu64 ".\n", n);
    if (rounds > 1) {
        struct pt_version v = pt_library_version();
        printf("libipt-count: file=%s decoder=%s insns=%" PRIu64 " minsn=%.1f libipt=%u.%u.%u\n",
               pt, insn ? "insn" : "blk", n, (double)n / best / 1e6, v.major, v.minor,
               (unsigned)v.patch);
    }
    pt_image_free(image);
    pt_iscache_free(iscache);
    free(trace);
    return 0;
}
