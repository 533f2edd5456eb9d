/* libptd instruction-flow layer: events. Where each event binds (the walk
 * to it), which events bind where the flow stands (trailing events), what
 * taking one does to the flow, synchronisation and resynchronisation.
 * The rules are current libipt's block decoder's (docs/flow.md). */
#include "decoder/ptd_flow_impl.h"

int ptd_flow_status(const struct ptd_flow *f, int flags)
{
    if (!f->enabled)
        flags |= PTD_ST_IP_SUPPRESSED;
    if (f->status == -PTD_ERR_EOS)
        flags |= PTD_ST_EOS;
    return flags;
}

/* ---- TRIG anchors ---------------------------------------------------------- */

/* After an event with an IP the flow can count instructions from it for a
 * TRIG's ICNT (SDM: "an instruction count from the last IP packet"); a
 * disable ends the count. (A TNT or TIP with its IP, most events: in
 * ptd_flow_event_done.) */
int ptd_flow_trig_anchor(struct ptd_flow *f, const struct ptd_event *ev)
{
    bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    switch (ev->type) {
    case PTD_EV_PAGING:
    case PTD_EV_SIPI:
    case PTD_EV_CBR:
    case PTD_EV_MNT:
    case PTD_EV_STOP:
    case PTD_EV_VMCS:
    case PTD_EV_MWAIT:
    case PTD_EV_PWRE:
    case PTD_EV_PWRX: return 0;
    case PTD_EV_ENABLED:
    case PTD_EV_ASYNC_BRANCH:
    case PTD_EV_TIP:
    case PTD_EV_TNT:
        if (nip)
            return -PTD_ERR_INTERNAL;
        break;
    case PTD_EV_DISABLED:
    case PTD_EV_ASYNC_DISABLED:
        f->has_icnt = 0;
        f->icnt = 0;
        return 0;
    case PTD_EV_OVERFLOW:
        if (nip) {
            f->has_icnt = 0;
            f->icnt = 0;
            return 0;
        }
        break;
    case PTD_EV_EXEC_MODE:
    case PTD_EV_TSX:
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS:
    case PTD_EV_EXSTOP:
    case PTD_EV_PTWRITE:
    case PTD_EV_TICK:
    case PTD_EV_IFLAGS:
    case PTD_EV_INTERRUPT:
    case PTD_EV_IRET:
    case PTD_EV_SMI:
    case PTD_EV_RSM:
    case PTD_EV_INIT:
    case PTD_EV_VMENTRY:
    case PTD_EV_VMEXIT:
    case PTD_EV_SHUTDOWN:
    case PTD_EV_UINTR:
    case PTD_EV_UIRET:
    case PTD_EV_TRIG:
    case PTD_EV_SWINTR:
    case PTD_EV_SYSCALL:
        if (nip)
            return 0;
        break;
    default: return -PTD_ERR_INTERNAL;
    }
    f->has_icnt = 1;
    f->icnt = 0;
    return 0;
}

int ptd_flow_fetch_event(struct ptd_flow *f)
{
    return ptd_flow_fetch_event_inline(f);
}

/* ---- the postponed instruction --------------------------------------------- */

/* Events bind to the instruction p (more may follow): keep it, and go past
 * it once they are all out. */
static int postpone_insn(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    if (f->process_insn)
        return -PTD_ERR_INTERNAL;
    f->process_insn = 1;
    f->pinsn = *p;
    return ptd_flow_status(f, PTD_ST_EVENT);
}

static void clear_postponed(struct ptd_flow *f)
{
    f->process_insn = 0;
    f->bound = 0;
}

static int proceed_postponed(struct ptd_flow *f)
{
    int r;
    if (!f->process_insn)
        return 0;
    if (!f->enabled) {
        clear_postponed(f);
        return 0;
    }
    r = ptd_flow_next_ip(&f->pinsn, &f->ip);
    if (r < 0) {
        if (r != -PTD_ERR_BAD_QUERY)
            return r;
        r = ptd_flow_proceed_with_trace(f, &f->pinsn);
        if (r < 0)
            return r;
    }
    clear_postponed(f);
    return 0;
}

/* ---- walking to an event --------------------------------------------------- */

/* Which instructions an event binds to (tested on the instruction just
 * added to the block). */
enum pred {
    P_NONE, /* none: walk until trace is needed */
    P_PIP,  /* MOV CR3, VM entry, far transfer */
    P_VMCS, /* VMPTRLD, VM entry, far transfer */
    P_CR3,  /* MOV CR3 */
    P_PTWRITE,
    P_IRET,
    P_VMENTRY,
    P_UIRET,
    P_SWINT,
    P_SYSCALL,
    P_SKL014, /* a direct jump/call or MOV CR3 (SKL014) */
};

static bool matches(struct ptd_flow *f, struct ptd_flow_pinsn *p, enum pred pred)
{
    unsigned k;
    switch (pred) {
    case P_NONE: return false;
    case P_SKL014:
        if ((p->iclass == PTD_ICLASS_DIRECT_JUMP || p->iclass == PTD_ICLASS_DIRECT_CALL) &&
            p->direct)
            return true;
        return p->iclass == PTD_ICLASS_OTHER && (ptd_flow_kind(f, p) & PTD_FLOW_K_MOV_CR3);
    default: break;
    }
    k = ptd_flow_kind(f, p);
    switch (pred) {
    case P_PIP:
        return p->iclass == PTD_ICLASS_FAR_TRANSFER ||
               (k & (PTD_FLOW_K_MOV_CR3 | PTD_FLOW_K_VMENTRY));
    case P_VMCS:
        return p->iclass == PTD_ICLASS_FAR_TRANSFER ||
               (k & (PTD_FLOW_K_VMPTRLD | PTD_FLOW_K_VMENTRY));
    case P_CR3: return (k & PTD_FLOW_K_MOV_CR3) != 0;
    case P_PTWRITE: return (k & PTD_FLOW_K_PTWRITE) != 0;
    case P_IRET: return (k & PTD_FLOW_K_IRET) != 0;
    case P_VMENTRY: return (k & PTD_FLOW_K_VMENTRY) != 0;
    case P_UIRET: return (k & PTD_FLOW_K_UIRET) != 0;
    case P_SWINT: return (k & PTD_FLOW_K_SWINT) != 0;
    case P_SYSCALL: return (k & PTD_FLOW_K_SYSCALL) != 0;
    default: return false;
    }
}

/* With the options, a block also ends after a direct call or jump. */
static bool ends_block(const struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    return ((f->flags & PTD_FLOW_F_END_ON_CALL) &&
            (p->iclass == PTD_ICLASS_DIRECT_CALL || p->iclass == PTD_ICLASS_INDIRECT_CALL)) ||
           ((f->flags & PTD_FLOW_F_END_ON_JUMP) &&
            (p->iclass == PTD_ICLASS_DIRECT_JUMP || p->iclass == PTD_ICLASS_INDIRECT_JUMP));
}

/* Walk to the first instruction pred matches (it is the block's last, the
 * flow at it): 1 there, 0 the block ended first, -PTD_ERR_BAD_QUERY at an
 * instruction that needs trace (*p, the flow at it), or another error. */
static int to_insn(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                   enum pred pred)
{
    /* bounded: each round adds an instruction to the block */
    for (;;) {
        int r = ptd_flow_one_insn(f, blk, p);
        if (r <= 0)
            return r;
        if (matches(f, p, pred))
            return 1;
        r = ptd_flow_next_ip(p, &f->ip);
        if (r < 0)
            return r;
        if (ends_block(f, p))
            return 0;
    }
}

/* Walk to ip (*p: the instruction before it): 1 there, 0 the block ended
 * first, -PTD_ERR_BAD_QUERY at an instruction that needs trace, or another
 * error. */
static int to_ip(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                 uint64_t ip)
{
    for (;;) {
        int r;
        /* the instructions that need nothing the quick way, and the one
         * after them when it decoded it */
        if (!ptd_flow_walk_plain(f, blk, p, ip)) {
            if (f->ip == ip)
                return 1;
            r = ptd_flow_one_insn(f, blk, p);
            if (r <= 0)
                return r;
        }
        r = ptd_flow_next_ip(p, &f->ip);
        if (r < 0)
            return r;
        if (ends_block(f, p))
            return f->ip == ip ? 1 : 0;
    }
}

/* SKL014: a TIP.PGD without IP may come from a direct jump/call that left
 * the filter (or went into a TraceStop region): with a filter, the one
 * whose target lies outside binds it, or a MOV CR3. */
static int to_skl014(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p)
{
    for (;;) {
        uint64_t ip;
        int r = to_insn(f, blk, p, P_SKL014);
        if (r <= 0)
            return r;
        if (ptd_flow_kind(f, p) & PTD_FLOW_K_MOV_CR3)
            return r;
        r = ptd_flow_next_ip(p, &ip);
        if (r < 0)
            return r;
        if (!ptd_flow_in_filter(f, ip))
            return 1;
        f->ip = ip;
        if (ends_block(f, p))
            return 0;
    }
}

static int to_disabled(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                       const struct ptd_event *ev)
{
    if (!(ev->flags & PTD_EVF_IP_SUPPRESSED))
        return to_ip(f, blk, p, ev->ip);
    /* without a filter configuration the erratum cannot apply (and would
     * disable too early) */
    if (f->nfilter && (f->errata & PTD_ERRATUM_SKL014))
        return to_skl014(f, blk, p);
    /* a far transfer or CPL change would need trace: found by the walk */
    return to_insn(f, blk, p, P_CR3);
}

/* Where tracing is expected to resume after a disable at p: after a call,
 * its return address; else unknown. */
static void disable_resume_ip(struct ptd_flow *f, struct ptd_flow_pinsn *p)
{
    if (p->iclass == PTD_ICLASS_DIRECT_CALL || p->iclass == PTD_ICLASS_INDIRECT_CALL ||
        (p->iclass == PTD_ICLASS_FAR_TRANSFER && (ptd_flow_kind(f, p) & PTD_FLOW_K_FAR_CALL)))
        f->ip = p->ip + p->size;
    else
        f->ip = 0;
}

/* An instruction-bound event (PTWRITE, IRET, VM entry, UIRET): without an
 * IP the next such instruction, else the one at its IP; walked past. */
static int to_bound_insn(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                         const struct ptd_event *ev, enum pred pred)
{
    int r;
    if (ev->flags & PTD_EVF_IP_SUPPRESSED)
        return to_insn(f, blk, p, pred);
    r = to_ip(f, blk, p, ev->ip);
    if (r <= 0)
        return r;
    return ptd_flow_one_insn(f, blk, p);
}

/* TRIG: ICNT instructions from the anchor (the last IP packet); the event
 * keeps its progress for when the block runs full on the way. */
static int provide_trig_anchor(struct ptd_flow *f, struct ptd_event *ev)
{
    if (ev->flags & PTD_EVF_IP_SUPPRESSED)
        return -PTD_ERR_INTERNAL;
    if (ev->ip)
        return 0;
    if (!f->has_icnt || ev->aux < f->icnt)
        return -PTD_ERR_BAD_PACKET;
    ev->aux -= f->icnt;
    ev->ip = f->ip;
    return 0;
}

static int to_trig(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                   struct ptd_event *ev)
{
    int r;
    if (ev->flags & PTD_EVF_IP_SUPPRESSED)
        return 1;
    r = provide_trig_anchor(f, ev);
    if (r < 0)
        return r;
    /* with tracing off the IP is already the trigger's */
    if (!f->enabled)
        return ev->aux ? 1 : -PTD_ERR_INTERNAL;
    r = to_ip(f, blk, p, ev->ip);
    if (r <= 0)
        return r;
    while (ev->aux) {
        r = ptd_flow_one_insn(f, blk, p);
        if (r <= 0)
            return r;
        r = ptd_flow_next_ip(p, &f->ip);
        if (r < 0)
            return r;
        ev->ip = f->ip;
        ev->aux--;
    }
    return 1;
}

/* SKD022: an asynchronous disable at VMLAUNCH/VMRESUME may come from a
 * bogus FUP: taken as a disable after the instruction. 1 if so (the event
 * changed), 0 if not. */
static int skd022(struct ptd_flow *f, struct ptd_event *ev)
{
    struct ptd_flow_pinsn p;
    uint64_t ip = f->ip;
    int r;
    f->ip = ev->from;
    r = ptd_flow_decode(f, &p);
    f->ip = ip;
    if (r < 0 || !(ptd_flow_kind(f, &p) & PTD_FLOW_K_VMENTRY))
        return 0;
    ev->type = PTD_EV_DISABLED;
    return 1;
}

int ptd_flow_proceed_event(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct ptd_event *ev = &f->ev;
    struct ptd_flow_pinsn p;
    bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    int r;

    p.iclass = PTD_FLOW_ICLASS_ERROR;
    p.kind_known = 1;
    p.kind = 0;
    p.ip = p.target = 0;
    p.size = p.direct = p.zero_disp = 0;
    switch (ev->type) {
    case PTD_EV_ENABLED:
    case PTD_EV_OVERFLOW:
    case PTD_EV_STOP:
    case PTD_EV_PWRE:
    case PTD_EV_PWRX:
    case PTD_EV_TICK:
    case PTD_EV_CBR:
    case PTD_EV_MNT:
    case PTD_EV_RSM:
    case PTD_EV_SIPI: break;
    case PTD_EV_DISABLED:
        if (ev->flags & PTD_EVF_STATUS_UPDATE)
            break;
        r = to_disabled(f, blk, &p, ev);
        if (r <= 0) {
            /* it also binds to the next branch that needs trace */
            if (r != -PTD_ERR_BAD_QUERY)
                return r;
            disable_resume_ip(f, &p);
        }
        break;
    case PTD_EV_ASYNC_DISABLED:
        r = to_ip(f, blk, &p, ev->from);
        if (r <= 0)
            return r;
        if ((f->errata & PTD_ERRATUM_SKD022) && skd022(f, ev))
            return ptd_flow_proceed_event(f, blk);
        break;
    case PTD_EV_ASYNC_BRANCH:
        r = to_ip(f, blk, &p, ev->from);
        if (r <= 0)
            return r;
        break;
    case PTD_EV_PAGING:
    case PTD_EV_VMCS:
        if (!f->enabled)
            break;
        r = to_insn(f, blk, &p, ev->type == PTD_EV_PAGING ? P_PIP : P_VMCS);
        if (r <= 0)
            return r;
        f->bound |= ev->type == PTD_EV_PAGING ? PTD_FLOW_B_PAGING : PTD_FLOW_B_VMCS;
        return postpone_insn(f, &p);
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
        if (!f->enabled || nip)
            break;
        r = to_ip(f, blk, &p, ev->ip);
        if (r <= 0)
            return r;
        break;
    case PTD_EV_PTWRITE:
    case PTD_EV_IRET:
    case PTD_EV_VMENTRY:
    case PTD_EV_UIRET: {
        static const struct {
            uint8_t type, pred, bound;
        } k[] = {
            { PTD_EV_PTWRITE, P_PTWRITE, PTD_FLOW_B_PTWRITE },
            { PTD_EV_IRET, P_IRET, PTD_FLOW_B_IRET },
            { PTD_EV_VMENTRY, P_VMENTRY, PTD_FLOW_B_VMENTRY },
            { PTD_EV_UIRET, P_UIRET, PTD_FLOW_B_UIRET },
        };
        unsigned i = 0;
        if (!f->enabled)
            break;
        while (k[i].type != ev->type)
            i++;
        r = to_bound_insn(f, blk, &p, ev, (enum pred)k[i].pred);
        if (r <= 0)
            return r;
        f->bound |= k[i].bound;
        return postpone_insn(f, &p);
    }
    case PTD_EV_SWINTR:
    case PTD_EV_SYSCALL:
        /* not walked past: an asynchronous branch (or TIP) at the
         * instruction may follow */
        if (!f->enabled)
            break;
        if (nip)
            r = to_insn(f, blk, &p, ev->type == PTD_EV_SWINTR ? P_SWINT : P_SYSCALL);
        else
            r = to_ip(f, blk, &p, ev->ip);
        if (r <= 0)
            return r;
        f->bound |= ev->type == PTD_EV_SWINTR ? PTD_FLOW_B_SWINTR : PTD_FLOW_B_SYSCALL;
        return postpone_insn(f, &p);
    case PTD_EV_TRIG:
        r = to_trig(f, blk, &p, ev);
        if (r <= 0)
            return r;
        break;
    case PTD_EV_TIP:
    case PTD_EV_TNT: return -PTD_ERR_INTERNAL;
    default:
        /* ASYNC_PAGING, ASYNC_VMCS, EXEC_MODE, TSX, IFLAGS, INTERRUPT, SMI,
         * INIT, VMEXIT, SHUTDOWN, UINTR: at their IP, when they have one */
        if (nip)
            break;
        r = to_ip(f, blk, &p, ev->ip);
        if (r <= 0)
            return r;
        break;
    }
    return ptd_flow_status(f, PTD_ST_EVENT);
}

/* ---- trailing events -------------------------------------------------------- */

/* An event bound to an instruction kind: pending now when it binds to the
 * postponed instruction (once per kind), or when tracing is off; 0 when
 * the normal event flow reaches it later. */
static int bound_kind_here(struct ptd_flow *f, const struct ptd_event *ev, unsigned bound,
                           enum pred pred, bool needs_no_ip)
{
    if (!f->enabled)
        return 1;
    if (!f->process_insn || (f->bound & bound))
        return 0;
    if (needs_no_ip && !(ev->flags & PTD_EVF_IP_SUPPRESSED))
        return 0;
    if (!matches(f, &f->pinsn, pred))
        return 0;
    f->bound |= bound;
    return 1;
}

/* BDM64: a TSX abort right after a branch that needed trace may have
 * corrupted that branch's trace. When the abort's IP cannot be reached
 * from where the branch went by at most BDM64_MAX_STEPS instructions that
 * need no trace, the branch went to the abort's IP. */
#define BDM64_MAX_STEPS 0x100
static void bdm64(struct ptd_flow *f, const struct ptd_flow_block *blk, const struct ptd_event *ev)
{
    struct ptd_flow_pinsn p;
    uint64_t save = f->ip;
    int r;
    if (!(ev->flags & PTD_EVF_ABORTED) || !blk->ninsn)
        return;
    f->ip = blk->last_ip;
    r = ptd_flow_decode(f, &p);
    f->ip = save;
    if (r < 0 || p.iclass == PTD_ICLASS_OTHER)
        return;
    for (unsigned i = 0;; i++) {
        if (f->ip == ev->ip) {
            f->ip = save;
            return;
        }
        if (i == BDM64_MAX_STEPS || ptd_flow_decode(f, &p) < 0 || ptd_flow_next_ip(&p, &f->ip) < 0)
            break;
    }
    f->ip = ev->ip;
}

/* Where the event ahead stands against the flow, stage by stage of
 * ptd_flow_trailing: */
enum here {
    NOT_HERE = 0,   /* it binds later: the next block walks there */
    HERE = 1,       /* it binds here: report it */
    NEXT_EVENT = 2, /* used up (a TNT's last bit): look at the next */
};

/* A TNT: a tick on the first bit used, when asked for, in a block (not
 * after an event), where the time moved; the next event when all its bits
 * are used. */
static int trailing_tnt(struct ptd_flow *f, const struct ptd_event *ev,
                        const struct ptd_flow_block *blk)
{
    if (!(f->flags & PTD_FLOW_F_TICK) || !blk || !(ev->flags & PTD_EVF_HAS_TSC) ||
        ev->tsc == f->tsc) {
        if (ev->a)
            return NOT_HERE;
        int r = ptd_flow_fetch_event(f);
        return r < 0 ? r : NEXT_EVENT;
    }
    /* not when the block had to end before the branch */
    if (blk->last_iclass != PTD_ICLASS_COND_JUMP && blk->last_iclass != PTD_ICLASS_NEAR_RET)
        return NOT_HERE;
    return HERE;
}

/* TIP.PGD: at the instruction held (a MOV CR3 when its IP is suppressed,
 * else the next branch that needs trace, or the one going to its IP). */
static int trailing_disabled(struct ptd_flow *f, const struct ptd_event *ev)
{
    bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    int r;
    if (!f->process_insn)
        return (ev->flags & PTD_EVF_STATUS_UPDATE) ? HERE : NOT_HERE;
    if (nip && (ptd_flow_kind(f, &f->pinsn) & PTD_FLOW_K_MOV_CR3))
        return HERE;
    r = ptd_flow_next_ip(&f->pinsn, &f->ip);
    if (r < 0) {
        if (r != -PTD_ERR_BAD_QUERY)
            return r;
        disable_resume_ip(f, &f->pinsn);
        return HERE;
    }
    clear_postponed(f);
    return (!nip && f->ip == ev->ip) ? HERE : NOT_HERE;
}

/* An asynchronous branch or disable: where it came from. */
static int trailing_async(struct ptd_flow *f, struct ptd_event *ev)
{
    int r = proceed_postponed(f);
    if (r < 0)
        return r;
    if (f->ip != ev->from)
        return NOT_HERE;
    /* SKD022 changes a disable into one taken on the next walk */
    if (ev->type == PTD_EV_ASYNC_DISABLED && (f->errata & PTD_ERRATUM_SKD022) && skd022(f, ev))
        return NOT_HERE;
    return HERE;
}

/* The events that bind to a kind of instruction: the kind, the bit that
 * says one is bound already, and whether they bind without an IP. */
static const struct {
    uint8_t type, bound, pred, needs_no_ip;
} insn_bound[] = {
    { PTD_EV_PAGING, PTD_FLOW_B_PAGING, P_PIP, false },
    { PTD_EV_VMCS, PTD_FLOW_B_VMCS, P_VMCS, false },
    { PTD_EV_PTWRITE, PTD_FLOW_B_PTWRITE, P_PTWRITE, true },
    { PTD_EV_IRET, PTD_FLOW_B_IRET, P_IRET, true },
    { PTD_EV_VMENTRY, PTD_FLOW_B_VMENTRY, P_VMENTRY, true },
    { PTD_EV_UIRET, PTD_FLOW_B_UIRET, P_UIRET, true },
    { PTD_EV_SWINTR, PTD_FLOW_B_SWINTR, P_SWINT, true },
    { PTD_EV_SYSCALL, PTD_FLOW_B_SYSCALL, P_SYSCALL, true },
};

/* The events that bind to no instruction (past the one held first): at
 * their IP, or at once. */
static int trailing_unbound(struct ptd_flow *f, struct ptd_event *ev, struct ptd_flow_block *blk)
{
    bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    int r = proceed_postponed(f);
    if (r < 0)
        return r;
    switch (ev->type) {
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS: return (!nip && f->ip != ev->ip) ? NOT_HERE : HERE;
    case PTD_EV_EXEC_MODE:
        /* with Event Trace a mode change may come with tracing off */
        return (f->enabled && !nip && f->ip != ev->ip) ? NOT_HERE : HERE;
    case PTD_EV_TSX:
        if (nip)
            return HERE;
        if (blk && (f->errata & PTD_ERRATUM_BDM64))
            bdm64(f, blk, ev);
        return f->ip != ev->ip ? NOT_HERE : HERE;
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
    case PTD_EV_IFLAGS:
    case PTD_EV_INTERRUPT:
    case PTD_EV_SMI:
    case PTD_EV_INIT:
    case PTD_EV_VMEXIT:
    case PTD_EV_SHUTDOWN:
    case PTD_EV_UINTR: return (f->enabled && !nip && f->ip != ev->ip) ? NOT_HERE : HERE;
    case PTD_EV_RSM:
    case PTD_EV_SIPI: return nip ? HERE : -PTD_ERR_INTERNAL;
    case PTD_EV_TRIG:
        /* placed precisely only with tracing on and an IP */
        if (!f->enabled || nip)
            return HERE;
        r = provide_trig_anchor(f, ev);
        if (r < 0)
            return r;
        if (ev->aux)
            return NOT_HERE; /* the walk goes there */
        return ev->ip != f->ip ? -PTD_ERR_BAD_PACKET : HERE;
    default:
        /* ENABLED, OVERFLOW, STOP, PWRE, PWRX, TICK, CBR, MNT */
        return HERE;
    }
}

int ptd_flow_trailing(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct ptd_event *ev = &f->ev;
    int r;

    /* bounded: a round fetches an event (the trace is finite) */
    for (;;) {
        if (f->status < 0) {
            /* past the postponed instruction, then the error (as an event
             * to query) or the end */
            r = proceed_postponed(f);
            if (r < 0)
                return r;
            return ptd_flow_status(f, f->status != -PTD_ERR_EOS ? PTD_ST_EVENT : 0);
        }
        switch (ev->type) {
        case PTD_EV_TNT: r = trailing_tnt(f, ev, blk); break;
        case PTD_EV_TIP: r = NOT_HERE; break;
        case PTD_EV_DISABLED: r = trailing_disabled(f, ev); break;
        case PTD_EV_ASYNC_DISABLED:
        case PTD_EV_ASYNC_BRANCH: r = trailing_async(f, ev); break;
        case PTD_EV_ENABLED: r = trailing_unbound(f, ev, blk); break; /* not insn_bound's */
        default: {
            unsigned i = 0;
            while (i < sizeof insn_bound / sizeof insn_bound[0] && insn_bound[i].type != ev->type)
                i++;
            if (i < sizeof insn_bound / sizeof insn_bound[0])
                r = bound_kind_here(f, ev, insn_bound[i].bound, (enum pred)insn_bound[i].pred,
                                    insn_bound[i].needs_no_ip)
                        ? HERE
                        : NOT_HERE;
            else
                r = trailing_unbound(f, ev, blk);
            break;
        }
        }
        if (r == NEXT_EVENT)
            continue;
        if (r < 0)
            return r;
        if (r == HERE)
            return ptd_flow_status(f, PTD_ST_EVENT);
        break;
    }
    /* no event here: past the postponed instruction */
    r = proceed_postponed(f);
    if (r < 0)
        return r;
    return ptd_flow_status(f, 0);
}

/* ---- taking an event ------------------------------------------------------ */

/* What the event does to the flow; 0, or an error (a status update that
 * contradicts the flow, an event out of place). */
static int process(struct ptd_flow *f, struct ptd_event *ev)
{
    bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    bool st = (ev->flags & PTD_EVF_STATUS_UPDATE) != 0;
    switch (ev->type) {
    case PTD_EV_ENABLED:
        /* RESUMED: where tracing stopped (a call's return address) */
        if (ev->ip == f->ip)
            ev->flags |= PTD_EVF_RESUMED;
        if (st)
            return f->enabled ? 0 : -PTD_ERR_BAD_STATUS_UPDATE;
        if (nip)
            return -PTD_ERR_NOIP;
        if (f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        f->ip = ev->ip;
        f->enabled = 1;
        f->ret_known = 0;
        return 0;
    case PTD_EV_ASYNC_DISABLED:
        if (f->ip != ev->from)
            return -PTD_ERR_BAD_QUERY;
        /* fall through */
    case PTD_EV_DISABLED:
        if (st)
            return f->enabled ? -PTD_ERR_BAD_STATUS_UPDATE : 0;
        if (!f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        /* the IP stays: where tracing is expected to resume; a TRIG's
         * count starts again from its anchor */
        f->enabled = 0;
        f->icnt = 0;
        return 0;
    case PTD_EV_ASYNC_BRANCH:
        if (f->ip != ev->from)
            return -PTD_ERR_BAD_QUERY;
        if (st || !f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        f->ip = ev->ip;
        return 0;
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS:
        if (!nip && f->ip != ev->ip)
            return -PTD_ERR_BAD_QUERY;
        return 0;
    case PTD_EV_OVERFLOW:
        if (st)
            return -PTD_ERR_BAD_CONTEXT;
        if (nip) {
            /* resolved with tracing off: the IP before means nothing */
            f->enabled = 0;
            f->ip = 0;
        } else {
            f->enabled = 1;
            f->ip = ev->ip;
        }
        f->speculative = 0;
        f->ret_known = 0;
        return 0;
    case PTD_EV_EXEC_MODE:
        if (f->enabled && !nip && f->ip != ev->ip)
            return -PTD_ERR_BAD_QUERY;
        if (st && f->enabled && f->mode != PTD_FLOW_MODE_UNKNOWN && f->mode != ev->mode)
            return -PTD_ERR_BAD_STATUS_UPDATE;
        f->mode = ev->mode;
        return 0;
    case PTD_EV_TSX:
        if (!nip && f->ip != ev->ip)
            return -PTD_ERR_BAD_QUERY;
        f->speculative = (ev->flags & PTD_EVF_SPECULATIVE) != 0;
        if (ev->flags & PTD_EVF_ABORTED)
            f->ret_known = 0; /* back to XBEGIN's state */
        return 0;
    case PTD_EV_STOP:
        /* tracing is always disabled before it stops */
        if (st || f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        return 0;
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
        if (!nip && f->enabled && f->ip != ev->ip)
            return -PTD_ERR_BAD_QUERY;
        return 0;
    case PTD_EV_TIP: return -PTD_ERR_BAD_QUERY;
    case PTD_EV_RSM:
    case PTD_EV_SIPI: return nip ? 0 : -PTD_ERR_INTERNAL;
    case PTD_EV_IFLAGS:
    case PTD_EV_INTERRUPT:
    case PTD_EV_SMI:
    case PTD_EV_INIT:
    case PTD_EV_VMEXIT:
    case PTD_EV_SHUTDOWN:
    case PTD_EV_UINTR:
    case PTD_EV_TRIG:
    case PTD_EV_SWINTR:
    case PTD_EV_SYSCALL:
        if (f->enabled && !nip && f->ip != ev->ip)
            return -PTD_ERR_BAD_QUERY;
        return 0;
    default:
        /* PAGING, VMCS, PWRE, PWRX, PTWRITE, TICK, CBR, MNT, IRET,
         * VMENTRY, UIRET */
        return 0;
    }
}

static int take_event(struct ptd_flow *f, struct ptd_event *out)
{
    struct ptd_event *ev = &f->ev;
    int r;

    if (f->status < 0)
        return f->status;
    if (ev->type == PTD_EV_TNT) {
        /* a tick for the TNT in use (its first bit used) */
        if (!(f->flags & PTD_FLOW_F_TICK) || !(ev->flags & PTD_EVF_HAS_TSC) || ev->tsc == f->tsc)
            return -PTD_ERR_BAD_QUERY;
        out->ip = f->ip;
        out->from = out->value = out->value2 = 0;
        out->offset = ev->offset;
        out->tsc = ev->tsc;
        out->lost_mtc = ev->lost_mtc;
        out->lost_cyc = ev->lost_cyc;
        out->aux = 0;
        out->flags = PTD_EVF_HAS_TSC;
        out->type = PTD_EV_TICK;
        out->mode = out->a = out->b = 0;
        /* the TNT stays ahead: its time is the flow's now, so it ticks
         * once */
        f->has_tsc = 1;
        f->tsc = ev->tsc;
        f->lost_mtc = ev->lost_mtc;
        f->lost_cyc = ev->lost_cyc;
        if (!ev->a) {
            r = ptd_flow_fetch_event(f);
            if (r < 0)
                return r;
        }
        return ptd_flow_trailing(f, NULL);
    }
    r = process(f, ev);
    if (r < 0)
        return r;
    *out = *ev;
    r = ptd_flow_fetch_event(f);
    if (r < 0)
        return r;
    return ptd_flow_trailing(f, NULL);
}

int ptd_flow_event(struct ptd_flow *f, struct ptd_event *out)
{
    int st;
    /* not in the middle of ptd_flow_next's block */
    if (f->iblk.ninsn)
        return -PTD_ERR_BAD_QUERY;
    st = take_event(f, out);
    if (st >= 0)
        f->iblk_status = st;
    return st;
}

/* ---- synchronisation ------------------------------------------------------ */

static void reset(struct ptd_flow *f)
{
    f->tsc = 0;
    f->lost_mtc = f->lost_cyc = 0;
    f->has_tsc = 0;
    f->icnt = 0;
    f->has_icnt = 0;
    f->mode = f->mode0;
    f->ip = 0;
    f->status = -PTD_ERR_NOSYNC;
    f->enabled = 0;
    f->speculative = 0;
    clear_postponed(f);
    f->ev.type = PTD_EV_COUNT;
    f->ret_top = f->ret_count = f->ret_known = 0;
    f->iblk.ninsn = 0;
    f->iblk_status = 0;
}

/* After the query layer synchronised: the PSB+ status tells whether
 * tracing is on and where (read on a copy: the events are handed out as
 * usual), then the first event. */
static int start(struct ptd_flow *f)
{
    struct ptd_qry ahead = f->q;
    uint64_t at = ahead.pkt.pos - ahead.pkt.begin;
    for (;;) {
        struct ptd_event ev;
        int r;
        /* only the events of this PSB+ */
        if ((uint64_t)(ahead.pkt.pos - ahead.pkt.begin) != at)
            break;
        r = ptd_qry_next(&ahead, &ev);
        if (r < 0) {
            if (r != -PTD_ERR_EOS)
                return r;
            break;
        }
        if (!(ev.flags & PTD_EVF_STATUS_UPDATE))
            break;
        if (ev.type == PTD_EV_ENABLED) {
            f->enabled = 1;
            f->ip = ev.ip;
            break;
        }
    }
    f->status = ptd_qry_next(&f->q, &f->ev);
    if (f->status < 0)
        f->ev.type = PTD_EV_COUNT;
    return ptd_flow_trailing(f, NULL);
}

int ptd_flow_sync_forward(struct ptd_flow *f)
{
    int r;
    reset(f);
    r = ptd_qry_sync_forward(&f->q);
    if (r < 0)
        return r;
    r = start(f);
    if (r >= 0)
        f->iblk_status = r;
    return r;
}

static int sync_set(struct ptd_flow *f, uint64_t offset)
{
    int r;
    reset(f);
    r = ptd_qry_sync_set(&f->q, offset);
    if (r < 0)
        return r;
    return start(f);
}

/* ---- resynchronisation ----------------------------------------------------- */

/* Take the current event as the resync point: go on after it. */
static int resync_at_event(struct ptd_flow *f)
{
    int r = ptd_flow_fetch_event(f);
    if (r < 0)
        return r;
    return ptd_flow_trailing(f, NULL);
}

/* Resume at an event with an IP (f->ip, tracing on); without one, tracing
 * is taken to be off. */
static int resync_enable_at(struct ptd_flow *f, const struct ptd_event *ev)
{
    if (ev->flags & PTD_EVF_IP_SUPPRESSED) {
        f->enabled = 0;
    } else {
        f->enabled = 1;
        f->ip = ev->ip;
    }
    return ptd_flow_status(f, PTD_ST_EVENT);
}

static int resync(struct ptd_flow *f)
{
    struct ptd_event *ev = &f->ev;
    clear_postponed(f);
    f->iblk.ninsn = 0;
    f->iblk_status = 0;
    /* bounded: a round takes an event */
    for (;;) {
        bool nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
        int r;
        if (f->status < 0)
            return f->status;
        /* inside PSB+: start over at its PSB */
        if (ev->flags & PTD_EVF_STATUS_UPDATE)
            return sync_set(f, ptd_qry_sync_offset(&f->q));
        switch (ev->type) {
        case PTD_EV_ENABLED: f->enabled = 0; return ptd_flow_status(f, PTD_ST_EVENT);
        case PTD_EV_DISABLED:
            f->enabled = 1;
            f->ip = 0;
            r = process(f, ev);
            if (r < 0)
                return r;
            return resync_at_event(f);
        case PTD_EV_ASYNC_DISABLED:
            f->ip = ev->from;
            if ((f->errata & PTD_ERRATUM_SKD022) && skd022(f, ev))
                break;
            return ptd_flow_status(f, PTD_ST_EVENT);
        case PTD_EV_ASYNC_BRANCH: f->ip = ev->from; return ptd_flow_status(f, PTD_ST_EVENT);
        case PTD_EV_ASYNC_PAGING:
        case PTD_EV_ASYNC_VMCS:
            if (!nip) {
                f->ip = ev->ip;
                return ptd_flow_status(f, PTD_ST_EVENT);
            }
            break;
        case PTD_EV_OVERFLOW: return ptd_flow_status(f, PTD_ST_EVENT);
        case PTD_EV_EXEC_MODE:
        case PTD_EV_TSX:
        case PTD_EV_IFLAGS:
        case PTD_EV_INTERRUPT: return resync_enable_at(f, ev);
        case PTD_EV_EXSTOP:
        case PTD_EV_MWAIT:
        case PTD_EV_TICK:
        case PTD_EV_IRET:
        case PTD_EV_SMI:
        case PTD_EV_RSM:
        case PTD_EV_INIT:
        case PTD_EV_VMEXIT:
        case PTD_EV_SHUTDOWN:
        case PTD_EV_UINTR:
        case PTD_EV_SWINTR:
        case PTD_EV_SYSCALL:
            if (nip)
                break;
            f->ip = ev->ip;
            return ptd_flow_status(f, PTD_ST_EVENT);
        case PTD_EV_PTWRITE:
        case PTD_EV_VMENTRY:
        case PTD_EV_UIRET:
            /* bound to an instruction: without an IP it cannot be passed
             * (the caller takes it and calls again); with one, reported
             * after that instruction */
            if (nip) {
                if (ev->type == PTD_EV_PTWRITE)
                    return -PTD_ERR_EVENT_IGNORED;
                break;
            }
            f->ip = ev->ip;
            return ptd_flow_status(f, 0);
        case PTD_EV_TIP: f->ip = ev->ip; return resync_at_event(f);
        default:
            /* PAGING, VMCS, STOP, PWRE, PWRX, CBR, MNT, TNT, SIPI, TRIG */
            break;
        }
        r = ptd_flow_fetch_event(f);
        if (r < 0)
            return r;
    }
}

int ptd_flow_resync(struct ptd_flow *f)
{
    int st = resync(f);
    if (st >= 0)
        f->iblk_status = st;
    return st;
}
