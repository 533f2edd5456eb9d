/* libptd decode summaries: collecting (see ptd_sum.h; the text is written
 * by ptd_sum_fmt.c). The flow layer hands over basic blocks and events; a
 * block that ends in a branch leaves a pending transition that the next
 * block (or event) resolves with its IP: a call pushes a frame on the
 * shadow stack, a return pops back to the frame whose call it returns
 * behind, and every transition goes into the edge table and the last-N
 * ring. Instructions (and TSC ticks) go to the block, the function and call
 * tree node on top of the shadow stack, and the image. */
#include "decoder/ptd_sum_tab.h"

void ptd_sum_init(struct ptd_sum *s, const struct ptd_sum_config *cfg)
{
    s->cfg.modules = cfg->modules;
    s->cfg.nmodules = cfg->modules ? cfg->nmodules : 0;
    s->cfg.arena = cfg->arena;
    s->cfg.arena_size = cfg->arena_size;
    s->cfg.line = cfg->line;
    s->cfg.ctx = cfg->ctx;
    s->cfg.top = cfg->top ? cfg->top : PTD_SUM_TOP_DEFAULT;
    s->cfg.last = cfg->last ? cfg->last : PTD_SUM_LAST_DEFAULT;
    s->cfg.stack_depth = cfg->stack_depth ? cfg->stack_depth : PTD_SUM_STACK_DEFAULT;
    s->cfg.tree_depth = cfg->tree_depth ? cfg->tree_depth : PTD_SUM_TREE_DEPTH_DEFAULT;
    s->cfg.tree_lines = cfg->tree_lines ? cfg->tree_lines : PTD_SUM_TREE_LINES_DEFAULT;
    s->cfg.tree_permille = cfg->tree_permille ? cfg->tree_permille : PTD_SUM_TREE_PERMILLE_DEFAULT;
    s->cfg.flags = cfg->flags;
    s->cfg.name = cfg->name;
    s->cfg.name_ctx = cfg->name_ctx;
    s->cfg.obs = cfg->obs;
    s->cfg.obs_ctx = cfg->obs_ctx;
    s->obs_depth = 0;
    if (s->cfg.tree_depth > 0xfff0)
        s->cfg.tree_depth = 0xfff0;

    ptd_sum_tab_layout(s);

    s->depth = 0;
    s->lost_frames = 0;
    s->ring_pos = 0;
    s->mod_hint = 0;
    s->ring_count = 0;
    s->lb_ip = s->lb_insns = s->pend_from = 0;
    s->lb_open = s->pend = s->pend_iclass = s->gap = 0;
    s->phase = 0;
    s->have_sync = 0;
    s->synced = 0;
    s->first_sync = 0;
    s->in_err = 0;
    s->sync_off = s->last_ip = s->err_off = 0;
    s->st = 0;
    s->cur_tsc = 0;
    s->nspread = 0;
    s->nerr = 0;
    for (unsigned i = 0; i < 4; i++)
        s->gap_offset[i] = 0;
    s->tail_insns = s->tail_last = s->spin_lo = s->spin_hi = 0;
    s->tail_end = s->tail_last_iclass = s->tail_ran = 0;
    struct ptd_sum_stats *st = &s->stats;
    st->bytes = st->insns = st->blocks = st->calls = st->returns = st->irqs = 0;
    st->unmatched_returns = st->errors = st->bytes_skipped = 0;
    st->overflows = st->enables = st->disables = st->max_depth = st->depth_exceeded = 0;
    st->functions = st->nodes = st->untracked = 0;
    st->tsc_first = st->tsc_last = st->lines = st->text_bytes = 0;
    st->time_steps = 0;
    st->has_time = st->time_coarse = 0;
}

const struct ptd_sum_stats *ptd_sum_stats(const struct ptd_sum *s)
{
    return &s->stats;
}

/* ---- observer ----------------------------------------------------------- */

static void obs_send(struct ptd_sum *s, struct ptd_sum_obs *ev)
{
    ev->tsc = s->stats.has_time ? s->cur_tsc : 0;
    /* a block's instructions are counted before it is told: its start */
    ev->insns = s->stats.insns - (ev->type == PTD_SUM_OBS_INSNS ? ev->n : 0);
    s->cfg.obs(s->cfg.obs_ctx, ev);
}

/* Tells the observer the stack shrank (frames kept plus frames past the
 * shadow stack's depth, whose returns are still counted). */
static void obs_depth(struct ptd_sum *s)
{
    uint32_t d = s->depth + s->lost_frames;
    if (!s->cfg.obs || d >= s->obs_depth) {
        s->obs_depth = d < s->obs_depth ? d : s->obs_depth;
        return;
    }
    struct ptd_sum_obs ev = { .type = PTD_SUM_OBS_POP, .depth = d };
    s->obs_depth = d;
    obs_send(s, &ev);
}

static void obs_push(struct ptd_sum *s, uint64_t from, uint64_t entry, uint8_t kind)
{
    if (!s->cfg.obs)
        return;
    struct ptd_sum_obs ev = {
        .type = PTD_SUM_OBS_PUSH, .fkind = kind, .entry = entry, .from = from
    };
    s->obs_depth = s->depth + s->lost_frames;
    ev.depth = s->obs_depth;
    obs_send(s, &ev);
}

static void obs_mark(struct ptd_sum *s, uint32_t mark, uint64_t offset, uint64_t ip, int code)
{
    if (!s->cfg.obs)
        return;
    struct ptd_sum_obs ev = { .type = PTD_SUM_OBS_MARK,
                              .mark = mark,
                              .offset = offset,
                              .ip = ip,
                              .code = code,
                              .depth = s->obs_depth };
    obs_send(s, &ev);
}

/* ---- shadow stack ------------------------------------------------------- */

static struct ptd_sum_frame *top(struct ptd_sum *s)
{
    struct ptd_sum_frame *fr = s->frames.p;
    return s->depth ? &fr[s->depth - 1] : NULL;
}

/* Starts a new root: code entered at ip whose caller is unknown (the start
 * of the trace, a return past the bottom of the stack). */
static void push_root(struct ptd_sum *s, uint64_t ip)
{
    struct ptd_sum_frame *fr = s->frames.p;
    s->depth = 0;
    s->lost_frames = 0;
    obs_depth(s);
    if (!s->frames.cap)
        return;
    fr[0].from = 0;
    fr[0].irq = 0;
    fr[0].left = 0;
    fr[0].entered = 0;
    fr[0].func = ptd_sum_func_get(s, ip, PTD_SUM_FN_ROOT);
    fr[0].node = ptd_sum_node_get(s, PTD_SUM_NONE, fr[0].func);
    if (fr[0].node != PTD_SUM_NONE)
        ((struct ptd_sum_node *)s->nodes.p)[fr[0].node].calls++;
    s->depth = 1;
    obs_push(s, 0, ip, PTD_SUM_FN_ROOT);
}

static void push(struct ptd_sum *s, uint64_t from, uint64_t entry, uint8_t kind)
{
    struct ptd_sum_frame *fr = s->frames.p;
    struct ptd_sum_node *nodes = s->nodes.p;
    uint32_t func = ptd_sum_func_get(s, entry, kind);
    if (func != PTD_SUM_NONE)
        ((struct ptd_sum_func *)s->funcs.p)[func].calls++;
    if (kind == PTD_SUM_FN_IRQ)
        s->stats.irqs++;
    else if (kind != PTD_SUM_FN_ENTERED)
        s->stats.calls++;
    if (s->depth >= s->frames.cap) {
        /* deeper than the shadow stack: the frame is not kept; its return
         * is taken as such (lost_frames) and the work goes to the top */
        s->stats.depth_exceeded++;
        s->lost_frames++;
        obs_push(s, from, entry, kind);
        return;
    }
    struct ptd_sum_frame *parent = top(s);
    uint32_t pnode = parent ? parent->node : PTD_SUM_NONE;
    uint32_t node = PTD_SUM_NONE;
    if (pnode == PTD_SUM_NONE || nodes[pnode].depth + 1u < s->cfg.tree_depth)
        node = ptd_sum_node_get(s, pnode, func);
    if (node != PTD_SUM_NONE)
        nodes[node].calls++;
    else
        node = pnode; /* did not fit, or too deep: fold into the caller */
    fr[s->depth].from = from;
    fr[s->depth].func = func;
    fr[s->depth].node = node;
    fr[s->depth].irq = kind == PTD_SUM_FN_IRQ;
    fr[s->depth].left = 0;
    fr[s->depth].entered = kind == PTD_SUM_FN_ENTERED;
    s->depth++;
    if (s->depth > s->stats.max_depth)
        s->stats.max_depth = s->depth;
    obs_push(s, from, entry, kind);
}

/* Does a transfer to ip return behind frame f? A near return lands right
 * after the call (the longest instruction is 15 bytes, SDM Vol. 2 2.3.11);
 * an IRET or an enable at the interrupted IP itself, or just after it (a
 * fault's handler that steps over the faulting instruction). */
static int returns_to(const struct ptd_sum_frame *f, uint64_t ip, int irq)
{
    if (f->irq)
        return irq && ip - f->from < PTD_ILD_MAX_LEN;
    return !irq && ip - f->from - 1 < PTD_ILD_MAX_LEN;
}

/* Pops to the frame that ip returns behind; 1 if there was one. */
static int unwind(struct ptd_sum *s, uint64_t ip, int irq)
{
    struct ptd_sum_frame *fr = s->frames.p;
    for (uint32_t d = s->depth; d > 1; d--)
        if (returns_to(&fr[d - 1], ip, irq)) {
            s->depth = d - 1;
            s->lost_frames = 0;
            obs_depth(s);
            return 1;
        }
    return 0;
}

/* A frame for what left the traced code (a call or an interrupt whose
 * target is outside): code of the trace entered before it returns was
 * entered from outside (ENTERED). */
static void push_left(struct ptd_sum *s, uint64_t from, uint64_t entry, uint8_t kind)
{
    uint32_t depth = s->depth;
    push(s, from, entry, kind);
    if (s->depth > depth)
        ((struct ptd_sum_frame *)s->frames.p)[s->depth - 1].left = 1;
}

/* Some frame returns behind ip (a near return of a call that left). */
static int any_returns_to(const struct ptd_sum *s, uint64_t ip)
{
    const struct ptd_sum_frame *fr = s->frames.p;
    for (uint32_t d = s->depth; d > 1; d--)
        if (returns_to(&fr[d - 1], ip, 0))
            return 1;
    return 0;
}

static void do_return(struct ptd_sum *s, uint64_t to)
{
    struct ptd_sum_frame *t = top(s);
    if (s->lost_frames && !(t && t->from && returns_to(t, to, 0))) {
        s->lost_frames--; /* the return of a frame we could not keep */
        s->stats.returns++;
        obs_depth(s);
        return;
    }
    if (unwind(s, to, 0)) {
        s->stats.returns++;
        return;
    }
    s->stats.unmatched_returns++;
    if (s->depth > 1) {
        s->depth--; /* most likely our caller's frame anyway */
        obs_depth(s);
    } else {
        push_root(s, to); /* the root returned: into an unknown caller */
    }
}

/* ---- transitions -------------------------------------------------------- */

/* The branch at s->pend_from went to `to`. */
void ptd_sum_resolve(struct ptd_sum *s, uint64_t to)
{
    uint64_t from = s->pend_from;
    uint8_t ic = s->pend_iclass;
    s->pend = 0;
    ptd_sum_edge_add(s, from, to, ic);
    ptd_sum_ring_add(s, from, to, ic, 1);
    switch (ic) {
    case PTD_ICLASS_DIRECT_CALL:
    case PTD_ICLASS_INDIRECT_CALL: push(s, from, to, PTD_SUM_FN_CALL); break;
    case PTD_ICLASS_NEAR_RET: do_return(s, to); break;
    case PTD_ICLASS_FAR_TRANSFER:
        /* IRET back to where an interrupt came in; other far transfers
         * (mode switches, SYSCALL) stay in the frame */
        unwind(s, to, 1);
        break;
    default: break;
    }
}

/* Ends the open basic block (at a branch, an event or an error). */
static void close_block(struct ptd_sum *s, uint64_t last_ip)
{
    if (!s->lb_open)
        return;
    s->lb_open = 0;
    s->stats.blocks++;
    struct ptd_sum_block *b = ptd_sum_block_get(s, s->lb_ip);
    if (b) {
        b->count++;
        b->insns += s->lb_insns;
        b->last_ip = last_ip;
    }
}

/* The time that passed until tsc since the last block or event (0
 * without timing packets). */
static uint64_t take_time_at(struct ptd_sum *s, uint64_t tsc)
{
    uint64_t dt = 0;
    if (!tsc)
        return 0;
    if (!s->stats.has_time) {
        s->stats.has_time = 1;
        s->stats.tsc_first = tsc;
        s->stats.tsc_last = tsc; /* one time value: a span of 0 */
        s->cur_tsc = tsc;
    }
    /* time estimated from MTC/CYC may step back when a TSC corrects it:
     * count only time beyond the latest seen, so the ticks of all
     * functions add up to the span */
    if (tsc > s->cur_tsc) {
        dt = tsc - s->cur_tsc;
        s->cur_tsc = tsc;
        s->stats.tsc_last = tsc;
        s->stats.time_steps++;
    }
    return dt;
}

/* ... until the flow's time at a block. */
static uint64_t take_time(struct ptd_sum *s, struct ptd_flow *f)
{
    uint64_t tsc;
    if (!f || ptd_flow_time(f, &tsc, NULL, NULL) < 0)
        return 0;
    return take_time_at(s, tsc);
}

/* ... until an event's time (that of its packet; the flow may have read
 * ahead of it). */
static uint64_t take_event_time(struct ptd_sum *s, const struct ptd_event *ev)
{
    return (ev->flags & PTD_EVF_HAS_TSC) ? take_time_at(s, ev->tsc) : 0;
}

/* Tells the observer: n instructions at ip (0: time only), dt ticks, on
 * the frame on top. */
static void obs_insns(struct ptd_sum *s, uint64_t ip, uint64_t n, uint64_t dt)
{
    if (!s->cfg.obs || (!n && !dt))
        return;
    struct ptd_sum_obs ev = {
        .type = PTD_SUM_OBS_INSNS, .ip = ip, .n = n, .dt = dt, .depth = s->obs_depth
    };
    obs_send(s, &ev);
}

/* Work (instructions, time) of a function, tree node and image (each
 * PTD_SUM_NONE: none). */
static void charge_to(struct ptd_sum *s, uint32_t func, uint32_t node, uint32_t mod, uint64_t insns,
                      uint64_t dt)
{
    if (func != PTD_SUM_NONE) {
        struct ptd_sum_func *fn = &((struct ptd_sum_func *)s->funcs.p)[func];
        fn->insns += insns;
        fn->tsc += dt;
    }
    if (node != PTD_SUM_NONE) {
        struct ptd_sum_node *n = &((struct ptd_sum_node *)s->nodes.p)[node];
        n->insns += insns;
        n->tsc += dt;
    }
    if (mod != PTD_SUM_NONE) {
        struct ptd_sum_modstat *ms = &((struct ptd_sum_modstat *)s->mods.p)[mod];
        ms->insns += insns;
        ms->tsc += dt;
    }
}

/* The image slot of ip (the last slot: none; PTD_SUM_NONE: no table). */
static uint32_t module_slot(struct ptd_sum *s, uint64_t ip)
{
    if (!s->mods.cap)
        return PTD_SUM_NONE;
    uint32_t m = ptd_sum_module_of(s, ip);
    if (m == PTD_SUM_NONE || m >= s->mods.cap - 1u)
        m = s->mods.cap - 1u;
    return m;
}

/* The frame on top: its function and node, and the image of ip. */
static void charge(struct ptd_sum *s, uint64_t ip, uint64_t insns, uint64_t dt)
{
    struct ptd_sum_frame *t = top(s);
    charge_to(s, t ? t->func : PTD_SUM_NONE, t ? t->node : PTD_SUM_NONE, module_slot(s, ip), insns,
              dt);
}

/* a * b / c for b, c < 2^32 (weights), a any: no 128-bit arithmetic */
static uint64_t scale(uint64_t a, uint64_t b, uint64_t c)
{
    return (a / c) * b + ((a % c) * b) / c;
}

/* A clock step of dt ticks covers the blocks since the last one: each
 * function, node and image gets its share by instructions (the last the
 * rounding), so that a step does not all land on the block that happens
 * to come when the clock moves. */
static void spread_time(struct ptd_sum *s, uint64_t dt)
{
    uint64_t total = 0, given = 0;
    for (uint32_t i = 0; i < s->nspread; i++)
        total += s->spread[i].insns;
    for (uint32_t i = 0; i < s->nspread && total; i++) {
        const struct ptd_sum_spread *e = &s->spread[i];
        uint64_t share = i + 1 == s->nspread ? dt - given : scale(dt, e->insns, total);
        given += share;
        charge_to(s, e->func, e->node, e->mod, 0, share);
    }
    if (!total && dt)
        charge(s, s->last_ip, 0, dt);
    s->nspread = 0;
}

/* A block of insns instructions ran on the frame on top, in the image of
 * ip: it takes its share of the next clock step. */
static void spread_add(struct ptd_sum *s, uint64_t ip, uint64_t insns)
{
    struct ptd_sum_frame *t = top(s);
    uint32_t func = t ? t->func : PTD_SUM_NONE, node = t ? t->node : PTD_SUM_NONE;
    uint32_t mod = module_slot(s, ip);
    uint32_t w = insns > PTD_SUM_SPREAD_WEIGHT_MAX ? PTD_SUM_SPREAD_WEIGHT_MAX : (uint32_t)insns;
    struct ptd_sum_spread *e = s->nspread ? &s->spread[s->nspread - 1] : NULL;
    if (!e ||
        (s->nspread < PTD_SUM_SPREAD && (e->func != func || e->node != node || e->mod != mod))) {
        e = &s->spread[s->nspread++];
        e->func = func;
        e->node = node;
        e->mod = mod;
        e->insns = 0;
    }
    /* full: the last entry takes the rest (an approximation that only a
     * long run without time needs) */
    e->insns = e->insns + w > PTD_SUM_SPREAD_WEIGHT_MAX ? PTD_SUM_SPREAD_WEIGHT_MAX : e->insns + w;
}

static void on_block(struct ptd_sum *s, struct ptd_flow *f, const struct ptd_flow_block *blk)
{
    uint64_t ip = blk->ip;
    if (s->pend)
        ptd_sum_resolve(s, ip);
    else if (s->gap) {
        /* after an enable, overflow or resync: back behind a frame if ip
         * is where one returns: the interrupted IP of an interrupt that
         * left the traced code (exact), or after the call that did */
        s->gap = 0;
        if (!unwind(s, ip, 1) && unwind(s, ip, 0))
            s->stats.returns++;
    }
    if (!s->depth)
        push_root(s, ip);
    if (!s->lb_open) {
        s->lb_open = 1;
        s->lb_ip = ip;
        s->lb_insns = 0;
    }
    s->lb_insns += blk->ninsn;
    s->stats.insns += blk->ninsn;
    s->last_ip = blk->last_ip;

    charge(s, ip, blk->ninsn, 0);
    spread_add(s, ip, blk->ninsn);
    uint64_t dt = take_time(s, f);
    if (dt)
        spread_time(s, dt);
    /* the observer gets the clock's steps where they come (a timeline);
     * the tables share them among the blocks they cover */
    obs_insns(s, ip, blk->ninsn, dt);
    if (blk->last_iclass != PTD_ICLASS_OTHER && blk->last_iclass != PTD_FLOW_ICLASS_ERROR) {
        close_block(s, blk->last_ip);
        s->pend = 1;
        s->pend_from = blk->last_ip;
        s->pend_iclass = blk->last_iclass;
    }
}

static void on_event(struct ptd_sum *s, const struct ptd_event *ev)
{
    int ip_known = !(ev->flags & PTD_EVF_IP_SUPPRESSED);
    if (ev->flags & PTD_EVF_STATUS_UPDATE)
        return;
    switch (ev->type) {
    case PTD_EV_ASYNC_BRANCH:
        close_block(s, s->last_ip);
        if (s->pend)
            ptd_sum_resolve(s, ev->from);
        if (!s->depth)
            push_root(s, ev->from);
        ptd_sum_ring_add(s, ev->from, ev->ip, PTD_SUM_TR_IRQ, 1);
        push(s, ev->from, ev->ip, PTD_SUM_FN_IRQ);
        break;
    case PTD_EV_DISABLED:
    case PTD_EV_ASYNC_DISABLED:
        close_block(s, s->last_ip);
        s->stats.disables++;
        /* the time up to here is the traced code's, before any frame for
         * the call or interrupt that leaves it */
        {
            uint64_t dt = take_event_time(s, ev);
            spread_time(s, dt);
            obs_insns(s, s->last_ip, 0, dt);
        }
        /* an asynchronous disable stops before the instruction at from: the
         * branch before went there */
        if (s->pend && ev->type == PTD_EV_ASYNC_DISABLED)
            ptd_sum_resolve(s, ev->from);
        if (s->pend && (s->pend_iclass == PTD_ICLASS_DIRECT_CALL ||
                        s->pend_iclass == PTD_ICLASS_INDIRECT_CALL)) {
            /* a call out of the traced code: its return enables again */
            ptd_sum_ring_add(s, s->pend_from, ev->ip, PTD_SUM_TR_DISABLE, ip_known);
            push_left(s, s->pend_from, ip_known ? ev->ip : 0,
                      ip_known ? PTD_SUM_FN_CALL : PTD_SUM_FN_OUT);
        } else if (ev->type == PTD_EV_ASYNC_DISABLED && ip_known) {
            /* FUP + TIP.PGD(handler): an interrupt or exception whose
             * handler is outside the filter (SDM table "Packet Generation
             * under Different Enable Conditions", 11d, 13d; a WRMSR or a
             * context change suppresses the IP); its time until the
             * return (the enable at the FUP IP) is the handler's */
            if (!s->depth)
                push_root(s, ev->from);
            ptd_sum_ring_add(s, ev->from, ev->ip, PTD_SUM_TR_IRQ, 1);
            push_left(s, ev->from, ev->ip, PTD_SUM_FN_IRQ);
        } else {
            ptd_sum_ring_add(s, ev->type == PTD_EV_ASYNC_DISABLED ? ev->from : s->last_ip, ev->ip,
                             PTD_SUM_TR_DISABLE, ip_known);
            /* code entered from outside returns there: its frame ends */
            if (s->pend && s->pend_iclass == PTD_ICLASS_NEAR_RET && top(s) && top(s)->entered &&
                s->depth > 1) {
                s->depth--;
                obs_depth(s);
            }
        }
        s->pend = 0;
        s->gap = 1;
        obs_mark(s, PTD_SUM_TR_DISABLE, ev->offset, ip_known ? ev->ip : 0, 0);
        break;
    case PTD_EV_ENABLED:
        close_block(s, s->last_ip);
        s->stats.enables++;
        /* the time while disabled belongs to what left the traced code:
         * the call or the interrupt on top of the stack, and its image */
        {
            uint64_t dt = take_event_time(s, ev);
            struct ptd_sum_frame *t = top(s);
            s->nspread = 0; /* blocks before the disable had theirs */
            charge(s,
                   t && t->func != PTD_SUM_NONE ? ((struct ptd_sum_func *)s->funcs.p)[t->func].entry
                                                : 0,
                   0, dt);
            obs_insns(s, ev->ip, 0, dt);
        }
        obs_mark(s, PTD_SUM_TR_ENABLE, ev->offset, ev->ip, 0);
        ptd_sum_ring_add(s, 0, ev->ip, PTD_SUM_TR_ENABLE, 1);
        s->pend = 0;
        /* back where an interrupt left the traced code: that frame ends
         * here (before another interrupt at the same IP can come) */
        s->gap = !unwind(s, ev->ip, 1);
        /* in again while what left runs (not where a call out returns):
         * the code outside called into the trace */
        if (s->gap && top(s) && top(s)->left && !any_returns_to(s, ev->ip)) {
            push(s, 0, ev->ip, PTD_SUM_FN_ENTERED);
            s->gap = 0;
        }
        break;
    case PTD_EV_OVERFLOW:
        close_block(s, s->last_ip);
        if (s->stats.overflows < 4)
            s->gap_offset[s->stats.overflows] = ev->offset;
        s->stats.overflows++;
        ptd_sum_ring_add(s, 0, ev->ip, PTD_SUM_TR_OVERFLOW, ip_known);
        obs_mark(s, PTD_SUM_TR_OVERFLOW, ev->offset, ip_known ? ev->ip : 0, 0);
        s->pend = 0;
        s->gap = 1;
        break;
    default: break;
    }
}

static void on_error(struct ptd_sum *s, int code, uint64_t offset, int sync)
{
    close_block(s, s->last_ip);
    if (s->pend) {
        ptd_sum_ring_add(s, s->pend_from, 0, s->pend_iclass, 0);
        s->pend = 0;
    }
    ptd_sum_ring_add(s, s->last_ip, 0, PTD_SUM_TR_ERROR, 0);
    s->gap = 1;
    s->stats.errors++;
    obs_mark(s, PTD_SUM_TR_ERROR, offset, s->last_ip, code);
    if (!s->in_err) {
        s->in_err = 1; /* bytes from here to the next sync are skipped */
        s->err_off = offset;
    }
    if (s->nerr < PTD_SUM_ERRORS_KEPT) {
        struct ptd_sum_err *e = &s->err[s->nerr++];
        e->offset = offset;
        e->ip = s->last_ip;
        e->code = code;
        e->sync = (uint8_t)sync;
        e->has_resync = 0;
        e->resync = 0;
    }
}

/* ---- driver ------------------------------------------------------------- */

enum {
    PH_SYNC,
    PH_LOOP,
    PH_FAILED,
    PH_DONE
};

/* Where decoding went on after the last error (off): the bytes from the
 * error on were skipped. */
static void resynced(struct ptd_sum *s, uint64_t off)
{
    if (!s->in_err)
        return;
    s->in_err = 0;
    if (off > s->err_off)
        s->stats.bytes_skipped += off - s->err_off;
    if (s->nerr && !s->err[s->nerr - 1].has_resync && s->stats.errors == s->nerr) {
        s->err[s->nerr - 1].resync = off;
        s->err[s->nerr - 1].has_resync = 1;
    }
}

/* Is time fine enough to rank by (ptd_sum.h, PTD_SUM_TIME_*)? */
static void judge_time(struct ptd_sum *s)
{
    struct ptd_sum_stats *st = &s->stats;
    st->time_coarse = st->has_time && (st->time_steps < PTD_SUM_TIME_MIN_STEPS ||
                                       st->blocks > PTD_SUM_TIME_BLOCKS_PER_STEP * st->time_steps);
}

static void finish(struct ptd_sum *s)
{
    close_block(s, s->last_ip);
    if (s->pend) {
        /* the trace ended after this branch: where it went is unknown */
        ptd_sum_ring_add(s, s->pend_from, 0, s->pend_iclass, 0);
        s->pend = 0;
    }
    judge_time(s);
    s->stats.functions = s->funcs.used;
    s->stats.nodes = s->nodes.used;
    s->stats.untracked = s->funcs.dropped + s->nodes.dropped + s->blocks.dropped + s->edges.dropped;
}

int ptd_sum_decode(struct ptd_sum *s, struct ptd_flow *f, uint64_t budget)
{
    s->stats.bytes =
        f->q.pkt.end > f->q.pkt.begin ? (uint64_t)(f->q.pkt.end - f->q.pkt.begin) : s->stats.bytes;
    /* the call tree needs every branch: blocks end at direct calls and
     * jumps too (libipt's end-on-call/end-on-jump) */
    f->flags |= PTD_FLOW_F_END_ON_CALL | PTD_FLOW_F_END_ON_JUMP;
    for (uint64_t n = 0; n < budget; n++) {
        switch (s->phase) {
        case PH_DONE: return 0;
        case PH_SYNC: {
            s->st = ptd_flow_sync_forward(f);
            uint64_t off = ptd_flow_offset(f);
            if (s->st >= 0) {
                if (!s->synced) {
                    /* the bytes before the first PSB are skipped too (up
                     * to an error's, which resynced counts from); the
                     * flow's offset is past the PSB+ by now */
                    int64_t psb = ptd_psb_find(f->q.pkt.begin, (size_t)s->stats.bytes, 0);
                    s->synced = 1;
                    s->first_sync = psb >= 0 && (uint64_t)psb <= off ? (uint64_t)psb : off;
                    s->stats.bytes_skipped +=
                        s->in_err && s->err_off < s->first_sync ? s->err_off : s->first_sync;
                }
                resynced(s, off);
                s->phase = PH_LOOP;
                continue;
            }
            if (s->st == -PTD_ERR_EOS) {
                if (!s->synced) /* no PSB at all: every byte was skipped */
                    s->stats.bytes_skipped += s->in_err ? s->err_off : s->stats.bytes;
                resynced(s, s->stats.bytes);
                s->phase = PH_DONE;
                finish(s);
                return 0;
            }
            /* no progress since the last failed sync: give up, as the flow
             * driver (ptd_fmt_flow.c) does */
            if (s->have_sync && off <= s->sync_off)
                s->phase = PH_DONE;
            s->sync_off = off;
            s->have_sync = 1;
            on_error(s, s->st, off, 1);
            if (s->phase == PH_DONE) {
                if (!s->synced)
                    s->stats.bytes_skipped += s->in_err ? s->err_off : s->stats.bytes;
                resynced(s, s->stats.bytes);
                finish(s);
                return 0;
            }
            continue;
        }
        case PH_LOOP:
            if (s->st >= 0 && (s->st & PTD_ST_EVENT)) {
                struct ptd_event ev;
                s->st = ptd_flow_event(f, &ev);
                if (s->st >= 0)
                    on_event(s, &ev);
                continue;
            }
            if (s->st < 0) {
                s->phase = PH_FAILED;
                continue;
            }
            if (s->st & PTD_ST_EOS) {
                s->phase = PH_DONE;
                if (s->cfg.flags & PTD_SUM_F_TAIL)
                    ptd_sum_tail(s, f, s->st);
                finish(s);
                return 0;
            }
            {
                struct ptd_flow_block blk;
                s->st = ptd_flow_next_block(f, &blk);
                if (blk.ninsn)
                    on_block(s, f, &blk);
            }
            continue;
        case PH_FAILED:
        default:
            if (s->st == 0)
                s->st = -PTD_ERR_INTERNAL;
            if (s->st == -PTD_ERR_EOS) {
                s->phase = PH_DONE;
                if (s->cfg.flags & PTD_SUM_F_TAIL)
                    ptd_sum_tail(s, f, s->st);
                finish(s);
                return 0;
            }
            on_error(s, s->st, ptd_flow_offset(f), 0);
            s->phase = PH_SYNC;
            continue;
        }
    }
    return 1;
}

const struct ptd_sum_stats *ptd_sum_run(struct ptd_sum *s, const struct ptd_sum_config *cfg,
                                        struct ptd_flow *f)
{
    ptd_sum_init(s, cfg);
    /* every step consumes trace or ends it; the budget only bounds a call */
    while (ptd_sum_decode(s, f, (uint64_t)1 << 20) > 0)
        ;
    ptd_sum_print(s);
    return &s->stats;
}
