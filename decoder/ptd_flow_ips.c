/* libptd instruction-flow layer: the IPs inside a block; see
 * ptd_flow_ips.h. */
#include "decoder/ptd_flow_ips.h"
#include "decoder/ptd_ild_fast.h"

/* The step at ip (mode: enum ptd_exec_mode) from the bytes [code, code +
 * avail), or, when they do not hold a whole instruction's worth, from a
 * copy through the read callback: its length (0: it cannot be decoded)
 * and in *s its class and, for a direct near branch, its displacement. */
static unsigned step_at(const struct ptd_flow *f, uint64_t ip, unsigned mode, const uint8_t *code,
                        size_t avail, struct ptd_ild_step *s)
{
    struct ptd_insn insn;
    uint8_t buf[PTD_ILD_MAX_LEN];

    if (!code || avail < PTD_ILD_MAX_LEN) {
        int r = f->read(f->ctx, ip, buf, sizeof buf);
        if (r <= 0)
            return 0;
        code = buf;
        avail = (size_t)r > sizeof buf ? sizeof buf : (size_t)r;
    }
    unsigned n = ptd_ild_step(code, avail, mode, s);
    if (n)
        return n;
    int len = ptd_ild_decode_at(&insn, code, avail, (enum ptd_exec_mode)mode, ip);
    if (len <= 0)
        return 0;
    s->iclass = insn.iclass;
    s->rel = (insn.flags & PTD_INSN_REL) ? 1 : 0;
    s->disp = s->rel ? insn.disp : 0;
    return (unsigned)len;
}

/* The bytes at ip: the flow's code window when it holds ip, else the
 * region the map callback gave last (*m, kept across calls so that a walk
 * asks once per region), else the one it gives now. NULL: neither has it. */
struct mapped {
    const uint8_t *p;
    uint64_t base;
    size_t size;
};
static const uint8_t *code_at(const struct ptd_flow *f, uint64_t ip, struct mapped *m,
                              size_t *avail)
{
    if (ip - f->win_base < f->win_len) {
        *avail = f->win_len - (size_t)(ip - f->win_base);
        return f->code + (ip - f->win_base);
    }
    if (!m->p || ip - m->base >= m->size) {
        m->p = f->map ? f->map(f->ctx, ip, &m->base, &m->size) : NULL;
        if (!m->p || ip - m->base >= m->size) {
            m->p = NULL;
            return NULL;
        }
    }
    *avail = m->size - (size_t)(ip - m->base);
    return m->p + (ip - m->base);
}

uint32_t ptd_flow_ips_after(const struct ptd_flow *f, uint64_t ip, unsigned mode, uint64_t *next,
                            uint32_t n)
{
    struct mapped m = { NULL, 0, 0 };
    uint32_t k;

    if (mode > PTD_EXEC_MODE_64)
        return 0;
    /* bounded by n */
    for (k = 0; k < n; k++) {
        struct ptd_ild_step s;
        size_t avail = 0;
        const uint8_t *code = code_at(f, ip, &m, &avail);
        unsigned len = 0;
        if (code && avail >= PTD_ILD_MAX_LEN)
            len = ptd_ild_step(code, PTD_ILD_MAX_LEN, mode, &s);
        if (!len)
            len = step_at(f, ip, mode, code, avail, &s);
        if (!len)
            break;
        /* a block goes on over direct calls and jumps (libipt's block
         * decoder without --block:end-on-call/-jump): to their target, as
         * the flow computes it (linear: ip + length + displacement) */
        ip += len;
        if (s.rel && (s.iclass == PTD_ICLASS_DIRECT_JUMP || s.iclass == PTD_ICLASS_DIRECT_CALL))
            ip += (uint64_t)(int64_t)s.disp;
        next[k] = ip;
    }
    return k;
}

int ptd_flow_block_ips(const struct ptd_flow *f, const struct ptd_flow_block *blk, uint64_t *ips,
                       size_t cap)
{
    uint32_t n = blk->ninsn;

    if (n > cap)
        return -PTD_ERR_NOSPC;
    if (!n)
        return 0;
    if (blk->mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INTERNAL;
    ips[0] = blk->ip;
    if (ptd_flow_ips_after(f, blk->ip, blk->mode, ips + 1, n - 1) != n - 1 ||
        ips[n - 1] != blk->last_ip)
        return -PTD_ERR_INTERNAL;
    return (int)n;
}
