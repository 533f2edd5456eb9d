/* tailgen: the static tail (decoder/ptd_tail.c, `ptboot flow --tail`)
 * against the ground truth of flowgen's random programs
 * (test/flow/flowgen.c, compiled into this file so its generator, executor
 * and trace writer are reused as they are).
 *
 * For each seed flowgen lays out a program, executes it (the truth: every
 * instruction executed while tracing was on) and writes its trace. The
 * trace is then cut at every packet boundary, as a full buffer or a reset
 * cuts it, and each cut is decoded with the flow driver
 * (decoder/ptd_fmt_flow.h) with --tail. Checks, for every cut:
 *   - the instructions before "[tail]" are the truth's first ones, and the
 *     tail's continue the truth exactly (a prefix of what ran), up to
 *     where the truth has an asynchronous event the code cannot know (an
 *     interrupt, a transaction abort) or ends;
 *   - the tail reaches the first instruction that needs trace: every
 *     instruction but its last falls through, jumps or calls directly, or
 *     returns to an address the call stack holds; the last is a
 *     conditional branch, an indirect branch, a far transfer, a return with
 *     no address owed, or a direct call out of the traced range;
 *   - without --tail the lines are byte for byte those before "[tail]",
 *     and the instruction count is the same;
 *   - the block API (ptd_flow_next_block, then ptd_tail) gives the same
 *     tail.
 * flowgen's programs have no loop without a conditional branch, so a spin
 * is an error here (test/unit/test_ptd_tail.c has the spins).
 * With --corrupt each program is also decoded with --tail after bytes of
 * its trace and of its code were flipped: the decode must end (ASan/UBSan
 * build: no out-of-range access), the tail within its bound.
 *
 *   tailgen [--seeds N] [--first S] [--insns N] [--corrupt] [-v]
 */
#define main flowgen_main
#include "test/flow/flowgen.c"
#undef main

#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_pkt.h"
#include "decoder/ptd_tail.h"

/* ---- asynchronous events in the truth ----------------------------------- */

/* Per truth index: an asynchronous event (an interrupt, a transaction
 * abort) came before it, which the code alone cannot know. Taken from the
 * whole trace's decode, which flowgen checks against the truth. (A tail
 * never meets an enable: it stops where tracing would be disabled.) */
static uint8_t *async_before;

static int kind_at(uint64_t ip)
{
    int k = find_insn(ip);
    return k < 0 ? -1 : prog[k].kind;
}

/* needs trace: the trace would say where it went */
static int needs_trace(int kind)
{
    return kind == K_JCC || kind == K_IJMP || kind == K_ICALL || kind == K_ICALLOUT ||
           kind == K_IRET || kind == K_FARJMP || kind == K_RET;
}

/* ---- decoding one cut --------------------------------------------------- */

static void flow_cfg(struct ptd_flow_config *cfg, const uint8_t *trace, size_t size)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->trace = trace;
    cfg->size = size;
    cfg->read = rd;
    cfg->ctx = &img;
    if (use_map)
        cfg->map = img_map;
    cfg->nfilter = 1;
    cfg->filter_lo[0] = FILTER_LO;
    cfg->filter_hi[0] = FILTER_HI;
    if (skl014)
        cfg->errata = ptd_errata_cpu(6, 0x4e);
    else if (bdw)
        cfg->errata = ptd_errata_cpu(6, 0x3d);
}

struct out {
    char *text; /* every line, '\n' after each */
    size_t len, cap;
    uint64_t *ips; /* instruction IPs: the flow's, then the tail's */
    size_t n, ncap, ntail, tail_line_at;
    int errors, tail_end;
    uint64_t insns, tail_last;
};

static void out_reset(struct out *o)
{
    o->len = o->n = o->ntail = 0;
    o->errors = 0;
    o->tail_line_at = (size_t)-1;
}

static void out_line(struct out *o, const char *line, size_t n)
{
    if (o->len + n + 1 > o->cap) {
        o->cap = (o->len + n + 1) * 2;
        o->text = realloc(o->text, o->cap);
    }
    memcpy(o->text + o->len, line, n);
    o->len += n;
    o->text[o->len++] = '\n';
}

static void out_ip(struct out *o, uint64_t ip)
{
    if (o->n == o->ncap) {
        o->ncap = o->ncap ? o->ncap * 2 : 1024;
        o->ips = realloc(o->ips, o->ncap * sizeof(*o->ips));
    }
    o->ips[o->n++] = ip;
}

static struct ptd_flow fl;
static struct ptd_flow_lines L;

static void decode_lines(const uint8_t *trace, size_t size, uint32_t flags, struct out *o)
{
    struct ptd_flow_config cfg;
    char line[PTD_FMT_FLOW_LINE_MAX];
    enum ptd_flow_line_kind kind;
    int n, in_tail = 0;
    flow_cfg(&cfg, trace, size);
    ptd_flow_init(&fl, &cfg);
    ptd_flow_lines_init(&L, &fl, flags);
    L.tail_max = 100000; /* no bound: the tail must end by itself */
    out_reset(o);
    while ((n = ptd_flow_lines_next(&L, line, sizeof line, &kind)) > 0) {
        if (!strcmp(line, "[tail]")) {
            in_tail = 1;
            o->tail_line_at = o->len;
        }
        out_line(o, line, (size_t)n);
        if (kind == PTD_FLOW_LINE_ERROR)
            o->errors++;
        if (kind == PTD_FLOW_LINE_INSN) {
            out_ip(o, L.insn.ip);
            o->ntail += (size_t)in_tail;
        }
    }
    o->insns = L.insns;
    o->tail_end = L.tail.end;
    o->tail_last = L.tail.last_ip;
}

/* The same trace block by block (no lines), then ptd_tail: its IPs. */
static void decode_blocks_tail(const uint8_t *trace, size_t size, struct out *o)
{
    struct ptd_flow_config cfg;
    flow_cfg(&cfg, trace, size);
    if (use_cache) {
        cfg.bcache = bcache_mem;
        cfg.bcache_size = sizeof(bcache_mem);
    }
    ptd_flow_init(&fl, &cfg);
    out_reset(o);
    for (;;) {
        int st = ptd_flow_sync_forward(&fl);
        if (st == -PTD_ERR_EOS)
            break;
        if (st < 0) {
            o->errors++;
            /* the flow driver gives up when a sync makes no progress */
            break;
        }
        for (;;) {
            while (st >= 0 && (st & PTD_ST_EVENT)) {
                struct ptd_event ev;
                st = ptd_flow_event(&fl, &ev);
            }
            if (st < 0 || (st & PTD_ST_EOS))
                break;
            struct ptd_flow_block b;
            st = ptd_flow_next_block(&fl, &b);
            if (st < 0)
                break;
        }
        if (st >= 0 || st == -PTD_ERR_EOS) {
            struct ptd_tail t;
            struct ptd_flow_insn in;
            if (ptd_tail_start(&t, &fl, st, 100000))
                while (ptd_tail_next(&t, &in)) {
                    out_ip(o, in.ip);
                    o->ntail++;
                }
            o->tail_end = t.end;
            break;
        }
        o->errors++;
    }
}

/* ---- main --------------------------------------------------------------- */

static uint64_t n_cuts, n_tails, n_tail_insns, n_async, n_truth_end, n_ret_followed, n_ret_stop,
    n_filter, n_none, n_cut_errors, n_trace_end, n_no_tail_trace, max_tail;

int main(int argc, char **argv)
{
    unsigned seeds = 60, first = 1, insns = 400, verbose = 0, fails = 0, corrupt = 0;
    uint64_t corrupted = 0, corrupted_tails = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--insns") && i + 1 < argc)
            insns = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--corrupt"))
            corrupt = 1;
        else {
            fprintf(stderr,
                    "usage: tailgen [--seeds N] [--first S] [--insns N] [--corrupt] [-v]\n");
            return 2;
        }
    }
    struct out a = { 0 }, b = { 0 }, c = { 0 };
    for (unsigned s = first; s < first + seeds; s++) {
        struct run r;
        /* the same configurations as flowgen's seeds */
        int retcomp = (int)(s & 1), psb = (s & 2) ? 0 : 64 + (int)(s % 7) * 100, irq = (s % 5) != 0;
        use_cache = (s % 3 != 0);
        use_map = (s % 6) < 3;
        skl014 = (s % 7 == 3);
        timing = (s % 5 == 2);
        tsx = (s % 4 == 3);
        bdw = tsx && !skl014 && (s % 8 == 7);
        rs = 0x9e3779b97f4a7c15ull * (s + 1);
        vclock = 0x100000 + rnd() % 0x100000;
        gen_program();
        execute(&r, insns, retcomp, psb, irq);
        flow_image_init(&img);
        flow_image_add_buf(&img, BASE_A, mem_a, sizeof(mem_a));
        flow_image_add_buf(&img, BASE_32, mem_32, sizeof(mem_32));
        flow_image_add_buf(&img, BASE_OUT, mem_out, sizeof(mem_out));
        async_before = calloc(r.ntruth + 1, 1);
        decode_lines(r.trace, r.tsize, 0, &a);
        for (size_t i = 0, n = 0; i < a.len;
             i = (size_t)((char *)memchr(a.text + i, '\n', a.len - i) - a.text) + 1) {
            const char *l = a.text + i;
            if (l[0] != '[')
                n++;
            else if (n <= r.ntruth && (!strncmp(l, "[interrupt", 10) || !strncmp(l, "[aborted", 8)))
                async_before[n] = 1;
        }

        /* every packet boundary (the last: the whole trace) */
        struct ptd_pkt_decoder d;
        ptd_pkt_init(&d, r.trace, r.tsize);
        ptd_pkt_sync_set(&d, 0);
        int bad = 0;
        for (;;) {
            uint64_t cut = ptd_pkt_offset(&d);
            struct ptd_pkt p;
            int pr = ptd_pkt_next(&d, &p);
            if (cut == 0 && pr >= 0)
                continue;
            n_cuts++;
            decode_lines(r.trace, (size_t)cut, PTD_FMT_FLOW_TAIL, &a);
            size_t k = a.n - a.ntail;
            if (a.errors) {
                /* a cut inside PSB+ (no PSBEND): a sync error, no tail */
                n_cut_errors++;
                if (a.ntail) {
                    printf("tailgen: seed %u cut %" PRIu64 ": a tail after an error\n", s, cut);
                    bad = 1;
                }
            }
            /* the flow's instructions: the truth's first ones */
            for (size_t i = 0; i < k && !bad; i++)
                if (i >= r.ntruth || a.ips[i] != r.truth[i]) {
                    printf("tailgen: seed %u cut %" PRIu64 ": instruction %zu is %" PRIx64
                           ", executed %" PRIx64 "\n",
                           s, cut, i, a.ips[i], i < r.ntruth ? r.truth[i] : 0);
                    bad = 1;
                }
            /* the tail's: the truth's next ones */
            size_t compared = 0;
            int stopped = 0;
            for (size_t j = 0; j < a.ntail && !bad; j++, compared++) {
                size_t ti = k + j;
                if (ti >= r.ntruth) {
                    n_truth_end++;
                    stopped = 1;
                    break;
                }
                if (async_before[ti]) {
                    if (getenv("TAILGEN_ASYNC"))
                        printf("async stop: seed %u cut %" PRIu64 " j %zu k %zu\n%.*s", s, cut, j,
                               k, (int)a.len, a.text);
                    n_async++;
                    stopped = 1;
                    break;
                }
                if (a.ips[ti] != r.truth[ti]) {
                    printf("tailgen: seed %u cut %" PRIu64 ": tail instruction %zu is %" PRIx64
                           ", executed %" PRIx64 " (after %" PRIx64 ", kind %d)\n",
                           s, cut, j, a.ips[ti], r.truth[ti], ti ? r.truth[ti - 1] : 0,
                           ti ? kind_at(r.truth[ti - 1]) : -1);
                    bad = 1;
                    break;
                }
                int kd = kind_at(a.ips[ti]);
                if (j + 1 < a.ntail) {
                    /* not the last: needs no trace */
                    if (kd == K_RET)
                        n_ret_followed++;
                    else if (needs_trace(kd) || kd == K_CALLOUT) {
                        printf("tailgen: seed %u cut %" PRIu64 ": tail went past %" PRIx64
                               " (kind %d)\n",
                               s, cut, a.ips[ti], kd);
                        bad = 1;
                    }
                }
            }
            /* where it ended */
            if (!bad && !stopped) {
                int last = a.ntail ? kind_at(a.ips[a.n - 1]) : (k ? kind_at(a.ips[k - 1]) : -1);
                switch (a.tail_end) {
                case PTD_TAIL_END_TRACE:
                    if (!needs_trace(last)) {
                        printf("tailgen: seed %u cut %" PRIu64 ": tail ends (trace) at kind %d\n",
                               s, cut, last);
                        bad = 1;
                    }
                    if (a.ntail && last == K_RET)
                        n_ret_stop++;
                    if (!a.ntail)
                        n_no_tail_trace++;
                    n_trace_end++;
                    break;
                case PTD_TAIL_END_FILTER:
                    if (!a.ntail || last != K_CALLOUT) {
                        printf("tailgen: seed %u cut %" PRIu64 ": tail ends (filter) at kind %d\n",
                               s, cut, last);
                        bad = 1;
                    }
                    n_filter++;
                    break;
                case PTD_TAIL_END_NONE:
                    if (getenv("TAILGEN_NONE")) {
                        const char *e = a.text + a.len - 1, *l = e;
                        while (l > a.text && l[-1] != '\n')
                            l--;
                        printf("none: cut %" PRIu64 ": %.*s\n", cut, (int)(e - l), l);
                    }
                    n_none++;
                    break;
                default:
                    printf("tailgen: seed %u cut %" PRIu64 ": tail ends: %s\n", s, cut,
                           ptd_tail_end_name((unsigned)a.tail_end));
                    bad = 1;
                }
            }
            if (a.ntail) {
                n_tails++;
                n_tail_insns += a.ntail;
                if (a.ntail > max_tail)
                    max_tail = a.ntail;
            }
            (void)compared;
            /* without --tail: the same lines up to "[tail]" */
            if (!bad) {
                decode_lines(r.trace, (size_t)cut, 0, &b);
                size_t want = a.tail_line_at == (size_t)-1 ? a.len : a.tail_line_at;
                if (b.len != want || (want && memcmp(a.text, b.text, want)) || b.insns != a.insns) {
                    printf("tailgen: seed %u cut %" PRIu64 ": without --tail the lines differ\n", s,
                           cut);
                    bad = 1;
                }
            }
            /* the block API and ptd_tail: the same tail */
            if (!bad) {
                decode_blocks_tail(r.trace, (size_t)cut, &c);
                if (c.ntail != a.ntail || c.tail_end != a.tail_end ||
                    (a.ntail &&
                     memcmp(c.ips + c.n - c.ntail, a.ips + k, a.ntail * sizeof(uint64_t)))) {
                    printf("tailgen: seed %u cut %" PRIu64
                           ": block API tail %zu (%s), lines %zu (%s)\n",
                           s, cut, c.ntail, ptd_tail_end_name((unsigned)c.tail_end), a.ntail,
                           ptd_tail_end_name((unsigned)a.tail_end));
                    bad = 1;
                }
            }
            if (bad && verbose)
                printf("tailgen: the lines with --tail:\n%.*s", (int)a.len, a.text ? a.text : "");
            if (bad || pr < 0)
                break;
        }
        if (bad) {
            fails++;
            printf("tailgen: seed %u (retcomp %d, psb %d, interrupts %d, skl014 %d, tsx %d, bdw "
                   "%d) failed\n",
                   s, retcomp, psb, irq, skl014, tsx, bdw);
        } else if (verbose) {
            printf("tailgen: seed %u ok: %zu instructions, %zu trace bytes\n", s, r.ntruth,
                   r.tsize);
        }
        /* flipped bytes in the trace and in the code: the tail walks what
         * it finds and ends within its bound */
        for (int c2 = 0; corrupt && c2 < 4; c2++) {
            uint8_t *t = malloc(r.tsize + 1);
            memcpy(t, r.trace, r.tsize);
            for (int k2 = 0; k2 < 1 + c2 * 2; k2++)
                t[rn((unsigned)r.tsize)] = (uint8_t)rnd();
            flow_image_free(&img);
            for (int k2 = 0; k2 < 8 << c2; k2++)
                mem_a[rn(0x2000)] = (uint8_t)rnd();
            flow_image_init(&img);
            flow_image_add_buf(&img, BASE_A, mem_a, sizeof(mem_a));
            flow_image_add_buf(&img, BASE_32, mem_32, sizeof(mem_32));
            flow_image_add_buf(&img, BASE_OUT, mem_out, sizeof(mem_out));
            for (size_t cut = r.tsize; cut > 0; cut = cut * 3 / 4) {
                decode_lines(t, cut, PTD_FMT_FLOW_TAIL, &a);
                if (a.ntail > 100000) {
                    printf("tailgen: seed %u corrupted: a tail past its bound\n", s);
                    fails++;
                }
                corrupted++;
                corrupted_tails += a.ntail != 0;
            }
            free(t);
        }
        free(async_before);
        free(r.trace);
        free(r.truth);
        flow_image_free(&img);
    }
    printf("tailgen: %u programs, %" PRIu64 " cuts at packet boundaries: %u failed\n", seeds,
           n_cuts, fails);
    printf("tailgen: %" PRIu64 " tails, %" PRIu64 " instructions inferred (longest %" PRIu64
           "); ends: %" PRIu64 " at an instruction that needs trace (%" PRIu64
           " at a return with no address owed, %" PRIu64 " with no tail), %" PRIu64
           " at a call out of the range, %" PRIu64 " no tail (tracing off or inside an event)\n",
           n_tails, n_tail_insns, max_tail, n_trace_end, n_ret_stop, n_no_tail_trace, n_filter,
           n_none);
    printf("tailgen: %" PRIu64
           " returns followed from the call stack; compared up to an interrupt or abort %" PRIu64
           " times, to the truth's end %" PRIu64 " times; %" PRIu64
           " cuts inside PSB+ (sync error)\n",
           n_ret_followed, n_async, n_truth_end, n_cut_errors);
    if (corrupt)
        printf("tailgen: %" PRIu64 " corrupted traces/code decoded with --tail, %" PRIu64
               " with a tail\n",
               corrupted, corrupted_tails);
    /* the test must have seen what it is about */
    if (!fails && seeds >= 20 && (!n_tails || !n_ret_followed || !n_filter || !n_ret_stop)) {
        printf("tailgen: coverage too small (tails, returns followed, calls out, returns stopped "
               "at)\n");
        fails++;
    }
    free(a.text);
    free(a.ips);
    free(b.text);
    free(b.ips);
    free(c.text);
    free(c.ips);
    return fails ? 1 : 0;
}
