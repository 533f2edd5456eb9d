/* --symbols and the modules names come from: see names_opts.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "host/sym/names_opts.h"

int names_opts_take(struct names *n, int argc, char **argv, int *i, const char *prog)
{
    char err[4096 + 256];
    if (strcmp(argv[*i], "--symbols"))
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: --symbols needs a file or directory\n", prog);
        return -2;
    }
    (*i)++;
    if (names_add_symbols(n, argv[*i], err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    return 1;
}

int names_opts_finish(struct names *n, const struct host_capture *cap, const struct flow_opts *fo,
                      const struct ptd_sum_module *given, size_t ngiven)
{
    for (size_t k = 0; k < ngiven; k++)
        if (names_add_module(n, given[k].base, given[k].size, given[k].base, given[k].name, NULL,
                             NULL) < 0)
            return -1;
    /* a capture's image: the debug file's addresses are its RVAs (an EDK2
     * or ptboot ELF is linked at 0 with the PE's layout) */
    if (cap && cap->sb)
        for (uint32_t k = 0; k < cap->sb->nimages; k++) {
            const struct sideband_image *im = &cap->sb->images[k];
            if (names_add_module(n, im->base, im->size, im->base, im->name, im, NULL) < 0)
                return -1;
        }
    for (size_t k = 0; fo && k < fo->code.n; k++) {
        const struct code_module *cm = &fo->code.v[k];
        if (names_add_module(n, cm->base, cm->size, cm->bias, cm->name, NULL, cm->path) < 0)
            return -1;
    }
    return 0;
}

int names_opts_active(const struct names *n)
{
    if (n->have_search)
        return 1;
    for (size_t i = 0; i < n->n; i++)
        if (n->m[i].own_file)
            return 1;
    return 0;
}

size_t names_opts_code_modules(const struct flow_opts *fo, struct ptd_sum_module *mods, size_t n,
                               size_t max)
{
    for (size_t k = 0; k < fo->code.n && n < max; k++, n++) {
        mods[n].base = fo->code.v[k].base;
        mods[n].size = fo->code.v[k].size;
        mods[n].name = fo->code.v[k].name;
    }
    return n;
}

size_t names_sum_name(void *ctx, uint64_t ip, char *buf, size_t cap)
{
    /* a name only when there is a symbol or a line: else the summary's own
     * module+0xOFF, so the text stays what the target prints */
    return names_format(ctx, ip, NAMES_F_LINE | NAMES_F_NO_MODULE, buf, cap);
}

char *names_flow_column(struct names *n, uint64_t ip, char *p, char *end)
{
    if (end - p < 4)
        return p;
    *p++ = ' ';
    *p++ = ' ';
    size_t k = names_format(n, ip, 0, p, (size_t)(end - p));
    if (!k)
        *p = '?', k = 1;
    return p + k;
}
