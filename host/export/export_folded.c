/* Folded stacks, the input of flamegraph.pl, inferno and speedscope: one
 * line per distinct call stack with its own (exclusive) weight, frames
 * root first separated by ';', then a space and the weight: instructions,
 * or TSC ticks with --weight ticks. The weights add up to the trace's
 * instructions (ticks: its time span), since every instruction ran on top
 * of exactly one stack. With several CPUs each stack starts with "cpu N". */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "host/export/export.h"

/* A frame's name with the separators the format reserves replaced. */
static void put_frame(FILE *o, const char *s)
{
    for (; *s; s++)
        putc(*s == ';' ? ':' : (*s == '\n' ? ' ' : *s), o);
}

int export_folded_write(struct export *x)
{
    struct export_stacks *st = &x->stacks;
    uint32_t *path = NULL, cap = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        const struct export_node *n = &st->v[i];
        uint64_t w = x->weight == EXPORT_W_TICKS ? n->self_ticks : n->self_insns;
        if (!w)
            continue;
        if (n->depth + 1 > cap) {
            cap = n->depth + 64;
            uint32_t *p = realloc(path, cap * sizeof *p);
            if (!p) {
                free(path);
                return -1;
            }
            path = p;
        }
        uint32_t k = 0;
        for (uint32_t j = i; j != EXPORT_NONE; j = st->v[j].parent)
            path[k++] = j;
        if (x->ncpus > 1)
            fprintf(x->out, "cpu %u;", (unsigned)n->cpu);
        while (k--) {
            const struct export_node *f = &st->v[path[k]];
            put_frame(x->out, export_frame_name(x, f->entry, f->kind));
            if (k)
                putc(';', x->out);
        }
        fprintf(x->out, " %" PRIu64 "\n", w);
    }
    free(path);
    return 0;
}
