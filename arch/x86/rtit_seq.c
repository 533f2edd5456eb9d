#include "arch/x86/rtit_seq.h"

#include <string.h>

#include "arch/x86/rtit_regs.h"
#include "arch/x86/rtit_topa.h"
#include "arch/x86/trace_markers.h"

static void add(struct rtit_plan *p, uint32_t msr, uint64_t v)
{
    if (p->n < RTIT_PLAN_MAX) {
        p->w[p->n].msr = msr;
        p->w[p->n].value = v;
        p->n++;
    }
}

uint64_t rtit_initial_mask_ptrs(const struct rtit_config *cfg)
{
    if (cfg->output == RTIT_OUTPUT_SINGLE)
        return ((cfg->single_size - 1) & 0xffffffffu) | RTIT_MASK_LOWER;
    return RTIT_MASK_LOWER;
}

void rtit_plan_start(struct rtit_plan *p, const struct rtit_config *cfg)
{
    p->n = 0;
    /* STATUS = 0: clears Error and Stopped (else TriggerEn stays 0 and
	 * nothing is traced) and PacketByteCnt (so TraceEn 0->1 emits a full
	 * PSB+ and decoders can sync; 36.2.7.3, libipt #38). */
    add(p, RTIT_MSR_STATUS, 0);
    if (!cfg->fabric_en) {
        add(p, RTIT_MSR_OUTPUT_BASE,
            cfg->output == RTIT_OUTPUT_TOPA ? cfg->table_phys : cfg->buffer_phys);
        add(p, RTIT_MSR_OUTPUT_MASK_PTRS, rtit_initial_mask_ptrs(cfg));
    }
    /* CR3_MATCH only when filtering: without CPUID.(14h,0).EBX[0] any
	 * access #GPs (HyperDbg writes it unconditionally). */
    if (cfg->cr3_filter)
        add(p, RTIT_MSR_CR3_MATCH, cfg->cr3);
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        if (cfg->range[n].cfg == RTIT_ADDR_CFG_OFF)
            continue;
        add(p, RTIT_MSR_ADDR_A(n), cfg->range[n].start);
        add(p, RTIT_MSR_ADDR_B(n), cfg->range[n].end);
    }
    /* CTL last: one write from TraceEn=0 sets every field and TraceEn. */
    add(p, RTIT_MSR_CTL, rtit_config_ctl(cfg, true));
}

int rtit_start(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
               const struct rtit_caps *caps, bool take_over, struct rtit_start_info *info)
{
    struct rtit_start_info dummy;
    struct rtit_plan plan;
    uint64_t v;
    int err;

    if (!info)
        info = &dummy;
    memset(info, 0, sizeof(*info));
    if (rtit_check(cfg, caps, &info->violation) != RTIT_RULE_OK)
        return RTIT_SEQ_E_RULE;

#define MSR_FAIL(msr, e)          \
    do {                          \
        info->failed_msr = (msr); \
        info->msr_err = (e);      \
        return RTIT_SEQ_E_MSR;    \
    } while (0)

    if ((err = ops->rd(ops->ctx, RTIT_MSR_CTL, &v)) != 0)
        MSR_FAIL(RTIT_MSR_CTL, err);
    info->old_ctl = v;
    if (v & RTIT_CTL_TRACEEN) {
        /* Firmware (EDK2 ProcTrace, FSP, a debugger) is tracing:
		 * Linux and simple-pt refuse unless forced (rtit.md 4.5). */
        info->was_tracing = true;
        if (!take_over)
            return RTIT_SEQ_E_BUSY;
        /* A CTL write that clears TraceEn may change any bit. */
        if ((err = ops->wr(ops->ctx, RTIT_MSR_CTL, 0)) != 0)
            MSR_FAIL(RTIT_MSR_CTL, err);
    }
    rtit_plan_start(&plan, cfg);
    for (size_t i = 0; i < plan.n; i++)
        if ((err = ops->wr(ops->ctx, plan.w[i].msr, plan.w[i].value)) != 0)
            MSR_FAIL(plan.w[i].msr, err);
    /* CTL (TraceEn) was the last write: tracing runs from here. */
    rtit_marker_trace_on();

    /* An operational error may show at once (HyperDbg checks this). */
    if ((err = ops->rd(ops->ctx, RTIT_MSR_STATUS, &v)) != 0)
        MSR_FAIL(RTIT_MSR_STATUS, err);
    info->status = v;
    if (v & RTIT_STATUS_ERROR) {
        ops->wr(ops->ctx, RTIT_MSR_CTL, rtit_config_ctl(cfg, false));
        return RTIT_SEQ_E_STATUS;
    }
    return RTIT_SEQ_OK;
#undef MSR_FAIL
}

static int64_t write_position(const struct rtit_config *cfg, uint64_t base, uint64_t ptrs)
{
    if (cfg->fabric_en)
        return -1;
    if (cfg->output == RTIT_OUTPUT_SINGLE) {
        uint64_t off = ptrs >> RTIT_MASK_OFFSET_SHIFT;
        if (base != cfg->buffer_phys || off >= cfg->single_size)
            return -1;
        return (int64_t)off;
    }
    struct rtit_topa_layout l;
    if (rtit_topa_layout(&l, cfg) != RTIT_TOPA_OK)
        return -1;
    return rtit_topa_position(&l, base, ptrs);
}

int rtit_stop(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
              struct rtit_stop_info *info)
{
    struct rtit_stop_info dummy;
    int err;

    if (!info)
        info = &dummy;
    memset(info, 0, sizeof(*info));
    info->write_pos = -1;

#define MSR_DO(call, msr)             \
    do {                              \
        if ((err = (call)) != 0) {    \
            info->failed_msr = (msr); \
            info->msr_err = err;      \
            return RTIT_SEQ_E_MSR;    \
        }                             \
    } while (0)

    MSR_DO(ops->rd(ops->ctx, RTIT_MSR_CTL, &info->ctl), RTIT_MSR_CTL);
    if (info->ctl & RTIT_CTL_TRACEEN) {
        info->was_tracing = true;
        info->ctl &= ~RTIT_CTL_TRACEEN;
        rtit_marker_trace_off();
        /* Clearing TraceEn flushes the internal buffers (36.2.7.3). */
        MSR_DO(ops->wr(ops->ctx, RTIT_MSR_CTL, info->ctl), RTIT_MSR_CTL);
    }
    /* The trace stores are weakly ordered; the CPU orders them before
	 * the next store or serializing instruction, and Linux adds wmb()
	 * after the WRMSR before anyone reads the buffer (rtit.md 1.2). */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    MSR_DO(ops->rd(ops->ctx, RTIT_MSR_STATUS, &info->status), RTIT_MSR_STATUS);
    if (!cfg->fabric_en) {
        /* only stable with TraceEn=0 (36.2.7.7) */
        MSR_DO(ops->rd(ops->ctx, RTIT_MSR_OUTPUT_BASE, &info->output_base), RTIT_MSR_OUTPUT_BASE);
        MSR_DO(ops->rd(ops->ctx, RTIT_MSR_OUTPUT_MASK_PTRS, &info->mask_ptrs),
               RTIT_MSR_OUTPUT_MASK_PTRS);
    }
#undef MSR_DO
    info->error = info->status & RTIT_STATUS_ERROR;
    info->stopped = info->status & RTIT_STATUS_STOPPED;
    info->write_pos = write_position(cfg, info->output_base, info->mask_ptrs);
    return RTIT_SEQ_OK;
}

void rtit_output_summarize(const struct rtit_stop_info *stop, const struct rtit_config *cfg,
                           const uint8_t *buf, struct rtit_output_summary *out)
{
    memset(out, 0, sizeof(*out));
    out->buffer_bytes = rtit_config_buffer_bytes(cfg);
    if (stop->write_pos < 0)
        return;
    uint64_t pos = (uint64_t)stop->write_pos;
    if (pos >= out->buffer_bytes) {
        /* only a filled STOP region leaves OutputOffset = size */
        out->bytes = out->buffer_bytes;
        out->stopped_full = stop->stopped;
        return;
    }
    if (buf)
        for (uint64_t i = pos; i < out->buffer_bytes; i++)
            if (buf[i]) {
                out->wrapped = true;
                break;
            }
    out->bytes = out->wrapped ? out->buffer_bytes : pos;
    out->oldest = out->wrapped ? pos : 0;
}

const char *rtit_status_explain(uint64_t status)
{
    if (status & RTIT_STATUS_ERROR)
        return "STATUS.Error: operational error, the trace is compromised "
               "(bad ToPA entry or table, misaligned region, address above "
               "MAXPHYADDR, output into SMRAM; SDM 36.3.9); clear it before "
               "re-enabling";
    if (status & RTIT_STATUS_STOPPED)
        return "STATUS.Stopped: a ToPA STOP region filled or a TraceStop "
               "range was hit (36.2.6.2, 36.2.4.3); reset the output "
               "pointers and clear it before re-enabling";
    return NULL;
}
