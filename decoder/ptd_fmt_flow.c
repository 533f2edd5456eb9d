#include "decoder/ptd_fmt_flow.h"
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

/* "00" .. "ff": a byte's two hex digits */
#define HEX_ROW(h) {h, '0'}, {h, '1'}, {h, '2'}, {h, '3'}, {h, '4'}, {h, '5'}, {h, '6'}, \
    {h, '7'}, {h, '8'}, {h, '9'}, {h, 'a'}, {h, 'b'}, {h, 'c'}, {h, 'd'}, {h, 'e'}, {h, 'f'}
static const char hexpairs[256][2] = {
    HEX_ROW('0'), HEX_ROW('1'), HEX_ROW('2'), HEX_ROW('3'), HEX_ROW('4'), HEX_ROW('5'),
    HEX_ROW('6'), HEX_ROW('7'), HEX_ROW('8'), HEX_ROW('9'), HEX_ROW('a'), HEX_ROW('b'),
    HEX_ROW('c'), HEX_ROW('d'), HEX_ROW('e'), HEX_ROW('f'),
};

static void put_hex16(struct w *w, uint64_t v)
{
    if (w->end - w->p < 16) {
        for (int shift = 60; shift >= 0; shift -= 4)
            put_c(w, hexdigits[(v >> shift) & 15]);
        return;
    }
    /* room for all 16 digits (the common case): no check per digit, two
     * digits per step; an IP per line is most of what `flow --no-inst`
     * prints */
    for (int i = 14; i >= 0; i -= 2, v >>= 8) {
        w->p[i] = hexpairs[v & 0xff][0];
        w->p[i + 1] = hexpairs[v & 0xff][1];
    }
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

int ptd_fmt_flow_insn(char *line, size_t cap, uint32_t flags,
                      const struct ptd_flow_insn *insn, uint64_t offset, uint64_t time)
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

int ptd_fmt_flow_event(char *line, size_t cap, uint32_t flags,
                       const struct ptd_event *ev, uint64_t offset)
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
    switch (ev->type) {
    case PTD_EV_ENABLED:
        put_s(&w, (ev->flags & PTD_EVF_RESUMED) ? "resumed" : "enabled");
        put_ip(&w, flags, "ip", ev->ip, 1);
        break;
    case PTD_EV_DISABLED:
        put_s(&w, "disabled");
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_ASYNC_DISABLED:
        put_s(&w, "disabled");
        put_ip(&w, flags, "at", ev->from, 1);
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_ASYNC_BRANCH:
        put_s(&w, "interrupt");
        put_ip(&w, flags, "from", ev->from, 1);
        put_ip(&w, flags, "to", ev->ip, ip_known);
        break;
    case PTD_EV_PAGING:
    case PTD_EV_ASYNC_PAGING:
        put_s(&w, "paging, cr3: ");
        put_hex16(&w, ev->value);
        if (ev->flags & PTD_EVF_NR)
            put_s(&w, ", nr");
        put_ip(&w, flags, "ip", ev->ip, ev->type == PTD_EV_ASYNC_PAGING);
        break;
    case PTD_EV_OVERFLOW:
        put_s(&w, "overflow");
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_EXEC_MODE:
        put_s(&w, "exec mode: ");
        put_s(&w, mode_name(ev->mode));
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_TSX:
        put_s(&w, (ev->flags & PTD_EVF_ABORTED) ? "aborted"
                  : (ev->flags & PTD_EVF_SPECULATIVE) ? "begin transaction"
                  : "committed");
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_STOP:
        put_s(&w, "stopped");
        break;
    case PTD_EV_VMCS:
    case PTD_EV_ASYNC_VMCS:
        put_s(&w, "vmcs, base: ");
        put_hex16(&w, ev->value);
        put_ip(&w, flags, "ip", ev->ip, ev->type == PTD_EV_ASYNC_VMCS);
        break;
    case PTD_EV_EXSTOP:
        put_s(&w, "exstop");
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_MWAIT:
        put_s(&w, "mwait ");
        put_hex(&w, (uint32_t)ev->value);
        put_c(&w, ' ');
        put_hex(&w, ev->aux);
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_PWRE:
        put_s(&w, "pwre c");
        put_dec(&w, (ev->a + 1u) & 0xf);
        put_c(&w, '.');
        put_dec(&w, (ev->b + 1u) & 0xf);
        if (ev->flags & PTD_EVF_HW)
            put_s(&w, " hw");
        break;
    case PTD_EV_PWRX:
        put_s(&w, "pwrx ");
        if (ev->aux & PTD_PKTF_WR_INT)
            put_s(&w, "int: ");
        if (ev->aux & PTD_PKTF_WR_STORE)
            put_s(&w, "st: ");
        if (ev->aux & PTD_PKTF_WR_HW)
            put_s(&w, "hw: ");
        put_c(&w, 'c');
        put_dec(&w, (ev->a + 1u) & 0xf);
        put_s(&w, " (c");
        put_dec(&w, (ev->b + 1u) & 0xf);
        put_c(&w, ')');
        break;
    case PTD_EV_PTWRITE:
        put_s(&w, "ptwrite: ");
        put_hex(&w, ev->value);
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_TICK:
        put_s(&w, "tick");
        put_ip(&w, flags, "ip", ev->ip, ip_known);
        break;
    case PTD_EV_CBR:
        put_s(&w, "cbr: ");
        put_hex(&w, ev->value);
        break;
    case PTD_EV_MNT:
        put_s(&w, "mnt: ");
        put_hex(&w, ev->value);
        break;
    default:
        put_s(&w, "event ");
        put_dec(&w, ev->type);
        break;
    }
    put_c(&w, ']');
    return finish(&w, line);
}

int ptd_fmt_flow_error(char *line, size_t cap, const char *kind, uint64_t offset,
                       uint64_t ip, int err)
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
    put_s(&w, ptd_qry_errstr(err));
    put_c(&w, ']');
    return finish(&w, line);
}

/* The driver's phases (PH_BLOCK: printing a block's instructions). */
enum { PH_SYNC, PH_LOOP, PH_FAILED, PH_DONE, PH_BLOCK };

void ptd_flow_lines_init(struct ptd_flow_lines *L, struct ptd_flow *f, uint32_t flags)
{
    L->f = f;
    L->flags = flags;
    L->st = 0;
    L->phase = PH_SYNC;
    L->have_sync = 0;
    L->cpu_unknown = 0;
    L->last_iclass = PTD_ICLASS_COND_JUMP;
    L->sync = 0;
    L->time = 0;
    L->insn.ip = 0;
    L->insn.iclass = PTD_FLOW_ICLASS_ERROR;
    L->insn.size = 0;
    L->blk_next = L->blk_count = 0;
    L->insns = 0;
    L->blocks = 0;
    L->errors = 0;
    L->tail_max = 0;
    L->tail_phase = 0;
    L->tail_insns = 0;
    L->tail.end = PTD_TAIL_END_NONE;
}

/* Blocks per ptd_flow_run_blocks call (a bound on the work per call). */
#define RUN_BLOCKS 4096

/* The block path's step (PTD_FMT_FLOW_BLOCKS), in place of one
 * ptd_flow_next: a whole block, counted as the instructions one by one
 * would be (a run of non-branches and the instruction that ends it: at
 * most one new branch-ended run, at its first instruction). With lines
 * wanted, the block's IPs wait in L->blk_ips for PH_BLOCK, and the status
 * after them in L->st, as after the last one's ptd_flow_next. */
static void next_block(struct ptd_flow_lines *L, int lines)
{
    struct ptd_flow_block b;

    if (!lines) {
        /* nothing to print: counted block after block until an event, an
         * error or the end (as the instruction path's loop: code that
         * loops with no branch the trace decides would not end it) */
        struct ptd_flow_run r = { L->insns, L->blocks, L->insn.ip, L->last_iclass };
        int st;
        do
            st = ptd_flow_run_blocks(L->f, &r, RUN_BLOCKS);
        while (st == 0);
        L->insns = r.insns;
        L->blocks = r.runs;
        L->last_iclass = r.last_iclass;
        L->insn.ip = r.last_ip;
        L->st = st;
        if (st < 0)
            L->phase = PH_FAILED;
        return;
    }
    uint64_t off = (L->flags & PTD_FMT_FLOW_OFFSET) ? ptd_flow_offset(L->f) : 0;
    L->st = ptd_flow_next_block(L->f, &b);
    if (L->st < 0)
        L->phase = PH_FAILED;
    /* an error line names the instruction it arose at: the block's last,
     * or (none decoded) the IP it stopped at, as ptd_flow_next's out->ip */
    L->insn.ip = b.last_ip;
    L->insn.mode = b.mode;
    L->insn.speculative = b.speculative;
    L->insn.iclass = b.ninsn ? b.last_iclass : PTD_FLOW_ICLASS_ERROR;
    if (!b.ninsn)
        return;
    L->insns += b.ninsn;
    if (L->last_iclass != PTD_ICLASS_OTHER)
        L->blocks++;
    L->last_iclass = b.last_iclass;
    int n = ptd_flow_block_ips(L->f, &b, L->blk_ips, PTD_FLOW_BLOCK_MAX);
    if (n <= 0) {
        /* the code changed under the flow: say so, as an error */
        L->st = n < 0 ? n : -PTD_ERR_INTERNAL;
        L->phase = PH_FAILED;
        return;
    }
    L->blk_count = (uint8_t)n;
    L->blk_next = 0;
    L->blk_offset = off;
    L->blk_last_iclass = b.last_iclass;
    L->blk_phase = L->phase;
    L->phase = PH_BLOCK;
}

/* The next instruction line of the block in L->blk_ips (PH_BLOCK); the
 * trace offset and time do not move inside a block (its body queries no
 * packet, and no event falls between its instructions). */
static int block_line(struct ptd_flow_lines *L, char *line, size_t cap)
{
    unsigned k = L->blk_next++;
    uint64_t ip = L->blk_ips[k];
    L->insn.ip = ip;
    L->insn.iclass = k + 1 == L->blk_count ? L->blk_last_iclass : PTD_ICLASS_OTHER;
    if (L->blk_next == L->blk_count)
        L->phase = L->blk_phase;
    if (L->flags & (PTD_FMT_FLOW_OFFSET | PTD_FMT_FLOW_TIME))
        return ptd_fmt_flow_insn(line, cap, L->flags, &L->insn, L->blk_offset, L->time);
    /* the common line, "[? ]<ip>", written straight (the caller's cap is at
     * least PTD_FMT_FLOW_LINE_MAX): ptd_fmt_flow_insn's bytes, a third of
     * its work */
    char *p = line;
    if (L->insn.speculative) {
        *p++ = '?';
        *p++ = ' ';
    }
    for (int i = 14; i >= 0; i -= 2, ip >>= 8) {
        p[i] = hexpairs[ip & 0xff][0];
        p[i + 1] = hexpairs[ip & 0xff][1];
    }
    p[16] = '\0';
    return (int)(p + 16 - line);
}

int ptd_flow_lines_next(struct ptd_flow_lines *L, char *line, size_t cap,
                        enum ptd_flow_line_kind *kind)
{
    if (cap < PTD_FMT_FLOW_LINE_MAX)
        return -PTD_ERR_NOSPC;
    int quiet = (L->flags & PTD_FMT_FLOW_QUIET) != 0;
    /* Each pass either returns a line or advances the decoder, whose work
     * is bounded by the trace: the loop ends with it. */
    if (L->cpu_unknown) {
        L->cpu_unknown = 0;
        *kind = PTD_FLOW_LINE_ERROR;
        return ptd_fmt_flow_error(line, cap, "config error", 0, 0, -PTD_ERR_BAD_CPU);
    }
    for (;;) {
        switch (L->phase) {
        case PH_DONE:
            return ptd_flow_lines_tail(L, line, cap, kind);
        case PH_BLOCK:
            *kind = PTD_FLOW_LINE_INSN;
            return block_line(L, line, cap);
        case PH_SYNC: {
            L->insn.ip = 0;
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
            /* No progress since the last failed sync: give up. */
            if (L->have_sync && off <= L->sync)
                L->phase = PH_DONE;
            L->sync = off;
            L->have_sync = 1;
            L->errors++;
            *kind = PTD_FLOW_LINE_ERROR;
            return ptd_fmt_flow_error(line, cap, "sync error", off, L->insn.ip, L->st);
        }
        case PH_LOOP:
            while (L->st >= 0 && (L->st & PTD_ST_EVENT)) {
                struct ptd_event ev;
                uint64_t off = ptd_flow_offset(L->f);
                L->st = ptd_flow_event(L->f, &ev);
                if (L->st >= 0)
                    L->time = ev.tsc;
                if (L->st >= 0 && !quiet && !(ev.flags & PTD_EVF_STATUS_UPDATE)) {
                    *kind = PTD_FLOW_LINE_EVENT;
                    return ptd_fmt_flow_event(line, cap, L->flags, &ev, off);
                }
            }
            if (L->st < 0) {
                L->phase = PH_FAILED;
                continue;
            }
            if (L->st & PTD_ST_EOS) {
                L->phase = PH_DONE;
                ptd_flow_lines_tail_begin(L, L->st);
                if (!(L->st & PTD_ST_IP_SUPPRESSED) && !quiet) {
                    *kind = PTD_FLOW_LINE_END;
                    struct w w;
                    writer(&w, line, cap);
                    put_s(&w, "[end of trace]");
                    return finish(&w, line);
                }
                continue;
            }
            if (L->flags & PTD_FMT_FLOW_BLOCKS) {
                next_block(L, !quiet);
                continue;
            }
            {
                uint64_t off = (L->flags & PTD_FMT_FLOW_OFFSET) ? ptd_flow_offset(L->f) : 0;
                L->st = ptd_flow_next(L->f, &L->insn);
                if (L->st < 0)
                    L->phase = PH_FAILED;
                if (L->insn.iclass != PTD_FLOW_ICLASS_ERROR) {
                    L->insns++;
                    if (L->last_iclass != PTD_ICLASS_OTHER)
                        L->blocks++;
                    L->last_iclass = L->insn.iclass;
                    if (!quiet) {
                        *kind = PTD_FLOW_LINE_INSN;
                        return ptd_fmt_flow_insn(line, cap, L->flags, &L->insn, off,
                                                 L->time);
                    }
                }
            }
            continue;
        case PH_FAILED:
        default:
            if (L->st == 0)
                L->st = -PTD_ERR_INTERNAL;
            if (L->st == -PTD_ERR_EOS) {
                L->phase = PH_DONE;
                ptd_flow_lines_tail_begin(L, L->st);
                continue;
            }
            L->phase = PH_SYNC;
            L->errors++;
            *kind = PTD_FLOW_LINE_ERROR;
            return ptd_fmt_flow_error(line, cap, "error", ptd_flow_offset(L->f), L->insn.ip,
                                      L->st);
        }
    }
}
