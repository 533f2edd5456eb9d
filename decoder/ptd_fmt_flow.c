#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_hints.h"
#include "decoder/ptd_flow_ips.h"

/* A bounded writer: every put stops at the end of the buffer, and the caller
 * checks `full` once (lines are at most PTD_FMT_FLOW_LINE_MAX). */
struct w {
    char *p, *end;
    int full;
};

static void put_c(struct w *w, char c)
{
    if (w->p < w->end)
        *w->p++ = c;
    else
        w->full = 1;
}

static void put_s(struct w *w, const char *s)
{
    while (*s)
        put_c(w, *s++);
}

static const char hexdigits[] = "0123456789abcdef";

/* The 8 hex digits of x, the first in the lowest byte: each nibble spread
 * to a byte (nibble k to byte k), put into printing order, and each byte
 * 0..15 turned into '0'..'9', 'a'..'f' at once (the bytes that are 10 or
 * more get 'a' - '0' - 10 more). An IP per line is most of what `flow
 * --no-inst` prints. */
static inline uint64_t hex8(uint32_t x)
{
    uint64_t v = x;
    v = (v | (v << 16)) & 0x0000ffff0000ffffull;
    v = (v | (v << 8)) & 0x00ff00ff00ff00ffull;
    v = (v | (v << 4)) & 0x0f0f0f0f0f0f0f0full;
    /* nibble 7 first: the bytes reversed */
    v = ((v & 0x00ff00ff00ff00ffull) << 8) | ((v >> 8) & 0x00ff00ff00ff00ffull);
    v = ((v & 0x0000ffff0000ffffull) << 16) | ((v >> 16) & 0x0000ffff0000ffffull);
    v = (v << 32) | (v >> 32);
    uint64_t letters = ((v + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
    return v + 0x3030303030303030ull + letters * (uint64_t)('a' - '0' - 10);
}

/* 8 bytes of v at p, the lowest first: one store where the byte order
 * allows it */
static inline void put8(char *p, uint64_t v)
{
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    __builtin_memcpy(p, &v, 8);
#else
    for (int i = 0; i < 8; i++)
        p[i] = (char)(v >> (8 * i));
#endif
}

/* 16 hex digits at p (no bound: the caller has room) */
static inline void hex16_at(char *p, uint64_t v)
{
    put8(p, hex8((uint32_t)(v >> 32)));
    put8(p + 8, hex8((uint32_t)v));
}

/* 16 hex digits, leading zeros kept (ptxed's %016llx). */
static void put_hex16(struct w *w, uint64_t v)
{
    if (w->end - w->p < 16) {
        for (int shift = 60; shift >= 0; shift -= 4)
            put_c(w, hexdigits[(v >> shift) & 15]);
        return;
    }
    hex16_at(w->p, v);
    w->p += 16;
}

/* Lower-case hex without leading zeros, as printf's %x / PRIx64. */
static void put_hex(struct w *w, uint64_t v)
{
    int shift = 60;
    while (shift > 0 && !((v >> shift) & 15))
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        put_c(w, hexdigits[(v >> shift) & 15]);
}

static void put_dec(struct w *w, unsigned v)
{
    char d[10];
    int n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < 10);
    while (n)
        put_c(w, d[--n]);
}

static int finish(struct w *w, char *line)
{
    if (w->full || w->p == w->end)
        return -PTD_ERR_NOSPC;
    *w->p = '\0';
    return (int)(w->p - line);
}

static void writer(struct w *w, char *line, size_t cap)
{
    w->p = line;
    w->end = line + (cap ? cap - 1 : 0);
    w->full = cap == 0;
}

int ptd_fmt_flow_insn(char *line, size_t cap, uint32_t flags, const struct ptd_flow_insn *insn,
                      uint64_t offset, uint64_t time)
{
    struct w w;
    writer(&w, line, cap);
    if (flags & PTD_FMT_FLOW_OFFSET) {
        put_hex16(&w, offset);
        put_s(&w, "  ");
    }
    if (flags & PTD_FMT_FLOW_TIME) {
        put_hex16(&w, time);
        put_s(&w, "  ");
    }
    if (insn->speculative)
        put_s(&w, "? ");
    put_hex16(&w, insn->ip);
    return finish(&w, line);
}

static const char *mode_name(unsigned m)
{
    switch (m) {
    case PTD_EXEC_MODE_16: return "16-bit";
    case PTD_EXEC_MODE_32: return "32-bit";
    case PTD_EXEC_MODE_64: return "64-bit";
    default: return "unknown";
    }
}

/* ", <label>: <ip>" when --event:ip asks for it and the IP is known. */
static void put_ip(struct w *w, uint32_t flags, const char *label, uint64_t ip, int known)
{
    if (!(flags & PTD_FMT_FLOW_EVENT_IP) || !known)
        return;
    put_s(w, ", ");
    put_s(w, label);
    put_s(w, ": ");
    put_hex16(w, ip);
}

/* The words of the events that change the flow. 1 if ev is one. */
static int put_flow_event(struct w *w, uint32_t flags, const struct ptd_event *ev, int ip_known)
{
    switch (ev->type) {
    case PTD_EV_ENABLED:
        put_s(w, (ev->flags & PTD_EVF_RESUMED) ? "resumed" : "enabled");
        put_ip(w, flags, "ip", ev->ip, 1);
        return 1;
    case PTD_EV_DISABLED:
        put_s(w, "disabled");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_ASYNC_DISABLED:
        put_s(w, "disabled");
        put_ip(w, flags, "at", ev->from, 1);
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_ASYNC_BRANCH:
        put_s(w, "interrupt");
        put_ip(w, flags, "from", ev->from, 1);
        put_ip(w, flags, "to", ev->ip, ip_known);
        return 1;
    case PTD_EV_PAGING:
    case PTD_EV_ASYNC_PAGING:
        put_s(w, "paging, cr3: ");
        put_hex16(w, ev->value);
        if (ev->flags & PTD_EVF_NR)
            put_s(w, ", nr");
        /* ptxed prints the IP of an asynchronous one even when suppressed */
        put_ip(w, flags, "ip", ev->ip, ev->type == PTD_EV_ASYNC_PAGING);
        return 1;
    case PTD_EV_OVERFLOW:
        put_s(w, "overflow");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_EXEC_MODE:
        put_s(w, "exec mode: ");
        put_s(w, mode_name(ev->mode));
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_TSX:
        put_s(w, (ev->flags & PTD_EVF_ABORTED)       ? "aborted"
                 : (ev->flags & PTD_EVF_SPECULATIVE) ? "begin transaction"
                                                     : "committed");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_STOP: put_s(w, "stopped"); return 1;
    case PTD_EV_VMCS:
    case PTD_EV_ASYNC_VMCS:
        put_s(w, "vmcs, base: ");
        put_hex16(w, ev->value);
        put_ip(w, flags, "ip", ev->ip, ev->type == PTD_EV_ASYNC_VMCS);
        return 1;
    case PTD_EV_TIP:
        put_s(w, "tip: ");
        put_hex(w, ev->ip);
        return 1;
    case PTD_EV_TNT:
        put_s(w, "tnt: ");
        for (unsigned i = ev->a; i > 0; i--)
            put_c(w, (ev->value >> (i - 1)) & 1 ? '!' : '.');
        return 1;
    default: return 0;
    }
}

/* Power, PTWRITE and timing events. 1 if ev is one. */
static int put_power_event(struct w *w, uint32_t flags, const struct ptd_event *ev, int ip_known)
{
    switch (ev->type) {
    case PTD_EV_EXSTOP:
        put_s(w, "exstop");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_MWAIT:
        put_s(w, "mwait ");
        put_hex(w, (uint32_t)ev->value);
        put_c(w, ' ');
        put_hex(w, ev->aux);
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_PWRE:
        put_s(w, "pwre c");
        put_dec(w, (ev->a + 1u) & 0xf);
        put_c(w, '.');
        put_dec(w, (ev->b + 1u) & 0xf);
        if (ev->flags & PTD_EVF_HW)
            put_s(w, " hw");
        return 1;
    case PTD_EV_PWRX:
        put_s(w, "pwrx ");
        if (ev->aux & PTD_PKTF_WR_INT)
            put_s(w, "int: ");
        if (ev->aux & PTD_PKTF_WR_STORE)
            put_s(w, "st: ");
        if (ev->aux & PTD_PKTF_WR_HW)
            put_s(w, "hw: ");
        put_c(w, 'c');
        put_dec(w, (ev->a + 1u) & 0xf);
        put_s(w, " (c");
        put_dec(w, (ev->b + 1u) & 0xf);
        put_c(w, ')');
        return 1;
    case PTD_EV_PTWRITE:
        put_s(w, "ptwrite: ");
        put_hex(w, ev->value);
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_TICK:
        put_s(w, "tick");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        return 1;
    case PTD_EV_CBR:
        put_s(w, "cbr: ");
        put_hex(w, ev->value);
        return 1;
    case PTD_EV_MNT:
        put_s(w, "mnt: ");
        put_hex(w, ev->value);
        return 1;
    default: return 0;
    }
}

/* Event Trace (CFE/EVD), iflags and TRIG events, in ptxed's words. 1 if ev
 * is one. */
static int put_trace_event(struct w *w, uint32_t flags, const struct ptd_event *ev, int ip_known)
{
    static const char *const plain[] = {
        [PTD_EV_IRET] = "iret",   [PTD_EV_SMI] = "smi",         [PTD_EV_RSM] = "rsm",
        [PTD_EV_INIT] = "init",   [PTD_EV_VMENTRY] = "vmentry", [PTD_EV_SHUTDOWN] = "shutdown",
        [PTD_EV_UIRET] = "uiret", [PTD_EV_SYSCALL] = "syscall",
    };
    switch (ev->type) {
    case PTD_EV_IFLAGS:
        put_s(w, (ev->flags & PTD_EVF_IFLAG) ? "interrupts enabled" : "interrupts disabled");
        break;
    case PTD_EV_INTERRUPT:
        put_s(w, "interrupt ");
        put_dec(w, ev->aux);
        if (ev->flags & PTD_EVF_HAS_CR2) {
            put_s(w, ", cr2: ");
            put_hex16(w, ev->value);
        }
        break;
    case PTD_EV_SIPI:
        put_s(w, "sipi: ");
        put_hex(w, ev->aux);
        return 1;
    case PTD_EV_VMEXIT:
        put_s(w, "vmexit");
        if (ev->flags & PTD_EVF_HAS_VECTOR) {
            put_s(w, ", intr: ");
            put_dec(w, ev->aux);
        }
        if (ev->flags & PTD_EVF_HAS_VMXR) {
            put_s(w, ", vmxr: ");
            put_hex16(w, ev->value);
        }
        if (ev->flags & PTD_EVF_HAS_VMXQ) {
            put_s(w, ", vmxq: ");
            put_hex16(w, ev->value2);
        }
        break;
    case PTD_EV_UINTR:
    case PTD_EV_SWINTR:
        put_s(w, ev->type == PTD_EV_UINTR ? "uintr " : "swintr ");
        put_dec(w, ev->aux);
        break;
    case PTD_EV_TRIG:
        put_s(w, "trig ");
        put_c(w, hexdigits[(ev->a >> 4) & 15]);
        put_c(w, hexdigits[ev->a & 15]);
        if (ev->flags & PTD_EVF_MULT)
            put_s(w, ", mult");
        put_ip(w, flags, "ip", ev->ip, ip_known);
        /* the count is what remains to the trigger: 0 once placed */
        if (ev->aux) {
            put_s(w, ", icnt: ");
            put_dec(w, ev->aux);
        }
        return 1;
    case PTD_EV_IRET:
    case PTD_EV_SMI:
    case PTD_EV_RSM:
    case PTD_EV_INIT:
    case PTD_EV_VMENTRY:
    case PTD_EV_SHUTDOWN:
    case PTD_EV_UIRET:
    case PTD_EV_SYSCALL: put_s(w, plain[ev->type]); break;
    default: return 0;
    }
    put_ip(w, flags, "ip", ev->ip, ip_known);
    return 1;
}

int ptd_fmt_flow_event(char *line, size_t cap, uint32_t flags, const struct ptd_event *ev,
                       uint64_t offset)
{
    struct w w;
    int ip_known = !(ev->flags & PTD_EVF_IP_SUPPRESSED);
    writer(&w, line, cap);
    put_c(&w, '[');
    if (flags & PTD_FMT_FLOW_OFFSET) {
        put_hex16(&w, offset);
        put_s(&w, "  ");
    }
    if ((flags & PTD_FMT_FLOW_EVENT_TIME) && (ev->flags & PTD_EVF_HAS_TSC)) {
        put_hex16(&w, ev->tsc);
        put_s(&w, "  ");
    }
    if (!put_flow_event(&w, flags, ev, ip_known) && !put_power_event(&w, flags, ev, ip_known) &&
        !put_trace_event(&w, flags, ev, ip_known)) {
        put_s(&w, "event ");
        put_dec(&w, ev->type);
    }
    put_c(&w, ']');
    return finish(&w, line);
}

int ptd_fmt_flow_error(char *line, size_t cap, const char *kind, uint64_t offset, uint64_t ip,
                       int err)
{
    struct w w;
    writer(&w, line, cap);
    put_c(&w, '[');
    put_hex(&w, offset);
    put_s(&w, ", ");
    put_hex(&w, ip);
    put_s(&w, ": ");
    put_s(&w, kind);
    put_s(&w, ": ");
    put_s(&w, ptd_errstr(err));
    put_c(&w, ']');
    return finish(&w, line);
}

static int fixed_line(char *line, size_t cap, const char *text)
{
    struct w w;
    writer(&w, line, cap);
    put_s(&w, text);
    return finish(&w, line);
}

/* ---- the driver (ptxed's decode loops) -------------------------------------- */

/* The driver's phases. */
enum {
    PH_SYNC,
    PH_LOOP,
    PH_INSNS,
    PH_FAILED,
    PH_RESYNC,
    PH_DONE
};

void ptd_flow_lines_init(struct ptd_flow_lines *L, struct ptd_flow *f, uint32_t flags)
{
    L->f = f;
    L->flags = flags;
    L->st = 0;
    L->phase = PH_SYNC;
    L->have_sync = 0;
    L->cpu_unknown = 0;
    L->sync = 0;
    L->time = 0;
    L->offset = 0;
    L->blk.ip = L->blk.last_ip = 0;
    L->blk.ninsn = 0;
    L->walk_ip = 0;
    L->walk_left = 0;
    L->ips_k = L->ips_n = 0;
    L->hex_hi_of = 0;
    L->hex_hi = hex8(0);
    L->insn.ip = 0;
    L->insn.iclass = PTD_FLOW_ICLASS_ERROR;
    L->insns = 0;
    L->blocks = 0;
    L->errors = 0;
    L->last_ip = 0;
    L->last_iclass = PTD_FLOW_ICLASS_ERROR;
    L->tail_max = 0;
    L->tail_phase = 0;
    L->tail_insns = 0;
    L->tail.end = PTD_TAIL_END_NONE;
}

/* Where an error is reported (ptxed's diagnose): after the last
 * instruction decoded when the code says where that goes (its direct
 * target, or the next one), at it for a query that did not match. */
static uint64_t error_ip(struct ptd_flow_lines *L, int err)
{
    struct ptd_flow_insn in;
    uint64_t ip, next;
    uint8_t mode;
    if (L->flags & PTD_FMT_FLOW_INSN) {
        ip = L->insn.ip;
        mode = L->insn.mode;
        if (L->insn.iclass == PTD_FLOW_ICLASS_ERROR)
            return ip;
    } else {
        if (!L->blk.ninsn)
            return L->blk.ip;
        ip = L->blk.last_ip;
        mode = L->blk.mode;
    }
    if (err == -PTD_ERR_BAD_QUERY)
        return ip;
    if (ptd_flow_insn_at(L->f, ip, mode, &in, &next) < 0)
        return ip;
    /* ptxed's rule: the length plus a branch displacement if it has one
     * (XBEGIN's too) */
    return in.after;
}

static int error_line(struct ptd_flow_lines *L, char *line, size_t cap,
                      enum ptd_flow_line_kind *kind, const char *what, int err)
{
    L->errors++;
    *kind = PTD_FLOW_LINE_ERROR;
    return ptd_fmt_flow_error(line, cap, what, ptd_flow_offset(L->f), error_ip(L, err), err);
}

/* What the line makers return besides a line's length (> 0) or 0 (no
 * line, go on): */
enum {
    LINE_FAILED = -1, /* the flow reported an error (in L->st) */
    LINE_DONE = -2,   /* the trace is done */
};

/* Take the pending event; its line (> 0), 0 when it prints none, or
 * LINE_FAILED with L->st the error. */
static int event_line(struct ptd_flow_lines *L, char *line, size_t cap,
                      enum ptd_flow_line_kind *kind)
{
    struct ptd_event ev;
    uint64_t off = ptd_flow_offset(L->f);
    L->st = ptd_flow_event(L->f, &ev);
    if (L->st < 0)
        return LINE_FAILED;
    L->time = ev.tsc;
    if ((L->flags & PTD_FMT_FLOW_QUIET) || (ev.flags & PTD_EVF_STATUS_UPDATE))
        return 0;
    *kind = PTD_FLOW_LINE_EVENT;
    return ptd_fmt_flow_event(line, cap, L->flags, &ev, off);
}

/* The IP after walk_ip from the batch (refilled when used up), 0 when the
 * code does not give it (the caller decodes the instruction then). */
static int next_ip(struct ptd_flow_lines *L, uint64_t *next)
{
    if (L->ips_k == L->ips_n) {
        uint32_t want = L->walk_left < PTD_FMT_FLOW_IPS ? L->walk_left : PTD_FMT_FLOW_IPS;
        L->ips_k = 0;
        L->ips_n = (uint8_t)ptd_flow_ips_after(L->f, L->walk_ip, L->blk.mode, L->ips, want);
        if (!L->ips_n)
            return 0;
    }
    *next = L->ips[L->ips_k++];
    return 1;
}

/* The next instruction of the block being printed. */
static int insn_line(struct ptd_flow_lines *L, char *line, size_t cap,
                     enum ptd_flow_line_kind *kind)
{
    uint64_t next = 0;
    if (L->f->flags & PTD_FLOW_F_RAW) {
        /* the bytes for a disassembler: the whole decode */
        (void)ptd_flow_insn_at(L->f, L->walk_ip, L->blk.mode, &L->insn, &next);
    } else if (next_ip(L, &next)) {
        /* the IP alone: the length step (docs/flow.md, Decode paths) */
        L->insn.size = 0;
        L->insn.mode = L->blk.mode;
        L->insn.iclass = L->walk_left == 1 ? L->blk.last_iclass : PTD_ICLASS_OTHER;
    } else {
        (void)ptd_flow_insn_at(L->f, L->walk_ip, L->blk.mode, &L->insn, &next);
    }
    L->insn.ip = L->walk_ip;
    L->insn.speculative = L->blk.speculative;
    L->walk_left--;
    L->walk_ip = next;
    *kind = PTD_FLOW_LINE_INSN;
    if (L->flags & (PTD_FMT_FLOW_OFFSET | PTD_FMT_FLOW_TIME))
        return ptd_fmt_flow_insn(line, cap, L->flags, &L->insn, L->offset, L->time);
    /* the common line, "[? ]<ip>", written straight (cap is at least
     * PTD_FMT_FLOW_LINE_MAX): ptd_fmt_flow_insn's bytes without its
     * checks */
    char *p = line;
    if (L->insn.speculative) {
        *p++ = '?';
        *p++ = ' ';
    }
    /* the upper half of an IP seldom changes: its digits are kept */
    uint32_t hi = (uint32_t)(L->insn.ip >> 32);
    if (hi != L->hex_hi_of) {
        L->hex_hi_of = hi;
        L->hex_hi = hex8(hi);
    }
    put8(p, L->hex_hi);
    put8(p + 8, hex8((uint32_t)L->insn.ip));
    p[16] = '\0';
    return (int)(p + 16 - line);
}

/* The trace ended with st: the tail (PTD_FMT_FLOW_TAIL) starts after the
 * last instruction decoded. */
static void tail_begin(struct ptd_flow_lines *L, int st)
{
    L->insn.ip = L->last_ip;
    ptd_flow_lines_tail_begin(L, st);
}

/* Blocks per ptd_flow_run_blocks call (a bound on the work per call). */
#define RUN_BLOCKS 4096

/* One step of the decode loop: a line (> 0), 0 to go on, or LINE_DONE. */
static int loop_step(struct ptd_flow_lines *L, char *line, size_t cap,
                     enum ptd_flow_line_kind *kind)
{
    int quiet = (L->flags & PTD_FMT_FLOW_QUIET) != 0;
    if (L->st >= 0 && (L->st & PTD_ST_EVENT)) {
        int n = event_line(L, line, cap, kind);
        if (n < 0)
            L->phase = PH_FAILED;
        return n > 0 ? n : 0;
    }
    if (L->st < 0) {
        L->phase = PH_FAILED;
        return 0;
    }
    if (L->st & PTD_ST_EOS) {
        L->phase = PH_DONE;
        tail_begin(L, L->st);
        if (!(L->st & PTD_ST_IP_SUPPRESSED) && !quiet) {
            *kind = PTD_FLOW_LINE_END;
            return fixed_line(line, cap, "[end of trace]");
        }
        return LINE_DONE;
    }
    L->offset = ptd_flow_offset(L->f);
    if (L->flags & PTD_FMT_FLOW_INSN) {
        L->st = ptd_flow_next(L->f, &L->insn);
        /* an event the instruction flow could not announce ahead */
        if (L->st == -PTD_ERR_EVENT_IGNORED) {
            L->st = PTD_ST_EVENT;
            return 0;
        }
        if (L->insn.iclass == PTD_FLOW_ICLASS_ERROR)
            return 0;
        L->insns++;
        L->last_ip = L->insn.ip;
        L->last_iclass = L->insn.iclass;
        if (quiet)
            return 0;
        *kind = PTD_FLOW_LINE_INSN;
        return ptd_fmt_flow_insn(line, cap, L->flags, &L->insn, L->offset, L->time);
    }
    if (quiet && !(L->flags & PTD_FMT_FLOW_SHOW_BLOCKS)) {
        /* nothing to print per block: counted up to the next event */
        struct ptd_flow_run r = { L->insns, L->blocks, L->last_ip, L->last_iclass, L->blk };
        L->st = ptd_flow_run_blocks(L->f, &r, RUN_BLOCKS);
        L->insns = r.insns;
        L->blocks = r.blocks;
        L->last_ip = r.last_ip;
        L->last_iclass = r.last_iclass;
        L->blk = r.blk;
        return 0;
    }
    L->st = ptd_flow_next_block(L->f, &L->blk);
    L->insns += L->blk.ninsn;
    L->blocks++;
    if (L->blk.ninsn) {
        L->last_ip = L->blk.last_ip;
        L->last_iclass = L->blk.last_iclass;
    }
    if (quiet)
        return 0;
    L->walk_ip = L->blk.ip;
    L->walk_left = L->blk.ninsn;
    L->ips_k = L->ips_n = 0;
    L->phase = PH_INSNS;
    if (L->flags & PTD_FMT_FLOW_SHOW_BLOCKS) {
        struct w w;
        writer(&w, line, cap);
        put_s(&w, "[block");
        if (L->flags & PTD_FMT_FLOW_STAT) {
            put_c(&w, ' ');
            put_hex(&w, L->blocks);
        }
        put_c(&w, ']');
        *kind = PTD_FLOW_LINE_BLOCK;
        return finish(&w, line);
    }
    return 0;
}

/* ptd_flow_lines_next but for the common line (insn_line, taken there):
 * the blocks, events, errors and the end */
static PTD_NOINLINE int lines_next(struct ptd_flow_lines *L, char *line, size_t cap,
                                   enum ptd_flow_line_kind *kind)
{
    if (L->cpu_unknown) {
        L->cpu_unknown = 0;
        *kind = PTD_FLOW_LINE_ERROR;
        return ptd_fmt_flow_error(line, cap, "config error", 0, 0, -PTD_ERR_BAD_CPU);
    }
    /* Each pass either returns a line or advances the decoder, whose work
     * is bounded by the trace: the loop ends with it. */
    for (;;) {
        int n;
        switch (L->phase) {
        case PH_DONE: return ptd_flow_lines_tail(L, line, cap, kind);
        case PH_SYNC: {
            L->insn.ip = 0;
            L->insn.iclass = PTD_FLOW_ICLASS_ERROR;
            L->blk.ip = 0;
            L->blk.ninsn = 0;
            L->st = ptd_flow_sync_forward(L->f);
            if (L->st >= 0) {
                L->phase = PH_LOOP;
                continue;
            }
            if (L->st == -PTD_ERR_EOS) {
                L->phase = PH_DONE;
                return 0;
            }
            uint64_t off = ptd_flow_offset(L->f);
            n = error_line(L, line, cap, kind, "sync error", L->st);
            /* no progress since the last failed sync: give up */
            if (L->have_sync && off <= L->sync)
                L->phase = PH_DONE;
            L->sync = off;
            L->have_sync = 1;
            return n;
        }
        case PH_LOOP:
            n = loop_step(L, line, cap, kind);
            if (n == LINE_DONE)
                continue;
            if (n)
                return n;
            continue;
        case PH_INSNS:
            if (L->walk_left)
                return insn_line(L, line, cap, kind);
            L->phase = PH_LOOP;
            continue;
        case PH_FAILED:
            if (L->st == 0)
                L->st = -PTD_ERR_INTERNAL;
            if (L->st == -PTD_ERR_EOS) {
                L->phase = PH_DONE;
                tail_begin(L, L->st);
                continue;
            }
            L->phase = (L->flags & PTD_FMT_FLOW_RESYNC) ? PH_RESYNC : PH_SYNC;
            return error_line(L, line, cap, kind, "error", L->st);
        case PH_RESYNC:
        default:
            L->st = ptd_flow_resync(L->f);
            if (L->st == -PTD_ERR_EVENT_IGNORED) {
                /* an event that cannot be passed: printed, then on */
                L->st = PTD_ST_EVENT;
                n = event_line(L, line, cap, kind);
                if (n < 0) {
                    L->phase = PH_SYNC;
                    return error_line(L, line, cap, kind, "resync error", L->st);
                }
                if (n > 0)
                    return n;
                continue;
            }
            if (L->st < 0) {
                L->phase = PH_SYNC;
                return error_line(L, line, cap, kind, "resync error", L->st);
            }
            L->phase = PH_LOOP;
            if ((L->st & PTD_ST_IP_SUPPRESSED) && !(L->flags & PTD_FMT_FLOW_QUIET)) {
                *kind = PTD_FLOW_LINE_EVENT;
                return fixed_line(line, cap, "[disabled]");
            }
            continue;
        }
    }
}

int ptd_flow_lines_next(struct ptd_flow_lines *L, char *line, size_t cap,
                        enum ptd_flow_line_kind *kind)
{
    if (cap < PTD_FMT_FLOW_LINE_MAX)
        return -PTD_ERR_NOSPC;
    /* most lines: the next instruction of a block (apart, so that this
     * call costs no more than the line) */
    if (L->phase == PH_INSNS && L->walk_left)
        return insn_line(L, line, cap, kind);
    return lines_next(L, line, cap, kind);
}
