/* The call stacks of an export, each once: see export.h. A node is one
 * stack (its parent's stack plus one frame); the table maps (parent, frame)
 * to the node, so memory follows the number of distinct stacks. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "host/export/export.h"

void export_stacks_init(struct export_stacks *s)
{
    memset(s, 0, sizeof *s);
}

void export_stacks_free(struct export_stacks *s)
{
    free(s->v);
    free(s->hash);
    memset(s, 0, sizeof *s);
}

static uint64_t mix(uint32_t parent, uint64_t entry, uint8_t kind, uint32_t cpu)
{
    uint64_t h = entry * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)parent << 32 | (uint64_t)cpu << 8 | kind) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    return h * 0xbf58476d1ce4e5b9ull;
}

static int same(const struct export_node *n, uint32_t parent, uint64_t entry, uint8_t kind,
                uint32_t cpu)
{
    return n->parent == parent && n->entry == entry && n->kind == kind && n->cpu == cpu;
}

static int rehash(struct export_stacks *s, uint32_t hcap)
{
    uint32_t *h = calloc(hcap, sizeof *h);
    if (!h)
        return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct export_node *n = &s->v[i];
        uint32_t k = (uint32_t)mix(n->parent, n->entry, n->kind, n->cpu) & (hcap - 1);
        while (h[k])
            k = (k + 1) & (hcap - 1);
        h[k] = i + 1;
    }
    free(s->hash);
    s->hash = h;
    s->hcap = hcap;
    return 0;
}

uint32_t export_stacks_get(struct export_stacks *s, uint32_t parent, uint64_t entry, uint8_t kind,
                           uint32_t cpu)
{
    if (s->hcap == 0 && rehash(s, 1024) < 0)
        return EXPORT_NONE;
    uint32_t k = (uint32_t)mix(parent, entry, kind, cpu) & (s->hcap - 1);
    while (s->hash[k]) {
        struct export_node *n = &s->v[s->hash[k] - 1];
        if (same(n, parent, entry, kind, cpu))
            return s->hash[k] - 1;
        k = (k + 1) & (s->hcap - 1);
    }
    if (s->n == UINT32_MAX - 1)
        return EXPORT_NONE;
    if (s->n == s->cap) {
        uint32_t nc = s->cap ? 2 * s->cap : 1024;
        struct export_node *v = realloc(s->v, (size_t)nc * sizeof *v);
        if (!v)
            return EXPORT_NONE;
        s->v = v;
        s->cap = nc;
    }
    uint32_t i = s->n++;
    struct export_node *n = &s->v[i];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->entry = entry;
    n->kind = kind;
    n->cpu = cpu;
    n->child = n->sibling = n->last_child = EXPORT_NONE;
    n->depth = parent == EXPORT_NONE ? 0 : s->v[parent].depth + 1;
    if (parent != EXPORT_NONE) {
        /* appended as the last child keeps the order the calls came in */
        struct export_node *p = &s->v[parent];
        if (p->last_child == EXPORT_NONE)
            p->child = i;
        else
            s->v[p->last_child].sibling = i;
        p->last_child = i;
    }
    s->hash[k] = i + 1;
    if ((uint64_t)s->n * 10 > (uint64_t)s->hcap * 7 && rehash(s, s->hcap * 2) < 0)
        return EXPORT_NONE;
    return i;
}

void export_stacks_totals(struct export_stacks *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        s->v[i].incl_insns = s->v[i].self_insns;
        s->v[i].incl_ticks = s->v[i].self_ticks;
    }
    for (uint32_t i = s->n; i-- > 0;) {
        uint32_t p = s->v[i].parent;
        if (p != EXPORT_NONE) {
            s->v[p].incl_insns += s->v[i].incl_insns;
            s->v[p].incl_ticks += s->v[i].incl_ticks;
        }
    }
}
