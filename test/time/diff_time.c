/* Differential test of decoder/ptd_time against libipt 2.0.5's time
 * tracking, as its query decoder exposes it (pt_qry_time, after each query,
 * and pt_qry_core_bus_ratio).
 *
 * Random timing-heavy streams from our encoder under random configurations
 * (MTC frequency, CPUID 0x15 ratio, nominal frequency, CPU errata): PSB+
 * headers with TSC/TMA/CBR, then MTC, CYC, TSC+TMA, CBR, OVF+FUP and new
 * PSB+ between branch packets (one-bit TNT-8 and TIP). libipt's query
 * decoder takes the time at each branch packet, after every packet before
 * it; ptd_time sees the same packets, so at the k-th branch packet both must
 * report the same TSC (or the same "no time yet" with the same relative
 * time), the same lost MTC/CYC counts and the same CBR.
 *
 * Whole traces (the real ones, gen_trace's realistic flows) go through a
 * general driver instead: it answers libipt's query decoder as a flow
 * decoder would (events when pending, a conditional branch per TNT bit, an
 * indirect branch per TIP), and at each query that takes a new TNT or TIP
 * packet compares libipt's time with ptd_time's after the packets before
 * that one; after a decode error both resynchronise at the same PSB.
 *
 * The timing errata table is checked against libipt's pt_cpu_errata().
 *
 * usage: diff_time [streams] [seed] [trace.pt...]   (prints the seed on failure) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <intel-pt.h>

#include "decoder/ptd_enc.h"
#include "decoder/ptd_time.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static unsigned pick(unsigned n)
{
    return (unsigned)(rnd() % n);
}

struct point {    /* our view at a branch packet */
    uint8_t kind; /* PTD_PKT_TNT8 or PTD_PKT_TIP */
    int time_rc;
    uint64_t tsc;
    uint32_t lost_mtc, lost_cyc;
    int cbr_rc;
    uint32_t cbr;
};

#define MAX_BYTES  8192
#define MAX_POINTS 1024

struct stream {
    uint8_t buf[MAX_BYTES];
    size_t size;
    struct ptd_time_config cfg;
    unsigned family, model; /* 0/0: no CPU */
    uint8_t ctc;            /* the next MTC's CTC byte */
    int full;
};

static void put(struct stream *s, struct ptd_encoder *e, uint8_t kind, uint64_t payload, uint8_t a,
                uint32_t aux, uint8_t flags)
{
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, aux, flags);
    if (s->full)
        return;
    if (ptd_enc_next(e, &p) < 0)
        s->full = 1;
}

static void put_tsc_tma(struct stream *s, struct ptd_encoder *e)
{
    put(s, e, PTD_PKT_TSC, rnd() & 0xffffffffffffull, 0, 0, 0);
    if (pick(8)) {
        /* MTC between TSC and TMA: libipt ignores it */
        if (!pick(6))
            put(s, e, PTD_PKT_MTC, s->ctc++, 0, 0, 0);
        put(s, e, PTD_PKT_TMA, rnd() & 0xffff, 0, (uint32_t)(rnd() & 0x1ff), 0);
    }
}

static void put_psb_plus(struct stream *s, struct ptd_encoder *e)
{
    put(s, e, PTD_PKT_PSB, 0, 0, 0, 0);
    if (pick(4))
        put(s, e, PTD_PKT_CBR, 1 + pick(60), 0, 0, 0);
    if (pick(6))
        put_tsc_tma(s, e);
    put(s, e, PTD_PKT_MODE_EXEC, 0, 0, 0, PTD_PKTF_CSL);
    put(s, e, PTD_PKT_FUP, 0x400000 + (rnd() & 0xffff), PTD_IPC_FULL, 0, 0);
    put(s, e, PTD_PKT_PSBEND, 0, 0, 0, 0);
}

static uint64_t cyc_value(void)
{
    switch (pick(5)) {
    case 0: return 1 + pick(31);
    case 1: return 1 + pick(0xfff);
    case 2: return rnd() & 0xfffff;
    case 3: return 0x1000; /* a wrap CYC */
    default: return 1 + pick(400);
    }
}

static void make_stream(struct stream *s)
{
    struct ptd_encoder e;
    unsigned n = 20 + pick(300);
    static const uint8_t freqs[] = { 0, 1, 2, 3, 3, 3, 4, 6, 8, 9, 10, 12, 15 };
    static const struct {
        unsigned f, m;
    } cpus[] = { { 0, 0 }, { 0, 0 }, { 6, 0x4e }, { 6, 0x9e }, { 6, 0x55 } };
    unsigned c = pick(5);

    memset(&s->cfg, 0, sizeof s->cfg);
    s->cfg.mtc_freq = freqs[pick(sizeof freqs)];
    s->cfg.cpuid_0x15_eax = pick(16) ? 1 + pick(4) : 0;
    s->cfg.cpuid_0x15_ebx = pick(16) ? 1 + pick(400) : 0;
    s->cfg.nom_freq = pick(3) ? 0 : (uint8_t)(1 + pick(60));
    s->family = cpus[c].f;
    s->model = cpus[c].m;
    s->cfg.errata = ptd_errata_cpu(s->family, s->model);
    s->ctc = (uint8_t)rnd();
    s->full = 0;

    ptd_enc_init(&e, s->buf, sizeof s->buf);
    put_psb_plus(s, &e);
    for (unsigned i = 0; i < n && !s->full; i++) {
        unsigned r = pick(100);
        if (r < 30)
            put(s, &e, PTD_PKT_TNT8, rnd() & 1, 1, 0, 0);
        else if (r < 38)
            put(s, &e, PTD_PKT_TIP, 0x400000 + (rnd() & 0xffff), PTD_IPC_FULL, 0, 0);
        else if (r < 58) {
            /* MTC: mostly the next period, now and then lost ones */
            s->ctc = (uint8_t)(s->ctc + (pick(8) ? 1 : 1 + pick(300)));
            put(s, &e, PTD_PKT_MTC, s->ctc, 0, 0, 0);
        } else if (r < 85) {
            /* now and then the SKD007 pattern: a 2-byte CYC of 0x20..0x3f
             * and a byte f3 (here a CYC of 0x1e), which a CPU with the
             * erratum writes for a CYC cut short by an OVF */
            if (!pick(40)) {
                put(s, &e, PTD_PKT_CYC, 0x20 + pick(32), 0, 0, 0);
                put(s, &e, PTD_PKT_CYC, 0x1e, 0, 0, 0);
                if (ptd_errata_cpu(s->family, s->model) & PTD_ERRATUM_SKD007) /* an OVF: */
                    put(s, &e, PTD_PKT_FUP, 0x400000 + (rnd() & 0xffff), PTD_IPC_FULL, 0, 0);
            } else {
                /* elsewhere keep clear of the pattern: after it, an OVF
                 * would need its FUP */
                uint64_t v = cyc_value();
                if (v >= 0x20 && v <= 0x3f)
                    v += 0x20;
                put(s, &e, PTD_PKT_CYC, v, 0, 0, 0);
            }
        } else if (r < 89)
            put_tsc_tma(s, &e);
        else if (r < 92)
            put(s, &e, PTD_PKT_CBR, 1 + pick(60), 0, 0, 0);
        else if (r < 95)
            put_psb_plus(s, &e);
        else if (r < 98) {
            /* OVF binds to the FUP after it; timing packets may come in
             * between. (No OVF right after a CYC: SKD007 would apply.) */
            put(s, &e, PTD_PKT_PAD, 0, 0, 0, 0);
            put(s, &e, PTD_PKT_OVF, 0, 0, 0, 0);
            if (pick(2)) {
                s->ctc++;
                put(s, &e, PTD_PKT_MTC, s->ctc, 0, 0, 0);
            }
            put(s, &e, PTD_PKT_FUP, 0x400000 + (rnd() & 0xffff), PTD_IPC_FULL, 0, 0);
        } else
            put(s, &e, PTD_PKT_PAD, 0, 0, 0, 0);
    }
    s->size = (size_t)ptd_enc_offset(&e);
}

/* Our side: every packet through ptd_time, a point at each branch packet. */
static size_t our_points(const struct stream *s, struct point *pts)
{
    struct ptd_pkt_decoder d;
    struct ptd_time t;
    struct ptd_pkt p;
    size_t n = 0;

    bool skd007 = (ptd_errata_cpu(s->family, s->model) & PTD_ERRATUM_SKD007) != 0;

    ptd_pkt_init(&d, s->buf, s->size);
    ptd_time_init(&t, &s->cfg);
    for (;;) {
        const uint8_t *at = d.pos;
        if (ptd_pkt_next(&d, &p) <= 0 || n >= MAX_POINTS)
            break;
        if (skd007 && ptd_time_skd007_cyc(&p, at, d.end)) {
            /* the CYC was cut short by the OVF that starts in its 2nd byte */
            ptd_pkt_sync_set(&d, (uint64_t)(at + 1 - d.begin));
            continue;
        }
        ptd_time_packet(&t, &p);
        if (p.kind == PTD_PKT_TNT8 || p.kind == PTD_PKT_TIP) {
            struct point *q = &pts[n++];
            q->kind = p.kind;
            q->time_rc = ptd_time_now(&t, &q->tsc, &q->lost_mtc, &q->lost_cyc);
            q->cbr = 0;
            q->cbr_rc = ptd_time_cbr(&t, &q->cbr);
        }
    }
    return n;
}

static void dump_stream(const struct stream *s, uint64_t seed, unsigned idx)
{
    char name[96];
    FILE *f;
    /* into build/test when run from the top of the tree, else here */
    FILE *probe = fopen("build/test/diff_time", "rb");
    snprintf(name, sizeof name, "%sdiff_time-%" PRIu64 "-%u.pt", probe ? "build/test/" : "", seed,
             idx);
    if (probe)
        fclose(probe);
    f = fopen(name, "wb");
    if (f) {
        fwrite(s->buf, 1, s->size, f);
        fclose(f);
        fprintf(stderr,
                "  stream written to %s (ptboot dump --time --mtc-freq %u --cpuid-0x15.eax %u "
                "--cpuid-0x15.ebx %u --nom-freq %u%s%x)\n",
                name, s->cfg.mtc_freq, s->cfg.cpuid_0x15_eax, s->cfg.cpuid_0x15_ebx,
                s->cfg.nom_freq, s->family ? " --cpu 6/" : "", s->family ? s->model : 0);
    }
}

/* libipt's side, compared point by point. Returns 0 if all agree. */
static int compare(const struct stream *s, const struct point *pts, size_t npts, uint64_t seed,
                   unsigned idx, unsigned long *checked)
{
    struct pt_config cfg;
    struct pt_query_decoder *q;
    uint64_t ip;
    int status, bad = 0;

    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)s->buf;
    cfg.end = (uint8_t *)s->buf + s->size;
    cfg.mtc_freq = s->cfg.mtc_freq;
    cfg.nom_freq = s->cfg.nom_freq;
    cfg.cpuid_0x15_eax = s->cfg.cpuid_0x15_eax;
    cfg.cpuid_0x15_ebx = s->cfg.cpuid_0x15_ebx;
    if (s->family) {
        cfg.cpu.vendor = pcv_intel;
        cfg.cpu.family = (uint16_t)s->family;
        cfg.cpu.model = (uint8_t)s->model;
        pt_cpu_errata(&cfg.errata, &cfg.cpu);
    }
    q = pt_qry_alloc_decoder(&cfg);
    if (!q)
        return -1;
    status = pt_qry_sync_forward(q, &ip);
    for (size_t k = 0; k < npts && status >= 0 && !bad; k++) {
        struct pt_event ev;
        uint64_t tsc = 0;
        uint32_t lm = 0, lc = 0, cbr = 0;
        int taken, rc, crc;

        while (status >= 0 && (status & pts_event_pending))
            status = pt_qry_event(q, &ev, sizeof ev);
        if (status < 0)
            break;
        if (pts[k].kind == PTD_PKT_TNT8)
            status = pt_qry_cond_branch(q, &taken);
        else
            status = pt_qry_indirect_branch(q, &ip);
        if (status < 0)
            break;
        rc = pt_qry_time(q, &tsc, &lm, &lc);
        crc = pt_qry_core_bus_ratio(q, &cbr);
        (*checked)++;
        if ((rc < 0) != (pts[k].time_rc < 0) || tsc != pts[k].tsc || lm != pts[k].lost_mtc ||
            lc != pts[k].lost_cyc || (crc < 0) != (pts[k].cbr_rc < 0) ||
            (crc >= 0 && cbr != pts[k].cbr)) {
            fprintf(stderr,
                    "FAIL: seed %" PRIu64 " stream %u, branch packet %zu: libipt time %s%" PRIx64
                    " lost %u/%u cbr %d:%u, ptd_time %s%" PRIx64 " lost %u/%u cbr %d:%u\n",
                    seed, idx, k, rc < 0 ? "(no wall clock) " : "", tsc, lm, lc, crc, cbr,
                    pts[k].time_rc < 0 ? "(no wall clock) " : "", pts[k].tsc, pts[k].lost_mtc,
                    pts[k].lost_cyc, pts[k].cbr_rc, pts[k].cbr);
            bad = 1;
        }
    }
    if (status < 0 && status != -pte_eos && !bad) {
        fprintf(stderr, "FAIL: seed %" PRIu64 " stream %u: libipt's query decoder: %s\n", seed, idx,
                pt_errstr(pt_errcode(status)));
        bad = 1;
    }
    pt_qry_free_decoder(q);
    if (bad)
        dump_stream(s, seed, idx);
    return bad;
}

static int check_errata_table(void)
{
    int bad = 0;
    for (unsigned m = 0; m < 256; m++) {
        struct pt_cpu cpu = { .vendor = pcv_intel, .family = 6, .model = (uint8_t)m };
        struct pt_errata e;
        memset(&e, 0, sizeof e);
        if (pt_cpu_errata(&e, &cpu) < 0)
            continue;
        if (!!e.skl168 != !!(ptd_errata_cpu(6, m) & PTD_ERRATUM_SKL168)) {
            fprintf(stderr, "FAIL: SKL168 for cpu 6/%#x: libipt %d, ptd_time %d\n", m, e.skl168,
                    !e.skl168);
            bad = 1;
        }
    }
    return bad;
}

/* ---- whole traces ----------------------------------------------------------- */

struct follower { /* our side, moved along to libipt's position */
    struct ptd_pkt_decoder dec;
    struct ptd_time time;
    struct ptd_pkt next; /* the packet at dec's position (decoded ahead) */
    int have_next;
};

static void follow_start(struct follower *f, const uint8_t *buf, size_t size,
                         const struct ptd_time_config *cfg, uint64_t sync)
{
    ptd_pkt_init(&f->dec, buf, size);
    ptd_pkt_sync_set(&f->dec, sync);
    ptd_time_init(&f->time, cfg);
    f->have_next = 0;
}

/* Apply every packet before `offset`; returns the packet at `offset` (or
 * NULL if offset is not a packet boundary on our side). */
static const struct ptd_pkt *follow_to(struct follower *f, uint64_t offset)
{
    for (;;) {
        uint64_t at = ptd_pkt_offset(&f->dec);
        struct ptd_pkt_decoder peek = f->dec;
        if (ptd_pkt_next(&peek, &f->next) < 0)
            return NULL;
        if (at == offset)
            return &f->next;
        if (at > offset)
            return NULL;
        f->dec = peek;
        ptd_time_packet(&f->time, &f->next);
    }
}

/* Returns the number of disagreements; *points counts the comparisons. */
static unsigned compare_trace(const char *name, const uint8_t *buf, size_t size,
                              const struct ptd_time_config *tc, unsigned long *points)
{
    struct pt_config cfg;
    struct pt_query_decoder *q;
    struct follower f;
    unsigned bad = 0, bits_left = 0;
    uint64_t ip, off, sync;
    int status;

    pt_config_init(&cfg);
    cfg.begin = (uint8_t *)buf;
    cfg.end = (uint8_t *)buf + size;
    cfg.mtc_freq = tc->mtc_freq;
    cfg.nom_freq = tc->nom_freq;
    cfg.cpuid_0x15_eax = tc->cpuid_0x15_eax;
    cfg.cpuid_0x15_ebx = tc->cpuid_0x15_ebx;
    q = pt_qry_alloc_decoder(&cfg);
    if (!q)
        return 1;
    memset(&f, 0, sizeof f);
    status = pt_qry_sync_forward(q, &ip);
    if (status >= 0 && pt_qry_get_sync_offset(q, &sync) == 0)
        follow_start(&f, buf, size, tc, sync);
    while (status != -pte_eos && bad < 5) {
        if (status < 0) { /* resync both sides at libipt's next PSB */
            status = pt_qry_sync_forward(q, &ip);
            bits_left = 0;
            if (status < 0)
                continue;
            if (pt_qry_get_sync_offset(q, &sync) < 0)
                break;
            follow_start(&f, buf, size, tc, sync);
            continue;
        }
        if (status & pts_event_pending) {
            struct pt_event ev;
            status = pt_qry_event(q, &ev, sizeof ev);
            continue;
        }
        if (bits_left) {
            int taken;
            bits_left--;
            status = pt_qry_cond_branch(q, &taken);
            continue;
        }
        if (pt_qry_get_offset(q, &off) < 0)
            break;
        const struct ptd_pkt *p = follow_to(&f, off);
        if (!p) {
            if (off < size)
                fprintf(stderr,
                        "diff_time: %s: stopped at %#" PRIx64 " (no packet there on our side)\n",
                        name, off);
            break;
        }
        if (p->kind == PTD_PKT_TNT8 || p->kind == PTD_PKT_TNT64) {
            int taken;
            bits_left = p->a - 1u;
            status = pt_qry_cond_branch(q, &taken);
        } else if (p->kind == PTD_PKT_TIP) {
            status = pt_qry_indirect_branch(q, &ip);
        } else {
            fprintf(stderr, "diff_time: %s: stopped at %#" PRIx64 " (%s, no event pending)\n", name,
                    off, ptd_pkt_kinds[p->kind].name);
            break;
        }
        if (status < 0)
            continue;
        uint64_t a = 0, b = 0;
        uint32_t am = 0, ac = 0, bm = 0, bc = 0, acbr = 0, bcbr = 0;
        int ra = pt_qry_time(q, &a, &am, &ac), rb = ptd_time_now(&f.time, &b, &bm, &bc);
        int ca = pt_qry_core_bus_ratio(q, &acbr), cb = ptd_time_cbr(&f.time, &bcbr);
        (*points)++;
        if ((ra < 0) != (rb < 0) || a != b || am != bm || ac != bc || (ca < 0) != (cb < 0) ||
            (ca >= 0 && acbr != bcbr)) {
            fprintf(stderr,
                    "FAIL: %s at %#" PRIx64 ": libipt time %" PRIx64
                    " (%d) lost %u/%u cbr %u (%d), "
                    "ptd_time %" PRIx64 " (%d) lost %u/%u cbr %u (%d)\n",
                    name, off, a, ra, am, ac, acbr, ca, b, rb, bm, bc, bcbr, cb);
            bad++;
        }
    }
    pt_qry_free_decoder(q);
    return bad;
}

static int run_file(const char *path, unsigned long *points)
{
    static uint8_t buf[64 << 20];
    static const struct ptd_time_config cfgs[] = {
        { 0 },
        { .mtc_freq = 3, .nom_freq = 24, .cpuid_0x15_eax = 2, .cpuid_0x15_ebx = 168 },
        { .mtc_freq = 9, .cpuid_0x15_eax = 1, .cpuid_0x15_ebx = 3 },
    };
    FILE *fp = fopen(path, "rb");
    size_t n;
    unsigned bad = 0;

    if (!fp) {
        fprintf(stderr, "diff_time: cannot open %s\n", path);
        return 1;
    }
    n = fread(buf, 1, sizeof buf, fp);
    fclose(fp);
    for (size_t i = 0; i < sizeof cfgs / sizeof cfgs[0]; i++) {
        unsigned long before = *points;
        bad += compare_trace(path, buf, n, &cfgs[i], points);
        if (*points == before) {
            fprintf(stderr, "FAIL: %s: no time point compared\n", path);
            bad++;
        }
    }
    return bad != 0;
}

int main(int argc, char **argv)
{
    unsigned streams = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 5000;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
    static struct stream s;
    static struct point pts[MAX_POINTS];
    unsigned failed = 0;
    unsigned long checked = 0;

    rng_state = seed * 0x9e3779b97f4a7c15ull | 1;
    failed += (unsigned)check_errata_table();
    for (unsigned i = 0; i < streams && failed < 5; i++) {
        size_t n;
        make_stream(&s);
        n = our_points(&s, pts);
        if (compare(&s, pts, n, seed, i, &checked))
            failed++;
    }
    printf("diff_time: %u streams, %lu time points compared with libipt, seed %" PRIu64 ": %s\n",
           streams, checked, seed, failed ? "FAILED" : "ok");
    for (int i = 3; i < argc; i++) {
        unsigned long points = 0;
        int bad = run_file(argv[i], &points);
        printf("diff_time: %s: %lu time points compared with libipt: %s\n", argv[i], points,
               bad ? "FAILED" : "ok");
        failed += (unsigned)bad;
    }
    return failed ? 1 : 0;
}
