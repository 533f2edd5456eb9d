/* libptd instruction-flow layer: set-up, code access, the walk through the
 * code and the trace's steps (see ptd_flow.h; events in ptd_flow_event.c,
 * one instruction at a time in ptd_flow_insn.c). */
#include "decoder/ptd_flow_impl.h"
#include "decoder/ptd_ild_fast.h"

_Static_assert(sizeof(struct ptd_flow) <= PTD_FLOW_STATE_SIZE,
               "struct ptd_flow outgrew its documented size");
_Static_assert(sizeof(struct ptd_flow_centry) == PTD_FLOW_CENTRY_SIZE, "cache entry size");

/* A straight-line run of the walk without the block cache: instructions
 * that fall through, and the one that ends the run (a branch, the
 * RUN_MAX-th, or the last in the section). */
struct run {
    uint64_t last_ip, target;
    uint32_t ninsn;
    uint8_t size, iclass, bits;
};
#define RUN_MAX 64

/* ---- set-up ------------------------------------------------------------- */

/* A cache in the caller's memory: the 8-byte aligned part of mem, as the
 * largest power-of-two count of entries that fits (so an index is a mask).
 * Less than 16 entries is not worth it: no cache (NULL, mask 0). */
static void *arena(void *mem, size_t size, size_t entry_size, uint64_t *mask)
{
    *mask = 0;
    if (!mem)
        return NULL;
    uintptr_t a = (uintptr_t)mem, b = (a + 7) & ~(uintptr_t)7;
    size_t n = 1, avail = size > (b - a) ? size - (b - a) : 0;
    avail /= entry_size;
    if (avail < 16)
        return NULL;
    while (n * 2 <= avail)
        n *= 2;
    *mask = n - 1;
    return (void *)b;
}

int ptd_flow_init(struct ptd_flow *f, const struct ptd_flow_config *cfg)
{
    unsigned qflags = 0;
    if (!f || !cfg || !cfg->read || (!cfg->trace && cfg->size))
        return -PTD_ERR_INVALID;
    ptd_qry_init(&f->q, cfg->trace, cfg->size, cfg->time);
    ptd_qry_set_errata(&f->q, cfg->errata);
    if (cfg->flags & PTD_FLOW_F_IFLAGS)
        qflags |= PTD_QRY_F_IFLAGS;
    if (cfg->flags & PTD_FLOW_F_KEEP_TCAL_ON_OVF)
        qflags |= PTD_QRY_F_KEEP_TCAL_ON_OVF;
    ptd_qry_set_flags(&f->q, qflags);
    ptd_qry_set_pwre_bit3(&f->q, (cfg->flags & PTD_FLOW_F_PWRE_BIT3) != 0);
    f->read = cfg->read;
    f->map = cfg->map;
    f->ctx = cfg->ctx;
    f->errata = cfg->errata;
    f->nfilter = cfg->nfilter > 4 ? 4 : cfg->nfilter;
    for (unsigned i = 0; i < 4; i++) {
        f->filter_lo[i] = cfg->filter_lo[i];
        f->filter_hi[i] = cfg->filter_hi[i];
    }
    f->mode0 = cfg->mode == 16   ? PTD_EXEC_MODE_16
               : cfg->mode == 32 ? PTD_EXEC_MODE_32
               : cfg->mode == 64 ? PTD_EXEC_MODE_64
                                 : PTD_FLOW_MODE_UNKNOWN;
    f->flags = cfg->flags;
    f->cache = arena(cfg->cache, cfg->cache_size, sizeof(struct ptd_flow_centry), &f->cache_mask);
    ptd_flow_bcache_init(f, cfg->bcache, cfg->bcache_size);
    f->sec_lo = 0;
    f->sec_hi = 0;
    f->ev.type = PTD_EV_COUNT;
    f->status = -PTD_ERR_NOSYNC;
    f->ip = 0;
    f->mode = f->mode0;
    f->enabled = 0;
    f->speculative = 0;
    f->process_insn = 0;
    f->bound = 0;
    f->ret_top = f->ret_count = f->ret_known = 0;
    f->tsc = 0;
    f->lost_mtc = f->lost_cyc = 0;
    f->has_tsc = 0;
    f->icnt = 0;
    f->has_icnt = 0;
    f->iblk.ninsn = 0;
    f->iblk_status = 0;
    ptd_flow_invalidate(f);
    return 0;
}

/* An entry that matches no IP: mode is never 0xff. */
#define CENTRY_EMPTY 0xff

void ptd_flow_invalidate(struct ptd_flow *f)
{
    f->win_base = 0;
    f->win_len = 0;
    f->code = f->win;
    f->sec_lo = f->sec_hi = 0;
    for (unsigned i = 0; i < PTD_FLOW_SECTIONS; i++)
        f->secs[i].lo = f->secs[i].hi = 0;
    if (f->cache)
        for (uint64_t i = 0; i <= f->cache_mask; i++)
            f->cache[i].mode = CENTRY_EMPTY;
    ptd_flow_bcache_reset(f);
}

uint64_t ptd_flow_offset(const struct ptd_flow *f)
{
    return ptd_qry_offset(&f->q);
}

int ptd_flow_time(const struct ptd_flow *f, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
    *tsc = f->tsc;
    if (lost_mtc)
        *lost_mtc = f->lost_mtc;
    if (lost_cyc)
        *lost_cyc = f->lost_cyc;
    return f->has_tsc ? 0 : -PTD_ERR_NO_TIME;
}

bool ptd_flow_in_filter(const struct ptd_flow *f, uint64_t ip)
{
    for (unsigned i = 0; i < f->nfilter; i++)
        if (f->filter_lo[i] <= ip && ip <= f->filter_hi[i])
            return true;
    return false;
}

/* ---- call stack (SDM "Indirect Transfer Compression for Returns") ------- */

int ptd_flow_ret_pop(struct ptd_flow *f, uint64_t *ip)
{
    if (!f->ret_count)
        return -PTD_ERR_RETSTACK_EMPTY;
    f->ret_top = (uint8_t)((f->ret_top + PTD_FLOW_RETSTACK - 1) % PTD_FLOW_RETSTACK);
    f->ret_count--;
    if (f->ret_known)
        f->ret_known--;
    *ip = f->retstack[f->ret_top];
    return 0;
}

/* ---- code --------------------------------------------------------------- */

/* Makes the window hold the IP and, where readable, PTD_ILD_MAX_LEN bytes
 * from it. */
PTD_NOINLINE static int window(struct ptd_flow *f)
{
    uint64_t off = f->ip - f->win_base;

    if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN) {
        if (f->map) {
            /* the whole mapped region in place, when an instruction's
             * worth of bytes follows the IP there (else copy below) */
            uint64_t rb = 0;
            size_t rs = 0;
            const uint8_t *p = f->map(f->ctx, f->ip, &rb, &rs);
            if (p && f->ip - rb < rs && rs - (f->ip - rb) >= PTD_ILD_MAX_LEN) {
                f->code = p;
                f->win_base = rb;
                f->win_len = rs > (UINT32_MAX >> 1) ? (UINT32_MAX >> 1) : (uint32_t)rs;
                if (f->ip - rb < f->win_len && f->win_len - (f->ip - rb) >= PTD_ILD_MAX_LEN)
                    return 0;
            }
        }
        /* start the window a little before the IP (aligned), so that short
         * backward branches (loops) stay inside it; fall back to the IP
         * itself when that is not readable */
        uint64_t base = f->ip & ~(uint64_t)(PTD_FLOW_WINDOW / 4 - 1);
        f->code = f->win;
        int r = f->read(f->ctx, base, f->win, sizeof(f->win));
        if (r <= (int)(f->ip - base)) {
            base = f->ip;
            r = f->read(f->ctx, base, f->win, sizeof(f->win));
        }
        if (r <= 0) {
            f->win_len = 0;
            return -PTD_ERR_NOMAP;
        }
        f->win_base = base;
        f->win_len = (uint32_t)(r > (int)sizeof(f->win) ? (int)sizeof(f->win) : r);
    }
    return 0;
}

static int decode(struct ptd_flow *f, struct ptd_insn *insn, const uint8_t **bytes)
{
    uint64_t off;
    size_t avail;
    int n;

    if (f->mode == PTD_FLOW_MODE_UNKNOWN)
        return -PTD_ERR_BAD_INSN;
    n = window(f);
    if (n < 0)
        return n;
    off = f->ip - f->win_base;
    avail = f->win_len - (size_t)off;
    n = ptd_ild_decode_at(insn, f->code + off, avail, (enum ptd_exec_mode)f->mode, f->ip);
    if (n < 0)
        return -PTD_ERR_BAD_INSN;
    *bytes = f->code + off;
    return n;
}

/* The instruction's length, class and direct target. Linear addresses, as
 * the trace's IPs are (and as libipt computes them): ip + length +
 * displacement, not wrapped to a 16-bit offset (real-mode code at
 * 0xfffffff0 runs with CS base 0xffff0000). */
static void pinsn_of(struct ptd_flow_pinsn *p, const struct ptd_insn *insn)
{
    p->ip = insn->ip;
    p->size = insn->length;
    p->iclass = insn->iclass;
    p->target = (insn->flags & PTD_INSN_REL)
                    ? insn->ip + insn->length + (uint64_t)(int64_t)insn->disp
                    : insn->target;
    p->direct = (insn->flags & PTD_INSN_REL) ? 1 : 0;
    p->zero_disp = p->direct && insn->disp == 0;
    p->kind = 0;
    p->kind_known = 0;
}

/* run entry bits */
enum {
    PB_DIRECT = 1,
    PB_ZERO_DISP = 2
};

static void pinsn_of_entry(struct ptd_flow_pinsn *p, uint64_t ip, unsigned size, unsigned iclass,
                           uint64_t target, unsigned bits)
{
    p->ip = ip;
    p->size = (uint8_t)size;
    p->iclass = (uint8_t)iclass;
    p->target = target;
    p->direct = (bits & PB_DIRECT) != 0;
    p->zero_disp = (bits & PB_ZERO_DISP) != 0;
    p->kind = 0;
    p->kind_known = 0;
}

int ptd_flow_decode(struct ptd_flow *f, struct ptd_flow_pinsn *p)
{
    struct ptd_insn insn;
    const uint8_t *bytes;
    struct ptd_flow_centry *e = NULL;
    uint64_t ip = f->ip;
    int n;

    if (f->cache) {
        e = &f->cache[PTD_FLOW_CENTRY_INDEX(f, ip)];
        if (e->ip == ip && e->mode == f->mode) {
            pinsn_of_entry(p, ip, e->size, e->iclass, e->target, e->bits);
            return 0;
        }
    }
    /* the common instructions by the lean step (ptd_ild_fast.h) */
    if (f->mode != PTD_FLOW_MODE_UNKNOWN && window(f) == 0) {
        uint64_t off = ip - f->win_base;
        struct ptd_ild_step st;
        unsigned sl;
        if (off < f->win_len && f->win_len - off >= PTD_ILD_MAX_LEN &&
            (sl = ptd_ild_step(f->code + off, PTD_ILD_MAX_LEN, f->mode, &st)) != 0) {
            pinsn_of_entry(p, ip, sl, st.iclass, st.rel ? ip + sl + (uint64_t)(int64_t)st.disp : 0,
                           (st.rel ? PB_DIRECT : 0) | (st.rel && st.disp == 0 ? PB_ZERO_DISP : 0));
            goto cache;
        }
    }
    n = decode(f, &insn, &bytes);
    if (n < 0)
        return n;
    pinsn_of(p, &insn);
cache:
    if (e) {
        e->ip = ip;
        e->target = p->target;
        e->size = p->size;
        e->iclass = p->iclass;
        e->mode = f->mode;
        e->bits = (uint8_t)((p->direct ? PB_DIRECT : 0) | (p->zero_disp ? PB_ZERO_DISP : 0));
    }
    return 0;
}

/* ---- which instruction ---------------------------------------------------- */

/* Opcodes the events care about (SDM Vol. 2 Appendix A). */
enum {
    OPC_CALL_FAR_PTR = 0x9a,
    OPC_GRP5 = 0xff,
    OPC_INT3 = 0xcc,
    OPC_INT = 0xcd,
    OPC_INTO = 0xce,
    OPC_INT1 = 0xf1,
    OPC_IRET = 0xcf,
    OPC_0F_GRP7 = 0x01,
    OPC_0F_SYSCALL = 0x05,
    OPC_0F_SYSRET = 0x07,
    OPC_0F_MOV_CR = 0x22,
    OPC_0F_SYSENTER = 0x34,
    OPC_0F_SYSEXIT = 0x35,
    OPC_0F_GRP9 = 0xc7,
    GRP5_CALL_FAR = 3,
    GRP9_VMPTRLD = 6,
    CR3 = 3,
    REX_R = 0x04,
    MODRM_VMCALL = 0xc1,
    MODRM_VMLAUNCH = 0xc2,
    MODRM_VMRESUME = 0xc3,
    MODRM_ERET = 0xca,
    MODRM_UIRET = 0xec,
    PREFIX_F2 = 0xf2,
    PREFIX_F3 = 0xf3,
};
#define MODRM_REG(m) (((m) >> 3) & 7)
#define MODRM_MOD(m) ((m) >> 6)

static unsigned kind_primary(const struct ptd_insn *in, bool x64)
{
    switch (in->opcode) {
    case OPC_INT3:
    case OPC_INT:
    case OPC_INT1: return PTD_FLOW_K_SWINT | PTD_FLOW_K_FAR_CALL;
    case OPC_INTO: return x64 ? 0 : PTD_FLOW_K_SWINT | PTD_FLOW_K_FAR_CALL;
    case OPC_IRET: return PTD_FLOW_K_IRET;
    case OPC_CALL_FAR_PTR: return x64 ? 0 : PTD_FLOW_K_FAR_CALL;
    case OPC_GRP5:
        return ((in->flags & PTD_INSN_MODRM) && MODRM_REG(in->modrm) == GRP5_CALL_FAR)
                   ? PTD_FLOW_K_FAR_CALL
                   : 0;
    default: return 0;
    }
}

static unsigned kind_0f(const struct ptd_insn *in)
{
    bool modrm = (in->flags & PTD_INSN_MODRM) != 0;
    unsigned rep = (in->flags & PTD_INSN_REP) ? in->rep_byte : 0;
    switch (in->opcode) {
    case OPC_0F_SYSCALL:
    case OPC_0F_SYSENTER: return PTD_FLOW_K_SYSCALL | PTD_FLOW_K_FAR_CALL;
    case OPC_0F_SYSRET:
    case OPC_0F_SYSEXIT: return PTD_FLOW_K_IRET;
    case OPC_0F_MOV_CR:
        return (modrm && MODRM_REG(in->modrm) == CR3 &&
                !((in->flags & PTD_INSN_REX) && (in->rex & REX_R)))
                   ? PTD_FLOW_K_MOV_CR3
                   : 0;
    case OPC_0F_GRP9:
        return (modrm && MODRM_MOD(in->modrm) != 3 && MODRM_REG(in->modrm) == GRP9_VMPTRLD)
                   ? PTD_FLOW_K_VMPTRLD
                   : 0;
    case OPC_0F_GRP7:
        if (!modrm)
            return 0;
        switch (in->modrm) {
        case MODRM_VMCALL: return PTD_FLOW_K_FAR_CALL;
        case MODRM_VMLAUNCH:
        case MODRM_VMRESUME: return PTD_FLOW_K_VMENTRY;
        case MODRM_UIRET: return PTD_FLOW_K_UIRET;
        case MODRM_ERET:
            return (rep == PREFIX_F2 || rep == PREFIX_F3) ? PTD_FLOW_K_IRET : 0; /* ERETS, ERETU */
        default: return 0;
        }
    default: return 0;
    }
}

unsigned ptd_flow_kind(struct ptd_flow *f, struct ptd_flow_pinsn *p)
{
    struct ptd_insn insn;
    const uint8_t *bytes;
    uint64_t ip = f->ip;
    if (p->kind_known)
        return p->kind;
    p->kind = 0;
    p->kind_known = 1;
    f->ip = p->ip;
    if (decode(f, &insn, &bytes) >= 0 && !(insn.flags & PTD_INSN_VEX)) {
        if (insn.flags & PTD_INSN_PTWRITE)
            p->kind = PTD_FLOW_K_PTWRITE;
        else if (insn.map == PTD_ILD_MAP_PRIMARY)
            p->kind = (uint16_t)kind_primary(&insn, f->mode == PTD_EXEC_MODE_64);
        else if (insn.map == PTD_ILD_MAP_0F)
            p->kind = (uint16_t)kind_0f(&insn);
    }
    f->ip = ip;
    return p->kind;
}

int ptd_flow_next_ip(const struct ptd_flow_pinsn *p, uint64_t *ip)
{
    switch (p->iclass) {
    case PTD_ICLASS_OTHER: *ip = p->ip + p->size; return 0;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL:
        if (!p->direct)
            return -PTD_ERR_BAD_QUERY;
        *ip = p->target;
        return 0;
    default: return -PTD_ERR_BAD_QUERY;
    }
}

/* ---- sections -------------------------------------------------------------- */

/* The section (mapped region) holding f->ip, when it left the last one: a
 * block stays in it, as libipt's stay in one image section. Without a map
 * callback, one. Its bounds (f->sec_lo/hi) and block-cache directory
 * (f->bce) come from the flow's slot for the IP's page when a block
 * entered it before, else from the map callback and the cache's list: the
 * regions the callback gives are the image's sections, unchanged until
 * ptd_flow_invalidate, so every IP in one gets the same answer. A section
 * that is no longer its slot's (another page's section took it) is asked
 * for again. */
PTD_NOINLINE static void section_enter(struct ptd_flow *f)
{
    uint64_t ip = f->ip;
    struct ptd_flow_section *s = &f->secs[(ip >> PTD_FLOW_SECTIONS_PAGE) & (PTD_FLOW_SECTIONS - 1)];
    if (ip - s->lo < s->hi - s->lo) {
        f->sec_lo = s->lo;
        f->sec_hi = s->hi;
        f->bce = s->bce;
        return;
    }
    f->sec_lo = 0;
    f->sec_hi = UINT64_MAX;
    if (f->map) {
        uint64_t base = 0;
        size_t size = 0;
        if (f->map(f->ctx, ip, &base, &size) && size) {
            f->sec_lo = base;
            f->sec_hi = base + size < base ? UINT64_MAX : base + size;
        } else {
            /* in no section: asked again at the next block */
            f->sec_hi = 0;
        }
    }
    ptd_flow_bcache_section(f);
    if (f->map && f->sec_hi > f->sec_lo)
        *s = (struct ptd_flow_section){ f->sec_lo, f->sec_hi, f->bce };
}

static inline void block_start(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    uint64_t ip = f->ip;
    blk->ninsn = 0;
    blk->mode = f->mode;
    blk->speculative = f->speculative;
    blk->last_iclass = PTD_FLOW_ICLASS_ERROR;
    blk->ip = ip;
    if (PTD_RARE(!ptd_flow_in_section(f, ip)))
        section_enter(f);
    /* apart from blk->ip: stored together, gcc loads f->ip as 16 bytes,
     * which cannot be forwarded from the 8-byte store that just wrote it
     * (a stall per block) */
    blk->last_ip = ip;
}

void ptd_flow_block_start(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    block_start(f, blk);
}

/* ---- the walk ------------------------------------------------------------- */

int ptd_flow_one_insn(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p)
{
    int r;
    if (blk->ninsn >= PTD_FLOW_BLOCK_MAX)
        return 0;
    if (blk->ninsn && !ptd_flow_in_section(f, f->ip))
        return 0;
    r = ptd_flow_decode_step(f, p);
    if (r < 0)
        return r;
    ptd_flow_log_call(f, p);
    blk->last_iclass = p->iclass;
    blk->last_ip = p->ip;
    blk->ninsn++;
    r = ptd_flow_add_icnt(f, 1);
    return r < 0 ? r : 1;
}

int ptd_flow_walk_plain(struct ptd_flow *f, struct ptd_flow_block *blk, struct ptd_flow_pinsn *p,
                        uint64_t stop)
{
    const uint64_t start = f->ip;
    uint64_t ip = start, last = 0;
    uint32_t n = blk->ninsn, n0 = n, room;
    struct ptd_ild_step st = { 0, 0, 0 };
    unsigned sl = 0;
    /* direct branches only where they end no block */
    const bool branches = !(f->flags & (PTD_FLOW_F_END_ON_CALL | PTD_FLOW_F_END_ON_JUMP));
    /* for the walks' memo: the return addresses pushed on the way */
    unsigned pushed = 0;
    uint64_t push = 0;
    struct ptd_flow_walk *w;

    if (f->mode == PTD_FLOW_MODE_UNKNOWN)
        return 0;
    /* the block's and the TRIG count's room (ptd_flow_one_insn's checks) */
    room = PTD_FLOW_BLOCK_MAX - n;
    if (f->has_icnt && UINT32_MAX - f->icnt < room)
        room = UINT32_MAX - f->icnt;
    /* the same walk taken before: its outcome again (ptd_flow_walks.c) */
    w = ptd_flow_walk_slot(f, stop);
    if (w) {
        int r = ptd_flow_walk_replay(f, blk, p, w, stop, room);
        if (r >= 0)
            return r;
    }
    /* bounded: each step adds an instruction to the block, at most room;
     * the checks are ptd_flow_one_insn's and ptd_flow_decode_step's lean
     * case, whatever fails them is left to those */
    while (ip != stop && n - n0 < room && (!n || ptd_flow_in_section(f, ip))) {
        uint64_t off = ip - f->win_base, next;
        unsigned len;
        struct ptd_ild_step s;
        if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN ||
            !(len = ptd_ild_step(f->code + off, PTD_ILD_MAX_LEN, f->mode, &s)))
            break;
        next = ip + len;
        if (s.iclass != PTD_ICLASS_OTHER) {
            /* a direct jump or call: its target (ptd_flow_next_ip), a
             * call's return address (ptd_flow_log_call) */
            if (!branches || !s.rel ||
                (s.iclass != PTD_ICLASS_DIRECT_JUMP && s.iclass != PTD_ICLASS_DIRECT_CALL)) {
                /* the one it stops at, decoded: into the block as
                 * ptd_flow_one_insn would add it (its checks are the
                 * loop's), the flow at it */
                ptd_flow_pinsn_of_step(p, ip, len, &s);
                ptd_flow_log_call(f, p);
                blk->last_iclass = s.iclass;
                blk->last_ip = ip;
                blk->ninsn = n + 1;
                if (f->has_icnt)
                    f->icnt += n + 1 - n0;
                f->ip = ip;
                if (w)
                    ptd_flow_walk_keep(f, w, start, stop, p, n - n0, true, pushed, push);
                return 1;
            }
            if (s.iclass == PTD_ICLASS_DIRECT_CALL && s.disp) {
                ptd_flow_ret_push(f, next);
                push = next;
                pushed++;
            }
            next += (uint64_t)(int64_t)s.disp;
        }
        st = s;
        sl = len;
        last = ip;
        n++;
        ip = next;
    }
    if (n == n0)
        return 0;
    /* the last one walked, as ptd_flow_decode_step leaves it */
    ptd_flow_pinsn_of_step(p, last, sl, &st);
    blk->last_iclass = st.iclass;
    blk->last_ip = last;
    blk->ninsn = n;
    if (f->has_icnt)
        f->icnt += n - n0;
    f->ip = ip;
    /* kept unless the room ended it */
    if (w && n - n0 < room)
        ptd_flow_walk_keep(f, w, start, stop, p, n - n0, false, pushed, push);
    return 0;
}

/* Decodes the straight-line run at the IP into *e: instructions that fall
 * through, up to a branch, RUN_MAX of them, or the section's end. Leaves
 * the IP at its start. 0, or an error for the instruction after the
 * e->ninsn good ones (e->target its IP, e->last_ip the last good one). */
static int decode_run(struct ptd_flow *f, struct run *e)
{
    struct ptd_flow_pinsn p;
    uint64_t start = f->ip, ip = start, prev = start;
    unsigned n = 0;

    /* The IP stays in a register: the loop stores nothing to *f except
     * through window()/decode(), so the window's fields stay in registers
     * too and each step depends only on the one before. cur: the code byte
     * at ip, kept beside it while ip stays in the window and the section
     * with an instruction's worth of bytes after it (lim: the end of
     * both), so each step's first load waits for one add only; NULL: look
     * at the window. */
    const uint8_t *cur = NULL, *lim = NULL;
    for (;;) {
        /* the common instructions: length and class (ptd_ild_fast.h) */
        struct ptd_ild_step s;
        unsigned sl;
        if (PTD_RARE(!cur || (size_t)(lim - cur) < PTD_ILD_MAX_LEN)) {
            /* a block does not run on into another section */
            if (n && !ptd_flow_in_section(f, ip)) {
                e->last_ip = prev;
                e->target = 0;
                e->size = (uint8_t)(ip - prev);
                e->iclass = PTD_ICLASS_OTHER;
                e->bits = 0;
                goto done;
            }
            uint64_t off = ip - f->win_base;
            cur = NULL;
            if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN) {
                f->ip = ip;
                if (f->mode == PTD_FLOW_MODE_UNKNOWN || window(f) != 0)
                    goto general;
                off = ip - f->win_base;
                if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN)
                    goto general;
            }
            cur = f->code + off;
            lim = f->code + f->win_len;
            if (f->sec_hi - f->win_base < f->win_len)
                lim = f->code + (f->sec_hi - f->win_base);
            if ((size_t)(lim - cur) < PTD_ILD_MAX_LEN)
                goto general;
        }
        sl = ptd_ild_step(cur, PTD_ILD_MAX_LEN, f->mode, &s);
        if (sl) {
            n++;
            if (s.iclass != PTD_ICLASS_OTHER || n == RUN_MAX) {
                e->last_ip = ip;
                e->target = s.rel ? ip + sl + (uint64_t)(int64_t)s.disp : 0;
                e->size = (uint8_t)sl;
                e->iclass = s.iclass;
                e->bits =
                    (uint8_t)((s.rel ? PB_DIRECT : 0) | (s.rel && s.disp == 0 ? PB_ZERO_DISP : 0));
                goto done;
            }
            prev = ip;
            ip += sl;
            cur += sl;
            continue;
        }
    general:
        cur = NULL;
        struct ptd_insn insn;
        const uint8_t *bytes;
        f->ip = ip;
        int len = decode(f, &insn, &bytes);
        if (len < 0) {
            e->ninsn = n;
            e->last_ip = prev;
            e->target = ip;
            f->ip = start;
            return len;
        }
        n++;
        if (insn.iclass != PTD_ICLASS_OTHER || n == RUN_MAX) {
            pinsn_of(&p, &insn);
            e->last_ip = p.ip;
            e->target = p.target;
            e->size = p.size;
            e->iclass = p.iclass;
            e->bits = (uint8_t)((p.direct ? PB_DIRECT : 0) | (p.zero_disp ? PB_ZERO_DISP : 0));
            break;
        }
        prev = ip;
        ip += (uint64_t)len;
    }
done:
    f->ip = start;
    e->ninsn = n;
    return 0;
}

/* After the step that took the TIP: a tick event in its place when the
 * time moved (ip: the branch), else the next event. */
static int tick(struct ptd_flow *f, uint64_t ip)
{
    if ((f->flags & PTD_FLOW_F_TICK) && f->ev.tsc != f->tsc) {
        f->ev.type = PTD_EV_TICK;
        f->ev.ip = ip;
        return 0;
    }
    return ptd_flow_fetch_event(f);
}

/* An indirect branch's target: the TIP ahead; or, behind the TNT ahead
 * whose bits are not all used, a TIP the CPU deferred (SDM "Deferred
 * TIPs"), taken out of order while the TNT stays ahead. */
int ptd_flow_indirect(struct ptd_flow *f)
{
    struct ptd_event *ev = &f->ev;
    if (ev->type == PTD_EV_TIP) {
        uint64_t at = f->ip;
        if (ev->flags & PTD_EVF_IP_SUPPRESSED)
            return -PTD_ERR_BAD_PACKET;
        f->ip = ev->ip;
        return tick(f, at);
    }
    if (ev->type == PTD_EV_TNT) {
        struct ptd_qry saved = f->q;
        struct ptd_event tip;
        int r = ptd_qry_next(&f->q, &tip);
        if (r < 0 || tip.type != PTD_EV_TIP) {
            f->q = saved;
            return -PTD_ERR_BAD_QUERY;
        }
        f->ip = tip.ip;
        return 0;
    }
    return -PTD_ERR_BAD_QUERY;
}

/* A return the trace gave as a TIP (not compressed): the call stack no
 * longer follows the calls still owed (ret_known). */
static int ret_indirect(struct ptd_flow *f)
{
    int st = ptd_flow_indirect(f);
    if (st == 0)
        f->ret_known = 0;
    return st;
}

int ptd_flow_proceed_with_trace(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    int tnt;
    switch (p->iclass) {
    case PTD_ICLASS_COND_JUMP:
        tnt = ptd_flow_cond_branch(f);
        if (tnt < 0)
            return tnt;
        f->ip = tnt ? p->target : p->ip + p->size;
        return 0;
    case PTD_ICLASS_NEAR_RET:
        /* compressed when the trace has a taken bit for it */
        tnt = ptd_flow_cond_branch(f);
        if (tnt == -PTD_ERR_BAD_QUERY)
            return ret_indirect(f);
        if (tnt < 0)
            return tnt;
        if (!tnt)
            return -PTD_ERR_BAD_RETCOMP;
        return ptd_flow_ret_pop(f, &f->ip);
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL:
        /* a direct branch needs no trace (JMPABS, direct but given by a
         * TIP, is not classed as one) */
        if (p->direct)
            return -PTD_ERR_INTERNAL;
        return ptd_flow_indirect(f);
    case PTD_ICLASS_OTHER: return -PTD_ERR_INTERNAL;
    default: return ptd_flow_indirect(f);
    }
}

/* The block fills up inside a run: its instructions one at a time up to
 * the last that fits (they all fall through). */
static int fill_block(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct ptd_flow_pinsn p;
    int r;
    while ((r = ptd_flow_one_insn(f, blk, &p)) > 0)
        if (ptd_flow_next_ip(&p, &f->ip) < 0)
            return -PTD_ERR_INTERNAL;
    return r;
}

int ptd_flow_proceed_uncached(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    /* bounded: each round adds at least one instruction to the block,
     * which holds at most PTD_FLOW_BLOCK_MAX */
    for (;;) {
        struct run e;
        struct ptd_flow_pinsn p;
        int r;

        if (blk->ninsn && !ptd_flow_in_section(f, f->ip))
            return 0;
        r = decode_run(f, &e);
        if (e.ninsn && blk->ninsn + e.ninsn > PTD_FLOW_BLOCK_MAX)
            return fill_block(f, blk);
        if (r < 0) {
            /* the good instructions before the one that fails */
            if (!e.ninsn)
                return r;
            blk->ninsn += e.ninsn;
            blk->last_ip = e.last_ip;
            blk->last_iclass = PTD_ICLASS_OTHER;
            f->ip = e.target;
            r = ptd_flow_add_icnt(f, e.ninsn);
            if (r < 0)
                return r;
            continue;
        }
        blk->ninsn += e.ninsn;
        blk->last_ip = e.last_ip;
        blk->last_iclass = e.iclass;
        r = ptd_flow_add_icnt(f, e.ninsn);
        if (r < 0)
            return r;
        switch (e.iclass) {
        case PTD_ICLASS_OTHER: f->ip = e.last_ip + e.size; continue;
        case PTD_ICLASS_DIRECT_JUMP:
            if (!(e.bits & PB_DIRECT))
                break;
            f->ip = e.target;
            if (f->flags & PTD_FLOW_F_END_ON_JUMP)
                return 0;
            continue;
        case PTD_ICLASS_DIRECT_CALL:
            if (!(e.bits & PB_DIRECT))
                break;
            if (!(e.bits & PB_ZERO_DISP))
                ptd_flow_ret_push(f, e.last_ip + e.size);
            f->ip = e.target;
            if (f->flags & PTD_FLOW_F_END_ON_CALL)
                return 0;
            continue;
        case PTD_ICLASS_INDIRECT_CALL: ptd_flow_ret_push(f, e.last_ip + e.size); break;
        default: break;
        }
        /* the instruction that needs trace ends the block */
        f->ip = e.last_ip;
        pinsn_of_entry(&p, e.last_ip, e.size, e.iclass, e.target, e.bits);
        return ptd_flow_proceed_with_trace(f, &p);
    }
}

int ptd_flow_proceed_no_event(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    if (f->bce && ptd_flow_in_section(f, f->ip))
        return ptd_flow_proceed_cached(f, blk);
    return ptd_flow_proceed_uncached(f, blk);
}

int ptd_flow_next_block(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    int st;
    block_start(f, blk);
    /* an error of the query layer comes out now, after the block before
     * it; at the end of the trace the flow goes on while it needs none */
    if (f->status < 0) {
        if (f->status != -PTD_ERR_EOS)
            return f->status;
        if (!f->enabled)
            return -PTD_ERR_EOS;
        st = ptd_flow_proceed_no_event(f, blk);
        return st < 0 ? st : PTD_ST_EOS;
    }
    switch (f->ev.type) {
    case PTD_EV_TNT:
    case PTD_EV_TIP:
        if (!f->enabled)
            return -PTD_ERR_NO_ENABLE;
        return ptd_flow_block_walk(f, blk);
    default: return ptd_flow_proceed_event(f, blk);
    }
}

int ptd_flow_block_walk(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    int st = ptd_flow_proceed_no_event(f, blk);
    if (st < 0)
        return st;
    /* the common end: TNT bits left or a TIP ahead, nothing held and no
     * tick to make: no event binds here (ptd_flow_trailing's first cases,
     * without the call) */
    if (f->status >= 0 && !f->process_insn &&
        ((f->ev.type == PTD_EV_TNT && f->ev.a && !(f->flags & PTD_FLOW_F_TICK)) ||
         f->ev.type == PTD_EV_TIP))
        return 0;
    return ptd_flow_trailing(f, blk);
}

/* ---- blocks counted (callers that print no instruction) ---------------- */

int ptd_flow_run_blocks(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max_blocks)
{
    struct ptd_flow_block *blk = &run->blk;
    int st = 0;

    for (uint32_t k = 0; k < max_blocks; k++) {
        /* the common blocks (cached, ended by a TNT bit) the quick way,
         * as many as come in a row; the block that stopped it below */
        if (f->bce && f->ev.type == PTD_EV_TNT && f->status >= 0 && f->enabled &&
            !f->process_insn && !(f->flags & PTD_FLOW_F_TICK)) {
            k += ptd_flow_bcache_run(f, run, max_blocks - k, &st);
            if (st < 0 || (st & (PTD_ST_EVENT | PTD_ST_EOS)) || k >= max_blocks)
                break;
        }
        st = ptd_flow_next_block(f, blk);
        run->blocks++;
        if (blk->ninsn) {
            run->insns += blk->ninsn;
            run->last_ip = blk->last_ip;
            run->last_iclass = blk->last_iclass;
        }
        /* an event, the end or an error: the caller's turn */
        if (st < 0 || (st & (PTD_ST_EVENT | PTD_ST_EOS)))
            break;
    }
    return st;
}
