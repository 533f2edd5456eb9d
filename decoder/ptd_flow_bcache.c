/* libptd instruction-flow layer: the block cache. For every code byte of a
 * section, where the walk from there next needs trace (or must stop to
 * look at an instruction), so a block jumps over the instructions between
 * without decoding them.
 *
 * The cache also decides where blocks end, and libipt's block decoder
 * (ptxed's default) ends them the same way from its own cache: the first
 * time code runs, while its entries are filled, a block also ends after a
 * direct call, a backward direct jump, where the code leaves its section,
 * and after 0x400 new instructions; once the entries are there, the block
 * runs on over direct calls and jumps to the next instruction that needs
 * trace. So that `--stat`'s block count, `--block:show-blocks` and
 * everything printed once per block (offsets, times) come out as ptxed
 * prints them, this file keeps the same entries by the same rules (one
 * entry per code byte, a 16-bit displacement, an 8-bit instruction count,
 * a fill bounded by the same step count); see docs/flow.md. Without the
 * cache (no memory for it) blocks end only where trace is needed, as
 * libipt's do without one.
 *
 * The fill walks forward and writes the entries on the way back (each
 * entry from the one after it); the way back is a stack in the cache's
 * memory instead of recursion: one frame per instruction the fill added
 * to the block, so at most PTD_FLOW_BLOCK_MAX. */
#include "decoder/ptd_flow_impl.h"
#include "decoder/ptd_ild_fast.h"

/* An entry (libipt's 32 bits): the displacement from its IP to the
 * decision point (the instruction that ends the run), the instructions to
 * it (the decision point's own included), the execution mode (0: no
 * entry), the decision point's length when it fits, and what to do there
 * (the top bits: a conditional branch with its length is one range of
 * the low 32 bits); in the upper 32 bits of ours, what a second look at
 * the instruction would find: for a conditional branch or a direct call
 * or jump, its target's displacement from the entry's IP (its own
 * displacement plus the way to the decision point's end, modulo 2^32:
 * bce_cond_disp takes that way off again), for an indirect branch its
 * class. */
#define BCE_DISP_MASK   0xffffu
#define BCE_NINSN_SHIFT 16
#define BCE_MODE_SHIFT  24
#define BCE_ISIZE_SHIFT 26
#define BCE_QUAL_SHIFT  29
#define BCE_ISIZE_MAX   7u
#define BCE_NINSN_MAX   0xffu

enum bce_qualifier {
    BQ_AGAIN,    /* no decision point: an overflow stopped the entry
                    * short; go on from where it leads */
    BQ_COND,     /* a conditional branch: a TNT bit */
    BQ_IND_CALL, /* a near indirect call: the call stack and a TIP */
    BQ_RETURN,   /* a near return: a TNT bit (compressed) or a TIP */
    BQ_INDIRECT, /* an indirect jump or far transfer: a TIP */
    BQ_DECODE,   /* look at the instruction: a direct call (the call
                    * stack), a backward jump, the section's end */
    /* BQ_DECODE's direct calls and jumps whose length fits: the look
     * done, its displacement in the upper bits */
    BQ_DCALL,
    BQ_DJUMP,
};

/* The fill's steps before it stops with an entry that leads on. */
#define FILL_STEPS 0x400u

/* A section's entries: a directory of chunks (CHUNK entries each, made
 * (zero) when first written, so a big section costs only what runs
 * in it), after a header; the sections are a list in the cache's memory,
 * the one entered last first (code that calls into another section comes
 * back: its search is short). */
struct bsec {
    uint64_t base, size;
    uint64_t next; /* offset of the next section's header, 0: last */
};
#define CHUNK_SHIFT PTD_FLOW_BCACHE_CHUNK_SHIFT
#define CHUNK       PTD_FLOW_BCACHE_CHUNK_CODE

/* A fill frame: an instruction the fill added to the block, whose entry
 * is written on the way back from the one at its next IP. */
struct bframe {
    uint32_t ioff, noff;
};
#define BSTACK_FRAMES (PTD_FLOW_BLOCK_MAX + 1u)
/* The stack's last frame, which no fill reaches (a frame per instruction
 * of the block, at most PTD_FLOW_BLOCK_MAX): in memory that came zeroed
 * (PTD_FLOW_F_BCACHE_ZEROED) its ioff keeps the most ever handed out, in
 * 8-byte units (0: nothing yet), so that a flow initialised again on the
 * same memory knows what is no longer zero. */
#define BSTACK_MARK   (BSTACK_FRAMES - 1u)
#define BSEC_MAX_SIZE 0x40000000u

_Static_assert(PTD_FLOW_BCACHE_STACK == BSTACK_FRAMES * sizeof(struct bframe), "stack size");
_Static_assert(PTD_FLOW_BCACHE_SECTION == sizeof(struct bsec), "section header size");
_Static_assert(PTD_FLOW_BCACHE_CHUNK == CHUNK * 8u, "chunk size");

typedef uint64_t bce_t;
static inline bce_t bce_make(int32_t disp, unsigned ninsn, unsigned mode, unsigned qual,
                             unsigned isize)
{
    return ((uint32_t)disp & BCE_DISP_MASK) | (ninsn << BCE_NINSN_SHIFT) |
           ((mode + 1u) << BCE_MODE_SHIFT) | (qual << BCE_QUAL_SHIFT) | (isize << BCE_ISIZE_SHIFT);
}
static inline bool bce_valid(bce_t e)
{
    return ((e >> BCE_MODE_SHIFT) & 3u) != 0;
}
static inline int32_t bce_disp(bce_t e)
{
    return (int16_t)(uint16_t)(e & BCE_DISP_MASK);
}
static inline unsigned bce_ninsn(bce_t e)
{
    return (unsigned)(e >> BCE_NINSN_SHIFT) & 0xffu;
}
static inline unsigned bce_mode(bce_t e)
{
    return ((unsigned)(e >> BCE_MODE_SHIFT) & 3u) - 1u;
}
static inline unsigned bce_qual(bce_t e)
{
    return (unsigned)(e >> BCE_QUAL_SHIFT) & 7u;
}
static inline unsigned bce_isize(bce_t e)
{
    return (unsigned)(e >> BCE_ISIZE_SHIFT) & 7u;
}
/* A conditional branch's or direct call's or jump's displacement (from
 * the decision point's end). */
static inline int64_t bce_cond_disp(bce_t e)
{
    return (int32_t)((uint32_t)(e >> 32) - (uint32_t)bce_disp(e) - bce_isize(e));
}
/* The same branch's target minus the entry's IP: exact when the target is
 * in the section (a conditional branch with its length, add_decision). */
static inline int64_t bce_target_disp(bce_t e)
{
    return (int32_t)(uint32_t)(e >> 32);
}
/* The upper bits of a branch's entry at displacement disp from the
 * decision point, from the branch's own displacement (cdisp) and the
 * length the entry holds. */
static inline bce_t bce_target_bits(int64_t cdisp, int32_t disp, unsigned isize)
{
    return (bce_t)((uint32_t)cdisp + (uint32_t)disp + isize) << 32;
}
static inline unsigned bce_iclass(bce_t e)
{
    return (unsigned)(e >> 32) & 0xffu;
}

/* ---- memory --------------------------------------------------------------- */

void ptd_flow_bcache_init(struct ptd_flow *f, void *mem, size_t size)
{
    uintptr_t a = (uintptr_t)mem, b = (a + 7) & ~(uintptr_t)7;
    f->barena = NULL;
    f->barena_size = 0;
    f->barena_used = 0;
    f->bce = NULL;
    f->walks = NULL;
    f->bsec_head = 0;
    f->barena_dirty = 0;
    if (!mem || size < (b - a) + PTD_FLOW_BCACHE_STACK + PTD_FLOW_BCACHE_SECTION)
        return;
    f->barena = (uint8_t *)b;
    f->barena_size = size - (b - a);
    /* the chunk offsets in a directory (from the directory, which is in
     * the memory too) are 32 bits, in 8-byte units */
    if (f->barena_size > ((uint64_t)UINT32_MAX << 3))
        f->barena_size = (size_t)((uint64_t)UINT32_MAX << 3);
    f->barena_used = PTD_FLOW_BCACHE_STACK;
    f->barena_dirty = f->barena_size;
    if (f->flags & PTD_FLOW_F_BCACHE_ZEROED) {
        size_t mark = (size_t)((struct bframe *)(void *)f->barena)[BSTACK_MARK].ioff << 3;
        f->barena_dirty = mark < f->barena_used   ? f->barena_used
                          : mark > f->barena_size ? f->barena_size
                                                  : mark;
    }
}

void ptd_flow_bcache_reset(struct ptd_flow *f)
{
    f->bce = NULL;
    f->walks = NULL;
    f->bsec_head = 0;
    if (f->barena)
        f->barena_used = PTD_FLOW_BCACHE_STACK;
}

/* bytes of the memory, all zero: what was handed out before (since the
 * last reset, or by an earlier flow on the same memory) is cleared; what
 * never was (from barena_dirty on) is zero in memory that came zeroed,
 * else cleared too (barena_dirty is then the end). */
PTD_NOINLINE static void *take_zeroed(struct ptd_flow *f, size_t bytes)
{
    bytes = (bytes + 7u) & ~(size_t)7;
    if (bytes > f->barena_size - f->barena_used)
        return NULL;
    size_t at = f->barena_used, end = at + bytes;
    uint64_t *p = (uint64_t *)(void *)(f->barena + at);
    if (at < f->barena_dirty) {
        size_t n = ((end < f->barena_dirty ? end : f->barena_dirty) - at) >> 3;
        for (size_t i = 0; i < n; i++)
            p[i] = 0;
    }
    if (end > f->barena_dirty) {
        /* only in memory that came zeroed (else the mark is the end) */
        f->barena_dirty = end;
        ((struct bframe *)(void *)f->barena)[BSTACK_MARK].ioff = (uint32_t)(end >> 3);
    }
    f->barena_used = end;
    return p;
}

void *ptd_flow_bcache_take(struct ptd_flow *f, size_t bytes)
{
    return f->barena ? take_zeroed(f, bytes) : NULL;
}

/* A new section's header and empty directory, first in the list (out of
 * line: once per section). */
PTD_NOINLINE static void section_new(struct ptd_flow *f, uint64_t size)
{
    size_t chunks = (size_t)((size + CHUNK - 1) >> CHUNK_SHIFT);
    struct bsec *s = take_zeroed(f, sizeof(*s) + chunks * 4u);
    if (!s)
        return;
    s->base = f->sec_lo;
    s->size = size;
    s->next = f->bsec_head;
    f->bsec_head = (size_t)((uint8_t *)s - f->barena);
    f->bce = (uint32_t *)(void *)(s + 1);
}

/* The section [lo, hi) (f->sec_lo/hi): its directory in f->bce, found or
 * made (empty); NULL when there is no room. */
void ptd_flow_bcache_section(struct ptd_flow *f)
{
    uint64_t size = f->sec_hi - f->sec_lo;
    struct bsec *s;
    size_t at = f->bsec_head, last = 0;

    f->bce = NULL;
    if (!f->barena || !size || size >= BSEC_MAX_SIZE)
        return;
    /* bounded: the list holds each section once */
    while (at) {
        s = (struct bsec *)(void *)(f->barena + at);
        if (s->base == f->sec_lo && s->size == size) {
            if (last) {
                /* to the front */
                ((struct bsec *)(void *)(f->barena + last))->next = s->next;
                s->next = f->bsec_head;
                f->bsec_head = at;
            }
            f->bce = (uint32_t *)(void *)(s + 1);
            return;
        }
        last = at;
        at = (size_t)s->next;
    }
    section_new(f, size);
}

/* Where the entry of a section offset is in the chunk c (its directory
 * slot, not 0), in entries from the directory: a chunk's offset is from
 * the directory (chunks are made after their section's directory), so
 * that a lookup needs no more than the directory's address. */
static inline size_t chunk_index(uint32_t c, uint64_t off)
{
    return (size_t)c + (off & (CHUNK - 1));
}

/* The entry at a section offset (in the section; 0: none) in the
 * directory dir. */
static inline bce_t dir_entry(const uint32_t *dir, uint64_t off)
{
    uint32_t c = dir[off >> CHUNK_SHIFT];
    return c ? ((const bce_t *)(const void *)dir)[chunk_index(c, off)] : 0;
}

static inline bce_t bce_get(const struct ptd_flow *f, uint64_t off)
{
    return dir_entry(f->bce, off);
}

/* Start loading the entry of ip (in the section) into the cache. */
static inline void bce_prefetch(const struct ptd_flow *f, uint64_t ip)
{
    uint64_t off = ip - f->sec_lo;
    if (off < f->sec_hi - f->sec_lo) {
        uint32_t c = f->bce[off >> CHUNK_SHIFT];
        if (c)
            PTD_PREFETCH(&((const bce_t *)(const void *)f->bce)[chunk_index(c, off)]);
    }
}

/* A chunk for the directory slot *c: 0, or false when there is no room
 * (PTD_FLOW_BCACHE_BYTES was not given). Out of line: once per chunk. */
PTD_NOINLINE static bool chunk_new(struct ptd_flow *f, uint32_t *c)
{
    bce_t *chunk = take_zeroed(f, CHUNK * sizeof(bce_t));
    if (!chunk)
        return false;
    *c = (uint32_t)(((uint8_t *)chunk - (uint8_t *)f->bce) >> 3);
    return true;
}

/* Write the entry at a section offset: false when there is no room for
 * its chunk (the entry stays none). */
static inline bool bce_set(struct ptd_flow *f, uint64_t off, bce_t e)
{
    uint32_t *c = &f->bce[off >> CHUNK_SHIFT];
    if (PTD_RARE(!*c) && !chunk_new(f, c))
        return false;
    ((bce_t *)(void *)f->bce)[chunk_index(*c, off)] = e;
    return true;
}

/* ---- entries ---------------------------------------------------------------- */

/* An entry that goes on at the next instruction (noff) from ioff, or, when
 * the displacement does not fit, one that looks at the instruction: the
 * entry written (0: no room for it). */
static bce_t add_trampoline(struct ptd_flow *f, uint32_t ioff, uint32_t noff, unsigned mode)
{
    int64_t disp = (int64_t)noff - (int64_t)ioff;
    bce_t e = disp == (int16_t)disp ? bce_make((int32_t)disp, 1, mode, BQ_AGAIN, 0)
                                    : bce_make(0, 1, mode, BQ_DECODE, 0);
    return bce_set(f, ioff, e) ? e : 0;
}

/* The entry of an instruction that needs trace. */
static int add_decision(struct ptd_flow *f, uint32_t ioff, const struct ptd_flow_pinsn *p)
{
    unsigned q;
    switch (p->iclass) {
    case PTD_ICLASS_COND_JUMP: q = BQ_COND; break;
    case PTD_ICLASS_NEAR_RET: q = BQ_RETURN; break;
    case PTD_ICLASS_INDIRECT_CALL: q = BQ_IND_CALL; break;
    case PTD_ICLASS_DIRECT_CALL:
        if (p->direct)
            return -PTD_ERR_INTERNAL;
        q = BQ_IND_CALL;
        break;
    case PTD_ICLASS_DIRECT_JUMP:
        if (p->direct)
            return -PTD_ERR_INTERNAL;
        q = BQ_INDIRECT; /* JMPABS: direct, but given by a TIP */
        break;
    case PTD_ICLASS_OTHER: return -PTD_ERR_INTERNAL;
    default: q = BQ_INDIRECT; break;
    }
    unsigned isize = p->size <= BCE_ISIZE_MAX ? p->size : 0;
    /* A conditional branch with its length has both ways in the section
     * (so the counting loop follows either without a check); one that
     * leaves it is looked at, as one whose length does not fit. */
    if (q == BQ_COND && isize &&
        !(ptd_flow_in_section(f, p->ip + p->size) && ptd_flow_in_section(f, p->target)))
        isize = 0;
    bce_t e = bce_make(0, 1, f->mode, q, isize);
    if (q == BQ_COND)
        e |= bce_target_bits((int64_t)(p->target - (p->ip + p->size)), 0, isize);
    else if (q == BQ_INDIRECT)
        e |= (bce_t)p->iclass << 32;
    bce_set(f, ioff, e);
    return 0;
}

/* The entry of an instruction the walk stops to look at (BQ_DECODE), or
 * for a direct call or jump whose length fits what the look finds. */
static bce_t decode_entry(const struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    if (p->direct && p->size <= BCE_ISIZE_MAX &&
        (p->iclass == PTD_ICLASS_DIRECT_CALL || p->iclass == PTD_ICLASS_DIRECT_JUMP))
        return bce_make(0, 1, f->mode, p->iclass == PTD_ICLASS_DIRECT_CALL ? BQ_DCALL : BQ_DJUMP,
                        p->size) |
               bce_target_bits((int64_t)(p->target - (p->ip + p->size)), 0, p->size);
    return bce_make(0, 1, f->mode, BQ_DECODE, 0);
}

/* The entry at ioff from e, the one at its next instruction (noff), if
 * that one is there and leads to a decision point in the section: 2
 * written, 1 a trampoline written instead (a field would overflow), 0
 * none, or an error; *w the entry now at ioff when one was written (0:
 * none, or no room for it). */
static inline int add_from_entry(struct ptd_flow *f, uint32_t ioff, uint32_t noff, bce_t e,
                                 bce_t *w)
{
    /* the decision point's and the displacement's offsets in the section
     * (dip - sec_lo, dip - ip) */
    int64_t doff = (int64_t)noff + bce_disp(e), disp = doff - (int64_t)ioff;
    unsigned ninsn = (bce_ninsn(e) + 1u) & BCE_NINSN_MAX;
    bce_t n;

    *w = 0;
    if (!bce_valid(e))
        return 0;
    if (bce_mode(e) != f->mode)
        return -PTD_ERR_INTERNAL;
    if ((uint64_t)doff >= f->sec_hi - f->sec_lo)
        return 0;
    if (PTD_RARE(!ninsn || disp != (int16_t)disp)) {
        *w = add_trampoline(f, ioff, noff, f->mode);
        return 1;
    }
    n = (e & ~(bce_t)(BCE_DISP_MASK | (BCE_NINSN_MAX << BCE_NINSN_SHIFT))) |
        ((uint32_t)disp & BCE_DISP_MASK) | (ninsn << BCE_NINSN_SHIFT);
    /* a branch's target: from this entry's IP now */
    if (bce_qual(e) == BQ_COND || bce_qual(e) == BQ_DCALL || bce_qual(e) == BQ_DJUMP)
        n = (uint32_t)n | bce_target_bits(bce_cond_disp(e), (int32_t)disp, bce_isize(e));
    if (bce_set(f, ioff, n))
        *w = n;
    return 2;
}

/* ---- the walk --------------------------------------------------------------- */

/* The fill after the instruction at ioff, whose next one (noff, in the
 * section) runs next: fill_step's result (see there). */
static PTD_ALWAYS_INLINE int fill_on(struct ptd_flow *f, uint32_t ioff, uint32_t noff,
                                     struct bframe *stack, uint32_t *sp, uint32_t *steps)
{
    bce_t e = bce_get(f, noff), w;
    if (bce_valid(e)) {
        int r = add_from_entry(f, ioff, noff, e, &w);
        return r < 0 ? r : r == 2 ? 2 : 0;
    }
    if (!--*steps) {
        add_trampoline(f, ioff, noff, f->mode);
        return 0;
    }
    stack[(*sp)++] = (struct bframe){ ioff, noff };
    return 1;
}

/* One step of the fill at f->ip (its entry empty): the instruction into
 * the block, then
 *   1   go on filling at the next instruction (this one's entry waits
 *       for it: a frame on the stack);
 *   2   the next instruction has an entry, this one's is written from it:
 *       go on with the cache;
 *   0 / < 0 the walk ends here. */
static int fill_step(struct ptd_flow *f, struct ptd_flow_block *blk, struct bframe *stack,
                     uint32_t *sp, uint32_t *steps)
{
    struct ptd_flow_pinsn p;
    uint64_t nip;
    uint32_t ioff, noff;
    int r;

    /* The common case inline: an instruction that falls through to one in
     * the section (what ptd_flow_one_insn and the general case below do
     * for it, in that order). */
    uint64_t ip = f->ip, woff = ip - f->win_base;
    struct ptd_ild_step s;
    unsigned sl;
    if (blk->ninsn < PTD_FLOW_BLOCK_MAX && (!f->has_icnt || f->icnt != UINT32_MAX) &&
        f->mode != PTD_FLOW_MODE_UNKNOWN && woff < f->win_len &&
        f->win_len - woff >= PTD_ILD_MAX_LEN &&
        (sl = ptd_ild_step(f->code + woff, PTD_ILD_MAX_LEN, f->mode, &s)) != 0) {
        if (s.iclass == PTD_ICLASS_OTHER && ptd_flow_in_section(f, ip + sl)) {
            ioff = (uint32_t)(ip - f->sec_lo);
            noff = (uint32_t)(ip + sl - f->sec_lo);
            blk->last_iclass = PTD_ICLASS_OTHER;
            blk->last_ip = ip;
            blk->ninsn++;
            if (f->has_icnt)
                f->icnt++; /* ptd_flow_add_icnt: room checked above */
            f->ip = ip + sl;
            return fill_on(f, ioff, noff, stack, sp, steps);
        }
        /* anything else the step knows: ptd_flow_one_insn's work with
         * the step's result (its decode would find the same) */
        if (blk->ninsn && !ptd_flow_in_section(f, ip))
            return 0;
        ptd_flow_pinsn_of_step(&p, ip, sl, &s);
        /* ptd_flow_log_call from the step, not from p just written (gcc
         * reads two of its bytes as one word: a store that cannot be
         * forwarded, a stall per branch) */
        if (s.iclass == PTD_ICLASS_INDIRECT_CALL ||
            (s.iclass == PTD_ICLASS_DIRECT_CALL && !(s.rel && s.disp == 0)))
            ptd_flow_ret_push(f, ip + sl);
        blk->last_iclass = p.iclass;
        blk->last_ip = ip;
        blk->ninsn++;
        if (f->has_icnt)
            f->icnt++;
    } else {
        r = ptd_flow_one_insn(f, blk, &p);
        if (r <= 0)
            return r;
    }
    ioff = (uint32_t)(p.ip - f->sec_lo);
    if (ptd_flow_next_ip(&p, &nip) < 0) {
        r = add_decision(f, ioff, &p);
        if (r < 0)
            return r;
        return ptd_flow_proceed_with_trace(f, &p);
    }
    f->ip = nip;
    /* stop to look at the instruction each time: direct calls (the call
     * stack), backward jumps (libipt's guard against a section split
     * under a cached run), leaving the section */
    if (p.iclass == PTD_ICLASS_DIRECT_CALL ||
        (p.iclass == PTD_ICLASS_DIRECT_JUMP &&
         (nip < p.ip + p.size || (f->flags & PTD_FLOW_F_END_ON_JUMP))) ||
        !ptd_flow_in_section(f, nip)) {
        bce_set(f, ioff, decode_entry(f, &p));
        return 0;
    }
    noff = (uint32_t)(nip - f->sec_lo);
    return fill_on(f, ioff, noff, stack, sp, steps);
}

/* The instruction at f->ip in the entry's mode. The entries are found by
 * IP alone, as libipt's: code run in another mode before (a corrupt trace
 * that lost a MODE.Exec) is walked in the mode it had then, as libipt
 * walks it. */
static int decode_as(struct ptd_flow *f, unsigned mode, struct ptd_flow_pinsn *p)
{
    uint8_t m = f->mode;
    int r;
    f->mode = (uint8_t)mode;
    r = ptd_flow_decode_step(f, p);
    f->mode = m;
    return r;
}

/* Where BQ_DECODE's look at the instruction at f->ip (a second decode)
 * would have moved the code window: there. The walks that print a block
 * (ptd_flow_ips_after) read its bytes through the window, else through the
 * map callback once per batch. */
static void touch_window(struct ptd_flow *f, unsigned mode)
{
    uint64_t off = f->ip - f->win_base;
    struct ptd_flow_pinsn p;
    if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN)
        (void)decode_as(f, mode, &p);
}

/* One step with the entry e at f->ip: 1 go on at f->ip, or the walk's end
 * (0, or an error). */
static int cached_step(struct ptd_flow *f, struct ptd_flow_block *blk, bce_t e)
{
    struct ptd_flow_pinsn p;
    uint64_t ip, nip = f->ip + (uint64_t)(int64_t)bce_disp(e);
    unsigned n = bce_ninsn(e), mode = bce_mode(e);
    int r;

    /* a run that leaves the section (libipt: a section split under it) */
    if (!ptd_flow_in_section(f, nip))
        return ptd_flow_proceed_uncached(f, blk);
    if (blk->ninsn + n > PTD_FLOW_BLOCK_MAX)
        return 0;
    r = ptd_flow_add_icnt(f, n);
    if (r < 0)
        return r;
    f->ip = nip;
    blk->ninsn += n;
    blk->last_ip = nip;
    blk->mode = (uint8_t)mode;
    /* the most common first, out of the switch (a jump table mispredicts) */
    if (bce_qual(e) == BQ_COND && bce_isize(e)) {
        blk->last_iclass = PTD_ICLASS_COND_JUMP;
        ip = nip + bce_isize(e);
        /* the next block's entry is one of these two: start loading both
         * while the TNT bit is taken (a hint only) */
        bce_prefetch(f, ip);
        bce_prefetch(f, ip + (uint64_t)bce_cond_disp(e));
        r = ptd_flow_cond_branch(f);
        if (r < 0)
            return r;
        if (r)
            ip += (uint64_t)bce_cond_disp(e); /* taken */
        f->ip = ip;
        return 0;
    }
    switch (bce_qual(e)) {
    case BQ_AGAIN: blk->last_iclass = PTD_ICLASS_OTHER; return 1;
    case BQ_COND:
        /* without its length: look at it */
        blk->last_iclass = PTD_ICLASS_COND_JUMP;
        /* fall through */
    case BQ_DECODE:
        r = decode_as(f, mode, &p);
        if (r < 0)
            return r;
        blk->last_iclass = p.iclass;
        ptd_flow_log_call(f, &p);
        if (ptd_flow_next_ip(&p, &f->ip) < 0)
            return ptd_flow_proceed_with_trace(f, &p);
        if (((f->flags & PTD_FLOW_F_END_ON_CALL) && p.iclass == PTD_ICLASS_DIRECT_CALL) ||
            ((f->flags & PTD_FLOW_F_END_ON_JUMP) && p.iclass == PTD_ICLASS_DIRECT_JUMP))
            return 0;
        return ptd_flow_in_section(f, f->ip) ? 1 : 0;
    case BQ_IND_CALL:
        blk->last_iclass = PTD_ICLASS_INDIRECT_CALL;
        if (bce_isize(e)) {
            ip = nip + bce_isize(e);
        } else {
            r = decode_as(f, mode, &p);
            if (r < 0)
                return r;
            ip = nip + p.size;
        }
        ptd_flow_ret_push(f, ip);
        return ptd_flow_indirect(f);
    case BQ_RETURN:
        blk->last_iclass = PTD_ICLASS_NEAR_RET;
        r = ptd_flow_cond_branch(f);
        if (r == -PTD_ERR_BAD_QUERY) {
            /* not compressed: the call stack stops following (ret_known) */
            r = ptd_flow_indirect(f);
            if (r == 0)
                f->ret_known = 0;
            return r;
        }
        if (r < 0)
            return r;
        if (!r)
            return -PTD_ERR_BAD_RETCOMP;
        return ptd_flow_ret_pop(f, &f->ip);
    case BQ_DCALL:
    case BQ_DJUMP:
        /* BQ_DECODE's path for them, with what its decode would give */
        touch_window(f, mode);
        ip = nip + bce_isize(e);
        if (bce_qual(e) == BQ_DCALL) {
            blk->last_iclass = PTD_ICLASS_DIRECT_CALL;
            if (bce_cond_disp(e))
                ptd_flow_ret_push(f, ip); /* not a call to the next insn */
        } else {
            blk->last_iclass = PTD_ICLASS_DIRECT_JUMP;
        }
        f->ip = ip + (uint64_t)bce_cond_disp(e);
        if (f->flags & (bce_qual(e) == BQ_DCALL ? PTD_FLOW_F_END_ON_CALL : PTD_FLOW_F_END_ON_JUMP))
            return 0;
        return ptd_flow_in_section(f, f->ip) ? 1 : 0;
    case BQ_INDIRECT:
        /* the exact class for the block's users (kept in the entry) */
        blk->last_iclass = (uint8_t)bce_iclass(e);
        touch_window(f, mode);
        return ptd_flow_indirect(f);
    default: return -PTD_ERR_INTERNAL;
    }
}

int ptd_flow_proceed_cached(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct bframe *stack = (struct bframe *)(void *)f->barena;
    uint32_t sp = 0, steps;
    int st;

    /* bounded: every step adds instructions to the block, which holds at
     * most PTD_FLOW_BLOCK_MAX (so does the stack) */
    for (;;) {
        bce_t e = bce_get(f, f->ip - f->sec_lo);
        if (bce_valid(e)) {
            st = cached_step(f, blk, e);
            if (st == 1)
                continue;
            break;
        }
        steps = FILL_STEPS;
        do
            st = fill_step(f, blk, stack, &sp, &steps);
        while (st == 1);
        if (st != 2)
            break;
    }
    /* the way back: each waiting entry from the one after it (none after
     * an error, as libipt's recursion returns it untouched) */
    if (st < 0)
        return st;
    /* A fill's frames chain (a frame's next instruction is the frame
     * above it): the entry a frame needs is the one just written, kept
     * here instead of read again (woff: where it was written). */
    uint32_t woff = UINT32_MAX;
    bce_t w = 0;
    while (sp) {
        sp--;
        uint32_t ioff = stack[sp].ioff, noff = stack[sp].noff;
        int r = add_from_entry(f, ioff, noff, noff == woff ? w : bce_get(f, noff), &w);
        if (r < 0)
            return r;
        woff = w ? ioff : UINT32_MAX;
        st = 0;
    }
    return st;
}

/* ---- the counting loop ------------------------------------------------------ */

/* Whether the quick loop can start a round: a TNT with bits left or a TIP
 * ahead, tracing on, nothing held, no ticks (ptd_flow_block_walk's common
 * end), and room in the TRIG count for every instruction the round adds
 * before the next event restarts it (a block per TNT bit and one more,
 * each PTD_FLOW_BLOCK_MAX at most), so it needs no overflow check per
 * step. */
static bool run_ok(const struct ptd_flow *f)
{
    unsigned bits = f->ev.type == PTD_EV_TNT ? f->ev.a : 0;
    return f->bce && ((f->ev.type == PTD_EV_TNT && bits) || f->ev.type == PTD_EV_TIP) &&
           f->status >= 0 && f->enabled && !f->process_insn && !(f->flags & PTD_FLOW_F_TICK) &&
           (!f->has_icnt || f->icnt <= UINT32_MAX - (bits + 1u) * PTD_FLOW_BLOCK_MAX);
}

/* After the event ahead was used up by the block just walked: the next
 * one (ptd_flow_fetch_event; the TRIG count restarts). true when the
 * next block is the quick loop's too, as the event ahead leaves nothing
 * to report here (ptd_flow_block_walk's common end); false: the trailing
 * events are the general walk's (*r an error, or 0). fresh: the event
 * used up, a TNT, came from the query layer's last call. */
static bool run_next_event(struct ptd_flow *f, int *r, bool fresh)
{
    struct ptd_event *ev = &f->ev;
    if (ev->type == PTD_EV_TNT && !(ev->flags & PTD_EVF_IP_SUPPRESSED) &&
        ptd_qry_tnt_ahead(&f->q)) {
        /* a TNT after a TNT, the most common case: the query layer's
         * next event cannot fail */
        *r = ptd_flow_event_done(f); /* 0: a TNT with its IP */
        if (fresh)
            ptd_qry_next_tnt(&f->q, ev);
        else if (ptd_qry_next(&f->q, ev) != 0)
            return false; /* not reached: the query layer's TNT */
        return ev->a != 0;
    }
    /* inline: out of line, this took 1.5% more of mruby's instructions
     * and time */
    *r = ptd_flow_fetch_event_inline(f);
    return *r == 0 && f->status >= 0 &&
           ((ev->type == PTD_EV_TNT && ev->a) || ev->type == PTD_EV_TIP);
}

/* What ptd_flow_run_blocks counts of a block. */
static void run_count(struct ptd_flow_run *run, const struct ptd_flow_block *blk)
{
    run->blocks++;
    if (blk->ninsn) {
        run->insns += blk->ninsn;
        run->last_ip = blk->last_ip;
        run->last_iclass = blk->last_iclass;
    }
}

/* An entry that leads to a conditional branch whose length it holds: its
 * qualifier and length (bits 26-31) in one range test. */
static inline bool bce_is_cond(bce_t e)
{
    return (uint32_t)e - (((uint32_t)BQ_COND << BCE_QUAL_SHIFT) | (1u << BCE_ISIZE_SHIFT)) <
           (BCE_ISIZE_MAX << BCE_ISIZE_SHIFT);
}

/* The counting loop's handle on a chunk (c, the cix-th of the directory
 * dir): its address less the size of the entries before it in the
 * section, so that an offset in the chunk, scaled, added to it is its
 * entry's address (one addressing mode; modulo 2^N, hence an integer). */
static inline uintptr_t run_chunk_base(const uint32_t *dir, uint32_t c, uint64_t cix)
{
    return (uintptr_t)dir + (((uintptr_t)c - (uintptr_t)(cix << CHUNK_SHIFT)) << 3);
}
/* The entry at a section offset in the chunk whose handle is base. */
static inline bce_t run_chunk_entry(uintptr_t base, uint64_t off)
{
    return *(const bce_t *)(base + ((uintptr_t)off << 3));
}

/* The class of the instruction an entry's step ends at (blk->last_iclass
 * after it). */
static unsigned run_class(bce_t e)
{
    switch (bce_qual(e)) {
    case BQ_AGAIN: return PTD_ICLASS_OTHER;
    case BQ_COND: return PTD_ICLASS_COND_JUMP;
    case BQ_DCALL: return PTD_ICLASS_DIRECT_CALL;
    case BQ_DJUMP: return PTD_ICLASS_DIRECT_JUMP;
    case BQ_RETURN: return PTD_ICLASS_NEAR_RET;
    case BQ_IND_CALL: return PTD_ICLASS_INDIRECT_CALL;
    default: return bce_iclass(e); /* BQ_INDIRECT */
    }
}

/* How a round's block ended. */
enum run_end {
    RE_NONE,  /* it did not: a step for the general walk */
    RE_OWN,   /* by itself (a direct branch out of the section) */
    RE_TNT,   /* with a TNT bit */
    RE_EVENT, /* with the TIP ahead, used up */
};

uint32_t ptd_flow_bcache_run(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max, int *st)
{
    struct ptd_flow_block *blk = &run->blk;
    /* the entries whose step the loop takes besides BQ_COND and BQ_AGAIN:
     * a direct call or jump that ends a block by itself (the options) is
     * the general walk's */
    const unsigned direct = (f->flags & PTD_FLOW_F_END_ON_CALL ? 0 : 1u << BQ_DCALL) |
                            (f->flags & PTD_FLOW_F_END_ON_JUMP ? 0 : 1u << BQ_DJUMP);
    uint32_t done = 0;

    *st = 0;
    /* bounded: every round counts a block, at most max */
    while (done < max && run_ok(f)) {
        /* A round keeps what the steps touch in locals: cached_step's
         * work for the entries whose step needs no more than the entry
         * and the event ahead (a TNT bit, a TIP), and block_start's and
         * ptd_flow_run_blocks's bookkeeping once per block instead of per
         * step. It stops where a step needs more (the general walk then
         * goes on from there, as if it had made the steps), where the
         * next event is more than a TNT or TIP (the trailing events), and
         * where the next block cannot start here (another section, no
         * entry). A TIP ahead is a = 0: a TNT with no bits left is never
         * kept. */
        const uint64_t lo = f->sec_lo, size = f->sec_hi - f->sec_lo;
        const uint32_t *dir = f->bce;
        uint64_t value = f->ev.value, ip = f->ip, start = ip, lip = ip;
        /* instructions: of the round's blocks, when the TRIG count last
         * restarted */
        uint64_t insns = 0, mark = 0;
        unsigned a = f->ev.type == PTD_EV_TNT ? f->ev.a : 0;
        /* room: the blocks the round may still count */
        uint32_t n = 0, left = max - done, room, blocks;
        bce_t e, last = 0; /* the last step's entry */
        enum run_end end = RE_NONE;
        int r = 0;
        /* fresh: the event ahead came from the query layer's last call
         * (this round's) */
        bool trail = false, fresh = false;

        /* bounded: a block per round, at most left */
        for (room = left; room; room--) {
            uint64_t off = ip - lo, nip;
            unsigned q;
            if (off >= size)
                break;
            e = dir_entry(dir, off);
            if (a && a <= room && bce_is_cond(e)) {
                /* common blocks: one entry each that leads to a
                 * conditional branch, one after the other while the
                 * TNT has bits (a loop of their own, so that its few
                 * values stay in registers). Their decision points are in
                 * the section (no entry leads out of its own,
                 * add_from_entry), and so are both ways on from them
                 * (add_decision): the loop needs no bounds check. It
                 * works in section offsets (lo is not in it) and counts
                 * with the TNT bit's index alone: the round has room for a
                 * block per bit (else the general steps take them). */
                uint64_t hoff = off, hsoff, hins = insns;
                unsigned ha = a;
                bce_t he = e;
                /* The chunk of the entry looked up last: the next block's
                 * entry is most often in it too (a short branch), found
                 * without the directory's load on the way from one
                 * entry to the next (the loop waits on those loads). */
                uint64_t hcix = off >> CHUNK_SHIFT;
                uintptr_t hbase = run_chunk_base(dir, dir[hcix], hcix);
                /* bounded: a block per TNT bit */
                for (;;) {
                    hsoff = hoff;
                    ha--;
                    if ((value >> ha) & 1)
                        hoff += (uint64_t)bce_target_disp(he); /* taken */
                    else
                        hoff += (uint64_t)(int64_t)bce_disp(he) + bce_isize(he);
                    hins += bce_ninsn(he);
                    /* both ways in the section (add_decision) */
                    if (!ha)
                        break;
                    bce_t ne;
                    if ((hoff >> CHUNK_SHIFT) == hcix) {
                        ne = run_chunk_entry(hbase, hoff);
                    } else {
                        uint32_t c = dir[hoff >> CHUNK_SHIFT];
                        ne = 0;
                        if (c) {
                            hcix = hoff >> CHUNK_SHIFT;
                            hbase = run_chunk_base(dir, c, hcix);
                            ne = run_chunk_entry(hbase, hoff);
                        }
                    }
                    if (!bce_is_cond(ne)) {
                        e = ne;
                        break;
                    }
                    he = ne;
                }
                bce_t hlast = he;
                /* its fields taken from it again after the loop instead
                 * of in copies kept in registers through it (gcc keeps
                 * them, and spills others) */
                PTD_OPAQUE(hlast);
                ip = lo + hoff;
                start = lo + hsoff;
                lip = start + (uint64_t)(int64_t)bce_disp(hlast);
                n = bce_ninsn(hlast);
                last = hlast;
                insns = hins;
                room -= a - ha;
                a = ha;
                end = RE_TNT;
                if (!a) {
                    room++; /* counted below */
                    goto used_up;
                }
                /* another block, e its entry (the general steps below);
                 * room for it: a bit is left */
            }
            if (!bce_valid(e))
                break;
            start = ip;
            n = 0;
            /* bounded: each step adds instructions to the block, at most
             * PTD_FLOW_BLOCK_MAX (the step near the limit is the general
             * walk's) */
            for (end = RE_NONE;;) {
                nip = ip + (uint64_t)(int64_t)bce_disp(e);
                q = bce_qual(e);
                /* the step's own checks (cached_step) left to it, and a
                 * block near its size limit: two more entries fit */
                if (nip - lo >= size || n > PTD_FLOW_BLOCK_MAX - 2u * BCE_NINSN_MAX)
                    break;
                if (q == BQ_COND && a && bce_isize(e)) {
                    a--;
                    ip = nip + bce_isize(e);
                    if ((value >> a) & 1)
                        ip += (uint64_t)bce_cond_disp(e); /* taken */
                    end = RE_TNT;
                } else if (q == BQ_AGAIN) {
                    ip = nip;
                } else if ((direct >> q) & 1) {
                    ip = nip + bce_isize(e);
                    /* a call to the next instruction pushes nothing */
                    if (q == BQ_DCALL && bce_cond_disp(e))
                        ptd_flow_ret_push(f, ip);
                    ip += (uint64_t)bce_cond_disp(e);
                    if (ip - lo >= size)
                        end = RE_OWN;
                } else if (!a && !(f->ev.flags & PTD_EVF_IP_SUPPRESSED) &&
                           (q == BQ_RETURN || q == BQ_INDIRECT ||
                            (q == BQ_IND_CALL && bce_isize(e)))) {
                    /* the TIP's branch: a return the trace did not
                     * compress (the call stack stops following), a call
                     * (with its length for the stack) */
                    if (q == BQ_IND_CALL)
                        ptd_flow_ret_push(f, nip + bce_isize(e));
                    else if (q == BQ_RETURN)
                        f->ret_known = 0;
                    ip = f->ev.ip;
                    end = RE_EVENT;
                } else {
                    break;
                }
                n += bce_ninsn(e);
                last = e;
                lip = nip;
                if (end != RE_NONE)
                    break;
                e = dir_entry(dir, ip - lo);
                if (!bce_valid(e))
                    break;
            }
            if (end == RE_NONE)
                break;
            insns += n;
            if (end == RE_EVENT || (end == RE_TNT && !a)) {
            used_up:
                /* the event used up: the next one (0: the TRIG count
                 * restarted) */
                f->ip = ip;
                trail = !run_next_event(f, &r, fresh);
                fresh = true;
                if (r == 0)
                    mark = insns;
                if (trail) {
                    room--;
                    break;
                }
                value = f->ev.value;
                a = f->ev.type == PTD_EV_TNT ? f->ev.a : 0;
            }
        }

        /* back into the flow: the blocks done as the general walk leaves
         * them, the last in run->blk */
        blocks = left - room;
        f->ip = ip;
        if (a && !trail)
            f->ev.a = (uint8_t)a;
        if (f->has_icnt)
            f->icnt += (uint32_t)(insns - mark) + (end == RE_NONE ? n : 0);
        done += blocks;
        run->blocks += blocks;
        run->insns += insns;
        if (blocks) {
            run->last_ip = lip;
            run->last_iclass = (uint8_t)run_class(last);
            *st = 0;
        }
        blk->ip = start;
        blk->ninsn = n;
        blk->last_ip = n ? lip : start;
        blk->mode = n ? (uint8_t)bce_mode(last) : f->mode;
        blk->speculative = f->speculative;
        blk->last_iclass = n ? (uint8_t)run_class(last) : PTD_FLOW_ICLASS_ERROR;
        if (end == RE_NONE && (n || blocks < left)) {
            /* a block begun (or about to be) whose step is the general
             * walk's: from here, as block_start and the steps left it */
            if (!n && (ip - lo >= size || !bce_valid(dir_entry(dir, ip - lo))))
                break; /* not begun: the next block the general way */
            *st = ptd_flow_block_walk(f, blk);
            run_count(run, blk);
            done++;
        } else if (trail) {
            *st = r < 0 ? r : ptd_flow_trailing(f, blk);
        } else {
            break; /* max reached, or the next block the general way */
        }
        if (*st < 0 || (*st & (PTD_ST_EVENT | PTD_ST_EOS)))
            break;
    }
    return done;
}
