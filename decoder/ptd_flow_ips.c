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

int ptd_flow_ip_after(const struct ptd_flow *f, uint64_t ip, unsigned mode, uint64_t *next)
{
    struct ptd_ild_step s;
    const uint8_t *code = NULL;
    size_t avail = 0;
    unsigned len = 0;

    if (mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INTERNAL;
    /* the flow's code window (a mapped region, or its own copy of the
     * bytes) usually holds it, else the region the map callback gives */
    if (ip - f->win_base < f->win_len) {
        code = f->code + (ip - f->win_base);
        avail = f->win_len - (size_t)(ip - f->win_base);
    } else if (f->map) {
        uint64_t base = 0;
        size_t size = 0;
        const uint8_t *p = f->map(f->ctx, ip, &base, &size);
        if (p && ip - base < size) {
            code = p + (ip - base);
            avail = size - (size_t)(ip - base);
        }
    }
    if (code && avail >= PTD_ILD_MAX_LEN)
        len = ptd_ild_step(code, PTD_ILD_MAX_LEN, mode, &s);
    if (!len)
        len = step_at(f, ip, mode, code, avail, &s);
    if (!len)
        return -PTD_ERR_INTERNAL;
    /* a block goes on over direct calls and jumps (libipt's block decoder
     * without --block:end-on-call/-jump): to their target, as the flow
     * computes it (linear: ip + length + displacement) */
    *next = ip + len;
    if (s.rel && (s.iclass == PTD_ICLASS_DIRECT_JUMP || s.iclass == PTD_ICLASS_DIRECT_CALL))
        *next += (uint64_t)(int64_t)s.disp;
    return 0;
}

int ptd_flow_block_ips(const struct ptd_flow *f, const struct ptd_flow_block *blk, uint64_t *ips,
                       size_t cap)
{
    uint32_t n = blk->ninsn;
    uint64_t ip = blk->ip;

    if (n > cap)
        return -PTD_ERR_NOSPC;
    if (!n)
        return 0;
    if (blk->mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INTERNAL;
    for (uint32_t k = 0; k + 1 < n; k++) {
        ips[k] = ip;
        if (ptd_flow_ip_after(f, ip, blk->mode, &ip) < 0)
            return -PTD_ERR_INTERNAL;
    }
    if (ip != blk->last_ip)
        return -PTD_ERR_INTERNAL;
    ips[n - 1] = ip;
    return (int)n;
}
