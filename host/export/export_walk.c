/* The walk of an export: the decode summary runs over the trace with its
 * shadow-stack observer on (decoder/ptd_sum.h); each frame entered becomes
 * a node of the stack table and, for Chrome, a slice begun; each frame
 * left a slice ended; instructions and ticks go to the stack on top and to
 * the image they ran in. See export.h. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_qry.h"
#include "host/export/export.h"
#include "host/progress.h"

/* An address as the summary names it, without the line. */
static void addr_text(struct export *x, uint64_t ip, char *buf, size_t cap)
{
    if (!x->names || !names_format(x->names, ip, 0, buf, cap))
        snprintf(buf, cap, "0x%" PRIx64, ip);
}

static char *make_name(struct export *x, uint64_t entry, uint8_t kind)
{
    char a[256], b[300];
    switch (kind) {
    case PTD_SUM_FN_ROOT:
        addr_text(x, entry, a, sizeof a);
        snprintf(b, sizeof b, "(caller of %s)", a);
        break;
    case PTD_SUM_FN_IRQ:
        addr_text(x, entry, a, sizeof a);
        snprintf(b, sizeof b, "irq> %s", a);
        break;
    case PTD_SUM_FN_OUT: snprintf(b, sizeof b, "(outside the trace)"); break;
    default: addr_text(x, entry, b, sizeof b); break;
    }
    return strdup(b);
}

static uint32_t name_hash(uint64_t entry, uint8_t kind)
{
    uint64_t h = (entry ^ (uint64_t)kind << 61) * 0x9e3779b97f4a7c15ull;
    return (uint32_t)(h >> 32);
}

const char *export_frame_name(struct export *x, uint64_t entry, uint8_t kind)
{
    uint32_t i = export_frame_index(x, entry, kind);
    return i == EXPORT_NONE ? "?" : x->nv[i].name;
}

uint32_t export_frame_index(struct export *x, uint64_t entry, uint8_t kind)
{
    if (x->nhcap == 0 || (uint64_t)x->nn * 10 >= (uint64_t)x->nhcap * 7) {
        uint32_t hc = x->nhcap ? 2 * x->nhcap : 1024;
        uint32_t *h = calloc(hc, sizeof *h);
        if (!h)
            return EXPORT_NONE;
        for (uint32_t i = 0; i < x->nn; i++) {
            uint32_t k = name_hash(x->nv[i].entry, x->nv[i].kind) & (hc - 1);
            while (h[k])
                k = (k + 1) & (hc - 1);
            h[k] = i + 1;
        }
        free(x->nhash);
        x->nhash = h;
        x->nhcap = hc;
    }
    uint32_t k = name_hash(entry, kind) & (x->nhcap - 1);
    while (x->nhash[k]) {
        struct export_name *e = &x->nv[x->nhash[k] - 1];
        if (e->entry == entry && e->kind == kind)
            return x->nhash[k] - 1;
        k = (k + 1) & (x->nhcap - 1);
    }
    if (x->nn == x->ncap) {
        uint32_t nc = x->ncap ? 2 * x->ncap : 256;
        struct export_name *v = realloc(x->nv, nc * sizeof *v);
        if (!v)
            return EXPORT_NONE;
        x->nv = v;
        x->ncap = nc;
    }
    char *name = make_name(x, entry, kind);
    if (!name)
        return EXPORT_NONE;
    x->nv[x->nn] = (struct export_name){ entry, kind, name, 0, 0, 0 };
    x->nhash[k] = ++x->nn;
    return x->nn - 1;
}

static int grow_stack(struct export *x, uint32_t need)
{
    if (need <= x->stack_cap)
        return 0;
    uint32_t nc = x->stack_cap ? x->stack_cap : 256;
    while (nc < need)
        nc *= 2;
    uint32_t *s = realloc(x->stack, nc * sizeof *s);
    if (!s)
        return -1;
    x->stack = s;
    x->stack_cap = nc;
    return 0;
}

static void observe(void *ctx, const struct ptd_sum_obs *ev)
{
    struct export *x = ctx;
    if (!x->clock_decided) {
        x->clock_decided = 1;
        x->use_tsc = x->clock == EXPORT_CLOCK_TSC ||
                     (x->clock == EXPORT_CLOCK_AUTO && (ev->tsc || (x->sb && x->sb->config.tsc)));
    }
    if (ev->tsc) {
        if (!x->has_time) {
            x->has_time = 1;
            x->tsc_first = ev->tsc;
            if (!x->tsc0)
                x->tsc0 = ev->tsc;
        }
        if (ev->tsc > x->tsc_last)
            x->tsc_last = ev->tsc;
    }
    switch (ev->type) {
    case PTD_SUM_OBS_PUSH: {
        uint32_t d = ev->depth;
        if (d == 0 || grow_stack(x, d) < 0)
            break;
        uint32_t parent = d >= 2 && x->depth >= d - 1 ? x->stack[d - 2] : EXPORT_NONE;
        uint32_t node = export_stacks_get(&x->stacks, parent, ev->entry, ev->fkind, x->cpu);
        x->stack[d - 1] = node;
        x->depth = d;
        if (node != EXPORT_NONE)
            x->stacks.v[node].calls++;
        if (ev->fkind != PTD_SUM_FN_ROOT)
            x->calls++;
        break;
    }
    case PTD_SUM_OBS_POP:
        if (ev->depth < x->depth)
            x->depth = ev->depth;
        break;
    case PTD_SUM_OBS_INSNS: {
        x->insns += ev->n;
        x->ticks += ev->dt;
        if (x->depth && x->stack[x->depth - 1] != EXPORT_NONE) {
            struct export_node *n = &x->stacks.v[x->stack[x->depth - 1]];
            n->self_insns += ev->n;
            n->self_ticks += ev->dt;
        }
        long m = x->names ? names_module_index(x->names, ev->ip) : -1;
        struct export_image_stat *is = x->img ? &x->img[m < 0 ? x->names->n : (size_t)m] : NULL;
        if (is) {
            if (!is->ran) {
                is->ran = 1;
                is->first_insns = ev->insns;
                is->first_tsc = ev->tsc;
            }
            is->insns += ev->n;
            is->ticks += ev->dt;
        }
        break;
    }
    case PTD_SUM_OBS_MARK:
        switch (ev->mark) {
        case PTD_SUM_TR_ERROR: x->errors++; break;
        case PTD_SUM_TR_OVERFLOW: x->overflows++; break;
        case PTD_SUM_TR_ENABLE: x->enables++; break;
        case PTD_SUM_TR_DISABLE: x->disables++; break;
        }
        if (x->nmarks < EXPORT_MARKS_KEPT)
            x->marks[x->nmarks++] = (struct export_mark){ x->cpu,  ev->mark,  ev->offset, ev->ip,
                                                          ev->tsc, ev->insns, ev->code };
        break;
    }
    if (x->format == EXPORT_CHROME)
        export_chrome_event(x, ev);
}

/* The summary's text, kept for the HTML report. */
static void keep_line(void *ctx, const char *line, size_t len)
{
    struct export *x = ctx;
    if (x->summary_len + len + 2 > x->summary_cap) {
        size_t nc = x->summary_cap ? 2 * x->summary_cap : 65536;
        while (nc < x->summary_len + len + 2)
            nc *= 2;
        char *t = realloc(x->summary_text, nc);
        if (!t)
            return;
        x->summary_text = t;
        x->summary_cap = nc;
    }
    memcpy(x->summary_text + x->summary_len, line, len);
    x->summary_len += len;
    x->summary_text[x->summary_len++] = '\n';
    x->summary_text[x->summary_len] = '\0';
}

int export_walk(struct export *x, uint32_t cpu, struct ptd_flow *f, struct ptd_sum_config *cfg)
{
    struct ptd_sum *s = malloc(sizeof *s);
    struct progress pr;
    if (!s)
        return -1;
    if (x->names && !x->img) {
        x->img = calloc(x->names->n + 1, sizeof *x->img);
        if (!x->img) {
            free(s);
            return -1;
        }
    }
    x->cpu = cpu;
    x->depth = 0;
    cfg->obs = observe;
    cfg->obs_ctx = x;
    if (x->format == EXPORT_HTML && x->walks == 0) {
        /* the report shows the first (the BSP's) trace's summary text */
        cfg->line = keep_line;
        cfg->ctx = x;
    } else {
        cfg->line = NULL;
        cfg->flags |= PTD_SUM_F_NO_TREE | PTD_SUM_F_NO_BLOCKS | PTD_SUM_F_NO_LAST;
    }
    uint64_t total = f->q.pkt.end > f->q.pkt.begin ? (uint64_t)(f->q.pkt.end - f->q.pkt.begin) : 0;
    progress_start(&pr, "ptboot export", total);
    if (x->trace_in)
        progress_input(&pr, x->trace_in, 0);
    ptd_sum_init(s, cfg);
    while (ptd_sum_decode(s, f, 4096) > 0)
        progress_update(&pr, ptd_flow_offset(f));
    progress_end(&pr);
    ptd_sum_print(s);
    x->sum = *ptd_sum_stats(s);
    x->trace_bytes += x->sum.bytes;
    /* frames still open when the trace ended */
    if (x->format == EXPORT_CHROME && x->depth) {
        struct ptd_sum_obs end = { .type = PTD_SUM_OBS_POP,
                                   .depth = 0,
                                   .tsc = x->sum.has_time ? x->sum.tsc_last : 0,
                                   .insns = x->sum.insns };
        export_chrome_event(x, &end);
    }
    x->depth = 0;
    x->walks++;
    free(s);
    return 0;
}
