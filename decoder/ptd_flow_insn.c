/* libptd instruction-flow layer: the flow one instruction at a time, over
 * the blocks (as libipt's instruction decoder runs on its block decoder:
 * the same flow, events and errors, the block's status with its last
 * instruction), and the instructions of a block for printing. */
#include "decoder/ptd_flow_impl.h"

int ptd_flow_insn_at(struct ptd_flow *f, uint64_t ip, uint8_t mode, struct ptd_flow_insn *insn,
                     uint64_t *next_ip)
{
    struct ptd_flow_pinsn p;
    uint64_t save_ip = f->ip;
    uint8_t save_mode = f->mode;
    int r;

    insn->ip = ip;
    insn->size = 0;
    insn->iclass = PTD_FLOW_ICLASS_ERROR;
    insn->mode = mode;
    f->ip = ip;
    f->mode = mode;
    r = ptd_flow_decode(f, &p);
    insn->after = ip;
    if (r >= 0) {
        insn->size = p.size;
        insn->iclass = p.iclass;
        insn->after = p.direct ? p.target : ip + p.size;
        if (next_ip && ptd_flow_next_ip(&p, next_ip) < 0)
            *next_ip = p.direct ? p.target : ip + p.size;
        if (f->flags & PTD_FLOW_F_RAW) {
            /* the bytes (the decode may have come from the cache, with
             * another window) */
            if (f->read(f->ctx, ip, insn->raw, p.size) < (int)p.size)
                r = -PTD_ERR_NOMAP;
        }
    }
    f->ip = save_ip;
    f->mode = save_mode;
    return r;
}

int ptd_flow_next(struct ptd_flow *f, struct ptd_flow_insn *insn)
{
    struct ptd_flow_block *b = &f->iblk;
    uint64_t next;
    int r;

    insn->ip = b->ip;
    insn->size = 0;
    insn->iclass = PTD_FLOW_ICLASS_ERROR;
    insn->mode = b->mode;
    insn->speculative = b->speculative;
    /* the next block when this one is used up; its events and errors come
     * out before its instructions only when it has none */
    while (!b->ninsn) {
        if (f->iblk_status < 0)
            return f->iblk_status;
        if (f->iblk_status & PTD_ST_EVENT)
            return -PTD_ERR_EVENT_IGNORED;
        f->iblk_status = ptd_flow_next_block(f, b);
        insn->ip = b->ip;
        insn->mode = b->mode;
        insn->speculative = b->speculative;
        if (b->ninsn)
            break;
        /* a block without instructions: its status now (an event to
         * fetch first, an error) */
        if (f->iblk_status < 0 || (f->iblk_status & PTD_ST_EVENT))
            return f->iblk_status;
    }
    r = ptd_flow_insn_at(f, b->ip, b->mode, insn, &next);
    insn->speculative = b->speculative;
    if (r < 0)
        return r;
    b->ninsn--;
    if (b->ninsn) {
        b->ip = next;
        return 0;
    }
    if (b->ip != b->last_ip)
        return -PTD_ERR_INTERNAL;
    return f->iblk_status;
}
