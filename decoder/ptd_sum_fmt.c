/* libptd decode summaries: the text (see ptd_sum.h, docs/summary.md).
 * Sections, each opened by a "== " line: totals, errors and gaps, images,
 * functions, call tree, hot blocks, hot edges, last transitions. Lists are
 * cut at top N and the tree at a line budget, so the text of a large trace
 * stays a few tens of KiB. */
#include "decoder/ptd_sum.h"
#include "decoder/ptd_tail.h"

/* ---- a line ------------------------------------------------------------- */

struct line {
    char b[PTD_SUM_LINE_MAX];
    unsigned n;
};

static void put_c(struct line *l, char c)
{
    if (l->n + 1 < sizeof(l->b))
        l->b[l->n++] = c;
}

static void put_s(struct line *l, const char *s, unsigned max)
{
    for (unsigned i = 0; s && s[i] && i < max; i++)
        put_c(l, s[i]);
}

static void put_hex(struct line *l, uint64_t v)
{
    static const char d[] = "0123456789abcdef";
    int shift = 60;
    put_s(l, "0x", 2);
    while (shift > 0 && !((v >> shift) & 15))
        shift -= 4;
    for (; shift >= 0; shift -= 4)
        put_c(l, d[(v >> shift) & 15]);
}

/* Decimal, right-aligned in width columns (0: as long as it is). */
static void put_dec(struct line *l, uint64_t v, unsigned width)
{
    char d[20];
    unsigned n = 0;
    do {
        d[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof(d));
    for (unsigned i = n; i < width; i++)
        put_c(l, ' ');
    while (n)
        put_c(l, d[--n]);
}

/* "1 error", "2 errors": n, the noun (" error"), its plural s unless n is
 * 1, then what follows (" skipped, ") */
static void put_count(struct line *l, uint64_t n, const char *noun, const char *after)
{
    put_dec(l, n, 0);
    put_s(l, noun, 24);
    if (n != 1)
        put_c(l, 's');
    put_s(l, after, 24);
}

/* part/whole as "12.3%" (right-aligned in 6 columns). */
static void put_pct(struct line *l, uint64_t part, uint64_t whole)
{
    uint64_t pm = 0;
    if (whole) {
        /* part * 1000 / whole without overflowing for large counts */
        pm = part < ((uint64_t)1 << 50) ? part * 1000 / whole : part / (whole / 1000 + 1);
        if (pm > 1000)
            pm = 1000;
    }
    put_dec(l, pm / 10, 4);
    put_c(l, '.');
    put_c(l, (char)('0' + pm % 10));
    put_c(l, '%');
}

static void emit(struct ptd_sum *s, struct line *l)
{
    l->b[l->n] = '\0';
    if (s->cfg.line)
        s->cfg.line(s->cfg.ctx, l->b, l->n);
    s->stats.lines++;
    s->stats.text_bytes += l->n + 1u;
    l->n = 0;
}

static void emit_s(struct ptd_sum *s, const char *text)
{
    struct line l;
    l.n = 0;
    put_s(&l, text, PTD_SUM_LINE_MAX);
    emit(s, &l);
}

/* module+0xOFF, or the bare address outside every module. */
static void put_addr(struct ptd_sum *s, struct line *l, uint64_t ip, uint32_t m)
{
    if (s->cfg.name && l->n + 1 < sizeof(l->b)) {
        /* the caller's name for it (a function and line), written in place */
        size_t room = sizeof(l->b) - 1 - l->n;
        size_t k = s->cfg.name(s->cfg.name_ctx, ip, l->b + l->n, room + 1);
        if (k) {
            l->n += (unsigned)(k < room ? k : room);
            return;
        }
    }
    if (m == PTD_SUM_NONE)
        m = ptd_sum_module_of(s, ip);
    if (m == PTD_SUM_NONE || m >= s->cfg.nmodules) {
        put_hex(l, ip);
        return;
    }
    const struct ptd_sum_module *mod = &s->cfg.modules[m];
    put_s(l, mod->name && mod->name[0] ? mod->name : "?", PTD_SUM_NAME_MAX);
    put_c(l, '+');
    put_hex(l, ip - mod->base);
}

static void put_func(struct ptd_sum *s, struct line *l, uint32_t fi)
{
    if (fi == PTD_SUM_NONE) {
        put_s(l, "(not tracked)", 20);
        return;
    }
    const struct ptd_sum_func *fn = &((const struct ptd_sum_func *)s->funcs.p)[fi];
    switch (fn->kind) {
    case PTD_SUM_FN_ROOT:
        put_s(l, "(caller of ", 20);
        put_addr(s, l, fn->entry, fn->module);
        put_c(l, ')');
        break;
    case PTD_SUM_FN_IRQ:
        put_s(l, "irq> ", 8);
        put_addr(s, l, fn->entry, fn->module);
        break;
    case PTD_SUM_FN_OUT: put_s(l, "(outside the trace)", 24); break;
    case PTD_SUM_FN_ENTERED:
        put_s(l, "in> ", 8);
        put_addr(s, l, fn->entry, fn->module);
        break;
    default: put_addr(s, l, fn->entry, fn->module); break;
    }
}

static const char *kind_name(uint32_t k)
{
    switch (k) {
    case PTD_ICLASS_OTHER: return "next";
    case PTD_ICLASS_COND_JUMP: return "jcc";
    case PTD_ICLASS_DIRECT_JUMP: return "jmp";
    case PTD_ICLASS_DIRECT_CALL: return "call";
    case PTD_ICLASS_INDIRECT_JUMP: return "ijmp";
    case PTD_ICLASS_INDIRECT_CALL: return "icall";
    case PTD_ICLASS_NEAR_RET: return "ret";
    case PTD_ICLASS_FAR_TRANSFER: return "far";
    case PTD_SUM_TR_IRQ: return "irq";
    case PTD_SUM_TR_DISABLE: return "disable";
    case PTD_SUM_TR_ENABLE: return "enable";
    case PTD_SUM_TR_OVERFLOW: return "overflow";
    case PTD_SUM_TR_ERROR: return "error";
    default: return "?";
    }
}

/* ---- top N -------------------------------------------------------------- */

typedef uint64_t (*key_fn)(const struct ptd_sum *s, uint32_t i); /* 0: skip */

/* Entry i before entry j: larger key, then larger key2 (if any), then
 * lower index. */
static int before(const struct ptd_sum *s, key_fn key, key_fn key2, uint32_t i, uint32_t j)
{
    uint64_t a = key(s, i), b = key(s, j);
    if (a != b)
        return a > b;
    if (key2) {
        a = key2(s, i);
        b = key2(s, j);
        if (a != b)
            return a > b;
    }
    return i < j;
}

/* The indices of the (at most s->top.cap) entries that come first by
 * before(), in that order; returns how many, and in *all how many had a
 * key (0: not an entry). */
static uint32_t select_top2(struct ptd_sum *s, uint32_t n, key_fn key, key_fn key2, uint64_t *all)
{
    uint32_t *t = s->top.p, k = s->top.cap, got = 0;
    *all = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!key(s, i))
            continue;
        (*all)++;
        if (!k || (got == k && !before(s, key, key2, i, t[k - 1])))
            continue;
        uint32_t j = got < k ? got++ : k - 1;
        while (j > 0 && before(s, key, key2, i, t[j - 1])) {
            t[j] = t[j - 1];
            j--;
        }
        t[j] = i;
    }
    return got;
}

static uint32_t select_top(struct ptd_sum *s, uint32_t n, key_fn key, uint64_t *all)
{
    return select_top2(s, n, key, NULL, all);
}

static uint64_t key_func(const struct ptd_sum *s, uint32_t i)
{
    const struct ptd_sum_func *f = &((const struct ptd_sum_func *)s->funcs.p)[i];
    return f->used ? f->tsc + 1 : 0;
}
static uint64_t key_func_insns(const struct ptd_sum *s, uint32_t i)
{
    const struct ptd_sum_func *f = &((const struct ptd_sum_func *)s->funcs.p)[i];
    return f->used ? f->insns + 1 : 0;
}
static uint64_t key_block(const struct ptd_sum *s, uint32_t i)
{
    const struct ptd_sum_block *b = &((const struct ptd_sum_block *)s->blocks.p)[i];
    return b->used ? b->count : 0;
}
static uint64_t key_edge(const struct ptd_sum *s, uint32_t i)
{
    const struct ptd_sum_edge *e = &((const struct ptd_sum_edge *)s->edges.p)[i];
    return e->used ? e->count : 0;
}
static uint64_t key_mod(const struct ptd_sum *s, uint32_t i)
{
    /* by instructions; an image with time only (the handler of an
     * interrupt that left the traced code) after them */
    const struct ptd_sum_modstat *m = &((const struct ptd_sum_modstat *)s->mods.p)[i];
    return m->insns ? m->insns + 1 : m->tsc != 0;
}

/* ---- sections ----------------------------------------------------------- */

static void sec_totals(struct ptd_sum *s)
{
    const struct ptd_sum_stats *st = &s->stats;
    struct line l;
    l.n = 0;
    put_s(&l, "== summary: ", 20);
    put_count(&l, st->bytes, " byte", ", ");
    put_count(&l, st->insns, " insn", ", ");
    put_count(&l, st->blocks, " block", ", ");
    put_count(&l, st->calls, " call", ", ");
    put_count(&l, st->returns, " return", ", ");
    put_count(&l, st->irqs, " irq", ", ");
    put_count(&l, st->errors, " error", "");
    if (st->has_time) {
        put_s(&l, ", ", 2);
        put_count(&l, st->tsc_last - st->tsc_first, " tsc tick", "");
    }
    emit(s, &l);
    if (st->has_time && st->time_coarse) {
        /* one step of the clock lands on whatever runs at its end */
        put_s(&l, "time too coarse to rank by: the clock moved ", 48);
        put_count(&l, st->time_steps, " time", " in ");
        put_count(&l, st->blocks, " block", " (no MTC or CYC?); functions ranked by insns");
        emit(s, &l);
    }
}

static void sec_errors(struct ptd_sum *s)
{
    const struct ptd_sum_stats *st = &s->stats;
    struct line l;
    l.n = 0;
    emit_s(s, "== errors and gaps");
    for (uint32_t i = 0; i < s->nerr; i++) {
        const struct ptd_sum_err *e = &s->err[i];
        put_s(&l, e->sync ? "sync error at " : "error at ", 20);
        put_hex(&l, e->offset);
        if (!e->sync && e->ip) {
            put_s(&l, " after ", 7);
            put_addr(s, &l, e->ip, PTD_SUM_NONE);
        }
        put_s(&l, ": ", 2);
        put_s(&l, ptd_errstr(e->code), 60);
        if (e->has_resync) {
            put_s(&l, "; resumed at ", 13);
            put_hex(&l, e->resync);
        }
        emit(s, &l);
    }
    if (st->errors > s->nerr) {
        put_s(&l, "... ", 4);
        put_dec(&l, st->errors - s->nerr, 0);
        put_s(&l, st->errors - s->nerr == 1 ? " more error" : " more errors", 12);
        emit(s, &l);
    }
    if (!s->synced && st->bytes) {
        put_s(&l, "no PSB found in ", 16);
        put_dec(&l, st->bytes, 0);
        put_s(&l, st->bytes == 1 ? " byte: nothing decoded" : " bytes: nothing decoded", 24);
        emit(s, &l);
    } else if (s->synced && s->first_sync) {
        put_s(&l, "bytes 0x0-", 10);
        put_hex(&l, s->first_sync - 1);
        put_s(&l, " before the first PSB: skipped", 30);
        emit(s, &l);
    }
    for (uint64_t i = 0; i < st->overflows && i < 4; i++) {
        put_s(&l, "overflow at ", 12);
        put_hex(&l, s->gap_offset[i]);
        put_s(&l, ": the CPU lost trace here", 30);
        emit(s, &l);
    }
    put_count(&l, st->errors, " error", ", ");
    put_count(&l, st->bytes_skipped, " byte", " skipped, ");
    put_count(&l, st->overflows, " overflow", ", ");
    put_count(&l, st->disables, " disable", ", ");
    put_count(&l, st->enables, " enable", ", ");
    put_count(&l, st->unmatched_returns, " unmatched return", ", ");
    put_count(&l, st->depth_exceeded, " call", " past depth ");
    put_dec(&l, s->frames.cap, 0);
    emit(s, &l);
    if (st->untracked) {
        put_s(&l, "not tracked (arena ", 20);
        put_dec(&l, s->cfg.arena_size, 0);
        put_s(&l, " bytes): ", 10);
        put_dec(&l, s->funcs.dropped, 0);
        put_s(&l, " function, ", 12);
        put_dec(&l, s->nodes.dropped, 0);
        put_s(&l, " tree node, ", 12);
        put_dec(&l, s->blocks.dropped, 0);
        put_s(&l, " block, ", 12);
        put_dec(&l, s->edges.dropped, 0);
        put_s(&l, " edge lookups", 14);
        emit(s, &l);
    }
}

/* A section's heading with its counts, "== <head>N of ALL<tail>": a top-N
 * section shows N rows of the ALL there were, the last-transitions section
 * the N it kept of ALL. */
static void emit_heading(struct ptd_sum *s, const char *head, uint64_t n, uint64_t all,
                         const char *tail)
{
    struct line l;
    l.n = 0;
    put_s(&l, head, 24);
    put_dec(&l, n, 0);
    put_s(&l, " of ", 4);
    put_dec(&l, all, 0);
    put_s(&l, tail, 96);
    emit(s, &l);
}

static void sec_images(struct ptd_sum *s)
{
    const struct ptd_sum_stats *st = &s->stats;
    struct line l;
    l.n = 0;
    uint64_t all;
    uint32_t n = select_top(s, s->mods.cap, key_mod, &all);
    emit_heading(s, "== images (", n, all,
                 st->has_time ? "): insns % ticks % image" : "): insns % image");
    const uint32_t *t = s->top.p;
    for (uint32_t i = 0; i < n; i++) {
        const struct ptd_sum_modstat *m = &((const struct ptd_sum_modstat *)s->mods.p)[t[i]];
        put_dec(&l, m->insns, 12);
        put_pct(&l, m->insns, st->insns);
        if (st->has_time) {
            put_dec(&l, m->tsc, 14);
            put_pct(&l, m->tsc, st->tsc_last - st->tsc_first);
        }
        put_c(&l, ' ');
        if (t[i] + 1u == s->mods.cap)
            put_s(&l, "(no image)", 12);
        else
            put_s(&l, s->cfg.modules[t[i]].name, PTD_SUM_NAME_MAX);
        emit(s, &l);
    }
}

static void sec_functions(struct ptd_sum *s)
{
    const struct ptd_sum_stats *st = &s->stats;
    struct line l;
    l.n = 0;
    uint64_t all;
    int by_time = st->has_time && !st->time_coarse;
    uint32_t n = by_time ? select_top2(s, s->funcs.cap, key_func, key_func_insns, &all)
                         : select_top(s, s->funcs.cap, key_func_insns, &all);
    emit_heading(s, "== functions (top ", n, all,
                 by_time ? " by self time): calls self-insns % self-ticks % function"
                 : st->has_time
                     ? " by self insns, time too coarse): calls self-insns % self-ticks % function"
                     : " by self insns): calls self-insns % function");
    const uint32_t *t = s->top.p;
    for (uint32_t i = 0; i < n; i++) {
        const struct ptd_sum_func *f = &((const struct ptd_sum_func *)s->funcs.p)[t[i]];
        put_dec(&l, f->calls, 9);
        put_dec(&l, f->insns, 12);
        put_pct(&l, f->insns, st->insns);
        if (st->has_time) {
            put_dec(&l, f->tsc, 14);
            put_pct(&l, f->tsc, st->tsc_last - st->tsc_first);
        }
        put_c(&l, ' ');
        put_func(s, &l, t[i]);
        emit(s, &l);
    }
}

/* Inclusive counts: children first (post-order walk over the links, no
 * recursion); every node is left once. */
static void tree_totals(struct ptd_sum *s)
{
    struct ptd_sum_node *t = s->nodes.p;
    for (uint32_t i = 0; i < s->nodes.cap; i++)
        if (t[i].used) {
            t[i].incl = t[i].insns;
            t[i].tsc_incl = t[i].tsc;
        }
    for (uint32_t r = 0; r < s->nodes.cap; r++) {
        if (!t[r].used || t[r].parent != PTD_SUM_NONE)
            continue;
        uint32_t n = r;
        while (t[n].child != PTD_SUM_NONE)
            n = t[n].child;
        for (;;) {
            /* n's subtree is done: add it to the parent */
            if (n == r)
                break;
            uint32_t p = t[n].parent;
            t[p].incl += t[n].incl;
            t[p].tsc_incl += t[n].tsc_incl;
            if (t[n].sibling != PTD_SUM_NONE) {
                n = t[n].sibling;
                while (t[n].child != PTD_SUM_NONE)
                    n = t[n].child;
            } else {
                n = p;
            }
        }
    }
}

static int shown(const struct ptd_sum *s, const struct ptd_sum_node *n)
{
    if ((s->cfg.flags & PTD_SUM_F_TREE_ALL) || s->cfg.tree_permille >= 1000)
        return 1;
    uint64_t total = s->stats.insns;
    /* incl / total >= permille / 1000 */
    return n->incl >=
           total / 1000 * s->cfg.tree_permille + total % 1000 * s->cfg.tree_permille / 1000;
}

static uint32_t next_shown(const struct ptd_sum *s, uint32_t n)
{
    const struct ptd_sum_node *t = s->nodes.p;
    while (n != PTD_SUM_NONE && !shown(s, &t[n]))
        n = t[n].sibling;
    return n;
}

static void tree_line(struct ptd_sum *s, const struct ptd_sum_node *n, unsigned depth)
{
    struct line l;
    l.n = 0;
    put_dec(&l, n->calls, 8);
    put_dec(&l, n->incl, 12);
    put_dec(&l, n->insns, 11);
    if (s->stats.has_time)
        put_dec(&l, n->tsc_incl, 14);
    put_c(&l, ' ');
    for (unsigned i = 0; i < depth && i < 40; i++)
        put_c(&l, ' ');
    put_func(s, &l, n->func);
    emit(s, &l);
}

/* "(N more callees: I insns)" for the children of p not shown; returns
 * the lines written (0 or 1). */
static unsigned tree_hidden(struct ptd_sum *s, uint32_t p, unsigned depth)
{
    const struct ptd_sum_node *t = s->nodes.p;
    uint64_t cnt = 0, insns = 0;
    for (uint32_t c = t[p].child; c != PTD_SUM_NONE; c = t[c].sibling)
        if (!shown(s, &t[c])) {
            cnt++;
            insns += t[c].incl;
        }
    if (!cnt)
        return 0;
    struct line l;
    l.n = 0;
    for (unsigned i = 0; i < (s->stats.has_time ? 46u : 32u); i++)
        put_c(&l, ' ');
    for (unsigned i = 0; i < depth && i < 40; i++)
        put_c(&l, ' ');
    put_s(&l, "(", 1);
    put_dec(&l, cnt, 0);
    put_s(&l, cnt == 1 ? " more callee: " : " more callees: ", 16);
    put_count(&l, insns, " insn", ")");
    emit(s, &l);
    return 1;
}

static void sec_tree(struct ptd_sum *s)
{
    struct ptd_sum_node *t = s->nodes.p;
    struct line l;
    l.n = 0;
    uint64_t lines = 0, cut = 0, hidden_roots = 0;
    tree_totals(s);
    put_s(&l, "== call tree (", 14);
    put_count(&l, s->nodes.used, " node", ", depth <= ");
    put_dec(&l, s->cfg.tree_depth, 0);
    put_s(&l,
          s->stats.has_time ? "): calls incl-insns self-insns incl-ticks function"
                            : "): calls incl-insns self-insns function",
          60);
    emit(s, &l);
    for (uint32_t r = 0; r < s->nodes.cap; r++) {
        if (!t[r].used || t[r].parent != PTD_SUM_NONE)
            continue;
        if (!shown(s, &t[r])) {
            hidden_roots++;
            continue;
        }
        uint32_t n = r;
        for (;;) {
            if (lines >= s->cfg.tree_lines) {
                cut = 1;
                break;
            }
            tree_line(s, &t[n], t[n].depth);
            lines++;
            lines += tree_hidden(s, n, t[n].depth + 1u);
            uint32_t c = next_shown(s, t[n].child);
            if (c != PTD_SUM_NONE) {
                n = c;
                continue;
            }
            /* the next shown sibling of n or of an ancestor below r */
            while (n != r) {
                uint32_t sib = next_shown(s, t[n].sibling);
                if (sib != PTD_SUM_NONE) {
                    n = sib;
                    break;
                }
                n = t[n].parent;
            }
            if (n == r)
                break;
        }
        if (cut)
            break;
    }
    if (cut) {
        put_s(&l, "... cut at ", 12);
        put_dec(&l, lines, 0);
        put_s(&l, lines == 1 ? " line" : " lines", 6);
        emit(s, &l);
    }
    if (hidden_roots) {
        put_s(&l, "... ", 4);
        put_dec(&l, hidden_roots, 0);
        put_s(&l, hidden_roots == 1 ? " small root not shown" : " small roots not shown", 24);
        emit(s, &l);
    }
}

static void sec_blocks(struct ptd_sum *s)
{
    struct line l;
    l.n = 0;
    uint64_t all;
    uint32_t n = select_top(s, s->blocks.cap, key_block, &all);
    emit_heading(s, "== hot blocks (top ", n, all, "): count insns block (first..last insn)");
    const uint32_t *t = s->top.p;
    for (uint32_t i = 0; i < n; i++) {
        const struct ptd_sum_block *b = &((const struct ptd_sum_block *)s->blocks.p)[t[i]];
        put_dec(&l, b->count, 10);
        put_dec(&l, b->insns, 12);
        put_c(&l, ' ');
        put_addr(s, &l, b->ip, b->module);
        put_s(&l, "..", 2);
        put_hex(&l, b->last_ip - b->ip);
        emit(s, &l);
    }
}

static void put_tr(struct ptd_sum *s, struct line *l, uint64_t from, uint64_t to, uint32_t kind,
                   int known_from, int known_to)
{
    put_s(l, kind_name(kind), 10);
    while (l->n < 9)
        put_c(l, ' ');
    if (known_from)
        put_addr(s, l, from, PTD_SUM_NONE);
    else
        put_c(l, '?');
    put_s(l, " -> ", 4);
    if (known_to)
        put_addr(s, l, to, PTD_SUM_NONE);
    else
        put_c(l, '?');
}

static void sec_edges(struct ptd_sum *s)
{
    struct line l;
    l.n = 0;
    uint64_t all;
    uint32_t n = select_top(s, s->edges.cap, key_edge, &all);
    emit_heading(s, "== hot edges (top ", n, all, "): count kind from -> to");
    const uint32_t *t = s->top.p;
    for (uint32_t i = 0; i < n; i++) {
        const struct ptd_sum_edge *e = &((const struct ptd_sum_edge *)s->edges.p)[t[i]];
        struct line k;
        k.n = 0;
        put_tr(s, &k, e->from, e->to, e->kind, 1, 1);
        k.b[k.n] = '\0';
        put_dec(&l, e->count, 10);
        put_c(&l, ' ');
        put_s(&l, k.b, PTD_SUM_LINE_MAX);
        emit(s, &l);
    }
}

/* The tail's last line (PTD_SUM_F_TAIL): where the static path after the
 * trace's end stops, "spins at X" for an endless loop. */
static void sec_tail(struct ptd_sum *s)
{
    struct line l;
    l.n = 0;
    if (!s->tail_ran || s->tail_end == PTD_TAIL_END_NONE)
        return;
    uint64_t at = s->tail_end == PTD_TAIL_END_SPIN ? s->spin_lo : s->tail_last;
    switch (s->tail_end) {
    case PTD_TAIL_END_SPIN: put_s(&l, "spins at ", 10); break;
    case PTD_TAIL_END_HALT: put_s(&l, "halts at ", 10); break;
    default: put_s(&l, "tail ends at ", 14); break;
    }
    put_addr(s, &l, at, PTD_SUM_NONE);
    switch (s->tail_end) {
    case PTD_TAIL_END_SPIN:
        put_s(&l, " (loop ", 8);
        put_addr(s, &l, s->spin_lo, PTD_SUM_NONE);
        put_s(&l, "..", 2);
        put_addr(s, &l, s->spin_hi, PTD_SUM_NONE);
        put_s(&l, ";", 1);
        break;
    case PTD_TAIL_END_TRACE:
        put_s(&l, ": ", 2);
        put_s(&l, kind_name(s->tail_last_iclass), 10);
        put_s(&l, " needs trace (", 16);
        break;
    case PTD_TAIL_END_FILTER: put_s(&l, ": leaves the traced range (", 30); break;
    case PTD_TAIL_END_NOCODE: put_s(&l, ": no code after it (", 22); break;
    case PTD_TAIL_END_BOUND: put_s(&l, ": bound reached (", 20); break;
    default: put_s(&l, " (", 2); break;
    }
    if (s->tail_end == PTD_TAIL_END_SPIN)
        put_c(&l, ' ');
    put_count(&l, s->tail_insns, " insn", " after the last packet)");
    emit(s, &l);
}

static void sec_last(struct ptd_sum *s)
{
    struct line l;
    l.n = 0;
    const struct ptd_sum_tr *r = s->ring.p;
    uint64_t have = s->ring_count < s->ring.cap ? s->ring_count : s->ring.cap;
    emit_heading(s, "== last ", have, s->ring_count,
                 " transitions (oldest first): kind from -> to");
    uint32_t i = s->ring_count < s->ring.cap ? 0 : s->ring_pos;
    for (uint64_t k = 0; k < have; k++) {
        const struct ptd_sum_tr *e = &r[i];
        uint32_t kind = e->kind & ~PTD_SUM_TR_TAIL;
        int known_from = kind != PTD_SUM_TR_ENABLE && kind != PTD_SUM_TR_OVERFLOW;
        put_tr(s, &l, e->from, e->to, kind, known_from, e->known_to != 0);
        if (e->kind & PTD_SUM_TR_TAIL)
            put_s(&l, " (tail)", 8);
        emit(s, &l);
        i = i + 1 < s->ring.cap ? i + 1 : 0;
    }
    sec_tail(s);
}

void ptd_sum_print(struct ptd_sum *s)
{
    unsigned fl = s->cfg.flags;
    sec_totals(s);
    sec_errors(s);
    sec_images(s);
    sec_functions(s);
    if (!(fl & PTD_SUM_F_NO_TREE))
        sec_tree(s);
    if (!(fl & PTD_SUM_F_NO_BLOCKS)) {
        sec_blocks(s);
        sec_edges(s);
    }
    if (!(fl & PTD_SUM_F_NO_LAST))
        sec_last(s);
    emit_s(s, "== end");
}

uint64_t ptd_sum_text_bound(const struct ptd_sum_config *cfg)
{
    uint64_t top = cfg->top ? cfg->top : PTD_SUM_TOP_DEFAULT;
    uint64_t last = cfg->last ? cfg->last : PTD_SUM_LAST_DEFAULT;
    uint64_t tree = cfg->tree_lines ? cfg->tree_lines : PTD_SUM_TREE_LINES_DEFAULT;
    /* totals 2 (time too coarse); errors: heading, kept errors, "more", 4 overflows, totals,
     * not tracked; images, functions, blocks, edges: heading + top; tree:
     * heading, its lines (+1: a node and its folded line), cut, roots;
     * last: heading + last; end */
    uint64_t lines = 2 + (1 + PTD_SUM_ERRORS_KEPT + 1 + 4 + 1 + 1) + 4 * (1 + top) +
                     (1 + tree + 1 + 2) + (1 + last) + 1;
    if (cfg->flags & PTD_SUM_F_TAIL)
        lines++;                     /* where the tail ends */
    return lines * PTD_SUM_LINE_MAX; /* PTD_SUM_LINE_MAX - 1 chars + newline */
}
