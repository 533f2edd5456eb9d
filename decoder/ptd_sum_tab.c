/* libptd decode summaries: the tables in the caller's arena (see
 * ptd_sum.h). The shadow stack, the per-image counters, the top-N scratch
 * and the last-N ring are carved first, each shrunk to what fits; the rest
 * is shared by four open-addressing hash tables (functions, call tree
 * nodes, blocks, edges) that fill to 3/4 and then count the lookups that
 * found no room. Nothing is ever removed, so entry indices stay valid
 * (tree nodes link to each other by index). */
#include "decoder/ptd_sum_tab.h"

/* ---- arena -------------------------------------------------------------- */

/* Carves count entries of size bytes (8-aligned) from [*p, end). */
static void *carve(uint8_t **p, uint8_t *end, uint64_t count, size_t size, uint32_t *got)
{
    uintptr_t a = ((uintptr_t)*p + 7u) & ~(uintptr_t)7u;
    uint64_t room = (uintptr_t)end > a ? (uint64_t)((uintptr_t)end - a) : 0;
    if (count > room / size)
        count = room / size;
    *got = (uint32_t)count;
    if (!count)
        return NULL;
    *p = (uint8_t *)(a + count * size);
    return (void *)a;
}

static void tab_hash(struct ptd_sum_tab *t, uint8_t **p, uint8_t *end, uint64_t bytes, size_t size)
{
    uint64_t want = bytes / size;
    if (want > 0x7fffffffu)
        want = 0x7fffffffu;
    t->p = carve(p, end, want, size, &t->cap);
    t->used = 0;
    t->dropped = 0;
}

void ptd_sum_tab_layout(struct ptd_sum *s)
{
    uint8_t *p = (uint8_t *)s->cfg.arena, *end = p ? p + s->cfg.arena_size : p;

    /* the fixed parts first, each shrunk to what fits */
    s->frames.p = carve(&p, end, s->cfg.stack_depth, sizeof(struct ptd_sum_frame), &s->frames.cap);
    s->mods.p =
        carve(&p, end, (uint64_t)s->cfg.nmodules + 1, sizeof(struct ptd_sum_modstat), &s->mods.cap);
    s->top.p = carve(&p, end, s->cfg.top, sizeof(uint32_t), &s->top.cap);
    s->ring.p = carve(&p, end, s->cfg.last, sizeof(struct ptd_sum_tr), &s->ring.cap);
    /* the rest in shares: blocks 30%, edges 30%, nodes 22%, funcs 18% */
    uint64_t rest = (uintptr_t)end > (uintptr_t)p ? (uint64_t)((uintptr_t)end - (uintptr_t)p) : 0;
    tab_hash(&s->blocks, &p, end, rest / 100 * 30, sizeof(struct ptd_sum_block));
    tab_hash(&s->edges, &p, end, rest / 100 * 30, sizeof(struct ptd_sum_edge));
    tab_hash(&s->nodes, &p, end, rest / 100 * 22, sizeof(struct ptd_sum_node));
    tab_hash(&s->funcs, &p, end, rest / 100 * 18, sizeof(struct ptd_sum_func));

    s->frames.used = s->mods.used = s->top.used = s->ring.used = 0;
    s->frames.dropped = s->mods.dropped = s->top.dropped = s->ring.dropped = 0;
    if (s->cfg.flags & PTD_SUM_F_ARENA_ZEROED)
        return;
    struct ptd_sum_block *b = s->blocks.p;
    for (uint32_t i = 0; i < s->blocks.cap; i++)
        b[i].used = 0;
    struct ptd_sum_node *n = s->nodes.p;
    for (uint32_t i = 0; i < s->nodes.cap; i++)
        n[i].used = 0;
    struct ptd_sum_func *fn = s->funcs.p;
    for (uint32_t i = 0; i < s->funcs.cap; i++)
        fn[i].used = 0;
    struct ptd_sum_edge *e = s->edges.p;
    for (uint32_t i = 0; i < s->edges.cap; i++)
        e[i].used = 0;
    struct ptd_sum_modstat *m = s->mods.p;
    for (uint32_t i = 0; i < s->mods.cap; i++) {
        m[i].insns = 0;
        m[i].tsc = 0;
    }
}

/* ---- lookups ------------------------------------------------------------ */

/* Slot for a key in a table of cap entries (any cap: the high bits of a
 * multiplicative hash scaled to the range). */
static uint32_t hash(uint64_t a, uint64_t b, uint32_t cap)
{
    uint64_t h = (a ^ (b * 0xff51afd7ed558ccdull)) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(((h >> 32) * cap) >> 32);
}

static uint32_t next_slot(uint32_t i, uint32_t cap)
{
    return i + 1 < cap ? i + 1 : 0;
}

/* Tables fill to 3/4 at most, so probes stay short. */
static int has_room(const struct ptd_sum_tab *t)
{
    return t->used < t->cap - t->cap / 4;
}

uint32_t ptd_sum_module_of(struct ptd_sum *s, uint64_t ip)
{
    const struct ptd_sum_module *m = s->cfg.modules;
    size_t n = s->cfg.nmodules;
    if (s->mod_hint < n && ip - m[s->mod_hint].base < m[s->mod_hint].size)
        return s->mod_hint;
    for (size_t i = 0; i < n; i++)
        if (ip - m[i].base < m[i].size) {
            s->mod_hint = (uint32_t)i;
            return (uint32_t)i;
        }
    return PTD_SUM_NONE;
}

uint32_t ptd_sum_func_get(struct ptd_sum *s, uint64_t entry, uint8_t kind)
{
    struct ptd_sum_func *t = s->funcs.p;
    uint32_t cap = s->funcs.cap;
    if (!cap)
        return PTD_SUM_NONE;
    uint32_t i = hash(entry, kind, cap);
    for (uint32_t probe = 0; probe < cap; probe++, i = next_slot(i, cap)) {
        if (!t[i].used) {
            if (!has_room(&s->funcs))
                break;
            t[i].used = 1;
            t[i].entry = entry;
            t[i].kind = kind;
            t[i].calls = t[i].insns = t[i].tsc = 0;
            t[i].module = ptd_sum_module_of(s, entry);
            s->funcs.used++;
            return i;
        }
        if (t[i].entry == entry && t[i].kind == kind)
            return i;
    }
    s->funcs.dropped++;
    return PTD_SUM_NONE;
}

/* The child of parent (PTD_SUM_NONE: a root) for func; PTD_SUM_NONE when
 * it does not fit. */
uint32_t ptd_sum_node_get(struct ptd_sum *s, uint32_t parent, uint32_t func)
{
    struct ptd_sum_node *t = s->nodes.p;
    uint32_t cap = s->nodes.cap;
    if (!cap || func == PTD_SUM_NONE)
        return PTD_SUM_NONE;
    uint32_t i = hash(parent, func, cap);
    for (uint32_t probe = 0; probe < cap; probe++, i = next_slot(i, cap)) {
        if (!t[i].used) {
            if (!has_room(&s->nodes))
                break;
            t[i].used = 1;
            t[i].func = func;
            t[i].parent = parent;
            t[i].child = t[i].last_child = t[i].sibling = PTD_SUM_NONE;
            t[i].depth = (uint16_t)(parent == PTD_SUM_NONE ? 0 : t[parent].depth + 1);
            t[i].calls = t[i].insns = t[i].tsc = t[i].incl = t[i].tsc_incl = 0;
            if (parent != PTD_SUM_NONE) {
                if (t[parent].last_child == PTD_SUM_NONE)
                    t[parent].child = i;
                else
                    t[t[parent].last_child].sibling = i;
                t[parent].last_child = i;
            }
            s->nodes.used++;
            return i;
        }
        if (t[i].parent == parent && t[i].func == func)
            return i;
    }
    s->nodes.dropped++;
    return PTD_SUM_NONE;
}

struct ptd_sum_block *ptd_sum_block_get(struct ptd_sum *s, uint64_t ip)
{
    struct ptd_sum_block *t = s->blocks.p;
    uint32_t cap = s->blocks.cap;
    if (!cap)
        return NULL;
    uint32_t i = hash(ip, 0, cap);
    for (uint32_t probe = 0; probe < cap; probe++, i = next_slot(i, cap)) {
        if (!t[i].used) {
            if (!has_room(&s->blocks))
                break;
            t[i].used = 1;
            t[i].ip = ip;
            t[i].last_ip = ip;
            t[i].count = t[i].insns = 0;
            t[i].module = ptd_sum_module_of(s, ip);
            s->blocks.used++;
            return &t[i];
        }
        if (t[i].ip == ip)
            return &t[i];
    }
    s->blocks.dropped++;
    return NULL;
}

void ptd_sum_edge_add(struct ptd_sum *s, uint64_t from, uint64_t to, uint32_t kind)
{
    struct ptd_sum_edge *t = s->edges.p;
    uint32_t cap = s->edges.cap;
    if (!cap) {
        s->edges.dropped++;
        return;
    }
    uint32_t i = hash(from, to, cap);
    for (uint32_t probe = 0; probe < cap; probe++, i = next_slot(i, cap)) {
        if (!t[i].used) {
            if (!has_room(&s->edges))
                break;
            t[i].used = 1;
            t[i].from = from;
            t[i].to = to;
            t[i].kind = kind;
            t[i].count = 1;
            s->edges.used++;
            return;
        }
        if (t[i].from == from && t[i].to == to) {
            t[i].count++;
            return;
        }
    }
    s->edges.dropped++;
}

void ptd_sum_ring_add(struct ptd_sum *s, uint64_t from, uint64_t to, uint32_t kind, int known_to)
{
    struct ptd_sum_tr *r = s->ring.p;
    s->ring_count++;
    if (!s->ring.cap)
        return;
    r[s->ring_pos].from = from;
    r[s->ring_pos].to = to;
    r[s->ring_pos].kind = kind;
    r[s->ring_pos].known_to = (uint32_t)known_to;
    s->ring_pos = s->ring_pos + 1 < s->ring.cap ? s->ring_pos + 1 : 0;
}
