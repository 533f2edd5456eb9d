/* libptd decode summaries: the static tail after the trace's end
 * (PTD_SUM_F_TAIL; decoder/ptd_tail.h). Its branches go into the last-N
 * ring marked PTD_SUM_TR_TAIL (inferred, not traced: the tables of calls,
 * blocks and edges keep only what the trace says); where it ended is kept
 * for the last line of the section (ptd_sum_fmt.c). */
#include "decoder/ptd_sum.h"
#include "decoder/ptd_sum_tab.h"
#include "decoder/ptd_tail.h"

void ptd_sum_tail(struct ptd_sum *s, const struct ptd_flow *f, int st)
{
    struct ptd_tail t;
    struct ptd_flow_insn in;
    bool more = ptd_tail_start(&t, f, st, 0);

    s->tail_ran = 1;
    if (more && s->pend) {
        if (st >= 0) {
            /* the trace said where the last branch went (the flow stands
             * there): as if a block had started there */
            ptd_sum_resolve(s, t.ip);
        } else {
            /* a return whose address the call stack owed */
            ptd_sum_ring_add(s, s->pend_from, t.ip, s->pend_iclass | PTD_SUM_TR_TAIL, 1);
            s->pend = 0;
        }
    }
    while (more && ptd_tail_next(&t, &in)) {
        s->tail_insns++;
        /* a branch the tail took (one that ended it: taken below) */
        if (in.iclass != PTD_ICLASS_OTHER && t.active)
            ptd_sum_ring_add(s, in.ip, t.ip, in.iclass | PTD_SUM_TR_TAIL, 1);
    }
    s->tail_end = t.end;
    s->tail_last = t.last_ip;
    s->tail_last_iclass = t.last_iclass;
    s->spin_lo = t.spin_lo;
    s->spin_hi = t.spin_hi;
    if (!s->tail_insns)
        return;
    /* the branch that ended it: to where it went (a spin's way back, a
     * call out of the range), or to ? (it needs trace) */
    if (t.end == PTD_TAIL_END_SPIN || t.end == PTD_TAIL_END_FILTER)
        ptd_sum_ring_add(s, t.last_ip, t.ip, t.last_iclass | PTD_SUM_TR_TAIL, 1);
    else if (t.end == PTD_TAIL_END_TRACE)
        ptd_sum_ring_add(s, t.last_ip, 0, t.last_iclass | PTD_SUM_TR_TAIL, 0);
}
