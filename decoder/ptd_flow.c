/* libptd instruction-flow layer: see ptd_flow.h. */
#include "decoder/ptd_flow.h"
#include "decoder/ptd_ild_fast.h"

_Static_assert(sizeof(struct ptd_flow) <= PTD_FLOW_STATE_SIZE,
               "struct ptd_flow outgrew its documented size");
_Static_assert(sizeof(struct ptd_flow_centry) == PTD_FLOW_CENTRY_SIZE, "cache entry size");
_Static_assert(sizeof(struct ptd_flow_bentry) == PTD_FLOW_BENTRY_SIZE, "block cache entry size");

#if defined(__GNUC__) && !defined(NOPF)
#define PTD_FLOW_PREFETCH(p) __builtin_prefetch((p))
#else
#define PTD_FLOW_PREFETCH(p) ((void)(p))
#endif

/* MOV CR3, r (0F 22 /3): the instruction a PIP binds to besides far
 * transfers (SDM "Packet Generation Scenarios"). */
#define OPC_MOV_CR 0x22
#define MODRM_REG(m) (((m) >> 3) & 7)
#define CR3 3

static void reset(struct ptd_flow *f)
{
    f->ip = 0;
    f->status = 0;
    f->mode = f->mode0;
    f->enabled = 0;
    f->speculative = 0;
    f->process_event = 0;
    f->process_insn = 0;
    f->bound_paging = 0;
    f->bound_vmcs = 0;
    f->bound_ptw = 0;
    f->ret_top = 0;
    f->ret_count = 0;
    f->ret_known = 0;
}

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
    if (!f || !cfg || !cfg->read || (!cfg->trace && cfg->size))
        return -PTD_ERR_INVALID;
    ptd_qry_init(&f->q, cfg->trace, cfg->size);
    ptd_qry_set_errata(&f->q, cfg->errata);
    ptd_qry_set_time(&f->q, cfg->time);
    f->read = cfg->read;
    f->map = cfg->map;
    f->ctx = cfg->ctx;
    f->errata = cfg->errata;
    f->nfilter = cfg->nfilter > 4 ? 4 : cfg->nfilter;
    for (unsigned i = 0; i < 4; i++) {
        f->filter_lo[i] = cfg->filter_lo[i];
        f->filter_hi[i] = cfg->filter_hi[i];
    }
    f->mode0 = cfg->mode == 16 ? PTD_EXEC_MODE_16 : cfg->mode == 32 ? PTD_EXEC_MODE_32
             : cfg->mode == 64 ? PTD_EXEC_MODE_64 : PTD_FLOW_MODE_UNKNOWN;
    f->win_base = 0;
    f->win_len = 0;
    f->code = f->win;
    f->flags = cfg->flags;
    f->cache = arena(cfg->cache, cfg->cache_size, sizeof(struct ptd_flow_centry), &f->cache_mask);
    f->bcache = arena(cfg->bcache, cfg->bcache_size, sizeof(struct ptd_flow_bentry), &f->bcache_mask);
    reset(f);
    f->event.tsc = 0;       /* the last event's time, for tick events */
    f->event.type = PTD_EV_COUNT;
    ptd_flow_invalidate(f);
    return 0;
}

/* An entry that matches no IP: mode is never 0xff. */
#define CENTRY_EMPTY 0xff

void ptd_flow_invalidate(struct ptd_flow *f)
{
    f->win_len = 0;
    f->code = f->win;
    if (f->cache)
        for (uint64_t i = 0; i <= f->cache_mask; i++)
            f->cache[i].mode = CENTRY_EMPTY;
    if (f->bcache)
        for (uint64_t i = 0; i <= f->bcache_mask; i++)
            f->bcache[i].mode = CENTRY_EMPTY;
}

uint64_t ptd_flow_offset(const struct ptd_flow *f)
{
    return ptd_qry_offset(&f->q);
}

int ptd_flow_time(const struct ptd_flow *f, uint64_t *tsc, uint32_t *lost_mtc, uint32_t *lost_cyc)
{
    return ptd_qry_time(&f->q, tsc, lost_mtc, lost_cyc);
}

static int status(const struct ptd_flow *f, int flags)
{
    if (!f->enabled)
        flags |= PTD_ST_IP_SUPPRESSED;
    if ((f->status & PTD_ST_EOS) && !f->process_event)
        flags |= PTD_ST_EOS;
    return flags;
}

/* ---- call stack (SDM "Indirect Transfer Compression for Returns") ------- */

static void ret_push(struct ptd_flow *f, uint64_t ip)
{
    f->retstack[f->ret_top] = ip;
    f->ret_top = (uint8_t)((f->ret_top + 1) % PTD_FLOW_RETSTACK);
    if (f->ret_count < PTD_FLOW_RETSTACK)
        f->ret_count++;
    if (f->ret_known < PTD_FLOW_RETSTACK)
        f->ret_known++;
}

static int ret_pop(struct ptd_flow *f, uint64_t *ip)
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
__attribute__((noinline))
static int window(struct ptd_flow *f)
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

/* The length, class and displacement of the instruction at the IP when it
 * is a common one (ptd_ild_fast.h), moving the window as decode() would;
 * 0: decode() it (which also reports a window that cannot be read). */
static PTD_ILD_STEP_INLINE unsigned step(struct ptd_flow *f, struct ptd_ild_step *s)
{
    uint64_t off = f->ip - f->win_base;
    if (off >= f->win_len || f->win_len - off < PTD_ILD_MAX_LEN) {
        if (f->mode == PTD_FLOW_MODE_UNKNOWN || window(f) < 0)
            return 0;
        off = f->ip - f->win_base;
    }
    return ptd_ild_step(f->code + off, f->win_len - (size_t)off, f->mode, s);
}

/* pinsn_of() for a step(): the same fields (MOV CR3 and far pointers never
 * take that path; the target of an indirect branch is not used). */
static void pinsn_of_step(struct ptd_flow_pinsn *p, uint64_t ip, unsigned len,
                          const struct ptd_ild_step *s)
{
    p->ip = ip;
    p->size = (uint8_t)len;
    p->iclass = s->iclass;
    p->target = s->rel ? ip + len + (uint64_t)(int64_t)s->disp : 0;
    p->direct = s->rel;
    p->zero_disp = s->rel && s->disp == 0;
    p->cr3 = 0;
    p->cpl = s->iclass == PTD_ICLASS_FAR_TRANSFER;
    p->vmcs = p->cpl;
    p->ptw = 0;             /* PTWRITE has an F3 prefix: never a step */
}

/* pinsn bits in the cache */
enum { PB_DIRECT = 1, PB_ZERO_DISP = 2, PB_CR3 = 4, PB_CPL = 8, PB_PTW = 16 };

static void pinsn_of(struct ptd_flow_pinsn *p, const struct ptd_insn *insn)
{
    p->ip = insn->ip;
    p->size = insn->length;
    p->iclass = insn->iclass;
    /* Linear addresses, as the trace's IPs are (and as libipt computes
     * them): ip + length + displacement, not wrapped to a 16-bit offset
     * (real-mode code at 0xfffffff0 runs with CS base 0xffff0000). */
    p->target = (insn->flags & PTD_INSN_REL)
                    ? insn->ip + insn->length + (uint64_t)(int64_t)insn->disp
                    : insn->target;
    p->direct = (insn->flags & PTD_INSN_REL) ? 1 : 0;
    p->zero_disp = p->direct && insn->disp == 0;
    p->cr3 = insn->map == PTD_ILD_MAP_0F && insn->opcode == OPC_MOV_CR &&
             MODRM_REG(insn->modrm) == CR3;
    /* far transfers change CPL or are VM transitions; all bind PIP/VMCS */
    p->cpl = insn->iclass == PTD_ICLASS_FAR_TRANSFER;
    p->vmcs = p->cpl;
    p->ptw = (insn->flags & PTD_INSN_PTWRITE) != 0;
}

static bool in_filter(const struct ptd_flow *f, uint64_t ip)
{
    for (unsigned i = 0; i < f->nfilter; i++)
        if (f->filter_lo[i] <= ip && ip <= f->filter_hi[i])
            return true;
    return false;
}

/* Does a TIP.PGD bind to this instruction? */
static int at_disabled(const struct ptd_flow *f, const struct ptd_event *ev,
                       const struct ptd_flow_pinsn *p)
{
    if (ev->flags & PTD_EVF_IP_SUPPRESSED) {
        if (p->iclass == PTD_ICLASS_FAR_TRANSFER || p->cr3)
            return 1;
        /* BDM64: with a filter, any branch may leave with no IP */
        if (f->nfilter && (f->errata & PTD_ERRATUM_BDM64) && p->iclass != PTD_ICLASS_OTHER)
            return 1;
        /* SKL014: a direct jump/call out of the filter with no IP */
        if (f->nfilter && (f->errata & PTD_ERRATUM_SKL014) && p->direct &&
            (p->iclass == PTD_ICLASS_DIRECT_JUMP || p->iclass == PTD_ICLASS_DIRECT_CALL) &&
            !in_filter(f, p->target))
            return 1;
        return 0;
    }
    switch (p->iclass) {
    case PTD_ICLASS_OTHER:
        return 0;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL:
        /* a direct branch elsewhere than the PGD's IP is not the exit */
        return p->target == ev->ip;
    default:
        return 1;
    }
}

/* The IP after an instruction, when the code alone says it. */
static int next_ip(const struct ptd_flow_pinsn *p, uint64_t *ip)
{
    switch (p->iclass) {
    case PTD_ICLASS_OTHER:
        *ip = p->ip + p->size;
        return 0;
    case PTD_ICLASS_DIRECT_JUMP:
    case PTD_ICLASS_DIRECT_CALL:
        *ip = p->target;
        return 0;
    default:
        return -PTD_ERR_BAD_QUERY;
    }
}

static int fetch_event(struct ptd_flow *f)
{
    int st;
    if (f->process_event)
        return 1;
    if (!(f->status & PTD_ST_EVENT))
        return 0;
    st = ptd_qry_event(&f->q, &f->event);
    if (st < 0)
        return st;
    f->process_event = 1;
    f->status = st;
    return 1;
}

/* Is p a far call: CALL far (9A outside 64-bit mode, FF /3), INT n, INT3,
 * INTO (outside 64-bit mode), INT1, SYSCALL, SYSENTER, VMCALL? Those
 * transfers return to the next instruction, as a near call does (libipt
 * 2.0.5 classes them ptic_far_call). The ILD has one far-transfer class,
 * so the instruction is decoded again (only at a TIP.PGD bound to it). */
#define OPC_CALL_FAR_PTR 0x9a
#define OPC_GRP5 0xff
#define GRP5_CALL_FAR 3
#define OPC_INT3 0xcc
#define OPC_INT 0xcd
#define OPC_INTO 0xce
#define OPC_INT1 0xf1
#define OPC_0F_SYSCALL 0x05
#define OPC_0F_SYSENTER 0x34
#define OPC_0F_GRP7 0x01
#define MODRM_VMCALL 0xc1
static bool far_call(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    struct ptd_insn insn;
    const uint8_t *bytes;
    uint64_t ip = f->ip;
    bool x64 = f->mode == PTD_EXEC_MODE_64, r = false;

    if (p->iclass != PTD_ICLASS_FAR_TRANSFER)
        return false;
    f->ip = p->ip;
    if (decode(f, &insn, &bytes) >= 0) {
        if (insn.map == PTD_ILD_MAP_PRIMARY)
            r = (insn.opcode == OPC_CALL_FAR_PTR && !x64) || insn.opcode == OPC_INT3 ||
                insn.opcode == OPC_INT || (insn.opcode == OPC_INTO && !x64) || insn.opcode == OPC_INT1 ||
                (insn.opcode == OPC_GRP5 && (insn.flags & PTD_INSN_MODRM) &&
                 MODRM_REG(insn.modrm) == GRP5_CALL_FAR);
        else if (insn.map == PTD_ILD_MAP_0F)
            r = insn.opcode == OPC_0F_SYSCALL || insn.opcode == OPC_0F_SYSENTER ||
                (insn.opcode == OPC_0F_GRP7 && (insn.flags & PTD_INSN_MODRM) && insn.modrm == MODRM_VMCALL);
    }
    f->ip = ip;
    return r;
}

/* Events that bind to the instruction just decoded (before its next IP is
 * known). */
static int check_insn_event(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    const struct ptd_event *ev = &f->event;
    int r = fetch_event(f);
    if (r <= 0)
        return r;
    switch (ev->type) {
    case PTD_EV_DISABLED:
        if (!at_disabled(f, ev, p))
            return 0;
        /* where tracing is expected to resume (for RESUMED): for a call,
         * near or far, its return address (as libipt) */
        if (next_ip(p, &f->ip) < 0) {
            bool call = p->iclass == PTD_ICLASS_INDIRECT_CALL || far_call(f, p);
            f->ip = call ? p->ip + p->size : 0;
        }
        return status(f, PTD_ST_EVENT);
    case PTD_EV_PAGING:
        if (f->bound_paging || !(p->cr3 || p->cpl))
            return 0;
        f->bound_paging = 1;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_VMCS:
        if (f->bound_vmcs || !p->vmcs)
            return 0;
        f->bound_vmcs = 1;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_PTWRITE:
        /* as libipt: to the PTWRITE instruction (its own IP from the FUP,
         * or, without one, the next PTWRITE), reported after it */
        if (f->bound_ptw)
            return 0;
        if (ev->flags & PTD_EVF_IP_SUPPRESSED) {
            if (!p->ptw)
                return 0;
            f->event.ip = p->ip;
            f->event.flags &= (uint8_t)~PTD_EVF_IP_SUPPRESSED;
        } else if (ev->ip != p->ip) {
            return 0;
        }
        f->bound_ptw = 1;
        return status(f, PTD_ST_EVENT);
    default:
        return 0;
    }
}

/* Is the instruction at the IP VMLAUNCH or VMRESUME (0F 01 C2/C3)? */
#define OPC_GRP7 0x01
#define MODRM_VMLAUNCH 0xc2
#define MODRM_VMRESUME 0xc3
static bool at_vm_entry(struct ptd_flow *f)
{
    struct ptd_insn insn;
    const uint8_t *bytes;
    if (decode(f, &insn, &bytes) < 0)
        return false;
    return insn.map == PTD_ILD_MAP_0F && insn.opcode == OPC_GRP7 && (insn.flags & PTD_INSN_MODRM) &&
           (insn.modrm == MODRM_VMLAUNCH || insn.modrm == MODRM_VMRESUME);
}

/* BDM64 (TSX part): a transaction abort right after a branch that needed
 * trace may have corrupted that branch's trace. As libipt: when the
 * abort's IP cannot be reached from where the branch took the flow by
 * at most BDM64_MAX_STEPS instructions that need no trace (the code alone
 * gives their next IP), take it that the branch went to the abort's IP. */
#define BDM64_MAX_STEPS 0x100
static bool reachable(struct ptd_flow *f, uint64_t from, uint64_t to)
{
    uint64_t save = f->ip;
    bool ok = false;
    f->ip = from;
    for (unsigned i = 0;; i++) {
        struct ptd_insn insn;
        struct ptd_flow_pinsn p;
        const uint8_t *bytes;
        if (f->ip == to) {
            ok = true;
            break;
        }
        if (i == BDM64_MAX_STEPS || decode(f, &insn, &bytes) < 0)
            break;
        pinsn_of(&p, &insn);
        if (next_ip(&p, &f->ip) < 0)
            break;
    }
    f->ip = save;
    return ok;
}

/* Events that bind to the current IP (before the instruction there);
 * prev_iclass: the class of the instruction that brought the flow here
 * (PTD_FLOW_ICLASS_ERROR: none, after a sync or an event). */
static int check_ip_event_after(struct ptd_flow *f, unsigned prev_iclass)
{
    const struct ptd_event *ev = &f->event;
    bool nip;
    int r = fetch_event(f);
    if (r < 0)
        return r;
    if (r == 0)
        return status(f, 0);
    nip = (ev->flags & PTD_EVF_IP_SUPPRESSED) != 0;
    switch (ev->type) {
    case PTD_EV_DISABLED:
        break;
    case PTD_EV_ASYNC_DISABLED:
        if (ev->from != f->ip)
            break;
        if ((f->errata & PTD_ERRATUM_SKD022) && at_vm_entry(f)) {
            /* SKD022: the disable follows the VM entry instruction */
            f->event.type = PTD_EV_DISABLED;
            break;
        }
        return status(f, PTD_ST_EVENT);
    case PTD_EV_ASYNC_BRANCH:
        if (ev->from != f->ip)
            break;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_TSX:
        if (!nip && (f->errata & PTD_ERRATUM_BDM64) && (ev->flags & PTD_EVF_ABORTED) &&
            prev_iclass != PTD_ICLASS_OTHER && prev_iclass != PTD_FLOW_ICLASS_ERROR &&
            !reachable(f, f->ip, ev->ip))
            f->ip = ev->ip;     /* BDM64: the branch's trace was lost */
        /* fall through */
    case PTD_EV_EXEC_MODE:
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS:
        if (!nip && ev->ip != f->ip)
            break;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_PAGING:
    case PTD_EV_VMCS:
        if (f->enabled)
            break;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
        if (!nip && f->enabled && ev->ip != f->ip)
            break;
        return status(f, PTD_ST_EVENT);
    case PTD_EV_PTWRITE:
        /* with tracing on it binds to its instruction (check_insn_event) */
        if (f->enabled)
            break;
        return status(f, PTD_ST_EVENT);
    default:
        /* ENABLED, OVERFLOW, STOP, PWRE, PWRX, CBR, MNT */
        return status(f, PTD_ST_EVENT);
    }
    return status(f, 0);
}

static int check_ip_event(struct ptd_flow *f)
{
    return check_ip_event_after(f, PTD_FLOW_ICLASS_ERROR);
}

/* A tick event at ip when the time moved since the last event's (libipt's
 * pt_insn_tick): made after a branch query with PTD_FLOW_F_TICK, held in
 * f->event like a fetched event, reported before the next instruction. */
static int tick(struct ptd_flow *f, uint64_t ip)
{
    uint64_t tsc = 0;
    int rc;
    if (!(f->flags & PTD_FLOW_F_TICK) || f->process_event)
        return 0;
    rc = ptd_qry_time(&f->q, &tsc, NULL, NULL);
    if (rc < 0 && rc != -PTD_TIME_ERR_NO_TIME)
        return rc;
    if (tsc == f->event.tsc)
        return 0;
    f->event.type = PTD_EV_TICK;
    f->event.flags = rc == 0 ? PTD_EVF_HAS_TSC : 0;
    f->event.ip = ip;
    f->event.from = 0;
    f->event.value = 0;
    f->event.offset = ptd_qry_offset(&f->q);
    f->event.tsc = tsc;
    f->event.aux = 0;
    f->event.mode = 0;
    f->event.a = 0;
    f->event.b = 0;
    f->process_event = 1;
    return 0;
}

static int indirect(struct ptd_flow *f, uint64_t next)
{
    uint64_t ip;
    int st = ptd_qry_indirect(&f->q, &ip);
    if (st < 0)
        return st;
    int r = tick(f, next);
    if (r < 0)
        return r;
    f->status = st;
    if (st & PTD_ST_IP_SUPPRESSED)
        return -PTD_ERR_NOIP;
    f->ip = ip;
    return 0;
}

/* A return the trace gave as a TIP (not compressed): the call stack no
 * longer follows the calls still owed (ret_known). */
static int ret_indirect(struct ptd_flow *f, uint64_t next)
{
    int st = indirect(f, next);
    if (st == 0)
        f->ret_known = 0;
    return st;
}

/* The next IP from the instruction and the trace. */
static int proceed(struct ptd_flow *f, const struct ptd_flow_pinsn *p)
{
    uint64_t next = p->ip + p->size;
    int st, taken, r;

    switch (p->iclass) {
    case PTD_ICLASS_OTHER:
        f->ip = next;
        return 0;
    case PTD_ICLASS_COND_JUMP:
        st = ptd_qry_cond(&f->q, &taken);
        if (st < 0)
            return st;
        if ((f->flags & PTD_FLOW_F_TICK) && (r = tick(f, next)) < 0)
            return r;
        f->status = st;
        f->ip = taken ? p->target : next;
        return 0;
    case PTD_ICLASS_DIRECT_JUMP:
        f->ip = p->target;
        return 0;
    case PTD_ICLASS_DIRECT_CALL:
        /* call +0 (getting the IP in position-independent code) is no call */
        if (!p->zero_disp)
            ret_push(f, next);
        f->ip = p->target;
        return 0;
    case PTD_ICLASS_INDIRECT_CALL:
        ret_push(f, next);
        return indirect(f, next);
    case PTD_ICLASS_NEAR_RET:
        st = ptd_qry_cond(&f->q, &taken);
        if (st >= 0) {
            if ((f->flags & PTD_FLOW_F_TICK) && (r = tick(f, next)) < 0)
                return r;
            f->status = st;
            if (!taken)
                return -PTD_ERR_BAD_RETCOMP;
            return ret_pop(f, &f->ip);
        }
        return ret_indirect(f, next);
    default:
        return indirect(f, next);
    }
}

int ptd_flow_sync_forward(struct ptd_flow *f)
{
    uint64_t ip = 0;
    int st;

    reset(f);
    st = ptd_qry_sync_forward(&f->q, &ip);
    if (st < 0)
        return st;
    f->status = st;
    if (!(st & PTD_ST_IP_SUPPRESSED)) {
        f->ip = ip;
        f->enabled = 1;
    }
    return check_ip_event(f);
}

/* The decoded instruction p with the events that bind to it: one held
 * before it (then it is processed again on the next call), its own
 * outcome (proceed), the events at the IP after it. */
static inline int process_insn(struct ptd_flow *f, struct ptd_flow_pinsn *p)
{
    int st = check_insn_event(f, p);
    if (st != 0) {
        if (st < 0)
            return st;
        if (st & PTD_ST_EVENT) {
            f->process_insn = 1;
            return st;
        }
    }
    st = proceed(f, p);
    if (st < 0)
        return st;
    return check_ip_event_after(f, p->iclass);
}

int ptd_flow_next(struct ptd_flow *f, struct ptd_flow_insn *out)
{
    struct ptd_insn insn;
    const uint8_t *bytes;
    struct ptd_flow_pinsn *p = &f->pinsn;
    int n;

    out->ip = f->ip;
    out->size = 0;
    out->iclass = PTD_FLOW_ICLASS_ERROR;
    out->mode = f->mode;
    out->speculative = f->speculative;
    if (!f->enabled)
        return (f->status & PTD_ST_EOS) ? -PTD_ERR_EOS : -PTD_ERR_NO_ENABLE;
    {
        struct ptd_flow_centry *e = NULL;
        if (f->cache) {
            uint64_t ip = f->ip;
            e = &f->cache[(ip ^ (ip >> 11)) & f->cache_mask];
            if (e->ip == ip && e->mode == f->mode && !(f->flags & PTD_FLOW_F_RAW)) {
                p->ip = ip;
                p->target = e->target;
                p->size = e->size;
                p->iclass = e->iclass;
                p->direct = (e->bits & PB_DIRECT) != 0;
                p->zero_disp = (e->bits & PB_ZERO_DISP) != 0;
                p->cr3 = (e->bits & PB_CR3) != 0;
                p->cpl = p->vmcs = (e->bits & PB_CPL) != 0;
                p->ptw = (e->bits & PB_PTW) != 0;
                out->size = e->size;
                out->iclass = e->iclass;
                goto decoded;
            }
        }
        struct ptd_ild_step s;
        unsigned sl = (f->flags & PTD_FLOW_F_RAW) ? 0 : step(f, &s);
        if (sl) {
            pinsn_of_step(p, f->ip, sl, &s);
        } else {
            n = decode(f, &insn, &bytes);
            if (n < 0)
                return n;
            if (f->flags & PTD_FLOW_F_RAW)
                for (int i = 0; i < n; i++)
                    out->raw[i] = bytes[i];
            pinsn_of(p, &insn);
        }
        out->size = p->size;
        out->iclass = p->iclass;
        if (e) {
            e->ip = p->ip;
            e->target = p->target;
            e->size = p->size;
            e->iclass = p->iclass;
            e->mode = f->mode;
            e->bits = (uint8_t)((p->direct ? PB_DIRECT : 0) | (p->zero_disp ? PB_ZERO_DISP : 0) |
                                (p->cr3 ? PB_CR3 : 0) | (p->cpl ? PB_CPL : 0) | (p->ptw ? PB_PTW : 0));
        }
    }
decoded:
    f->bound_paging = 0;
    f->bound_vmcs = 0;
    f->bound_ptw = 0;

    return process_insn(f, p);
}

int ptd_flow_event(struct ptd_flow *f, struct ptd_event *ev)
{
    struct ptd_event *e = &f->event;
    bool nip;
    int st;

    if (!f->process_event)
        return -PTD_ERR_BAD_QUERY;
    f->process_event = 0;
    ev->ip = e->ip;
    ev->from = e->from;
    ev->value = e->value;
    ev->offset = e->offset;
    ev->tsc = e->tsc;
    ev->aux = e->aux;
    ev->type = e->type;
    ev->flags = e->flags;
    ev->mode = e->mode;
    ev->a = e->a;
    ev->b = e->b;
    nip = (e->flags & PTD_EVF_IP_SUPPRESSED) != 0;

    switch (e->type) {
    case PTD_EV_ENABLED:
        if (e->flags & PTD_EVF_STATUS_UPDATE)
            return -PTD_ERR_BAD_CONTEXT;
        if (nip)
            return -PTD_ERR_NOIP;
        if (f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        if (f->ip == e->ip)
            ev->flags |= PTD_EVF_RESUMED;
        f->ip = e->ip;
        f->enabled = 1;
        f->ret_known = 0;
        break;
    case PTD_EV_DISABLED:
    case PTD_EV_ASYNC_DISABLED:
        if (!f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        f->enabled = 0;
        break;
    case PTD_EV_ASYNC_BRANCH:
        if (!f->enabled)
            return -PTD_ERR_BAD_CONTEXT;
        if (nip)
            return -PTD_ERR_NOIP;
        f->ip = e->ip;
        break;
    case PTD_EV_OVERFLOW:
        if (nip) {
            f->enabled = 0;
            f->ip = 0;
        } else {
            f->ip = e->ip;
            f->enabled = 1;
        }
        f->speculative = 0;
        f->ret_known = 0;
        break;
    case PTD_EV_EXEC_MODE:
        f->mode = e->mode;
        break;
    case PTD_EV_TSX:
        f->speculative = (e->flags & PTD_EVF_SPECULATIVE) && !(e->flags & PTD_EVF_ABORTED);
        if (e->flags & PTD_EVF_ABORTED)
            f->ret_known = 0;   /* back to XBEGIN's state */
        break;
    default:
        break;
    }

    if (f->process_insn) {
        /* the instruction an event bound to: more events for it, then its
         * next IP (unless tracing stopped there) */
        st = check_insn_event(f, &f->pinsn);
        if (st != 0) {
            if (st < 0)
                return st;
            if (st & PTD_ST_EVENT)
                return st;
        }
        f->process_insn = 0;
        if (f->enabled && f->pinsn.iclass != PTD_FLOW_ICLASS_ERROR) {
            st = proceed(f, &f->pinsn);
            if (st < 0)
                return st;
        }
    }
    return check_ip_event(f);
}

/* ---- blocks ------------------------------------------------------------- */

static void pinsn_to_bentry(struct ptd_flow_bentry *e, const struct ptd_flow_pinsn *p)
{
    e->last_ip = p->ip;
    e->target = p->target;
    e->size = p->size;
    e->iclass = p->iclass;
    e->bits = (uint8_t)((p->direct ? PB_DIRECT : 0) | (p->zero_disp ? PB_ZERO_DISP : 0) |
                        (p->cr3 ? PB_CR3 : 0) | (p->cpl ? PB_CPL : 0) | (p->ptw ? PB_PTW : 0));
}

static void bentry_to_pinsn(struct ptd_flow_pinsn *p, const struct ptd_flow_bentry *e)
{
    p->ip = e->last_ip;
    p->target = e->target;
    p->size = e->size;
    p->iclass = e->iclass;
    p->direct = (e->bits & PB_DIRECT) != 0;
    p->zero_disp = (e->bits & PB_ZERO_DISP) != 0;
    p->cr3 = (e->bits & PB_CR3) != 0;
    p->cpl = p->vmcs = (e->bits & PB_CPL) != 0;
    p->ptw = (e->bits & PB_PTW) != 0;
}

/* events may bind anywhere: one instruction at a time */
static int one_insn(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct ptd_flow_insn in;
    int st = ptd_flow_next(f, &in);
    if (in.iclass != PTD_FLOW_ICLASS_ERROR) {
        blk->ninsn = 1;
        blk->last_ip = in.ip;
        blk->last_iclass = in.iclass;
    }
    return st;
}

/* proceed() for the last instruction of a block, straight from its entry:
 * the common cases inline (a direct branch; a conditional branch or a
 * compressed return whose TNT bit is cached with more bits after it, so no
 * packet is read and no event can be due), the rest through proceed(). */
static PTD_ILD_STEP_INLINE int proceed_entry(struct ptd_flow *f, const struct ptd_flow_bentry *e)
{
    uint64_t next = e->last_ip + e->size;
    int taken, st;

    /* proceed() for the block's last instruction, without tick events
     * (with PTD_FLOW_F_TICK blocks go through ptd_flow_next) */
    switch (e->iclass) {
    case PTD_ICLASS_OTHER:
        f->ip = next;
        return 0;
    case PTD_ICLASS_COND_JUMP:
        taken = ptd_qry_cond_cached(&f->q);
        if (taken < 0) {
            st = ptd_qry_cond(&f->q, &taken);
            if (st < 0)
                return st;
        } else {
            st = 0;
        }
        f->status = st;
        f->ip = taken ? e->target : next;
        return 0;
    case PTD_ICLASS_DIRECT_JUMP:
        f->ip = e->target;
        return 0;
    case PTD_ICLASS_DIRECT_CALL:
        if (!(e->bits & PB_ZERO_DISP))
            ret_push(f, next);
        f->ip = e->target;
        return 0;
    case PTD_ICLASS_INDIRECT_CALL:
        ret_push(f, next);
        return indirect(f, next);
    case PTD_ICLASS_NEAR_RET:
        taken = ptd_qry_cond_cached(&f->q);
        if (taken < 0) {
            st = ptd_qry_cond(&f->q, &taken);
            if (st < 0)
                return ret_indirect(f, next);   /* not compressed: a TIP */
        } else {
            st = 0;
        }
        f->status = st;
        if (!taken)
            return -PTD_ERR_BAD_RETCOMP;
        return ret_pop(f, &f->ip);
    default:
        return indirect(f, next);
    }
}

/* With an event held (fetched, not bound yet), can the block's body (every
 * instruction but its last) be run without looking at the event? Yes when
 * no instruction there can bind it, as ptd_flow_next would find one by one:
 * a TIP.PGD with an IP binds only to a branch (check_insn_event), and the
 * body has none; an event bound to an IP (check_ip_event) only at that IP,
 * and the body's instructions after the first (whose IP was checked when
 * the flow got there) lie in (ip, last_ip]; a PTWRITE with IP only to the
 * instruction there, the first included. The others (PAGING, VMCS, TIP.PGD
 * or PTWRITE without IP: MOV CR3 and PTWRITE are not branches; ticks are
 * never held here) go one instruction at a time. */
static bool held_skips_body(const struct ptd_flow *f, const struct ptd_flow_bentry *e)
{
    const struct ptd_event *ev = &f->event;
    uint64_t key;

    if (ev->flags & PTD_EVF_IP_SUPPRESSED)
        return false;
    switch (ev->type) {
    case PTD_EV_DISABLED:
        return true;
    case PTD_EV_ASYNC_BRANCH:
    case PTD_EV_ASYNC_DISABLED:
        key = ev->from;
        break;
    case PTD_EV_TSX:
    case PTD_EV_EXEC_MODE:
    case PTD_EV_ASYNC_PAGING:
    case PTD_EV_ASYNC_VMCS:
    case PTD_EV_EXSTOP:
    case PTD_EV_MWAIT:
        key = ev->ip;
        break;
    case PTD_EV_PTWRITE:
        /* binds to the instruction at its IP, the block's first included */
        return !(e->ip <= ev->ip && ev->ip <= e->last_ip);
    default:
        return false;
    }
    return !(e->ip < key && key <= e->last_ip);
}

/* Decodes the block at the IP into *e (ip and mode last, so a cache slot
 * never matches half-written): non-branches up to a branch or
 * PTD_FLOW_BLOCK_MAX instructions. Leaves the IP at the block's start.
 * 0, or < 0 when an instruction cannot be decoded: -1 - n, n the
 * instructions before it (a run of their own: e->last_ip is the last of
 * them, e->target the IP that failed, decoded on its own next time). */
static int decode_block(struct ptd_flow *f, struct ptd_flow_bentry *e)
{
    struct ptd_flow_pinsn p;
    uint64_t start = f->ip, ip = start, prev = start;
    unsigned n = 0;

    /* The IP stays in a register: the loop stores nothing to *f except
     * through window()/decode(), so the window's fields stay in registers
     * too and each step depends only on the one before. */
    /* cur: the code byte at ip, kept beside it while ip stays in the
     * window with an instruction's worth of bytes after it (lim: the
     * window's end), so each step's first load waits for one add only;
     * NULL: look at the window */
    const uint8_t *cur = NULL, *lim = NULL;
    for (;;) {
        /* the common instructions: length and class (ptd_ild_fast.h) */
        struct ptd_ild_step s;
        unsigned sl;
        if (PTD_ILD_STEP_RARE(!cur || (size_t)(lim - cur) < PTD_ILD_MAX_LEN)) {
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
        }
        sl = ptd_ild_step(cur, PTD_ILD_MAX_LEN, f->mode, &s);
        if (sl) {
            n++;
            if (s.iclass != PTD_ICLASS_OTHER || n == PTD_FLOW_BLOCK_MAX) {
                /* the entry straight from the step (pinsn_of_step, then
                 * pinsn_to_bentry: MOV CR3 never takes the step) */
                e->last_ip = ip;
                e->target = s.rel ? ip + sl + (uint64_t)(int64_t)s.disp : 0;
                e->size = (uint8_t)sl;
                e->iclass = s.iclass;
                e->bits = (uint8_t)((s.rel ? PB_DIRECT : 0) | (s.rel && s.disp == 0 ? PB_ZERO_DISP : 0) |
                                    (s.iclass == PTD_ICLASS_FAR_TRANSFER ? PB_CPL : 0));
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
            e->last_ip = prev;
            e->target = ip;
            f->ip = start;
            return -1 - (int)n;
        }
        n++;
        if (insn.iclass != PTD_ICLASS_OTHER || n == PTD_FLOW_BLOCK_MAX) {
            /* only the last instruction matters beyond its length */
            pinsn_of(&p, &insn);
            break;
        }
        prev = ip;
        ip += (uint64_t)len;
    }
    pinsn_to_bentry(e, &p);
done:
    f->ip = start;
    e->ninsn = (uint16_t)n;
    e->ip = start;
    e->mode = f->mode;
    return 0;
}

int ptd_flow_next_block(struct ptd_flow *f, struct ptd_flow_block *blk)
{
    struct ptd_flow_bentry local, *e;
    uint64_t ip = f->ip;
    int st;

    blk->ip = ip;
    blk->last_ip = ip;
    blk->ninsn = 0;
    blk->mode = f->mode;
    blk->speculative = f->speculative;
    blk->last_iclass = PTD_FLOW_ICLASS_ERROR;

    /* an event not fetched yet may bind anywhere: one instruction at a
     * time (a held one is looked at once the block is known); so do tick
     * events, made at every branch query */
    if (!f->enabled || (f->status & PTD_ST_EVENT && !f->process_event) || (f->flags & PTD_FLOW_F_TICK))
        return one_insn(f, blk);
    e = f->bcache ? &f->bcache[(ip ^ (ip >> 11)) & f->bcache_mask] : &local;
    if (!f->bcache || !(e->ip == ip && e->mode == f->mode)) {
        /* no cache: decode the block every time (still one call) */
        st = decode_block(f, &local);
        if (st < 0) {
            if (st == -1)
                return one_insn(f, blk);     /* reports the error */
            /* the run so far: no branch, no query, no event */
            blk->ninsn = (uint32_t)(-1 - st);
            blk->last_ip = local.last_ip;
            blk->last_iclass = PTD_ICLASS_OTHER;
            f->ip = local.target;
            return status(f, 0);
        }
        if (e != &local)
            *e = local;
    }
    if (f->process_event && !held_skips_body(f, e))
        return one_insn(f, blk);
    if (f->bcache) {
        /* the next block is one of these two for most blocks: start
         * loading its entry while this one is proceeded (a hint only) */
        uint64_t a = e->target, b = e->last_ip + e->size;
        PTD_FLOW_PREFETCH(&f->bcache[(a ^ (a >> 11)) & f->bcache_mask]);
        PTD_FLOW_PREFETCH(&f->bcache[(b ^ (b >> 11)) & f->bcache_mask]);
    }
    blk->ninsn = e->ninsn;
    blk->last_ip = e->last_ip;
    blk->last_iclass = e->iclass;
    f->ip = e->last_ip;
    f->bound_paging = 0;
    f->bound_vmcs = 0;
    f->bound_ptw = 0;
    if (f->process_event) {
        /* the last instruction as ptd_flow_next does it: the held event
         * may bind to it */
        struct ptd_flow_pinsn *p = &f->pinsn;
        bentry_to_pinsn(p, e);
        return process_insn(f, p);
    }
    st = proceed_entry(f, e);
    if (st < 0)
        return st;
    if (!(f->status & PTD_ST_EVENT))
        return status(f, 0);
    return check_ip_event_after(f, e->iclass);
}

/* ---- runs of blocks, counted (callers that print no instruction) ------- */

int ptd_flow_run_blocks(struct ptd_flow *f, struct ptd_flow_run *run, uint32_t max_blocks)
{
    uint64_t insns = run->insns, runs = run->runs, last_ip = run->last_ip;
    uint8_t last = run->last_iclass;
    /* tick events are made at every branch query: ptd_flow_next_block */
    bool fast = f->bcache && !(f->flags & PTD_FLOW_F_TICK);
    uint32_t k = 0;
    int st = 0;

    while (k < max_blocks) {
        /* ptd_flow_next_block's common case inline, block after block: a
         * block-cache hit with no event fetched or held */
        while (fast && f->enabled && !f->process_event && !(f->status & PTD_ST_EVENT) && k < max_blocks) {
            uint64_t ip = f->ip;
            const struct ptd_flow_bentry *e = &f->bcache[(ip ^ (ip >> 11)) & f->bcache_mask];
            if (e->ip != ip || e->mode != f->mode)
                break;
            uint64_t a = e->target, b = e->last_ip + e->size;
            PTD_FLOW_PREFETCH(&f->bcache[(a ^ (a >> 11)) & f->bcache_mask]);
            PTD_FLOW_PREFETCH(&f->bcache[(b ^ (b >> 11)) & f->bcache_mask]);
            k++;
            insns += e->ninsn;
            runs += last != PTD_ICLASS_OTHER;
            last = e->iclass;
            last_ip = e->last_ip;
            f->ip = e->last_ip;
            f->bound_paging = 0;
            f->bound_vmcs = 0;
            f->bound_ptw = 0;
            st = proceed_entry(f, e);
            if (st < 0)
                goto out;
            st = (f->status & PTD_ST_EVENT) ? check_ip_event_after(f, e->iclass) : status(f, 0);
            if (st != 0)
                goto out;
        }
        if (k == max_blocks)
            break;
        /* a miss, an event, the rest: the call */
        struct ptd_flow_block blk;
        st = ptd_flow_next_block(f, &blk);
        k++;
        last_ip = blk.last_ip;
        if (blk.ninsn) {
            insns += blk.ninsn;
            runs += last != PTD_ICLASS_OTHER;
            last = blk.last_iclass;
        }
        if (st != 0)
            break;
    }
out:
    run->insns = insns;
    run->runs = runs;
    run->last_ip = last_ip;
    run->last_iclass = last;
    return st;
}
