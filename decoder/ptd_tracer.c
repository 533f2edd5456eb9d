/* libptd trace-unit model: the rules are in ptd_tracer.h, each with its SDM
 * section; packets are encoded by ptd_enc. */
#include "decoder/ptd_tracer.h"

#include "decoder/ptd_enc.h"
#include "decoder/ptd_pkt.h"

/* TSC packet payload: the low 7 bytes of the time stamp (SDM "TSC Packet"). */
#define TSC_PAYLOAD_MASK 0x00ffffffffffffffull
/* TNT-8 carries up to 6 bits (SDM "Short TNT Packet"). */
#define TNT8_MAX_BITS 6
/* MTCFreq is a 4-bit field (IA32_RTIT_CTL bits 17:14). */
#define MTC_FREQ_MAX 15u
/* MTC carries CTC[MTCFreq+7:MTCFreq]; TMA carries CTC[15:0] (SDM "MTC
 * Packet", "TMA Packet"). */
#define MTC_PAYLOAD_MASK 0xffu
#define TMA_CTC_MASK     0xffffu
/* A run of MTCs never spans more periods than its 8 bits tell apart. */
#define MTC_WRAP 256u

static bool in_ranges(uint8_t n, const uint64_t *lo, const uint64_t *hi, uint64_t ip)
{
    for (uint8_t i = 0; i < n; i++)
        if (ip >= lo[i] && ip <= hi[i])
            return true;
    return false;
}

bool ptd_tracer_in_filter(const struct ptd_tracer *t, uint64_t ip)
{
    return !t->cfg.nfilter || in_ranges(t->cfg.nfilter, t->cfg.filter_lo, t->cfg.filter_hi, ip);
}

bool ptd_tracer_in_stop(const struct ptd_tracer *t, uint64_t ip)
{
    return in_ranges(t->cfg.nstop, t->cfg.stop_lo, t->cfg.stop_hi, ip);
}

int ptd_tracer_init(struct ptd_tracer *t, const struct ptd_tracer_config *cfg)
{
    if (!t || !cfg || !cfg->sink || cfg->nfilter > PTD_TRACER_MAX_RANGES ||
        cfg->nstop > PTD_TRACER_MAX_RANGES || cfg->mtc_freq > MTC_FREQ_MAX ||
        cfg->ctc_shift > PTD_TRACER_CTC_SHIFT_MAX)
        return -PTD_ERR_INVALID;
    /* field by field, not a struct copy or memset: decoder/ links with
     * no libc at all */
    t->cfg.nfilter = cfg->nfilter;
    t->cfg.nstop = cfg->nstop;
    for (unsigned i = 0; i < PTD_TRACER_MAX_RANGES; i++) {
        t->cfg.filter_lo[i] = cfg->filter_lo[i];
        t->cfg.filter_hi[i] = cfg->filter_hi[i];
        t->cfg.stop_lo[i] = cfg->stop_lo[i];
        t->cfg.stop_hi[i] = cfg->stop_hi[i];
    }
    t->cfg.dis_retc = cfg->dis_retc;
    t->cfg.tsc_en = cfg->tsc_en;
    t->cfg.mtc_en = cfg->mtc_en;
    t->cfg.mtc_freq = cfg->mtc_freq;
    t->cfg.ctc_shift = cfg->ctc_shift;
    t->cfg.psb_period = cfg->psb_period;
    t->cfg.sink = cfg->sink;
    t->cfg.sink_ctx = cfg->sink_ctx;
    t->last_ip = 0;
    t->since_psb = 0;
    t->bytes = 0;
    t->tsc = 0;
    t->mtc_period = 0;
    t->mtc_have = false;
    t->tsc_last = 0;
    t->tsc_told = false;
    t->ret_top = 0;
    t->ret_n = 0;
    t->tnt_bits = 0;
    t->tnt_n = 0;
    t->mode = 0xff; /* nothing told yet */
    t->have_last = false;
    t->on = false;
    t->enabled = false;
    t->stopped = false;
    t->full = false;
    t->mode_told = false;
    t->sink_err = 0;
    return 0;
}

/* ---- packet output -------------------------------------------------------- */

static void stop_full(struct ptd_tracer *t, int err)
{
    t->stopped = true;
    t->full = true;
    t->enabled = false;
    t->sink_err = err;
}

static void put_aux(struct ptd_tracer *t, uint8_t kind, uint64_t payload, uint8_t a, uint32_t aux,
                    uint8_t flags)
{
    uint8_t buf[PTD_PKT_MAX_SIZE];
    struct ptd_pkt p = ptd_pkt_make(kind, payload, a, aux, flags);
    int n, rc;
    if (t->full)
        return;
    n = ptd_enc_packet(buf, sizeof buf, &p);
    if (n < 0) {
        /* only a bug here can make a packet unencodable: stop rather than
         * write a stream decoders would misread */
        stop_full(t, n);
        return;
    }
    rc = t->cfg.sink(t->cfg.sink_ctx, buf, (size_t)n);
    if (rc < 0) {
        stop_full(t, rc);
        return;
    }
    t->bytes += (unsigned)n;
    t->since_psb += (unsigned)n;
}

static void put(struct ptd_tracer *t, uint8_t kind, uint64_t payload, uint8_t a, uint8_t flags)
{
    put_aux(t, kind, payload, a, 0, flags);
}

static void flush_tnt(struct ptd_tracer *t)
{
    if (!t->tnt_n)
        return;
    put(t, PTD_PKT_TNT8, t->tnt_bits, t->tnt_n, 0);
    t->tnt_bits = 0;
    t->tnt_n = 0;
}

static void tnt(struct ptd_tracer *t, bool taken)
{
    t->tnt_bits = (uint8_t)(t->tnt_bits << 1 | (taken ? 1u : 0u));
    if (++t->tnt_n == TNT8_MAX_BITS)
        flush_tnt(t);
}

static void ip_packet(struct ptd_tracer *t, uint8_t kind, uint64_t ip)
{
    uint64_t payload;
    unsigned ipc;
    flush_tnt(t);
    ipc = ptd_enc_ip_compress(t->last_ip, t->have_last, ip, &payload);
    put(t, kind, payload, (uint8_t)ipc, 0);
    t->last_ip = ip;
    t->have_last = true;
}

/* IPBytes 000: the IP is not given and Last IP does not change (36.4.2.2) */
static void ip_suppressed(struct ptd_tracer *t, uint8_t kind)
{
    flush_tnt(t);
    put(t, kind, 0, PTD_IPC_SUPPRESSED, 0);
}

static uint8_t mode_flags(unsigned mode)
{
    return mode == PTD_EXEC_MODE_64 ? PTD_PKTF_CSL : mode == PTD_EXEC_MODE_32 ? PTD_PKTF_CSD : 0;
}

static void mode_exec(struct ptd_tracer *t, unsigned mode, bool force)
{
    if (!force && mode == t->mode)
        return;
    flush_tnt(t);
    put(t, PTD_PKT_MODE_EXEC, 0, 0, mode_flags(mode));
    t->mode = (uint8_t)mode;
    if (!force)
        t->mode_told = true;
}

static uint64_t mtc_period_of(const struct ptd_tracer *t, uint64_t tsc)
{
    return (tsc >> t->cfg.ctc_shift) >> t->cfg.mtc_freq;
}

/* TSC, and TMA after it with MTC on: the CTC and the TSC ticks since its
 * last tick (FastCounter), which put the TSC on the MTC grid. */
static void tsc_packet(struct ptd_tracer *t)
{
    /* the same time twice in a row tells nothing new (a PSB+ or a run
     * of MTC periods just told it, and TIP.PGE follows) */
    if (!t->cfg.tsc_en || (t->tsc_told && t->tsc_last == t->tsc))
        return;
    put(t, PTD_PKT_TSC, t->tsc & TSC_PAYLOAD_MASK, 0, 0);
    t->tsc_told = true;
    t->tsc_last = t->tsc;
    if (t->cfg.mtc_en) {
        uint64_t ctc = t->tsc >> t->cfg.ctc_shift;
        uint32_t fc = (uint32_t)(t->tsc & ((1ull << t->cfg.ctc_shift) - 1));
        put_aux(t, PTD_PKT_TMA, ctc & TMA_CTC_MASK, 0, fc, 0);
        t->mtc_period = mtc_period_of(t, t->tsc);
        t->mtc_have = true;
    }
}

/* Time moves on to tsc (never back): the MTCs of the periods that ended
 * meanwhile, or a TSC + TMA for many of them. */
static void clock_to(struct ptd_tracer *t, uint64_t tsc)
{
    if (tsc > t->tsc)
        t->tsc = tsc;
    if (!t->cfg.mtc_en || !t->on || t->stopped)
        return;
    uint64_t p = mtc_period_of(t, t->tsc), q;
    if (!t->mtc_have) {
        t->mtc_have = true;
        t->mtc_period = p;
        return;
    }
    if (p <= t->mtc_period)
        return;
    flush_tnt(t);
    if (p - t->mtc_period > PTD_TRACER_MTC_BURST && t->cfg.tsc_en) {
        tsc_packet(t);
        return;
    }
    q = p - t->mtc_period >= MTC_WRAP ? p - (MTC_WRAP - 1) : t->mtc_period + 1;
    for (; q <= p; q++)
        put(t, PTD_PKT_MTC, q & MTC_PAYLOAD_MASK, 0, 0);
    t->mtc_period = p;
}

static void psb_plus(struct ptd_tracer *t, unsigned mode, uint64_t ip)
{
    flush_tnt(t);
    t->since_psb = 0; /* the period runs from PSB to PSB */
    put(t, PTD_PKT_PSB, 0, 0, 0);
    t->have_last = false;
    t->ret_n = 0;
    t->tsc_told = false; /* PSB+ always has its TSC */
    tsc_packet(t);
    mode_exec(t, mode, true);
    if (t->enabled)
        ip_packet(t, PTD_PKT_FUP, ip);
    put(t, PTD_PKT_PSBEND, 0, 0, 0);
}

/* ---- state changes ---------------------------------------------------------- */

static int result(struct ptd_tracer *t, int bits)
{
    if (t->mode_told)
        bits |= PTD_TRACER_MODE;
    t->mode_told = false;
    return t->stopped ? bits | PTD_TRACER_STOPPED : bits;
}

static int enable(struct ptd_tracer *t, uint64_t ip, unsigned mode)
{
    flush_tnt(t);
    tsc_packet(t);
    mode_exec(t, mode, false);
    ip_packet(t, PTD_PKT_TIP_PGE, ip);
    t->ret_n = 0;
    if (!t->full)
        t->enabled = true;
    return PTD_TRACER_ENTERED;
}

static void disable(struct ptd_tracer *t)
{
    t->enabled = false;
    t->ret_n = 0;
}

/* A taken branch or an event lands at ip while packets are disabled. */
static int land(struct ptd_tracer *t, uint64_t ip, unsigned mode)
{
    if (ptd_tracer_in_stop(t, ip)) {
        flush_tnt(t);
        put(t, PTD_PKT_STOP, 0, 0, 0);
        t->stopped = true;
        return 0;
    }
    if (ptd_tracer_in_filter(t, ip))
        return enable(t, ip, mode);
    return 0;
}

/* The periodic PSB+ at the instruction boundary before ip (36.2.7.3:
 * PSBFreq counts output bytes; the CPU inserts PSB+ at the next boundary). */
static void psb_check(struct ptd_tracer *t, uint64_t ip, unsigned mode)
{
    if (t->enabled && !t->stopped && t->cfg.psb_period && t->since_psb >= t->cfg.psb_period)
        psb_plus(t, mode, ip);
}

int ptd_tracer_start(struct ptd_tracer *t, uint64_t ip, unsigned mode, uint64_t tsc)
{
    int bits;
    if (!t || mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INVALID;
    if (t->on || t->stopped)
        return result(t, 0);
    t->on = true;
    t->tsc = tsc;
    t->enabled = false;
    /* the MTC periods count from here (with TSC, its TMA says so too) */
    t->mtc_period = mtc_period_of(t, tsc);
    t->mtc_have = true;
    psb_plus(t, mode, ip);
    /* TraceStop also fires for "a WRMSR that sets TraceEn in a TraceStop
     * IP region" (table "TraceStop Packet Definition") */
    bits = land(t, ip, mode);
    return result(t, bits);
}

static void push(struct ptd_tracer *t, uint64_t ret)
{
    t->ret_top = (uint8_t)((t->ret_top + 1) % PTD_TRACER_RETSTACK);
    t->ret[t->ret_top] = ret;
    if (t->ret_n < PTD_TRACER_RETSTACK)
        t->ret_n++;
}

/* The instruction's own packets while PacketEn=1; next is explained. */
static int branch(struct ptd_tracer *t, const struct ptd_tracer_insn *in, uint64_t end,
                  uint64_t next, unsigned next_mode, bool taken)
{
    if (!taken)
        return 0;
    if (ptd_tracer_in_stop(t, next)) {
        /* 36.2.4.3 TraceStop: TIP.PGD with the target, then TraceStop */
        ip_packet(t, PTD_PKT_TIP_PGD, next);
        put(t, PTD_PKT_STOP, 0, 0, 0);
        disable(t);
        t->stopped = true;
        return PTD_TRACER_LEFT;
    }
    if (!ptd_tracer_in_filter(t, next)) {
        /* 36.2.5.5: leaving the ranges, TIP.PGD replaces the branch's TNT
         * bit or TIP. A far transfer's new mode is not told here: MODE.Exec
         * goes with a TIP or TIP.PGE (36.4.2.8), so the next TIP.PGE tells
         * it (libipt takes MODE.Exec + TIP.PGD, ptboot's query layer does
         * not) */
        ip_packet(t, PTD_PKT_TIP_PGD, next);
        disable(t);
        return PTD_TRACER_LEFT;
    }
    switch (in->iclass) {
    case PTD_ICLASS_COND_JUMP: tnt(t, true); break;
    case PTD_ICLASS_DIRECT_CALL:
        /* a call to the next instruction (displacement 0, the "get IP"
         * idiom) is no call for RET compression (36.4.2.2: the decoder's
         * stack holds the Next IP of CALLs "with non-zero displacement") */
        if (in->target != end)
            push(t, end);
        break;
    case PTD_ICLASS_INDIRECT_CALL:
        push(t, end);
        ip_packet(t, PTD_PKT_TIP, next);
        break;
    case PTD_ICLASS_INDIRECT_JUMP: ip_packet(t, PTD_PKT_TIP, next); break;
    case PTD_ICLASS_NEAR_RET:
        /* 36.4.2.2 "Indirect Transfer Compression for Returns" */
        if (!t->cfg.dis_retc && t->ret_n && t->ret[t->ret_top] == next) {
            t->ret_top = (uint8_t)((t->ret_top + PTD_TRACER_RETSTACK - 1) % PTD_TRACER_RETSTACK);
            t->ret_n--;
            tnt(t, true);
        } else {
            ip_packet(t, PTD_PKT_TIP, next);
            t->ret_n = 0;
        }
        break;
    case PTD_ICLASS_FAR_TRANSFER:
        mode_exec(t, next_mode, false);
        ip_packet(t, PTD_PKT_TIP, next);
        break;
    default: /* direct jump: no packet */ break;
    }
    return 0;
}

/* Applies an instruction whose outcome (next, taken) is known. */
static int apply(struct ptd_tracer *t, const struct ptd_tracer_insn *in, uint64_t end,
                 uint64_t next, unsigned next_mode, bool taken)
{
    int bits = 0;
    if (t->enabled) {
        bits |= PTD_TRACER_TRACED;
        if (in->iclass == PTD_ICLASS_COND_JUMP && !taken)
            tnt(t, false);
        else
            bits |= branch(t, in, end, next, next_mode, taken);
    } else if (taken) {
        /* FilterEn and TraceStop are evaluated where taken branches land */
        bits |= land(t, next, next_mode);
    }
    return bits;
}

/* The asynchronous disable where the seen flow ends (36.4.2.5: TIP.PGD
 * with IPBytes 0, bound to the FUP before it). */
static int pause_at(struct ptd_tracer *t, uint64_t at)
{
    if (!t->enabled)
        return 0;
    flush_tnt(t);
    ip_packet(t, PTD_PKT_FUP, at);
    ip_suppressed(t, PTD_PKT_TIP_PGD);
    disable(t);
    return PTD_TRACER_LEFT;
}

static int gap(struct ptd_tracer *t, uint64_t at, uint64_t to, unsigned to_mode)
{
    int bits = pause_at(t, at);
    if (!t->stopped)
        bits |= land(t, to, to_mode);
    return bits;
}

int ptd_tracer_insn(struct ptd_tracer *t, const struct ptd_tracer_insn *in, uint64_t tsc)
{
    uint64_t end, succ = 0;
    bool known = true, taken = false;
    int bits;
    if (!t || !in || in->mode > PTD_EXEC_MODE_64 || in->next_mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INVALID;
    if (!t->on || t->stopped)
        return result(t, 0);
    clock_to(t, tsc);
    end = in->ip + in->length;
    if (in->mode != PTD_EXEC_MODE_64)
        end &= 0xffffffffull; /* EIP wraps in 16/32-bit code */
    switch (in->iclass) {
    case PTD_ICLASS_OTHER: succ = end; break;
    case PTD_ICLASS_COND_JUMP:
        /* a Jcc to its own fall-through is reported taken: both decode */
        if (in->next_ip == in->target) {
            succ = in->target;
            taken = true;
        } else if (in->next_ip == end) {
            succ = end;
        } else {
            known = false;
        }
        break;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL:
        succ = in->target;
        taken = true;
        break;
    default:
        /* indirect branches, returns, far transfers go anywhere */
        succ = in->next_ip;
        taken = true;
        break;
    }
    if (!known) {
        /* the Jcc's outcome is unknown: the gap starts before it */
        bits = PTD_TRACER_GAP | gap(t, in->ip, in->next_ip, in->next_mode);
    } else if (succ != in->next_ip ||
               (in->iclass != PTD_ICLASS_FAR_TRANSFER && in->next_mode != in->mode)) {
        /* the instruction completed (the caller saw it finish), then
         * something unseen happened before next_ip */
        bits = apply(t, in, end, succ, in->mode, taken);
        if (!t->stopped)
            bits |= PTD_TRACER_GAP | gap(t, succ, in->next_ip, in->next_mode);
    } else {
        bits = apply(t, in, end, succ, in->next_mode, taken);
    }
    psb_check(t, in->next_ip, in->next_mode);
    return result(t, bits);
}

int ptd_tracer_event(struct ptd_tracer *t, uint64_t from, uint64_t to, unsigned to_mode,
                     uint64_t tsc)
{
    int bits = 0;
    if (!t || to_mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INVALID;
    if (!t->on || t->stopped)
        return result(t, 0);
    clock_to(t, tsc);
    if (t->enabled) {
        /* 36.2.1.3: asynchronous far transfers give FUP (source) + TIP */
        flush_tnt(t);
        ip_packet(t, PTD_PKT_FUP, from);
        if (ptd_tracer_in_stop(t, to)) {
            ip_packet(t, PTD_PKT_TIP_PGD, to);
            put(t, PTD_PKT_STOP, 0, 0, 0);
            disable(t);
            t->stopped = true;
            bits = PTD_TRACER_LEFT;
        } else if (ptd_tracer_in_filter(t, to)) {
            mode_exec(t, to_mode, false);
            ip_packet(t, PTD_PKT_TIP, to);
        } else {
            /* cases 11d/13d of the SDM's table "Packet Generation under
             * Different Enable Conditions": FUP(NLIP or CLIP) +
             * TIP.PGD(BLIP), the handler's IP, since ContextEn stays 1 */
            ip_packet(t, PTD_PKT_TIP_PGD, to);
            disable(t);
            bits = PTD_TRACER_LEFT;
        }
    } else {
        bits = land(t, to, to_mode);
    }
    psb_check(t, to, to_mode);
    return result(t, bits);
}

int ptd_tracer_gap(struct ptd_tracer *t, uint64_t at, uint64_t to, unsigned to_mode, uint64_t tsc)
{
    int bits;
    if (!t || to_mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INVALID;
    if (!t->on || t->stopped)
        return result(t, 0);
    clock_to(t, tsc);
    bits = gap(t, at, to, to_mode);
    psb_check(t, to, to_mode);
    return result(t, bits);
}

int ptd_tracer_pause(struct ptd_tracer *t, uint64_t at, uint64_t tsc)
{
    if (!t)
        return -PTD_ERR_INVALID;
    if (!t->on || t->stopped)
        return result(t, 0);
    clock_to(t, tsc);
    return result(t, pause_at(t, at));
}

int ptd_tracer_stop(struct ptd_tracer *t, uint64_t ip)
{
    int bits = 0;
    if (!t)
        return -PTD_ERR_INVALID;
    if (!t->on)
        return result(t, 0);
    if (t->enabled) {
        /* 36.4.2.5: TraceEn cleared: TIP.PGD with IPBytes 0, after a FUP
         * saying where (decoders bind the asynchronous disable to it) */
        flush_tnt(t);
        ip_packet(t, PTD_PKT_FUP, ip);
        ip_suppressed(t, PTD_PKT_TIP_PGD);
        disable(t);
        bits = PTD_TRACER_LEFT;
    } else {
        flush_tnt(t);
    }
    t->on = false;
    return result(t, bits);
}
