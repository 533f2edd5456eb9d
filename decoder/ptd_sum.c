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
    s->in_err = 0;
    s->sync_off = s->last_ip = s->err_off = 0;
    s->st = 0;
    s->cur_tsc = 0;
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
    st->has_time = 0;
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
    struct ptd_sum_obs ev = { .type = PTD_SUM_OBS_PUSH, .fkind = kind, .entry = entry, .from = from };
    s->obs_depth = s->depth + s->lost_frames;
    ev.depth = s->obs_depth;
    obs_send(s, &ev);
}

static void obs_mark(struct ptd_sum *s, uint32_t mark, uint64_t offset, uint64_t ip, int code)
{
    if (!s->cfg.obs)
        return;
    struct ptd_sum_obs ev = { .type = PTD_SUM_OBS_MARK, .mark = mark, .offset = offset, .ip = ip,
                              .code = code, .depth = s->obs_depth };
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
    else
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
        node = pnode;           /* did not fit, or too deep: fold into the caller */
    fr[s->depth].from = from;
    fr[s->depth].func = func;
    fr[s->depth].node = node;
    fr[s->depth].irq = kind == PTD_SUM_FN_IRQ;
    s->depth++;
    if (s->depth > s->stats.max_depth)
        s->stats.max_depth = s->depth;
    obs_push(s, from, entry, kind);
}

/* Does a transfer to ip return behind frame f? A near return lands right
 * after the call (the longest instruction is 15 bytes, SDM Vol. 2 2.3.11);
 * an IRET or an enable at the interrupted IP itself. */
static int returns_to(const struct ptd_sum_frame *f, uint64_t ip, int irq)
{
    if (f->irq)
        return irq && ip == f->from;
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

static void do_return(struct ptd_sum *s, uint64_t to)
{
    struct ptd_sum_frame *t = top(s);
    if (s->lost_frames && !(t && t->from && returns_to(t, to, 0))) {
        s->lost_frames--;       /* the return of a frame we could not keep */
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
        s->depth--;             /* most likely our caller's frame anyway */
        obs_depth(s);
    } else {
        push_root(s, to);       /* the root returned: into an unknown caller */
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
    case PTD_ICLASS_INDIRECT_CALL:
        push(s, from, to, PTD_SUM_FN_CALL);
        break;
    case PTD_ICLASS_NEAR_RET:
        do_return(s, to);
        break;
    case PTD_ICLASS_FAR_TRANSFER:
        /* IRET back to where an interrupt came in; other far transfers
         * (mode switches, SYSCALL) stay in the frame */
        unwind(s, to, 1);
        break;
    default:
        break;
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

static void on_block(struct ptd_sum *s, struct ptd_flow *f, const struct ptd_flow_block *blk)
{
    uint64_t ip = blk->ip;
    if (s->pend)
        ptd_sum_resolve(s, ip);
    else if (s->gap) {
        /* after an enable, overflow or resync: back behind a frame if ip
         * is where one returns (the call that left the traced code) */
        s->gap = 0;
        if (unwind(s, ip, 0))
            s->stats.returns++;
        else
            unwind(s, ip, 1);
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

    uint64_t dt = 0;
    if (f) {
        uint64_t tsc;
        if (ptd_flow_time(f, &tsc, NULL, NULL) >= 0 && tsc) {
            if (!s->stats.has_time) {
                s->stats.has_time = 1;
                s->stats.tsc_first = tsc;
                s->stats.tsc_last = tsc;    /* one time value: a span of 0 */
                s->cur_tsc = tsc;
            }
            /* time estimated from MTC/CYC may step back when a TSC
             * corrects it: count only time beyond the latest seen, so the
             * ticks of all functions add up to the span */
            if (tsc > s->cur_tsc) {
                dt = tsc - s->cur_tsc;
                s->cur_tsc = tsc;
                s->stats.tsc_last = tsc;
            }
        }
    }
    struct ptd_sum_frame *t = top(s);
    if (t && t->func != PTD_SUM_NONE) {
        struct ptd_sum_func *fn = &((struct ptd_sum_func *)s->funcs.p)[t->func];
        fn->insns += blk->ninsn;
        fn->tsc += dt;
    }
    if (t && t->node != PTD_SUM_NONE) {
        struct ptd_sum_node *n = &((struct ptd_sum_node *)s->nodes.p)[t->node];
        n->insns += blk->ninsn;
        n->tsc += dt;
    }
    if (s->cfg.obs) {
        struct ptd_sum_obs ev = { .type = PTD_SUM_OBS_INSNS, .ip = ip, .n = blk->ninsn, .dt = dt,
                                  .depth = s->obs_depth };
        obs_send(s, &ev);
    }
    if (s->mods.cap) {
        uint32_t m = ptd_sum_module_of(s, ip);
        if (m == PTD_SUM_NONE || m >= s->mods.cap - 1u)
            m = s->mods.cap - 1u;   /* the last slot: no module */
        struct ptd_sum_modstat *ms = &((struct ptd_sum_modstat *)s->mods.p)[m];
        ms->insns += blk->ninsn;
        ms->tsc += dt;
    }
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
        /* an asynchronous disable stops before the instruction at from: the
         * branch before went there */
        if (s->pend && ev->type == PTD_EV_ASYNC_DISABLED)
            ptd_sum_resolve(s, ev->from);
        if (s->pend && (s->pend_iclass == PTD_ICLASS_DIRECT_CALL ||
                        s->pend_iclass == PTD_ICLASS_INDIRECT_CALL)) {
            /* a call out of the traced code: its return enables again */
            ptd_sum_ring_add(s, s->pend_from, ev->ip, PTD_SUM_TR_DISABLE, ip_known);
            push(s, s->pend_from, ip_known ? ev->ip : 0,
                 ip_known ? PTD_SUM_FN_CALL : PTD_SUM_FN_OUT);
        } else {
            ptd_sum_ring_add(s, ev->type == PTD_EV_ASYNC_DISABLED ? ev->from : s->last_ip, ev->ip,
                     PTD_SUM_TR_DISABLE, ip_known);
        }
        s->pend = 0;
        s->gap = 1;
        obs_mark(s, PTD_SUM_TR_DISABLE, ev->offset, ip_known ? ev->ip : 0, 0);
        break;
    case PTD_EV_ENABLED:
        close_block(s, s->last_ip);
        s->stats.enables++;
        obs_mark(s, PTD_SUM_TR_ENABLE, ev->offset, ev->ip, 0);
        ptd_sum_ring_add(s, 0, ev->ip, PTD_SUM_TR_ENABLE, 1);
        s->pend = 0;
        s->gap = 1;
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
    default:
        break;
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
        s->in_err = 1;      /* bytes from here to the next sync are skipped */
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

enum { PH_SYNC, PH_LOOP, PH_FAILED, PH_DONE };

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

static void finish(struct ptd_sum *s)
{
    close_block(s, s->last_ip);
    if (s->pend) {
        /* the trace ended after this branch: where it went is unknown */
        ptd_sum_ring_add(s, s->pend_from, 0, s->pend_iclass, 0);
        s->pend = 0;
    }
    s->stats.functions = s->funcs.used;
    s->stats.nodes = s->nodes.used;
    s->stats.untracked = s->funcs.dropped + s->nodes.dropped + s->blocks.dropped +
                         s->edges.dropped;
}

int ptd_sum_decode(struct ptd_sum *s, struct ptd_flow *f, uint64_t budget)
{
    s->stats.bytes = f->q.pkt.end > f->q.pkt.begin
                         ? (uint64_t)(f->q.pkt.end - f->q.pkt.begin) : s->stats.bytes;
    /* the call tree needs every branch: blocks end at direct calls and
     * jumps too (libipt's end-on-call/end-on-jump) */
    f->flags |= PTD_FLOW_F_END_ON_CALL | PTD_FLOW_F_END_ON_JUMP;
    for (uint64_t n = 0; n < budget; n++) {
        switch (s->phase) {
        case PH_DONE:
            return 0;
        case PH_SYNC: {
            s->st = ptd_flow_sync_forward(f);
            uint64_t off = ptd_flow_offset(f);
            if (s->st >= 0) {
                resynced(s, off);
                s->phase = PH_LOOP;
                continue;
            }
            if (s->st == -PTD_ERR_EOS) {
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
