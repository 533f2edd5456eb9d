/* The flow driver's tail (PTD_FMT_FLOW_TAIL, see ptd_fmt_flow.h and
 * ptd_tail.h): after the trace's last line, "[tail]", the instructions the
 * code alone says the CPU ran next, and "[spin: <lo>-<hi>]" when they loop
 * for ever. Event lines take --offset as ptxed's do (the offset is the
 * trace's end); instruction lines are formatted as the flow's. */
#include "decoder/ptd_fmt_flow.h"

enum {
    TAIL_NONE,
    TAIL_HEAD,
    TAIL_INSNS,
    TAIL_END,
    TAIL_DONE
};

void ptd_flow_lines_tail_begin(struct ptd_flow_lines *L, int st)
{
    L->tail_phase = TAIL_DONE;
    if (!(L->flags & PTD_FMT_FLOW_TAIL))
        return;
    if (ptd_tail_start(&L->tail, L->f, st, L->tail_max))
        L->tail_phase = TAIL_HEAD;
}

static const char hexd[] = "0123456789abcdef";

struct tw {
    char *p, *end;
};

static void tw_s(struct tw *w, const char *s)
{
    while (*s && w->p < w->end)
        *w->p++ = *s++;
}

static void tw_hex16(struct tw *w, uint64_t v)
{
    for (int shift = 60; shift >= 0 && w->p < w->end; shift -= 4)
        *w->p++ = hexd[(v >> shift) & 15];
}

/* "[<offset>  <text>]" or "[spin: <lo>-<hi>]" (PTD_FMT_FLOW_LINE_MAX is far
 * more than either needs; the caller checked cap against it). */
static int event_line(const struct ptd_flow_lines *L, char *line, size_t cap, bool spin)
{
    struct tw w = { line, line + cap - 1 };
    tw_s(&w, "[");
    if (L->flags & PTD_FMT_FLOW_OFFSET) {
        tw_hex16(&w, ptd_flow_offset(L->f));
        tw_s(&w, "  ");
    }
    if (spin) {
        tw_s(&w, "spin: ");
        tw_hex16(&w, L->tail.spin_lo);
        tw_s(&w, "-");
        tw_hex16(&w, L->tail.spin_hi);
    } else {
        tw_s(&w, "tail");
    }
    tw_s(&w, "]");
    *w.p = '\0';
    return (int)(w.p - line);
}

int ptd_flow_lines_tail(struct ptd_flow_lines *L, char *line, size_t cap,
                        enum ptd_flow_line_kind *kind)
{
    bool quiet = (L->flags & PTD_FMT_FLOW_QUIET) != 0;
    /* each pass gives a line or moves on; the tail is bounded (tail.max) */
    for (;;) {
        switch (L->tail_phase) {
        case TAIL_HEAD:
            L->tail_phase = TAIL_INSNS;
            if (quiet)
                continue;
            *kind = PTD_FLOW_LINE_EVENT;
            return event_line(L, line, cap, false);
        case TAIL_INSNS:
            if (!ptd_tail_next(&L->tail, &L->insn)) {
                L->tail_phase = TAIL_END;
                continue;
            }
            L->tail_insns++;
            if (quiet)
                continue;
            *kind = PTD_FLOW_LINE_INSN;
            return ptd_fmt_flow_insn(line, cap, L->flags, &L->insn,
                                     (L->flags & PTD_FMT_FLOW_OFFSET) ? ptd_flow_offset(L->f) : 0,
                                     L->time);
        case TAIL_END:
            L->tail_phase = TAIL_DONE;
            if (quiet || L->tail.end != PTD_TAIL_END_SPIN)
                continue;
            *kind = PTD_FLOW_LINE_EVENT;
            return event_line(L, line, cap, true);
        default: return 0;
        }
    }
}
