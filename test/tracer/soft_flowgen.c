/* soft_flowgen: the software trace unit (arch/x86/soft_unit) against the
 * ground truth of flowgen's random programs (test/flow/flowgen.c, compiled
 * into this file so its generator, executor and both decoder drivers are
 * reused as they are).
 *
 * For each seed flowgen lays out a program and executes it; its exec_hook
 * hands every instruction about to execute to soft_unit_step(), as the #DB
 * glue does on the target, and a SKIP_CALL answer makes the driver run the
 * instructions free (not stepped) until soft_unit_resume_ip(). The output
 * buffer, linearised (rtit_trace_linearize), is decoded with ptboot's flow
 * layer and with libipt's instruction decoder:
 *   - both give the same items (instructions, events, errors);
 *   - no errors, and the instructions equal what was executed while
 *     tracing was on (the ground truth), instruction by instruction;
 *   - the unit counted as many traced instructions as the truth has.
 * Seeds vary the configuration: RET compression on/off (DisRETC), TSCEn,
 * PSBFreq, interrupts (which the unit sees as unexplained IPs: gaps), and
 *   - a small ring (ToPA END back to the start) that wraps: the decoded
 *     instructions are the truth's last ones (a suffix, from a PSB);
 *   - stop-when-full: a prefix of the truth, the unit reports stopped_full;
 *   - a TraceStop range over the code outside the filter: the trace ends
 *     at the first call out (a prefix), the unit reports stopped.
 *
 *   soft_flowgen [--seeds N] [--first S] [--insns N] [-v]
 */
#define main flowgen_main
#include "test/flow/flowgen.c"
#undef main

#include "arch/x86/rtit_linear.h"
#include "arch/x86/soft_unit.h"

/* ---- the glue's clock and its landing watch ---------------------------------- */
static uint64_t n_timed;

/* TSC ticks a step takes when the unit writes MTCs: a few hundred, and
 * about one step in 200 a long pause (more MTC periods than a burst). */
static uint64_t step_ticks(size_t k)
{
    uint64_t h = (uint64_t)(k + 1) * 0x9e3779b97f4a7c15ull;
    if ((h >> 40) % 200 == 0)
        return 200000;
    return 3 + (h >> 56) * 3;
}

/* ip is in a FilterEn or TraceStop range: where a landing watch fires. */
static int watched(const struct rtit_config *c, uint64_t ip)
{
    for (unsigned i = 0; i < RTIT_MAX_RANGES; i++)
        if ((c->range[i].cfg == RTIT_ADDR_CFG_FILTER || c->range[i].cfg == RTIT_ADDR_CFG_STOP) &&
            ip >= c->range[i].start && ip <= c->range[i].end)
            return 1;
    return 0;
}

/* ---- the steps of one execution ------------------------------------------ */
struct step {
    uint64_t ip;
    uint8_t mode, irq;
};
static struct step *steps;
static size_t nsteps, capsteps;
static int irq_next;
static uint64_t end_ip;
static int end_mode;

static void record(uint64_t ip, int mode, int how)
{
    if (how == 2) {
        /* an interrupt before ip: the #DB glue saw ip about to execute;
         * the next step is the handler's entry */
        record(ip, mode, 0);
        irq_next = 1;
        return;
    }
    if (how == 1) {
        end_ip = ip;
        end_mode = mode;
        return;
    }
    if (nsteps == capsteps) {
        capsteps = capsteps ? capsteps * 2 : 8192;
        steps = realloc(steps, capsteps * sizeof *steps);
        if (!steps)
            exit(2);
    }
    steps[nsteps].ip = ip;
    steps[nsteps].mode = (uint8_t)mode;
    steps[nsteps].irq = (uint8_t)irq_next;
    irq_next = 0;
    nsteps++;
}

static uint64_t walk_traced, walk_stops, walk_skips, walk_reps, walk_resumed;
static uint64_t walk_irqs, walk_free, walk_landings, walk_timed;

/* what the unit reports it traced, in order */
static uint64_t *traced;
static size_t ntr, captr;

static void traced_add(uint64_t ip)
{
    if (ntr == captr) {
        captr = captr ? captr * 2 : 8192;
        traced = realloc(traced, captr * sizeof *traced);
        if (!traced)
            exit(2);
    }
    traced[ntr++] = ip;
}

static int unit_read(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    (void)ctx;
    size_t n = 0;
    for (; n < size; n++) {
        const uint8_t *p = memp(ip + n);
        if (!p)
            break;
        buf[n] = *p;
    }
    return (int)n;
}

static unsigned exec_bits(int mode)
{
    return mode == 2 ? 64 : 32;
}

enum shape {
    S_PLAIN,
    S_RING,
    S_STOP_FULL,
    S_TRACESTOP,
    S_GAPS
};

static const char *shape_name(enum shape s)
{
    return s == S_RING        ? "ring"
           : s == S_STOP_FULL ? "stop-when-full"
           : s == S_TRACESTOP ? "tracestop"
           : s == S_GAPS      ? "gaps"
                              : "plain";
}

/* ---- --walk: random walks over random code ------------------------------------
 * Code of every branch class the unit knows (Jcc rel8/rel32, LOOP, JRCXZ,
 * JMP/CALL rel, CALL/JMP rax, RET, RET imm16, IRETQ, SYSCALL, INT3, REP
 * MOVSB, plain instructions) laid out in 64 KiB; a walk steps through it
 * choosing each outcome at random (taken or not, any instruction for an
 * indirect branch or far transfer, the pushed address or anywhere for a
 * RET, more iterations for a REP), with a FilterEn range over part of the
 * code, a TraceStop range on some seeds, and the glue's SKIP_CALL honoured
 * (the callee is skipped: the walk goes on at the return address). The
 * decode of ptboot and of libipt must agree item by item and equal the
 * instructions the unit says it traced. */
#define WALK_BASE BASE_A
#define WALK_SIZE 0x10000u
static uint64_t wstart[WALK_SIZE / 2];
static size_t nwstart;

static const char *const wtempl[] = {
    "90",   "4889c3",     "488d442408", "7000", "0f8000000000", "e200", "e300",
    "eb00", "e900000000", "e800000000", "ffd0", "ffe0",         "c3",   "c20800",
    "48cf", "0f05",       "cc",         "f3a4", "4883c001",
};
#define WT_COUNT (sizeof wtempl / sizeof wtempl[0])

static void walk_layout(void)
{
    uint64_t at = WALK_BASE;
    nwstart = 0;
    memset(mem_a, 0xcc, sizeof mem_a);
    while (at + 16 < WALK_BASE + WALK_SIZE) {
        const char *t = wtempl[rn(WT_COUNT)];
        size_t n = strlen(t) / 2;
        uint8_t *p = memp(at);
        for (size_t i = 0; i < n; i++) {
            unsigned v;
            sscanf(t + 2 * i, "%2x", &v);
            p[i] = (uint8_t)v;
        }
        if (p[0] >= 0x70 && p[0] <= 0x7f)
            p[0] = (uint8_t)(0x70 + rn(16));
        if (p[0] == 0x0f && p[1] >= 0x80 && p[1] <= 0x8f)
            p[1] = (uint8_t)(0x80 + rn(16));
        wstart[nwstart++] = at;
        at += n;
    }
    /* displacements: to an instruction start (rel8: a near one). Direct
     * jumps and calls only go forward: a cycle of them would repeat with
     * no packet to count its rounds, which no decoder can follow (real PT
     * has the same blind spot); Jcc/LOOP go anywhere, each round is a bit */
    for (size_t k = 0; k < nwstart; k++) {
        uint8_t *p = memp(wstart[k]);
        struct ptd_insn in;
        if (ptd_ild_decode_at(&in, p, 16, PTD_EXEC_MODE_64, wstart[k]) < 0 ||
            !(in.flags & PTD_INSN_REL))
            continue;
        uint64_t end = wstart[k] + in.length;
        int rel8 = in.length - in.prefix_len <= 2;
        int forward = in.iclass != PTD_ICLASS_COND_JUMP;
        size_t lo = forward ? k + 1 : 0;
        uint64_t tgt = lo < nwstart ? wstart[lo + rn((unsigned)(nwstart - lo))] : end;
        if (rel8) {
            size_t j = forward ? k + 1 + rn(8) : k + rn(16);
            j = !forward && j >= 8 ? j - 8 : forward ? j : 0;
            if (j >= nwstart)
                j = nwstart - 1;
            tgt = wstart[j];
            int64_t d = (int64_t)(tgt - end);
            if (d < -128 || d > 127)
                tgt = end;
            p[in.length - 1] = (uint8_t)(int8_t)(tgt - end);
        } else {
            put32(p + in.length - 4, (int32_t)(tgt - end));
        }
    }
}

/* The decoded instruction ip is the unit's next traced one (*u on). The
 * unit counts the first instruction outside the FilterEn range when the
 * code falls through out of it; current libipt (and ptboot) decode none
 * there (TIP.PGD's IP is where tracing stopped): that one is passed. */
static int walk_next_traced(uint64_t ip, size_t *u, uint64_t range_end)
{
    if (*u + 1 < ntr && traced[*u] != ip && traced[*u] > range_end && traced[*u + 1] == ip)
        ++*u;
    return *u < ntr && traced[(*u)++] == ip;
}

static int walk_run(unsigned s, unsigned steps_max, int verbose)
{
    struct items a = { 0 }, b = { 0 };
    static uint64_t wstack[256];
    int nstack = 0, bad = 0;
    char x[128], y[128];

    rs = 0x77aa55ull * (s + 3) ^ 0xd1b54a32d192ed03ull;
    walk_layout();
    flow_image_init(&img);
    flow_image_add_buf(&img, BASE_A, mem_a, sizeof(mem_a));
    use_cache = (int)(s % 8) + 8;
    use_blocks = 0;
    skl014 = 0;
    timing = 0;

    struct rtit_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.output = RTIT_OUTPUT_TOPA;
    cfg.when_full = RTIT_FULL_RING;
    cfg.regions = 64;
    cfg.branch_en = true;
    cfg.dis_retc = s % 3 == 0;
    cfg.tsc_en = s % 2;
    cfg.mtc_en = s % 5 == 1 || s % 5 == 2;
    cfg.mtc_freq = s % 3;
    cfg.psb_freq = 0;
    cfg.range[1].cfg = RTIT_ADDR_CFG_FILTER; /* the first 40 KiB */
    cfg.range[1].start = WALK_BASE;
    cfg.range[1].end = WALK_BASE + 0x9fff;
    if (s % 4 == 3) {
        cfg.range[0].cfg = RTIT_ADDR_CFG_STOP; /* a few instructions */
        cfg.range[0].start = WALK_BASE + 0xc000;
        cfg.range[0].end = WALK_BASE + 0xc00f;
    }
    size_t bsize = (size_t)rtit_config_buffer_bytes(&cfg);
    uint8_t *buf = calloc(1, bsize), *trace = malloc(bsize);
    static struct soft_unit unit;
    if (soft_unit_init(&unit, &cfg, buf, bsize, unit_read, NULL))
        return 1;

    uint64_t ip = wstart[rn((unsigned)(nwstart / 2))], tsc = 0x5000, fed = 0, counted = 0;
    /* odd seeds: the glue has a landing watch over the ranges; it runs
     * free on FREE answers and lets interrupt handlers run unseen */
    int watch = s % 2, unseen = 0;
    ntr = 0;
    for (unsigned n = 0, walked = 0; n < steps_max && walked < 20 * steps_max; walked++) {
        if (unseen && !watched(&cfg, ip))
            goto walk_on; /* not a step: the walk goes on unseen */
        if (unseen)
            walk_landings++;
        unseen = 0;
        n++;
        int act = soft_unit_step(&unit, ip, 64, tsc += cfg.mtc_en ? step_ticks(walked) : 7);
        struct soft_unit_status now;
        soft_unit_get_status(&unit, &now);
        if (now.insns != counted)
            traced_add(fed);
        counted = now.insns;
        fed = ip;
        if (act == SOFT_UNIT_STOPPED)
            break;
        if (watch && act != SOFT_UNIT_SKIP_CALL && rn(60) == 0) {
            /* an interrupt before ip, its handler anywhere, not stepped
             * (inside the ranges too: the glue never steps handlers);
             * it returns to ip */
            act = soft_unit_interrupt(&unit, wstart[rn((unsigned)nwstart)], 64, tsc += 7);
            if (act != SOFT_UNIT_STOPPED)
                act = soft_unit_unseen(&unit, tsc);
            walk_irqs++;
            if (act == SOFT_UNIT_STOPPED)
                break;
            unseen = 1;
            continue;
        }
        if (watch && act == SOFT_UNIT_FREE && !watched(&cfg, ip)) {
            if (soft_unit_unseen(&unit, tsc) == SOFT_UNIT_STOPPED)
                break;
            walk_free++;
            unseen = 1;
        }
    walk_on:;
        if (act == SOFT_UNIT_SKIP_CALL) {
            /* the callee runs free and returns */
            ip = soft_unit_resume_ip(&unit);
            if (nstack)
                nstack--;
            continue;
        }
        struct ptd_insn in;
        const uint8_t *p = memp(ip);
        if (!p || ptd_ild_decode_at(&in, p, 16, PTD_EXEC_MODE_64, ip) < 0) {
            printf("soft_flowgen: walk %u: no instruction at %" PRIx64 "\n", s, ip);
            return 1;
        }
        uint64_t end = ip + in.length, any = wstart[rn((unsigned)nwstart)];
        switch (in.iclass) {
        case PTD_ICLASS_OTHER: ip = (in.flags & PTD_INSN_REP) && rn(3) == 0 ? ip : end; break;
        case PTD_ICLASS_COND_JUMP: ip = rn(2) ? in.target : end; break;
        case PTD_ICLASS_DIRECT_JUMP: ip = in.target; break;
        case PTD_ICLASS_DIRECT_CALL:
        case PTD_ICLASS_INDIRECT_CALL:
            if (nstack < 256)
                wstack[nstack++] = end;
            ip = in.iclass == PTD_ICLASS_DIRECT_CALL ? in.target : any;
            break;
        case PTD_ICLASS_NEAR_RET: ip = nstack && rn(8) ? wstack[--nstack] : any; break;
        default: ip = any; break;
        }
    }
    soft_unit_stop(&unit, ip, tsc + 7);
    struct soft_unit_status st;
    soft_unit_get_status(&unit, &st);
    if (st.insns != counted)
        traced_add(fed);

    struct rtit_output_summary sum;
    struct rtit_linear lin;
    soft_unit_summarize(&unit, &sum);
    if (rtit_trace_linearize(buf, &sum, trace, bsize, &lin) || !lin.have_psb || st.wrapped ||
        st.error) {
        printf("soft_flowgen: walk %u: no stream (wrapped %d, error %d)\n", s, st.wrapped,
               st.error);
        return 1;
    }
    timing = cfg.mtc_en;
    time_cfg.mtc_freq = (uint8_t)cfg.mtc_freq;
    time_cfg.cpuid_0x15_eax = SOFT_UNIT_CPUID15_EAX;
    time_cfg.cpuid_0x15_ebx = SOFT_UNIT_CPUID15_EBX;
    time_cfg.errata = 0;
    decode_ptboot(trace, (size_t)lin.bytes, &a, (size_t)-1);
    decode_libipt(trace, (size_t)lin.bytes, &b);
    /* libipt 2.0.5 reports the instruction at a TIP.PGD's IP when the code
     * falls through out of the FilterEn range; current libipt, ptboot's
     * reference, does not (it was not traced): out of 2.0.5's list where
     * ptboot has the disable instead */
    {
        size_t o = 0;
        for (size_t i = 0; i < b.n; i++) {
            if (b.it[i].kind == 0 && i + 1 < b.n && b.it[i + 1].kind == 1 &&
                b.it[i + 1].v == PTD_EV_DISABLED && b.it[i].v > cfg.range[1].end && o < a.n &&
                a.it[o].kind == 1 && a.it[o].v == PTD_EV_DISABLED)
                continue;
            b.it[o++] = b.it[i];
        }
        b.n = o;
    }
    timing = 0;
    walk_timed += cfg.mtc_en;
    /* ptboot == libipt, item by item (events with their resumed flag;
     * with MTC the time at every instruction) */
    for (size_t i = 0; !bad && (i < a.n || i < b.n); i++) {
        if (i >= a.n || i >= b.n || a.it[i].kind != b.it[i].kind || a.it[i].v != b.it[i].v ||
            a.it[i].w != b.it[i].w) {
            printf("soft_flowgen: walk %u: ptboot and libipt differ at item %zu: ptboot %s, libipt "
                   "%s\n",
                   s, i, i < a.n ? item_str(&a.it[i], x, sizeof(x)) : "(end)",
                   i < b.n ? item_str(&b.it[i], y, sizeof(y)) : "(end)");
            bad = 1;
        }
        if (!bad && a.it[i].kind == 1 && a.it[i].w)
            walk_resumed++;
    }
    size_t u = 0;
    for (size_t i = 0; i < a.n && !bad; i++) {
        if (a.it[i].kind == 2) {
            printf("soft_flowgen: walk %u: decode error: %s\n", s,
                   item_str(&a.it[i], x, sizeof(x)));
            bad = 1;
        } else if (a.it[i].kind == 0 && !walk_next_traced(a.it[i].v, &u, cfg.range[1].end)) {
            printf("soft_flowgen: walk %u: decoded instruction %zu is %" PRIx64
                   ", the unit traced %" PRIx64 "\n",
                   s, u - 1, a.it[i].v, u - 1 < ntr ? traced[u - 1] : 0);
            bad = 1;
        }
    }
    if (!bad && u != ntr) {
        printf("soft_flowgen: walk %u: %zu decoded of %zu traced\n", s, u, ntr);
        bad = 1;
    }
    if (bad)
        printf("soft_flowgen: walk %u (dis_retc %d, tsc %d, tracestop %d): reproduce with --walk 1 "
               "--first %u\n",
               s, cfg.dis_retc, cfg.tsc_en, s % 4 == 3, s);
    else if (verbose)
        printf("soft_flowgen: walk %u ok: %zu traced of %" PRIu64 " steps, %" PRIu64
               " gaps, %" PRIu64 " skips, %" PRIu64 " rep iterations%s\n",
               s, ntr, st.steps, st.gaps, st.skips, st.rep_iterations,
               st.stopped ? ", TraceStop" : "");
    walk_traced += ntr;
    walk_stops += st.stopped;
    walk_skips += st.skips;
    walk_reps += st.rep_iterations;
    free(a.it);
    free(b.it);
    free(buf);
    free(trace);
    flow_image_free(&img);
    return bad;
}

int main(int argc, char **argv)
{
    unsigned seeds = 200, first = 1, insns = 5000, verbose = 0, fails = 0, walks = 0;
    uint64_t total = 0, n_irqs = 0, n_gaps = 0, n_skips = 0, n_wraps = 0, n_full = 0, n_tstop = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seeds") && i + 1 < argc)
            seeds = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--first") && i + 1 < argc)
            first = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--insns") && i + 1 < argc)
            insns = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--walk") && i + 1 < argc)
            walks = (unsigned)strtoul(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else {
            fprintf(stderr,
                    "usage: soft_flowgen [--seeds N] [--first S] [--insns N] [--walk N] [-v]\n");
            return 2;
        }
    }
    if (walks) {
        /* random walks instead of flowgen's programs */
        for (unsigned s = first; s < first + walks; s++)
            fails += (unsigned)walk_run(s, insns, (int)verbose);
        printf("soft_flowgen: %u random walks, %" PRIu64
               " instructions traced and decoded alike: %u failed\n",
               walks, walk_traced, fails);
        printf("soft_flowgen: covered %" PRIu64 " SKIP_CALL, %" PRIu64 " TraceStops, %" PRIu64
               " REP iterations\n",
               walk_skips, walk_stops, walk_reps);
        printf("soft_flowgen: %" PRIu64
               " resumed TIP.PGE (after near and far calls), equal in both decoders\n",
               walk_resumed);
        printf("soft_flowgen: %" PRIu64 " interrupts (handlers unseen), %" PRIu64
               " FREE runs, %" PRIu64 " landings; %" PRIu64
               " walks with MTC, times equal in both decoders\n",
               walk_irqs, walk_free, walk_landings, walk_timed);
        return fails ? 1 : 0;
    }
    exec_hook = record;
    for (unsigned s = first; s < first + seeds; s++) {
        struct run r;
        struct items a = { 0 }, b = { 0 };
        int retcomp = (int)(s & 1), irq = (s % 5) != 0, bad = 0;
        enum shape shape = s % 4 == 1   ? S_RING
                           : s % 8 == 2 ? S_STOP_FULL
                           : s % 8 == 6 ? S_TRACESTOP
                           : s % 8 == 3 ? S_GAPS
                                        : S_PLAIN;
        char x[128], y[128];

        use_cache = (s % 3 != 0) ? (int)(s % 8) + 8 : 0;
        use_blocks = 0;
        skl014 = 0;
        timing = 0;
        rs = 0x5eed5eedull * (s + 7) ^ 0x9e3779b97f4a7c15ull;
        vclock = 0x100000;
        nsteps = 0;
        ntr = 0;
        gen_program();
        /* the ring and the STOP region (4 KiB) need more than 5000 */
        execute(&r, shape == S_RING || shape == S_STOP_FULL ? insns * 4 : insns, retcomp, 0, irq);
        free(r.trace); /* flowgen's own trace: not used here */
        flow_image_init(&img);
        flow_image_add_buf(&img, BASE_A, mem_a, sizeof(mem_a));
        flow_image_add_buf(&img, BASE_32, mem_32, sizeof(mem_32));
        flow_image_add_buf(&img, BASE_OUT, mem_out, sizeof(mem_out));

        /* the configuration, as the efi glue would take it */
        struct rtit_config cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.output = RTIT_OUTPUT_TOPA;
        cfg.when_full = shape == S_STOP_FULL ? RTIT_FULL_STOP : RTIT_FULL_RING;
        cfg.region_size_code = 0; /* 4 KiB regions */
        cfg.regions = shape == S_RING ? 2 : shape == S_STOP_FULL ? 1 : 64;
        cfg.branch_en = true;
        cfg.os = true;
        cfg.dis_retc = !retcomp;
        cfg.tsc_en = (s % 3) == 2;
        /* MTC on the unit's crystal clock (TSC / 2^SOFT_UNIT_CTC_SHIFT),
         * with and without TSC; time then moves by a few hundred ticks a
         * step and now and then by far more (a burst: TSC + TMA) */
        cfg.mtc_en = (s % 6) == 2 || (s % 6) == 3;
        cfg.mtc_freq = s % 4;
        /* PSB+ every 2 KiB or 4 KiB; the 8 KiB ring holds at least two */
        cfg.psb_freq = shape == S_RING ? 0 : s % 2;
        cfg.range[0].cfg = RTIT_ADDR_CFG_FILTER;
        cfg.range[0].start = FILTER_LO;
        cfg.range[0].end = FILTER_HI;
        if (shape == S_TRACESTOP) {
            cfg.range[2].cfg = RTIT_ADDR_CFG_STOP;
            cfg.range[2].start = BASE_OUT;
            cfg.range[2].end = BASE_OUT + sizeof(mem_out) - 1;
        }
        size_t bsize = (size_t)rtit_config_buffer_bytes(&cfg);
        uint8_t *buf = calloc(1, bsize);
        static struct soft_unit unit;
        int rc = soft_unit_init(&unit, &cfg, buf, bsize, unit_read, NULL);
        if (rc) {
            printf("soft_flowgen: seed %u: init: %s\n", s, soft_unit_strerror(rc));
            return 1;
        }

        /* single-step it; S_GAPS: now and then the glue does not report a
         * few steps (code run unseen), and the instructions the unit says
         * it traced (its insns count grows when the step before was
         * traced) are kept to compare with the decode */
        int skipping = 0, stopped = 0, drop = 0;
        uint64_t resume = 0, tsc = 0x1000, fed_ip = 0, counted = 0;
        size_t ntraced = 0, ndropped = 0;
        for (size_t k = 0; k < nsteps && !stopped; k++) {
            tsc += cfg.mtc_en ? step_ticks(k) : 3;
            n_irqs += steps[k].irq;
            if (skipping && steps[k].ip != resume)
                continue; /* runs free */
            skipping = 0;
            int near_irq = steps[k].irq || (k + 1 < nsteps && steps[k + 1].irq);
            if (shape == S_GAPS && k && !drop && !near_irq && rn(100) == 0)
                drop = 1 + (int)rn(4);
            if (drop && !near_irq) {
                drop--;
                ndropped++;
                continue;
            }
            drop = 0;
            int act = steps[k].irq
                          ? soft_unit_interrupt(&unit, steps[k].ip, exec_bits(steps[k].mode), tsc)
                          : soft_unit_step(&unit, steps[k].ip, exec_bits(steps[k].mode), tsc);
            struct soft_unit_status now;
            soft_unit_get_status(&unit, &now);
            if (now.insns != counted)
                traced_add(fed_ip);
            counted = now.insns;
            fed_ip = steps[k].ip;
            if (act == SOFT_UNIT_SKIP_CALL) {
                skipping = 1;
                resume = soft_unit_resume_ip(&unit);
            } else if (act == SOFT_UNIT_STOPPED) {
                stopped = 1;
            }
        }
        /* execution ends at end_ip: the glue saw it about to execute and
         * stops there (a Jcc looping on itself may end at its own IP) */
        if (!stopped && !skipping) {
            soft_unit_step(&unit, end_ip, exec_bits(end_mode), tsc + 3);
            struct soft_unit_status now;
            soft_unit_get_status(&unit, &now);
            if (now.insns != counted)
                traced_add(fed_ip);
            counted = now.insns;
            fed_ip = end_ip;
        }
        soft_unit_stop(&unit, end_ip, tsc + 3);
        struct soft_unit_status st;
        soft_unit_get_status(&unit, &st);
        if (st.insns != counted)
            traced_add(fed_ip);
        ntraced = ntr;

        /* the stream a decoder reads */
        struct rtit_output_summary sum;
        struct rtit_linear lin;
        soft_unit_summarize(&unit, &sum);
        uint8_t *trace = malloc(bsize);
        if (rtit_trace_linearize(buf, &sum, trace, bsize, &lin) || !lin.have_psb) {
            printf("soft_flowgen: seed %u: no PSB in the %" PRIu64 " output bytes\n", s, sum.bytes);
            bad = 1;
        }
        /* the in-place variant gives the same stream */
        if (!bad) {
            struct rtit_linear lin2;
            if (rtit_trace_linearize_in_place(buf, &sum, &lin2) || lin2.bytes != lin.bytes ||
                memcmp(buf, trace, (size_t)lin.bytes)) {
                printf("soft_flowgen: seed %u: in-place linearisation differs\n", s);
                bad = 1;
            }
        }
        if (!bad) {
            /* with MTC, both decoders' time at every instruction too */
            timing = cfg.mtc_en;
            time_cfg.mtc_freq = (uint8_t)cfg.mtc_freq;
            time_cfg.cpuid_0x15_eax = SOFT_UNIT_CPUID15_EAX;
            time_cfg.cpuid_0x15_ebx = SOFT_UNIT_CPUID15_EBX;
            time_cfg.errata = 0;
            decode_ptboot(trace, (size_t)lin.bytes, &a, (size_t)-1);
            decode_libipt(trace, (size_t)lin.bytes, &b);
            timing = 0;
            n_timed += cfg.mtc_en;
        }
        /* ptboot == libipt, item by item, also where a full STOP region
         * cut the stream (right after a TIP.PGE or MODE.Exec, say) */
        size_t na = a.n, nb = b.n;
        for (size_t i = 0; !bad && (i < na || i < nb); i++) {
            if (i >= na || i >= nb || a.it[i].kind != b.it[i].kind || a.it[i].v != b.it[i].v ||
                a.it[i].w != b.it[i].w) {
                printf("soft_flowgen: seed %u: ptboot and libipt differ at item %zu: ptboot %s, "
                       "libipt %s\n",
                       s, i, i < a.n ? item_str(&a.it[i], x, sizeof(x)) : "(end)",
                       i < b.n ? item_str(&b.it[i], y, sizeof(y)) : "(end)");
                bad = 1;
            }
        }
        /* the instructions against the truth: all of it, its suffix (ring
         * wrapped) or its prefix (stopped) */
        size_t nd = 0;
        for (size_t i = 0; i < a.n; i++)
            nd += a.it[i].kind == 0;
        size_t t0 = 0;
        if (!bad && shape == S_RING && st.wrapped)
            t0 = nd <= r.ntruth ? r.ntruth - nd : 0;
        size_t ti = t0;
        if (shape == S_GAPS && !bad) {
            /* decoded == what the unit traced; that is a subsequence of
             * the truth (nothing invented); and there were gaps */
            size_t u = 0, t = 0;
            for (size_t i = 0; i < a.n && !bad; i++) {
                if (a.it[i].kind == 2) {
                    printf("soft_flowgen: seed %u: decode error: %s\n", s,
                           item_str(&a.it[i], x, sizeof(x)));
                    bad = 1;
                } else if (a.it[i].kind == 0 && (u >= ntraced || a.it[i].v != traced[u++])) {
                    printf("soft_flowgen: seed %u: decoded instruction %zu is %" PRIx64
                           ", the unit traced %" PRIx64 "\n",
                           s, u - 1, a.it[i].v, u - 1 < ntraced ? traced[u - 1] : 0);
                    bad = 1;
                }
            }
            for (size_t i = 0; i < ntraced && !bad; i++, t++) {
                while (t < r.ntruth && r.truth[t] != traced[i])
                    t++;
                if (t == r.ntruth) {
                    printf("soft_flowgen: seed %u: traced instruction %zu (%" PRIx64
                           ") is not in the truth\n",
                           s, i, traced[i]);
                    bad = 1;
                }
            }
            if (!bad && (u != ntraced || (ndropped && !st.gaps))) {
                printf(
                    "soft_flowgen: seed %u: %zu decoded of %zu traced, %zu steps dropped, %" PRIu64
                    " gaps\n",
                    s, u, ntraced, ndropped, st.gaps);
                bad = 1;
            }
            ti = u;
        }
        for (size_t i = 0; i < a.n && !bad && shape != S_GAPS; i++) {
            if (a.it[i].kind == 2) {
                printf("soft_flowgen: seed %u: decode error: %s\n", s,
                       item_str(&a.it[i], x, sizeof(x)));
                bad = 1;
            } else if (a.it[i].kind == 0) {
                if (ti >= r.ntruth || a.it[i].v != r.truth[ti]) {
                    printf("soft_flowgen: seed %u: instruction %zu is %" PRIx64
                           ", executed %" PRIx64 "\n",
                           s, ti, a.it[i].v, ti < r.ntruth ? r.truth[ti] : 0);
                    bad = 1;
                }
                ti++;
            }
        }
        int full_run = !st.stopped && !(shape == S_RING && st.wrapped) && shape != S_GAPS;
        if (!bad && full_run && (ti != r.ntruth || st.insns != r.ntruth)) {
            printf("soft_flowgen: seed %u: %zu instructions decoded, unit counted %" PRIu64
                   ", %zu executed\n",
                   s, ti, st.insns, r.ntruth);
            bad = 1;
        }
        if (!bad && ((st.gaps && shape != S_GAPS) || st.undecodable || st.error)) {
            printf("soft_flowgen: seed %u: the unit found %" PRIu64 " gaps, %" PRIu64
                   " undecodable steps, error %d\n",
                   s, st.gaps, st.undecodable, st.error);
            bad = 1;
        }
        if (!bad && shape == S_RING && st.wrapped && nd < 100) {
            printf("soft_flowgen: seed %u: wrapped ring gave only %zu instructions\n", s, nd);
            bad = 1;
        }
        if (!bad && st.stopped && (ti == 0 || ti > st.insns)) {
            printf("soft_flowgen: seed %u: stopped trace decoded %zu instructions, unit traced "
                   "%" PRIu64 "\n",
                   s, ti, st.insns);
            bad = 1;
        }
        if (!bad && shape == S_TRACESTOP && st.stopped && st.stopped_full) {
            printf("soft_flowgen: seed %u: TraceStop reported as buffer full\n", s);
            bad = 1;
        }
        if (!bad && shape == S_STOP_FULL && st.bytes > bsize) {
            printf("soft_flowgen: seed %u: stop-when-full wrote %" PRIu64 " bytes into %zu\n", s,
                   st.bytes, bsize);
            bad = 1;
        }
        if (bad) {
            fails++;
            printf("soft_flowgen: seed %u (%s, retcomp %d, tsc %d, interrupts %d): reproduce with "
                   "--first %u --seeds 1\n",
                   s, shape_name(shape), retcomp, cfg.tsc_en, irq, s);
        } else if (verbose) {
            printf("soft_flowgen: seed %u ok (%s): %zu of %zu instructions, %" PRIu64
                   " bytes, %" PRIu64 " gaps, %" PRIu64 " skips%s%s\n",
                   s, shape_name(shape), ti - t0, r.ntruth, st.bytes, st.gaps, st.skips,
                   st.wrapped ? ", wrapped" : "",
                   st.stopped ? (st.stopped_full ? ", full" : ", stopped") : "");
        }
        total += ti - t0;
        n_gaps += st.gaps;
        n_skips += st.skips;
        n_wraps += shape == S_RING && st.wrapped;
        n_full += st.stopped_full;
        n_tstop += st.stopped && !st.stopped_full;
        free(a.it);
        free(b.it);
        free(trace);
        free(buf);
        free(r.truth);
        flow_image_free(&img);
    }
    printf("soft_flowgen: %u programs, %" PRIu64
           " instructions decoded equal to the truth: %u failed\n",
           seeds, total, fails);
    printf("soft_flowgen: covered %" PRIu64 " interrupts, %" PRIu64 " gaps, %" PRIu64
           " SKIP_CALL free runs, %" PRIu64 " wrapped rings, %" PRIu64 " stop-when-full, %" PRIu64
           " TraceStops\n",
           n_irqs, n_gaps, n_skips, n_wraps, n_full, n_tstop);
    printf("soft_flowgen: %" PRIu64 " programs with MTC, times equal in both decoders\n", n_timed);
    return fails ? 1 : 0;
}
