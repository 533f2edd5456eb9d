/* libptd instruction-flow layer: the walks' memo. An event bound to an
 * IP (a TIP.PGD's, most often: code leaving the filter's range) is reached
 * by walking the instructions before it one at a time, with the length
 * step (ptd_flow_walk_plain), and not through the block cache: libipt
 * walks there without its cache too, and an entry written there would end
 * ptxed's blocks elsewhere. The same code is left the same way many times
 * (foo's 706 disables walk 166 different ways), so each walk's outcome is
 * kept, by where it starts and where it must stop, in a small table in the
 * block cache's memory, and a walk taken before is not decoded again.
 *
 * What a walk finds depends on the code (constant while the flow decodes;
 * ptd_flow_invalidate forgets the table with the cache), the execution
 * mode, the options (constant) and the room left in the block (or the
 * TRIG count); so the table keeps only walks that the room did not stop,
 * and hands one out again only where the room is larger than the walk. A
 * walk is kept only in a region mapped in place (its bytes do not depend
 * on where a read window happened to start) and from an IP in the
 * section being walked (the section is then the one that holds it). */
#include "decoder/ptd_flow_impl.h"

struct ptd_flow_walk {
    uint64_t start, stop;
    uint64_t end;               /* f->ip after the walk */
    uint64_t push;              /* the return address a direct call on the way pushed */
    struct ptd_flow_pinsn insn; /* the last instruction walked, or the one it stopped at */
    uint32_t plain;             /* instructions walked before the one it stopped at */
    uint8_t mode;               /* the execution mode + 1 (0: an empty slot) */
    uint8_t stopped;            /* 1: it stopped at insn, decoded (the walk's 1) */
    uint8_t pushed;             /* push is valid */
};

#define WALKS 256u /* foo's 166 ways in few collisions */
_Static_assert(WALKS * sizeof(struct ptd_flow_walk) <= PTD_FLOW_BCACHE_WALKS, "walks' memory");

struct ptd_flow_walk *ptd_flow_walk_slot(struct ptd_flow *f, uint64_t stop)
{
    uint64_t off = f->ip - f->win_base;
    if (!f->barena || f->code == f->win || off >= f->win_len ||
        f->win_len - off < PTD_ILD_MAX_LEN || !ptd_flow_in_section(f, f->ip))
        return NULL;
    if (!f->walks) {
        f->walks = ptd_flow_bcache_take(f, PTD_FLOW_BCACHE_WALKS);
        if (!f->walks)
            return NULL;
    }
    /* the top bits of a multiplicative hash: both IPs in all of them */
    uint64_t h = (f->ip ^ (stop * 0x9e3779b97f4a7c15u)) * 0xff51afd7ed558ccdu;
    return &f->walks[h >> 56 & (WALKS - 1)];
}

int ptd_flow_walk_replay(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                         const struct ptd_flow_walk *w, uint64_t stop, uint32_t room)
{
    if (w->mode != f->mode + 1u || w->start != f->ip || w->stop != stop || w->plain >= room)
        return -1;
    uint32_t n = w->plain + w->stopped;
    /* as the walk left it (ptd_flow_walk_plain), in its order */
    if (w->pushed)
        ptd_flow_ret_push(f, w->push);
    *p = w->insn;
    if (w->stopped)
        ptd_flow_log_call(f, p);
    blk->last_iclass = p->iclass;
    blk->last_ip = p->ip;
    blk->ninsn += n;
    if (f->has_icnt)
        f->icnt += n;
    f->ip = w->end;
    return w->stopped;
}

void ptd_flow_walk_keep(struct ptd_flow *f, struct ptd_flow_walk *w, uint64_t start, uint64_t stop,
                        const struct ptd_flow_pinsn *p, uint32_t plain, bool stopped,
                        unsigned pushed, uint64_t push)
{
    if (pushed > 1)
        return;
    w->start = start;
    w->stop = stop;
    w->end = f->ip;
    w->push = push;
    w->insn = *p;
    w->plain = plain;
    w->mode = (uint8_t)(f->mode + 1u);
    w->stopped = stopped;
    w->pushed = (uint8_t)pushed;
}
