/* libptd time tracking (see ptd_time.h for the model and the API).
 *
 * Two parts that see the same packets:
 * - the estimate (struct ptd_time): TSC anchors it, TMA ties that TSC to the
 *   crystal clock, MTC advances it by whole CTC periods, CYC by core cycles
 *   scaled with the calibration;
 * - the calibration (struct ptd_time_cal): how many TSC ticks a core cycle
 *   takes, measured over MTC periods (or between PSB+ TSCs without MTC), or
 *   given by nominal frequency / CBR.
 * Integer arithmetic throughout, in the same order and widths as libipt so
 * that every rounding matches. */
#include "decoder/ptd_time.h"

/* MTC carries 8 CTC bits; TMA carries the low 16 CTC bits; TSC is 56 bits
 * wide (SDM, "MTC Packet", "TMA Packet", "TSC Packet"). */
enum {
    MTC_CTC_BITS = 8,
    MTC_CTC_MASK = 0xff,
    TMA_CTC_BITS = 16,
    TMA_CTC_MASK = 0xffff,
    TSC_BITS = 56,
};

/* Fraction bits of the calibration's fixed point. */
#define FCR_SHIFT PTD_TIME_FCR_SHIFT

/* Adding a bit of slack to the expected cycles of an MTC period when
 * checking for a dropped wrap CYC (SKL168): CYC wraps every 4096 cycles;
 * 0xf00 leaves room for normal variation. */
#define SKL168_WRAP_SLACK 0xf00u
/* SKL168's dropped-wrap check only makes sense while an MTC period is short
 * against the CYC wrap: MTCFreq below this. */
#define SKL168_MAX_MTC_FREQ 10u

/* A CYC of 2 bytes whose second byte could be OVF's first, then OVF's
 * second byte: two short CYCs in a row only happen when the counter wraps,
 * with a full payload, so this is an OVF that cut the CYC short. The CYC's
 * value 0x20..0x3f is exactly a second byte of 0x02 (value bits 11:5 sit in
 * byte 1 bits 7:1). */
bool ptd_time_skd007_cyc(const struct ptd_pkt *cyc, const uint8_t *at, const uint8_t *end)
{
    enum {
        SKD007_CYC_SIZE = 2,
        CYC_LOW_BITS = 5,
        CYC_AS_EXT = 0x20
    };

    if (cyc->kind != PTD_PKT_CYC || cyc->size != SKD007_CYC_SIZE)
        return false;
    if ((cyc->payload & ~(uint64_t)((1u << CYC_LOW_BITS) - 1)) != CYC_AS_EXT)
        return false;
    return end - at > SKD007_CYC_SIZE && at[SKD007_CYC_SIZE] == PTD_EXT_OVF;
}

/* ---- calibration ---------------------------------------------------------- */

static void cal_init(struct ptd_time_cal *c)
{
    c->fcr = 0;
    c->min_fcr = UINT64_MAX;
    c->max_fcr = 0;
    c->tsc = 0;
    c->cyc_tsc = 0;
    c->cyc_mtc = 0;
    c->ctc = 0;
    c->lost_mtc = 0;
    c->have_mtc = 0;
    c->check_skl168 = 0;
}

static bool cal_have(const struct ptd_time_cal *c)
{
    return c->min_fcr <= c->max_fcr;
}

static void cal_set(struct ptd_time_cal *c, uint64_t fcr)
{
    c->fcr = fcr;
    if (fcr < c->min_fcr)
        c->min_fcr = fcr;
    if (fcr > c->max_fcr)
        c->max_fcr = fcr;
}

/* The CTC ticks from `from` to `to` within the range MTC covers
 * (MTCFreq+8 bits), allowing for one wrap of that range. */
static int ctc_distance(uint32_t *delta, uint32_t to, uint32_t from, unsigned mtc_freq)
{
    if (to < from) {
        to += 1u << (mtc_freq + MTC_CTC_BITS);
        /* Two wraps cannot be told from one: the packets that would show
         * them are lost. */
        if (to < from)
            return -PTD_ERR_BAD_PACKET;
    }
    *delta = to - from;
    return 0;
}

/* CTC ticks to TSC ticks: CPUID 0x15 gives TSC/CTC = EBX/EAX (SDM Vol. 2,
 * CPUID leaf 15H). Truncating, as libipt does. */
static int ctc_to_tsc(uint64_t *ticks, uint64_t ctc, const struct ptd_time_config *cfg)
{
    if (!cfg->cpuid_0x15_eax || !cfg->cpuid_0x15_ebx)
        return -PTD_ERR_BAD_CONFIG;
    *ticks = ctc * cfg->cpuid_0x15_ebx / cfg->cpuid_0x15_eax;
    return 0;
}

/* Nominal frequency over core:bus ratio: TSC ticks per cycle when the core
 * runs at CBR (the TSC runs at the nominal frequency). */
static int cal_from_cbr(struct ptd_time_cal *c, uint8_t ratio, const struct ptd_time_config *cfg)
{
    uint64_t nominal = cfg->nom_freq;

    if (!nominal)
        return 0;
    if (!ratio)
        return -PTD_ERR_BAD_PACKET;
    cal_set(c, (nominal << FCR_SHIFT) / ratio);
    return 0;
}

static int cal_cbr(struct ptd_time_cal *c, uint8_t ratio, bool in_psb,
                   const struct ptd_time_config *cfg)
{
    /* In PSB+ a CBR only restates the ratio; elsewhere the frequency
     * changed, and what was measured so far no longer holds. */
    if (!in_psb)
        cal_init(c);
    return cal_from_cbr(c, ratio, cfg);
}

static int cal_tsc(struct ptd_time_cal *c, uint64_t tsc, bool in_psb)
{
    uint64_t last = c->tsc, cycles = c->cyc_tsc, delta;

    c->tsc = tsc;
    c->cyc_tsc = 0;
    /* A TSC outside PSB+ may come after lost packets: it starts a new
     * measurement but does not end one. Nor do we measure from TSC to TSC
     * when MTCs give a finer measure. */
    if (!in_psb || !last || !cycles || c->have_mtc)
        return 0;
    if (tsc < last) {
        tsc += 1ull << TSC_BITS;
        if (tsc < last)
            return -PTD_ERR_BAD_PACKET;
    }
    delta = tsc - last;
    if (delta >> (64 - FCR_SHIFT))
        return -PTD_ERR_INTERNAL; /* the shift below would overflow */
    cal_set(c, (delta << FCR_SHIFT) / cycles);
    return 0;
}

static int cal_mtc(struct ptd_time_cal *c, uint8_t payload, const struct ptd_time_config *cfg)
{
    uint32_t last = c->ctc, ctc, delta;
    uint64_t cycles = c->cyc_mtc, ticks, fcr;
    bool first_after_psb = c->check_skl168 != 0;
    int r;

    c->check_skl168 = 0;
    ctc = (uint32_t)payload << cfg->mtc_freq;

    if (!c->have_mtc) { /* the first MTC only starts a measurement */
        c->cyc_mtc = 0;
        c->ctc = ctc;
        c->have_mtc = 1;
        return 0;
    }
    /* No cycles in this period: keep measuring from the earlier MTC. */
    if (!cycles)
        return 0;

    c->have_mtc = 1;
    c->cyc_mtc = 0;
    c->ctc = ctc;
    c->lost_mtc++; /* undone below if this MTC calibrates */

    r = ctc_distance(&delta, ctc, last, cfg->mtc_freq);
    if (r < 0)
        return r;
    r = ctc_to_tsc(&ticks, delta, cfg);
    if (r < 0)
        return r;
    if (ticks >> (64 - FCR_SHIFT))
        return -PTD_ERR_INTERNAL;
    fcr = (ticks << FCR_SHIFT) / cycles;

    if (first_after_psb) {
        /* SKL168: skip this period if an MTC was lost since the PSB ... */
        if ((1u << cfg->mtc_freq) < delta)
            return 0;
        /* ... or if the cycles fall short by about a wrap CYC. */
        if (cfg->mtc_freq < SKL168_MAX_MTC_FREQ && cal_have(c)) {
            uint64_t expect = (c->fcr * (cycles + SKL168_WRAP_SLACK)) >> FCR_SHIFT;
            if (expect < ticks)
                return 0;
        }
    }
    cal_set(c, fcr);
    c->lost_mtc = 0;
    return 0;
}

/* ---- the estimate --------------------------------------------------------- */

static void est_tsc(struct ptd_time *t, uint64_t tsc)
{
    t->have_tsc = 1;
    t->have_tma = 0;
    t->have_mtc = 0;
    t->tsc = tsc;
    t->base = tsc;
    t->ctc = 0;
    t->fc = 0;
    t->lost_mtc = 0; /* a full timestamp: earlier losses no longer matter */
    t->lost_cyc = 0;
}

static int est_tma(struct ptd_time *t, uint32_t ctc, uint32_t fc)
{
    unsigned mtc_bits = t->cfg.mtc_freq + MTC_CTC_BITS;

    if (!t->have_tsc || t->have_tma) /* TMA follows its TSC, once */
        return -PTD_ERR_BAD_CONTEXT;
    if (t->have_mtc)
        return -PTD_ERR_INTERNAL;
    t->have_tma = 1;
    /* The TSC was taken FastCounter ticks after the last CTC tick: move the
     * base back to that tick and count the ticks as elapsed. */
    t->base -= fc;
    t->fc += fc;
    /* When TMA's 16 bits hold all the CTC bits MTC carries, TMA is as good
     * as an MTC. Otherwise the next MTC supplies the missing high bits. */
    if (mtc_bits <= TMA_CTC_BITS)
        t->have_mtc = 1;
    t->ctc = ctc & ((1u << mtc_bits) - 1u);
    t->ctc_cyc = t->ctc;
    return 0;
}

static int est_mtc(struct ptd_time *t, uint8_t payload)
{
    const struct ptd_time_config *cfg = &t->cfg;
    uint32_t last = t->ctc, ctc, delta;
    uint64_t ticks;
    bool had_tma = t->have_tma, had_mtc = t->have_mtc;
    int r;

    /* Between a TSC and its TMA an MTC would be measured from the wrong
     * CTC; the TMA-anchored MTCs after it carry the time. */
    if (t->have_tsc && !had_tma)
        return 0;

    ctc = (uint32_t)payload << cfg->mtc_freq;
    /* CYCs measured from here on belong to this MTC period, unless the
     * count still runs from an earlier one (no CYC since, none lost). */
    if (t->fc || t->lost_cyc || !had_mtc)
        t->ctc_cyc = ctc;
    t->have_mtc = 1;
    t->fc = 0;
    t->ctc = ctc;
    t->lost_cyc = 0;

    if (!had_mtc) {
        uint32_t lo, hi;
        /* Without a TMA we cannot tell where in its period this MTC
         * started the trace: it only sets the grid. */
        if (!had_tma)
            return 0;
        if (last & ~(uint32_t)TMA_CTC_MASK)
            return -PTD_ERR_INTERNAL;
        /* TMA gave the low 16 CTC bits only; take the bits above from this
         * MTC, one period back if the low bits wrapped in between. */
        lo = ctc & TMA_CTC_MASK;
        hi = ctc & ~(uint32_t)TMA_CTC_MASK;
        if (lo < last) {
            hi -= 1u << TMA_CTC_BITS;
            hi &= (uint32_t)MTC_CTC_MASK << cfg->mtc_freq;
        }
        last |= hi;
    }

    r = ctc_distance(&delta, ctc, last, cfg->mtc_freq);
    if (r < 0) {
        t->lost_mtc++;
        return r;
    }
    r = ctc_to_tsc(&ticks, delta, cfg);
    if (r < 0)
        return r;
    t->base += ticks;
    t->tsc = t->base;
    return 0;
}

/* A CYC counts cycles since the previous CYC, which may lie before the last
 * MTC: only the cycles after that MTC move the time from it. Estimate the
 * cycles of the earlier MTC periods with the calibration and take them off
 * (at most all of them: better too slow than too fast). */
static int cyc_this_period(uint64_t *cycles, const struct ptd_time *t, uint64_t fcr)
{
    uint32_t delta;
    uint64_t ticks, before;
    int r;

    if (t->ctc == t->ctc_cyc)
        return 0;
    r = ctc_distance(&delta, t->ctc, t->ctc_cyc, t->cfg.mtc_freq);
    if (r < 0)
        return r;
    r = ctc_to_tsc(&ticks, delta, &t->cfg);
    if (r < 0)
        return r;
    before = (ticks << FCR_SHIFT) / fcr;
    *cycles = *cycles > before ? *cycles - before : 0;
    return 0;
}

static int est_cyc(struct ptd_time *t, uint64_t cycles, uint64_t fcr)
{
    uint64_t fc = t->fc;

    if (!fcr) {
        t->lost_cyc++;
        return 0;
    }
    if (!fc) { /* the first CYC since the last MTC */
        int r = cyc_this_period(&cycles, t, fcr);
        if (r < 0)
            return r;
    }
    fc += (cycles * fcr) >> FCR_SHIFT;
    t->fc = fc;
    t->tsc = t->base + fc;
    return 0;
}

/* ---- API ------------------------------------------------------------------ */

void ptd_time_init(struct ptd_time *t, const struct ptd_time_config *cfg)
{
    if (cfg) {
        t->cfg = *cfg;
    } else {
        t->cfg.mtc_freq = 0;
        t->cfg.nom_freq = 0;
        t->cfg.cpuid_0x15_eax = 0;
        t->cfg.cpuid_0x15_ebx = 0;
        t->cfg.flags = 0;
        t->cfg.errata = 0;
    }
    /* Shifts by MTCFreq must stay inside 32 bits. */
    if (t->cfg.mtc_freq > PTD_TIME_MTC_FREQ_MAX)
        t->cfg.mtc_freq = PTD_TIME_MTC_FREQ_MAX;
    ptd_time_reset(t);
}

void ptd_time_reset(struct ptd_time *t)
{
    t->tsc = 0;
    t->base = 0;
    t->fc = 0;
    t->ctc = 0;
    t->ctc_cyc = 0;
    t->lost_mtc = 0;
    t->lost_cyc = 0;
    t->cbr = 0;
    t->have_tsc = 0;
    t->have_tma = 0;
    t->have_mtc = 0;
    t->have_cbr = 0;
    t->in_psb = 0;
    cal_init(&t->cal);
}

static bool tcal_on(const struct ptd_time *t)
{
    return !(t->cfg.flags & PTD_TIME_NO_TCAL);
}

static void set_err(int *dst, int r)
{
    if (dst)
        *dst = r;
}

int ptd_time_tsc(struct ptd_time *t, uint64_t tsc, int *cal_err)
{
    set_err(cal_err, tcal_on(t) ? cal_tsc(&t->cal, tsc, t->in_psb) : 0);
    est_tsc(t, tsc);
    return 0;
}

int ptd_time_tma(struct ptd_time *t, uint32_t ctc, uint32_t fc, int *cal_err)
{
    set_err(cal_err, 0); /* TMA is no calibration point */
    return est_tma(t, ctc, fc);
}

int ptd_time_mtc(struct ptd_time *t, uint8_t ctc, int *cal_err)
{
    set_err(cal_err, tcal_on(t) ? cal_mtc(&t->cal, ctc, &t->cfg) : 0);
    return est_mtc(t, ctc);
}

int ptd_time_cyc(struct ptd_time *t, uint64_t cycles, int *cal_err, bool *used)
{
    uint64_t fcr = 0;

    if (tcal_on(t)) {
        if (cal_have(&t->cal))
            fcr = t->cal.fcr;
        t->cal.cyc_mtc += cycles;
        t->cal.cyc_tsc += cycles;
    }
    set_err(cal_err, 0);
    if (used)
        *used = fcr != 0;
    return est_cyc(t, cycles, fcr);
}

int ptd_time_cbr_update(struct ptd_time *t, uint8_t ratio, int *cal_err)
{
    set_err(cal_err, tcal_on(t) ? cal_cbr(&t->cal, ratio, t->in_psb, &t->cfg) : 0);
    if (!ratio)
        return -PTD_ERR_BAD_PACKET;
    t->have_cbr = 1;
    t->cbr = ratio;
    return 0;
}

int ptd_time_psb(struct ptd_time *t)
{
    t->in_psb = 1;
    if (tcal_on(t) && (t->cfg.errata & PTD_ERRATUM_SKL168))
        t->cal.check_skl168 = 1;
    return 0;
}

void ptd_time_psbend(struct ptd_time *t)
{
    t->in_psb = 0;
}

void ptd_time_ovf(struct ptd_time *t)
{
    struct ptd_time_cal *c = &t->cal;

    if (!(t->cfg.flags & PTD_TIME_KEEP_TCAL_ON_OVF)) {
        cal_init(c);
        return;
    }
    /* Keep the ratio; the measurement in progress spans the lost packets. */
    c->tsc = 0;
    c->cyc_tsc = 0;
    c->cyc_mtc = 0;
    c->ctc = 0;
    c->have_mtc = 0;
}

int ptd_time_packet(struct ptd_time *t, const struct ptd_pkt *p)
{
    int cal = 0, r = 0;

    switch (p->kind) {
    case PTD_PKT_TSC: r = ptd_time_tsc(t, p->payload, &cal); break;
    case PTD_PKT_TMA: r = ptd_time_tma(t, (uint32_t)p->payload, p->aux, &cal); break;
    case PTD_PKT_MTC: r = ptd_time_mtc(t, (uint8_t)p->payload, &cal); break;
    case PTD_PKT_CYC: r = ptd_time_cyc(t, p->payload, &cal, NULL); break;
    case PTD_PKT_CBR: r = ptd_time_cbr_update(t, (uint8_t)p->payload, &cal); break;
    case PTD_PKT_PSB: cal = ptd_time_psb(t); break;
    case PTD_PKT_PSBEND: ptd_time_psbend(t); break;
    case PTD_PKT_OVF: ptd_time_ovf(t); break;
    default: break;
    }
    return cal < 0 ? cal : r;
}

int ptd_time_now(const struct ptd_time *t, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
    *tsc = t->tsc;
    if (lost_mtc)
        *lost_mtc = t->lost_mtc;
    if (lost_cyc)
        *lost_cyc = t->lost_cyc;
    return t->have_tsc ? 0 : -PTD_ERR_NO_TIME;
}

int ptd_time_cbr(const struct ptd_time *t, uint32_t *cbr)
{
    if (!t->have_cbr)
        return -PTD_ERR_NO_CBR;
    *cbr = t->cbr;
    return 0;
}

int ptd_time_fcr(const struct ptd_time *t, uint64_t *fcr)
{
    if (!cal_have(&t->cal))
        return -PTD_ERR_NO_TIME;
    *fcr = t->cal.fcr;
    return 0;
}
