/* Names for trace addresses: see names.h. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/sym/names.h"

void names_init(struct names *n)
{
    memset(n, 0, sizeof *n);
    sym_search_init(&n->search);
}

void names_free(struct names *n)
{
    for (size_t i = 0; i < n->n; i++) {
        sym_table_free(n->m[i].tab);
        free(n->m[i].own_file);
    }
    free(n->m);
    sym_search_free(&n->search);
    memset(n, 0, sizeof *n);
}

int names_add_symbols(struct names *n, const char *path, char *err, size_t errlen)
{
    n->have_search = 1;
    return sym_search_add(&n->search, path, err, errlen);
}

int names_add_module(struct names *n, uint64_t base, uint64_t size, uint64_t bias, const char *name,
                     const struct sideband_image *sbi, const char *own_file)
{
    if (n->n == n->cap) {
        size_t nc = n->cap ? 2 * n->cap : 32;
        struct names_module *v = realloc(n->m, nc * sizeof *v);
        if (!v)
            return -1;
        n->m = v;
        n->cap = nc;
    }
    struct names_module *m = &n->m[n->n];
    memset(m, 0, sizeof *m);
    m->base = base;
    m->size = size;
    m->bias = bias;
    snprintf(m->name, sizeof m->name, "%s", name && name[0] ? name : "?");
    if (sbi) {
        m->cv = sbi->cv;
        memcpy(m->cv_guid, sbi->cv_guid, sizeof m->cv_guid);
        memcpy(m->cv_path, sbi->cv_path, sizeof m->cv_path);
    }
    if (own_file && !(m->own_file = strdup(own_file)))
        return -1;
    n->n++;
    n->sorted = 0;
    return 0;
}

static int by_base(const void *a, const void *b)
{
    const struct names_module *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base;
}

static struct names_module *module_at(struct names *n, uint64_t addr)
{
    if (!n->sorted) {
        /* stable for equal bases: the first added (--module, then the
         * capture, then --elf/--pe) is found first */
        for (size_t i = 1; i < n->n; i++)
            for (size_t j = i; j > 0 && by_base(&n->m[j - 1], &n->m[j]) > 0; j--) {
                struct names_module t = n->m[j - 1];
                n->m[j - 1] = n->m[j];
                n->m[j] = t;
            }
        n->sorted = 1;
        n->last = 0;
    }
    if (n->last < n->n && addr - n->m[n->last].base < n->m[n->last].size)
        return &n->m[n->last];
    /* modules may overlap (an image unloaded and another loaded there):
     * the one with the highest base at or below addr that holds it */
    size_t lo = 0, hi = n->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (n->m[mid].base <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i > 0; i--)
        if (addr - n->m[i - 1].base < n->m[i - 1].size) {
            n->last = i - 1;
            return &n->m[i - 1];
        }
    return NULL;
}

long names_module_index(struct names *n, uint64_t addr)
{
    struct names_module *m = module_at(n, addr);
    return m ? (long)(m - n->m) : -1;
}

/* Finds and reads the module's debug file, once. */
static void resolve(struct names *n, struct names_module *m)
{
    char err[512];
    m->tried = 1;
    if (m->own_file) {
        m->tab = sym_table_load(m->own_file, err, sizeof err);
        m->how = "file";
        if (m->tab && (m->tab->nfuncs || m->tab->has_dwarf))
            return;
        sym_table_free(m->tab);
        m->tab = NULL;
    }
    if (!n->have_search)
        return;
    struct sym_want w = { m->name, m->cv, m->cv ? m->cv_guid : NULL, m->cv_path };
    const char *how = NULL;
    int i = sym_search_match(&n->search, &w, &how);
    if (i < 0)
        return;
    m->tab = sym_table_load(n->search.v[i].path, err, sizeof err);
    m->how = how;
}

void names_lookup(struct names *n, uint64_t addr, int want_line, struct names_hit *h)
{
    memset(h, 0, sizeof *h);
    struct names_module *m = module_at(n, addr);
    if (!m)
        return;
    m->used = 1;
    h->module = m;
    h->module_off = addr - m->base;
    if (!m->tried)
        resolve(n, m);
    if (!m->tab)
        return;
    uint64_t a = addr - m->bias;
    const struct sym_func *f = sym_table_func(m->tab, a);
    if (f) {
        h->func = f->name;
        h->func_off = a - f->addr;
        h->func_addr = f->addr + m->bias;
    }
    if (want_line && sym_table_line(m->tab, a, &h->file, &h->line) < 0)
        h->file = NULL;
}

static const char *base_name(const char *p)
{
    const char *b = p;
    for (; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

size_t names_format(struct names *n, uint64_t addr, unsigned flags, char *buf, size_t cap)
{
    struct names_hit h;
    int len;
    if (cap == 0)
        return 0;
    buf[0] = '\0';
    names_lookup(n, addr, (flags & NAMES_F_LINE) != 0, &h);
    if (!h.module)
        return 0;
    if (h.func) {
        if (h.func_off)
            len = snprintf(buf, cap, "%s+0x%" PRIx64, h.func, h.func_off);
        else
            len = snprintf(buf, cap, "%s", h.func);
        if (h.file && (flags & NAMES_F_LINE) && len >= 0 && (size_t)len < cap)
            len += snprintf(buf + len, cap - (size_t)len, " (%s:%u)", base_name(h.file), h.line);
    } else if (h.file && (flags & NAMES_F_LINE)) {
        len = snprintf(buf, cap, "%s+0x%" PRIx64 " (%s:%u)", h.module->name, h.module_off,
                       base_name(h.file), h.line);
    } else {
        if (flags & NAMES_F_NO_MODULE)
            return 0;
        len = snprintf(buf, cap, "%s+0x%" PRIx64, h.module->name, h.module_off);
    }
    if (len < 0)
        return 0;
    return (size_t)len < cap ? (size_t)len : cap - 1;
}

void names_report(const struct names *n, FILE *f, const char *prog)
{
    if (!n->have_search) {
        int own = 0;
        for (size_t i = 0; i < n->n; i++)
            own |= n->m[i].own_file != NULL;
        if (!own)
            return;
    }
    size_t named = 0, used = 0;
    for (size_t i = 0; i < n->n; i++) {
        const struct names_module *m = &n->m[i];
        if (!m->used)
            continue;
        used++;
        if (m->tab) {
            named++;
            fprintf(f, "%s: symbols: %s: %s (by %s; %zu functions%s)\n", prog, m->name,
                    m->tab->path, m->how, m->tab->nfuncs, m->tab->has_dwarf ? ", DWARF lines" : "");
        } else {
            fprintf(f, "%s: symbols: %s: no debug file found%s\n", prog, m->name,
                    n->have_search ? "" : " (no --symbols)");
        }
    }
    if (n->have_search)
        fprintf(f, "%s: symbols: %zu of %zu images that ran have names (%zu candidate files)\n",
                prog, named, used, n->search.n);
}
