#include "arch/x86/capture_seq.h"

#include <string.h>

#include "arch/x86/rtit_regs.h"
#include "arch/x86/trace_markers.h"

/* CTL bits the sequences compare: everything but TraceEn. */
static uint64_t ctl_fields(uint64_t ctl)
{
    return ctl & ~RTIT_CTL_TRACEEN;
}

int capture_seq_pause(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                      bool *was_tracing)
{
    uint64_t ctl;
    *was_tracing = false;
    if (ops->rd(ops->ctx, RTIT_MSR_CTL, &ctl))
        return RTIT_SEQ_E_MSR;
    if (ctl_fields(ctl) != ctl_fields(rtit_config_ctl(cfg, false)))
        return RTIT_SEQ_E_BUSY; /* not our trace */
    if (!(ctl & RTIT_CTL_TRACEEN))
        return RTIT_SEQ_OK;
    *was_tracing = true;
    rtit_marker_trace_off();
    /* clearing TraceEn flushes the CPU's internal buffers (36.2.7.3) */
    if (ops->wr(ops->ctx, RTIT_MSR_CTL, ctl & ~RTIT_CTL_TRACEEN))
        return RTIT_SEQ_E_MSR;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return RTIT_SEQ_OK;
}

int capture_seq_resume(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                       uint64_t *status)
{
    uint64_t st = 0;
    if (ops->wr(ops->ctx, RTIT_MSR_CTL, rtit_config_ctl(cfg, true)))
        return RTIT_SEQ_E_MSR;
    rtit_marker_trace_on();
    if (ops->rd(ops->ctx, RTIT_MSR_STATUS, &st))
        return RTIT_SEQ_E_MSR;
    if (status)
        *status = st;
    if (st & RTIT_STATUS_ERROR) {
        rtit_marker_trace_off();
        ops->wr(ops->ctx, RTIT_MSR_CTL, rtit_config_ctl(cfg, false));
        return RTIT_SEQ_E_STATUS;
    }
    return RTIT_SEQ_OK;
}

int capture_seq_set_ranges(const struct rtit_msr_ops *ops, struct rtit_config *cfg,
                           const struct rtit_caps *caps,
                           const struct rtit_addr_range ranges[RTIT_MAX_RANGES],
                           struct rtit_violation *v)
{
    struct rtit_config next = *cfg;
    bool was_tracing;
    int err;

    memcpy(next.range, ranges, sizeof(next.range));
    if (rtit_check(&next, caps, v) != RTIT_RULE_OK)
        return RTIT_SEQ_E_RULE;
    if ((err = capture_seq_pause(ops, cfg, &was_tracing)) != RTIT_SEQ_OK)
        return err;
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        const struct rtit_addr_range *o = &cfg->range[n], *r = &next.range[n];
        if (o->cfg == RTIT_ADDR_CFG_OFF && r->cfg == RTIT_ADDR_CFG_OFF)
            continue; /* never touch a range the CPU may not have */
        uint64_t a = r->cfg == RTIT_ADDR_CFG_OFF ? 0 : r->start;
        uint64_t b = r->cfg == RTIT_ADDR_CFG_OFF ? 0 : r->end;
        if (ops->wr(ops->ctx, RTIT_MSR_ADDR_A(n), a) || ops->wr(ops->ctx, RTIT_MSR_ADDR_B(n), b))
            return RTIT_SEQ_E_MSR;
    }
    *cfg = next;
    if (!was_tracing) {
        /* ADDRn_CFG lives in CTL: write it, TraceEn still 0 */
        if (ops->wr(ops->ctx, RTIT_MSR_CTL, rtit_config_ctl(cfg, false)))
            return RTIT_SEQ_E_MSR;
        return RTIT_SEQ_OK;
    }
    return capture_seq_resume(ops, cfg, NULL);
}

int capture_seq_add_image(const struct rtit_msr_ops *ops, struct rtit_config *cfg,
                          const struct rtit_caps *caps, uint64_t base, uint64_t size,
                          struct rtit_violation *v)
{
    struct rtit_addr_range r[RTIT_MAX_RANGES];
    memcpy(r, cfg->range, sizeof(r));
    for (unsigned n = 0; n < RTIT_MAX_RANGES; n++) {
        if (r[n].cfg != RTIT_ADDR_CFG_OFF)
            continue;
        if (size == 0 || base + (size - 1) < base)
            break;
        r[n].cfg = RTIT_ADDR_CFG_FILTER;
        r[n].start = base;
        r[n].end = base + (size - 1);
        /* n beyond the CPU's ranges is refused by rtit_check() */
        return capture_seq_set_ranges(ops, cfg, caps, r, v);
    }
    if (v) {
        v->rule = RTIT_RULE_RANGE_UNSUPPORTED;
        v->index = RTIT_MAX_RANGES;
    }
    return RTIT_SEQ_E_RULE;
}

int capture_seq_pause_read(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                           struct rtit_stop_info *info)
{
    bool was_tracing;
    int err = capture_seq_pause(ops, cfg, &was_tracing);
    if (err != RTIT_SEQ_OK)
        return err;
    /* TraceEn is 0 now: rtit_stop only reads, the pointers are stable
	 * and nothing writes the buffer */
    if ((err = rtit_stop(ops, cfg, info)) != RTIT_SEQ_OK)
        return err;
    info->was_tracing = was_tracing;
    return RTIT_SEQ_OK;
}

int capture_seq_snapshot(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                         struct rtit_stop_info *info)
{
    int err = capture_seq_pause_read(ops, cfg, info);
    if (err != RTIT_SEQ_OK)
        return err;
    if (info->was_tracing && !info->stopped && !info->error)
        return capture_seq_resume(ops, cfg, NULL);
    return RTIT_SEQ_OK;
}

int capture_seq_finish(const struct rtit_msr_ops *ops, const struct rtit_config *cfg,
                       const uint8_t *buf, struct rtit_stop_info *stop,
                       struct rtit_output_summary *sum)
{
    int err = rtit_stop(ops, cfg, stop);
    if (err != RTIT_SEQ_OK)
        return err;
    rtit_output_summarize(stop, cfg, buf, sum);
    return RTIT_SEQ_OK;
}
