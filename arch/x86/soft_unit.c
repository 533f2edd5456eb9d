/* The software trace unit (contract in soft_unit.h; docs/soft-unit.md).
 *
 * Each step names the instruction about to execute; the one stepped before
 * it has completed. The unit decodes that previous instruction (code bytes
 * through the read callback, length and class from decoder/'s ILD) and
 * hands it with the new IP to decoder/ptd_tracer, which writes the packets.
 * A new IP that no outcome of the previous instruction explains (the glue
 * ran code unseen, an exception) becomes a gap: FUP + TIP.PGD (IP
 * suppressed) where the seen flow ended, TIP.PGE where it resumes; the
 * decoded flow then shows [disabled] [enabled] and no invented
 * instructions (ptd_tracer_gap).
 *
 * Output: the configured ToPA regions back to back from the buffer (or the
 * single range), written as the CPU writes them: a ring wraps to offset 0
 * (END to the first table, SDM 36.2.6.2; a single range is always
 * circular, 36.2.6.1); stop-when-full (STOP on the last region) sets
 * Stopped with OutputOffset at the end (36.2.6.2 "ToPA STOP"). The packet
 * that does not fit is not written: its bytes are left as PAD (0x00), so
 * the stream stays decodable where the CPU may leave a truncated packet. */
#include "arch/x86/soft_unit.h"

#include "arch/x86/rtit_regs.h"
#include "decoder/ptd_ild.h"
#include "decoder/ptd_pkt.h"

/* PSBFreq: 2K output bytes << encoding (SDM table "IA32_RTIT_CTL", bits
 * 27:24: 0 = 2K, 1 = 4K, ... "approximate"). */
#define SOFT_UNIT_PSB_BASE    2048u
#define SOFT_UNIT_PSBFREQ_MAX 15u
/* Single range output: at least 128 bytes (MASK_PTRS bits 6:0 are 1s). */
#define SOFT_UNIT_SINGLE_MIN 128u

static int sink(void *ctx, const uint8_t *bytes, size_t n)
{
    struct soft_unit *u = ctx;
    if (!u->ring && (u->stopped_full || u->pos + n > u->size)) {
        /* STOP region full: the rest stays PAD; OutputOffset = size */
        for (uint64_t i = u->pos; i < u->size; i++)
            u->buf[i] = 0;
        u->pos = u->size;
        u->stopped_full = true;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        u->buf[u->pos++] = bytes[i];
        if (u->pos == u->size && u->ring) {
            u->pos = 0;
            u->wrapped = true;
        }
    }
    u->bytes += n;
    /* the STOP region filled exactly: Stopped now, OutputOffset = size */
    if (!u->ring && u->pos == u->size)
        u->stopped_full = true;
    return 0;
}

static int mode_of(unsigned exec_mode)
{
    return exec_mode == 64   ? PTD_EXEC_MODE_64
           : exec_mode == 32 ? PTD_EXEC_MODE_32
           : exec_mode == 16 ? PTD_EXEC_MODE_16
                             : -1;
}

static bool pow2(uint64_t v)
{
    return v && !(v & (v - 1));
}

int soft_unit_init(struct soft_unit *u, const struct rtit_config *cfg, uint8_t *buffer,
                   size_t buffer_size, soft_unit_read_fn read, void *read_ctx)
{
    struct ptd_tracer_config tc;
    uint64_t size;
    int rc;

    if (!u || !cfg || !buffer || !read)
        return SOFT_UNIT_E_INVALID;
    if (cfg->output == RTIT_OUTPUT_SINGLE) {
        if (!pow2(cfg->single_size) || cfg->single_size < SOFT_UNIT_SINGLE_MIN)
            return SOFT_UNIT_E_OUTPUT;
    } else if (!cfg->regions) {
        return SOFT_UNIT_E_OUTPUT;
    }
    size = rtit_config_buffer_bytes(cfg);
    if (!size || size > buffer_size || cfg->psb_freq > SOFT_UNIT_PSBFREQ_MAX)
        return SOFT_UNIT_E_OUTPUT;
    if (!cfg->branch_en)
        return SOFT_UNIT_E_BRANCH_EN;

    tc.nfilter = 0;
    tc.nstop = 0;
    for (unsigned i = 0; i < PTD_TRACER_MAX_RANGES; i++) {
        tc.filter_lo[i] = tc.filter_hi[i] = 0;
        tc.stop_lo[i] = tc.stop_hi[i] = 0;
    }
    for (unsigned i = 0; i < RTIT_MAX_RANGES && i < PTD_TRACER_MAX_RANGES; i++) {
        const struct rtit_addr_range *r = &cfg->range[i];
        if (r->cfg == RTIT_ADDR_CFG_FILTER) {
            tc.filter_lo[tc.nfilter] = r->start;
            tc.filter_hi[tc.nfilter++] = r->end;
        } else if (r->cfg == RTIT_ADDR_CFG_STOP) {
            tc.stop_lo[tc.nstop] = r->start;
            tc.stop_hi[tc.nstop++] = r->end;
        } else if (r->cfg != RTIT_ADDR_CFG_OFF) {
            return SOFT_UNIT_E_RANGE;
        }
    }
    tc.dis_retc = cfg->dis_retc;
    tc.tsc_en = cfg->tsc_en;
    tc.mtc_en = cfg->mtc_en;
    tc.mtc_freq = (uint8_t)cfg->mtc_freq;
    tc.ctc_shift = SOFT_UNIT_CTC_SHIFT;
    tc.psb_period = (uint64_t)SOFT_UNIT_PSB_BASE << cfg->psb_freq;
    tc.sink = sink;
    tc.sink_ctx = u;
    rc = ptd_tracer_init(&u->tracer, &tc);
    if (rc < 0)
        return SOFT_UNIT_E_INVALID;

    u->buf = buffer;
    u->size = size;
    u->pos = 0;
    u->bytes = 0;
    u->read = read;
    u->read_ctx = read_ctx;
    u->prev_ip = 0;
    u->resume_ip = 0;
    u->insns = u->steps = u->gaps = u->undecodable = u->skips = u->rep_iterations = 0;
    u->interrupts = u->unseen = 0;
    u->error = 0;
    u->prev_mode = PTD_EXEC_MODE_64;
    /* ToPA: ring unless STOP; a single range is always circular */
    u->ring = cfg->output == RTIT_OUTPUT_SINGLE || cfg->when_full == RTIT_FULL_RING;
    u->wrapped = false;
    u->stopped_full = false;
    u->started = false;
    u->have_prev = false;
    u->skipping = false;
    u->skip_call = false;
    u->ended = false;
    return 0;
}

/* REP/REPNE string instructions (INS, OUTS, MOVS, CMPS, STOS, LODS, SCAS):
 * with TF set the single-step trap comes after every iteration, the IP
 * still on the instruction (SDM Vol. 1 7.3.9.x, Vol. 3B 17.3.1.4); the CPU
 * traces the instruction once. */
static bool rep_string(const struct ptd_insn *in)
{
    uint8_t op = in->opcode;
    return (in->flags & PTD_INSN_REP) && in->map == PTD_ILD_MAP_PRIMARY &&
           ((op >= 0x6c && op <= 0x6f) || (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf));
}

static bool is_call(unsigned iclass)
{
    return iclass == PTD_ICLASS_DIRECT_CALL || iclass == PTD_ICLASS_INDIRECT_CALL;
}

static bool halted(const struct soft_unit *u)
{
    return u->tracer.stopped || u->stopped_full || u->ended || u->error;
}

static int action(const struct soft_unit *u)
{
    if (halted(u))
        return SOFT_UNIT_STOPPED;
    if (u->skipping)
        return u->skip_call ? SOFT_UNIT_SKIP_CALL : SOFT_UNIT_FREE;
    return u->tracer.enabled ? SOFT_UNIT_CONTINUE : SOFT_UNIT_FREE;
}

/* The previous instruction completed and execution is at ip (mode). */
static void advance(struct soft_unit *u, uint64_t ip, int mode, uint64_t tsc)
{
    uint8_t code[PTD_ILD_MAX_LEN];
    struct ptd_insn insn;
    struct ptd_tracer_insn in;
    int n, r;

    n = u->read(u->read_ctx, u->prev_ip, code, sizeof code);
    if (n < 0 || n > (int)sizeof code)
        n = 0;
    if (ptd_ild_decode_at(&insn, code, (size_t)n, (enum ptd_exec_mode)u->prev_mode, u->prev_ip) <
        0) {
        /* not knowing what it was, the gap starts before it */
        u->undecodable++;
        r = ptd_tracer_gap(&u->tracer, u->prev_ip, ip, (unsigned)mode, tsc);
        if (r >= 0 && (r & PTD_TRACER_LEFT))
            u->gaps++;
        return;
    }
    if (ip == u->prev_ip && rep_string(&insn)) {
        u->rep_iterations++;
        return; /* one more iteration of the same instruction */
    }
    in.ip = u->prev_ip;
    in.length = insn.length;
    in.iclass = insn.iclass;
    in.target = (insn.flags & PTD_INSN_REL) ? insn.target : 0;
    in.next_ip = ip;
    in.mode = u->prev_mode;
    in.next_mode = (uint8_t)mode;
    r = ptd_tracer_insn(&u->tracer, &in, tsc);
    if (r < 0) {
        u->error = SOFT_UNIT_E_INVALID;
        return;
    }
    if (r & PTD_TRACER_TRACED)
        u->insns++;
    if (r & PTD_TRACER_GAP)
        u->gaps++;
    /* A call left the ranges (TIP.PGD written): nothing is traced until
	 * the flow lands inside again, at the latest at the return address,
	 * so the glue may run the callee free. */
    if ((r & PTD_TRACER_LEFT) && !(r & (PTD_TRACER_GAP | PTD_TRACER_STOPPED)) &&
        is_call(insn.iclass)) {
        uint64_t ret = u->prev_ip + insn.length;
        if (u->prev_mode != PTD_EXEC_MODE_64)
            ret &= 0xffffffffull;
        u->skipping = true;
        u->skip_call = true;
        u->resume_ip = ret;
        u->skips++;
    }
}

/* What every step and interrupt does first: count it, then give the
 * tracer's exec mode, or -1 when the unit stops here (already halted, or a
 * mode it cannot trace, which is recorded as the error). */
static int step_begin(struct soft_unit *u, unsigned exec_mode)
{
    u->steps++;
    if (halted(u))
        return -1;
    int mode = mode_of(exec_mode);
    if (mode < 0)
        u->error = SOFT_UNIT_E_MODE;
    return mode;
}

int soft_unit_step(struct soft_unit *u, uint64_t ip, unsigned exec_mode, uint64_t tsc)
{
    int mode;
    if (!u)
        return SOFT_UNIT_STOPPED;
    mode = step_begin(u, exec_mode);
    if (mode < 0)
        return SOFT_UNIT_STOPPED;
    if (!u->started) {
        /* TraceEn 0->1 before the first instruction */
        u->started = true;
        ptd_tracer_start(&u->tracer, ip, (unsigned)mode, tsc);
    } else if (u->skipping) {
        /* back from a free run: the callee's RET (or whatever ended the
		 * run) landed here; FilterEn is evaluated at the landing */
        u->skipping = false;
        u->skip_call = false;
        ptd_tracer_gap(&u->tracer, ip, ip, (unsigned)mode, tsc);
    } else if (u->have_prev) {
        advance(u, ip, mode, tsc);
    }
    u->have_prev = true;
    u->prev_ip = ip;
    u->prev_mode = (uint8_t)mode;
    return action(u);
}

int soft_unit_interrupt(struct soft_unit *u, uint64_t ip, unsigned exec_mode, uint64_t tsc)
{
    int mode;
    uint64_t from;
    if (!u || !u->started || u->skipping || !u->have_prev)
        return soft_unit_step(u, ip, exec_mode, tsc);
    mode = step_begin(u, exec_mode);
    if (mode < 0)
        return SOFT_UNIT_STOPPED;
    from = u->prev_ip;
    ptd_tracer_event(&u->tracer, from, ip, (unsigned)mode, tsc);
    u->interrupts++;
    u->prev_ip = ip;
    u->prev_mode = (uint8_t)mode;
    /* the handler returns to the interrupted instruction (a fault's
	 * handler may go elsewhere: the glue watches the ranges, not this) */
    u->resume_ip = u->tracer.enabled ? 0 : from;
    return action(u);
}

int soft_unit_unseen(struct soft_unit *u, uint64_t tsc)
{
    if (!u)
        return SOFT_UNIT_STOPPED;
    if (halted(u) || !u->started)
        return action(u);
    if (!u->skipping) {
        ptd_tracer_pause(&u->tracer, u->prev_ip, tsc);
        u->skipping = true;
        u->skip_call = false;
        u->unseen++;
    }
    return action(u);
}

uint64_t soft_unit_resume_ip(const struct soft_unit *u)
{
    return u ? u->resume_ip : 0;
}

int soft_unit_stop(struct soft_unit *u, uint64_t ip, uint64_t tsc)
{
    if (!u)
        return SOFT_UNIT_E_INVALID;
    if (u->ended)
        return SOFT_UNIT_E_STATE;
    /* another IP: the instruction stepped last completed and went there;
	 * the same IP (the glue stopped stepping before it ran) or 0 (not
	 * known): tracing ends before it */
    if (ip == 0 || (u->have_prev && ip == u->prev_ip))
        ip = u->prev_ip;
    else if (u->started && u->have_prev && !u->skipping && !halted(u))
        advance(u, ip, u->prev_mode, tsc);
    if (u->started)
        ptd_tracer_stop(&u->tracer, ip);
    u->ended = true;
    u->skipping = false;
    u->skip_call = false;
    return 0;
}

void soft_unit_get_status(const struct soft_unit *u, struct soft_unit_status *s)
{
    if (!u || !s)
        return;
    s->bytes = u->bytes;
    s->write_pos = u->pos;
    s->insns = u->insns;
    s->steps = u->steps;
    s->wrapped = u->wrapped;
    s->stopped = u->tracer.stopped || u->stopped_full;
    s->stopped_full = u->stopped_full;
    s->tracing = u->tracer.enabled;
    s->skipping = u->skipping;
    s->gaps = u->gaps;
    s->undecodable = u->undecodable;
    s->skips = u->skips;
    s->rep_iterations = u->rep_iterations;
    s->error = u->error;
    s->interrupts = u->interrupts;
    s->unseen = u->unseen;
}

void soft_unit_summarize(const struct soft_unit *u, struct rtit_output_summary *out)
{
    if (!u || !out)
        return;
    out->buffer_bytes = u->size;
    out->wrapped = u->wrapped;
    out->stopped_full = u->stopped_full;
    if (u->stopped_full) {
        out->bytes = u->size;
        out->oldest = 0;
    } else if (u->wrapped) {
        out->bytes = u->size;
        out->oldest = u->pos;
    } else {
        out->bytes = u->pos;
        out->oldest = 0;
    }
}

void soft_unit_time_config(uint64_t rtit_ctl, struct ptd_time_config *t)
{
    if (!t)
        return;
    t->mtc_freq = (rtit_ctl & RTIT_CTL_MTCEN)
                      ? (uint8_t)((rtit_ctl & RTIT_CTL_MTCFREQ_MASK) >> RTIT_CTL_MTCFREQ_SHIFT)
                      : 0;
    t->cpuid_0x15_eax = SOFT_UNIT_CPUID15_EAX;
    t->cpuid_0x15_ebx = SOFT_UNIT_CPUID15_EBX;
}

const char *soft_unit_strerror(int err)
{
    switch (err) {
    case 0: return "ok";
    case SOFT_UNIT_E_INVALID: return "invalid argument (NULL unit, config, buffer or reader)";
    case SOFT_UNIT_E_OUTPUT:
        return "output does not fit: no ToPA regions, size code > 15, "
               "single range not a power of two >= 128 bytes, "
               "or buffer smaller than the configured output";
    case SOFT_UNIT_E_RANGE: return "address range with a reserved ADDRn_CFG (only 0, 1, 2)";
    case SOFT_UNIT_E_BRANCH_EN: return "BranchEn=0: the software unit only models branch tracing";
    case SOFT_UNIT_E_MODE: return "execution mode is not 16, 32 or 64";
    case SOFT_UNIT_E_STATE: return "tracing was already stopped";
    default: return "unknown error";
    }
}
