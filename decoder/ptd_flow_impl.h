/* Internal to libptd's flow layer (decoder/ptd_flow*.c): the pieces its
 * files share. Not an interface: only ptd_flow*.c include it (and the
 * unit test of the walks' memo, test/unit/test_ptd_flow_walks.c). */
#ifndef PTD_FLOW_IMPL_H
#define PTD_FLOW_IMPL_H

#include "decoder/ptd_flow.h"
#include "decoder/ptd_ild_fast.h"
#include "decoder/ptd_qry_fast.h"

/* Which instruction a struct ptd_flow_pinsn is, as far as events care
 * (ptd_flow_kind): the bits of pinsn.kind, and of ptd_flow.bound for the
 * events already bound to the postponed instruction. */
enum {
    PTD_FLOW_K_MOV_CR3 = 1u << 0, /* MOV CR3, r: a PIP binds to it */
    PTD_FLOW_K_VMPTRLD = 1u << 1, /* a VMCS binds to it */
    PTD_FLOW_K_VMENTRY = 1u << 2, /* VMLAUNCH, VMRESUME */
    PTD_FLOW_K_IRET = 1u << 3,    /* IRET, SYSRET, SYSEXIT, ERETS, ERETU */
    PTD_FLOW_K_UIRET = 1u << 4,
    PTD_FLOW_K_SWINT = 1u << 5,   /* INT n, INT3, INT1, INTO */
    PTD_FLOW_K_SYSCALL = 1u << 6, /* SYSCALL, SYSENTER */
    PTD_FLOW_K_PTWRITE = 1u << 7,
    /* not kinds of their own: far calls (FAR_CALL) for the resume IP of a
     * disable, kept in bound's bits for the bound-once events */
};
/* pinsn.kind bits beyond the above, found with them */
#define PTD_FLOW_K_FAR_CALL 0x100u
/* ptd_flow.bound bits: events of these kinds bound to pinsn already */
enum {
    PTD_FLOW_B_PAGING = 1u << 0,
    PTD_FLOW_B_VMCS = 1u << 1,
    PTD_FLOW_B_PTWRITE = 1u << 2,
    PTD_FLOW_B_IRET = 1u << 3,
    PTD_FLOW_B_VMENTRY = 1u << 4,
    PTD_FLOW_B_UIRET = 1u << 5,
    PTD_FLOW_B_SWINTR = 1u << 6,
    PTD_FLOW_B_SYSCALL = 1u << 7,
};

/* ---- code (ptd_flow.c) ---- */
/* Decode the instruction at f->ip in f->mode into *p (its kind not yet
 * known); 0 or -PTD_ERR_NOMAP / -PTD_ERR_BAD_INSN. */
int ptd_flow_decode(struct ptd_flow *f, struct ptd_flow_pinsn *p);
/* *p from the ILD's length step st of sl bytes at ip (its kind not yet
 * known). */
static inline void ptd_flow_pinsn_of_step(struct ptd_flow_pinsn *p, uint64_t ip, unsigned sl,
                                          const struct ptd_ild_step *st)
{
    p->ip = ip;
    p->size = (uint8_t)sl;
    p->iclass = st->iclass;
    p->target = st->rel ? ip + sl + (uint64_t)(int64_t)st->disp : 0;
    p->direct = st->rel;
    p->zero_disp = st->rel && st->disp == 0;
    p->kind = 0;
    p->kind_known = 0;
}
/* ptd_flow_decode, the lean step first while the code window holds f->ip
 * (for instructions just run past: their bytes are at hand, the
 * instruction cache's line likely cold). */
static inline int ptd_flow_decode_step(struct ptd_flow *f, struct ptd_flow_pinsn *p)
{
    uint64_t ip = f->ip, off = ip - f->win_base;
    struct ptd_ild_step st;
    unsigned sl;
    if (off < f->win_len && f->win_len - off >= PTD_ILD_MAX_LEN &&
        f->mode != PTD_FLOW_MODE_UNKNOWN &&
        (sl = ptd_ild_step(f->code + off, PTD_ILD_MAX_LEN, f->mode, &st)) != 0) {
        ptd_flow_pinsn_of_step(p, ip, sl, &st);
        return 0;
    }
    return ptd_flow_decode(f, p);
}
/* Which instruction p is (PTD_FLOW_K_* bits), decoding it again once. */
unsigned ptd_flow_kind(struct ptd_flow *f, struct ptd_flow_pinsn *p);
/* The IP after p when the code alone says it: 0, -PTD_ERR_BAD_QUERY (it
 * needs trace). */
int ptd_flow_next_ip(const struct ptd_flow_pinsn *p, uint64_t *ip);
bool ptd_flow_in_filter(const struct ptd_flow *f, uint64_t ip);

/* ---- the walk (ptd_flow.c) ---- */
/* Add the instruction at f->ip to blk (a call's return address to the
 * call stack, the TRIG count): 1 added (in *p), 0 the block ends before
 * it (full, or another section), or an error. */
int ptd_flow_one_insn(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p);
/* Walk the instructions that need no trace and end no block (no branch,
 * direct jumps and calls without END_ON_*) from f->ip, up to stop (not
 * past it), as ptd_flow_one_insn, ptd_flow_next_ip and the block's end
 * check would one at a time: *p the last one walked (kept when none).
 * 1: it stopped at an instruction it decoded (a branch that needs trace
 * or ends the block) and took it as ptd_flow_one_insn would (*p, f->ip
 * at it: ptd_flow_next_ip's turn); 0: it stopped short of anything else
 * (at stop, or where ptd_flow_one_insn must look), leaving it to those. */
int ptd_flow_walk_plain(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                        uint64_t stop);

/* ---- the walks' memo (ptd_flow_walks.c) ---- */
struct ptd_flow_walk;
/* The memo's slot for a walk from f->ip to stop; NULL where no walk from
 * there is kept (no block cache, a copied window, f->ip outside the
 * section). */
struct ptd_flow_walk *ptd_flow_walk_slot(struct ptd_flow *f, uint64_t stop);
/* The walk kept in w, when it is the one from f->ip to stop and the room
 * (block, TRIG count) is larger: its outcome, as ptd_flow_walk_plain
 * returns it, taken again; -1: not that walk. */
int ptd_flow_walk_replay(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                         const struct ptd_flow_walk *w, uint64_t stop, uint32_t room);
/* Keep in w the walk from start to stop, f->ip after it: p the last
 * instruction walked, or the one it stopped at (stopped), after plain
 * others; the return addresses direct calls on the way pushed, pushed of
 * them, the last push (a walk that pushed more is not kept). */
void ptd_flow_walk_keep(struct ptd_flow *f, struct ptd_flow_walk *w, uint64_t start, uint64_t stop,
                        const struct ptd_flow_pinsn *p, uint32_t plain, bool stopped,
                        unsigned pushed, uint64_t push);
/* Walk as far as the code alone goes, then take the trace's step for the
 * instruction that needs it. 0 or an error. With the block cache
 * (ptd_flow_bcache.c) or without (the same flow; blocks may end earlier
 * with it, as libipt's). */
int ptd_flow_proceed_no_event(struct ptd_flow *f, struct ptd_flow_block *blk);
int ptd_flow_proceed_uncached(struct ptd_flow *f, struct ptd_flow_block *blk);
int ptd_flow_proceed_cached(struct ptd_flow *f, struct ptd_flow_block *blk);
/* An indirect branch's target (a TIP, or a deferred one behind the TNT
 * ahead): 0 or an error. */
int ptd_flow_indirect(struct ptd_flow *f);
int ptd_flow_ret_pop(struct ptd_flow *f, uint64_t *ip);

/* A TNT bit for a conditional branch or compressed return: 1 taken, 0
 * not, -PTD_ERR_BAD_QUERY when the event ahead is no TNT. The TNT event
 * stays ahead with its last bit used (the trailing events fetch the next,
 * so a tick can still come for it). */
static inline int ptd_flow_cond_branch(struct ptd_flow *f)
{
    struct ptd_event *ev = &f->ev;
    if (ev->type != PTD_EV_TNT)
        return -PTD_ERR_BAD_QUERY;
    if (!ev->a)
        return -PTD_ERR_INTERNAL;
    ev->a--;
    return (int)((ev->value >> ev->a) & 1);
}

/* A call's return address onto the call stack (SDM "Indirect Transfer
 * Compression for Returns"): inline, as the block cache's counting loop
 * pushes without leaving its registers. */
static inline void ptd_flow_ret_push(struct ptd_flow *f, uint64_t ip)
{
    f->retstack[f->ret_top] = ip;
    f->ret_top = (uint8_t)((f->ret_top + 1) % PTD_FLOW_RETSTACK);
    if (f->ret_count < PTD_FLOW_RETSTACK)
        f->ret_count++;
    if (f->ret_known < PTD_FLOW_RETSTACK)
        f->ret_known++;
}

/* The TRIG count: n more instructions since the anchor. */
static inline int ptd_flow_add_icnt(struct ptd_flow *f, uint32_t n)
{
    if (f->has_icnt) {
        uint32_t icnt = f->icnt + n;
        if (icnt < f->icnt)
            return -PTD_ERR_OVERFLOW;
        f->icnt = icnt;
    }
    return 0;
}

/* A call's return address for compressed returns (a call to the next
 * instruction, getting the IP in position-independent code, is none). */
static inline void ptd_flow_log_call(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    if (p->iclass == PTD_ICLASS_INDIRECT_CALL ||
        (p->iclass == PTD_ICLASS_DIRECT_CALL && !p->zero_disp))
        ptd_flow_ret_push(f, p->ip + p->size);
}

/* The decoded-instruction cache's entry for ip in mode, if it holds it. */
#define PTD_FLOW_CENTRY_INDEX(f, ip) (((ip) ^ ((ip) >> 11)) & (f)->cache_mask)
static inline const struct ptd_flow_centry *ptd_flow_centry_hit(const struct ptd_flow *f,
                                                                uint64_t ip, unsigned mode)
{
    const struct ptd_flow_centry *e;
    if (!f->cache)
        return NULL;
    e = &f->cache[PTD_FLOW_CENTRY_INDEX(f, ip)];
    return (e->ip == ip && e->mode == mode) ? e : NULL;
}

/* ip is in the section being walked ([sec_lo, sec_hi)). */
static inline bool ptd_flow_in_section(const struct ptd_flow *f, uint64_t ip)
{
    return ip - f->sec_lo < f->sec_hi - f->sec_lo;
}

/* ---- the block cache (ptd_flow_bcache.c) ---- */
void ptd_flow_bcache_init(struct ptd_flow *f, void *mem, size_t size);
/* bytes of the cache's memory, zero (NULL: no room), until the next
 * reset. */
void *ptd_flow_bcache_take(struct ptd_flow *f, size_t bytes);
/* Forget every section's entries. */
void ptd_flow_bcache_reset(struct ptd_flow *f);
/* f->bce: the entries of the section f->sec_lo..sec_hi (NULL: none). */
void ptd_flow_bcache_section(struct ptd_flow *f);
/* The trace's step for p (a TNT bit or TIP), f->ip at p. */
int ptd_flow_proceed_with_trace(struct ptd_flow *f, const struct ptd_flow_pinsn *p);
/* Start a block at f->ip (its section). */
void ptd_flow_block_start(struct ptd_flow *f, struct ptd_flow_block *blk);
/* The rest of ptd_flow_next_block once the block is started, tracing is
 * on and a TNT or TIP is ahead: the walk (from where blk stands) and the
 * trailing events. Status flags or an error. */
int ptd_flow_block_walk(struct ptd_flow *f, struct ptd_flow_block *blk);
/* ptd_flow_run_blocks's common blocks (ptd_flow_bcache.c): with a TNT
 * ahead, tracing on, nothing held and no ticks, the blocks whose entries
 * lead to a conditional branch, counted into run; a block that needs
 * more is finished the general way (ptd_flow_block_walk), counted too.
 * The blocks counted (at most max, each as ptd_flow_next_block counts
 * it), *st the last one's status (0 when none). */
uint32_t ptd_flow_bcache_run(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max, int *st);

/* ---- events (ptd_flow_event.c) ---- */
/* The event done (f->ev) as the anchor of the next TRIG's instruction
 * count: 0, or an error for an event that cannot be one. */
int ptd_flow_trig_anchor(struct ptd_flow *f, const struct ptd_event *ev);
/* The event f->ev used up: its time is the flow's from now on, and it
 * anchors the next TRIG's count (most events a TNT or TIP with its IP,
 * whose count restarts here; the others ptd_flow_trig_anchor's). 0 or an
 * error. */
static PTD_ALWAYS_INLINE int ptd_flow_event_done(struct ptd_flow *f)
{
    const struct ptd_event *ev = &f->ev;
    f->tsc = ev->tsc;
    f->has_tsc = (ev->flags & PTD_EVF_HAS_TSC) != 0;
    f->lost_mtc = ev->lost_mtc;
    f->lost_cyc = ev->lost_cyc;
    if ((ev->type == PTD_EV_TNT || ev->type == PTD_EV_TIP) &&
        !(ev->flags & PTD_EVF_IP_SUPPRESSED)) {
        f->has_icnt = 1;
        f->icnt = 0;
        return 0;
    }
    return ptd_flow_trig_anchor(f, ev);
}
/* Take the next event from the query layer, after ptd_flow_event_done:
 * 0 or an error (the query layer's is kept in f->status). Inline for the
 * counting loop (with the query layer's common events,
 * decoder/ptd_qry_fast.h); ptd_flow_fetch_event elsewhere. */
static PTD_ALWAYS_INLINE int ptd_flow_fetch_event_inline(struct ptd_flow *f)
{
    int r = ptd_flow_event_done(f);
    if (r < 0)
        return r;
    r = ptd_qry_next_common(&f->q, &f->ev);
    if (r == 0)
        r = ptd_qry_next_decoded(&f->q, &f->ev);
    if (r < 0) {
        f->status = r;
        f->ev.type = PTD_EV_COUNT;
    }
    return 0;
}
int ptd_flow_fetch_event(struct ptd_flow *f);
/* The events that bind where the flow stands (libipt's trailing events):
 * status flags or an error. blk: the block just walked, NULL after an
 * event. */
int ptd_flow_trailing(struct ptd_flow *f, struct ptd_flow_block *blk);
/* Walk to where the pending event binds. */
int ptd_flow_proceed_event(struct ptd_flow *f, struct ptd_flow_block *blk);
int ptd_flow_status(const struct ptd_flow *f, int flags);

#endif
