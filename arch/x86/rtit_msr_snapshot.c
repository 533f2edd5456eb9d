#include "arch/x86/rtit_msr_snapshot.h"

#include <string.h>

#include "arch/x86/rtit_regs.h"

static void take(struct rtit_msr_value *v, const struct rtit_msr_ops *ops, uint32_t msr)
{
    uint64_t x = 0;
    int err = ops->rd(ops->ctx, msr, &x);
    if (err == 0) {
        v->ok = true;
        v->value = x;
    } else {
        v->fault = true;
        v->err = err;
    }
}

void rtit_msr_snapshot_take(struct rtit_msr_snapshot *s, const struct rtit_caps *caps,
                            const struct rtit_msr_ops *ops)
{
    memset(s, 0, sizeof(*s));
    if (!caps || !ops || !ops->rd || !caps->leaf7_pt || !caps->has_leaf14)
        return;
    take(&s->ctl, ops, RTIT_MSR_CTL);
    take(&s->status, ops, RTIT_MSR_STATUS);
    if (caps->topa || caps->single_range) {
        take(&s->output_base, ops, RTIT_MSR_OUTPUT_BASE);
        take(&s->output_mask_ptrs, ops, RTIT_MSR_OUTPUT_MASK_PTRS);
    }
}

bool rtit_msr_snapshot_tracing(const struct rtit_msr_snapshot *s)
{
    return s && s->ctl.ok && (s->ctl.value & RTIT_CTL_TRACEEN);
}
