/* libptd instruction-flow layer: the IPs inside a block; see
 * ptd_flow_ips.h. */
#include "decoder/ptd_flow_ips.h"
#include "decoder/ptd_ild_fast.h"

/* The length of the instruction at ip (mode: enum ptd_exec_mode), from
 * the mapped region [code, code + avail) when it holds a whole
 * instruction's worth of bytes there, else from a copy through the read
 * callback; 0 when it cannot be decoded. */
static unsigned insn_len(const struct ptd_flow *f, uint64_t ip, unsigned mode,
                         const uint8_t *code, size_t avail)
{
    struct ptd_ild_step s;
    struct ptd_insn insn;
    uint8_t buf[PTD_ILD_MAX_LEN];

    if (!code || avail < PTD_ILD_MAX_LEN) {
        int r = f->read(f->ctx, ip, buf, sizeof buf);
        if (r <= 0)
            return 0;
        code = buf;
        avail = (size_t)r > sizeof buf ? sizeof buf : (size_t)r;
    }
    unsigned n = ptd_ild_step(code, avail, mode, &s);
    if (n)
        return n;
    int len = ptd_ild_decode_at(&insn, code, avail, (enum ptd_exec_mode)mode, ip);
    return len > 0 ? (unsigned)len : 0;
}

int ptd_flow_block_ips(const struct ptd_flow *f, const struct ptd_flow_block *blk,
                       uint64_t *ips, size_t cap)
{
    uint32_t n = blk->ninsn;
    unsigned mode = blk->mode;
    uint64_t ip = blk->ip;
    const uint8_t *base_ptr = NULL;
    uint64_t base = 0;
    size_t size = 0;

    if (n > cap)
        return -PTD_ERR_NOSPC;
    if (!n)
        return 0;
    if (mode > PTD_EXEC_MODE_64)
        return -PTD_ERR_INTERNAL;
    /* one region usually holds the whole block: the flow's code window
     * (a mapped region, or its own copy of the bytes) when the block
     * starts there, else the region the map callback gives */
    if (ip - f->win_base < f->win_len) {
        base_ptr = f->code;
        base = f->win_base;
        size = f->win_len;
    } else if (f->map) {
        base_ptr = f->map(f->ctx, ip, &base, &size);
    }
    for (uint32_t k = 0; k + 1 < n; k++) {
        struct ptd_ild_step s;
        unsigned len = 0;
        ips[k] = ip;
        if (base_ptr && ip - base < size && size - (size_t)(ip - base) >= PTD_ILD_MAX_LEN)
            len = ptd_ild_step(base_ptr + (ip - base), PTD_ILD_MAX_LEN, mode, &s);
        if (!len) {
            const uint8_t *code = base_ptr && ip - base < size ? base_ptr + (ip - base) : NULL;
            len = insn_len(f, ip, mode, code, code ? size - (size_t)(ip - base) : 0);
            if (!len)
                return -PTD_ERR_INTERNAL;
        }
        ip += len;
    }
    if (ip != blk->last_ip)
        return -PTD_ERR_INTERNAL;
    ips[n - 1] = ip;
    return (int)n;
}
