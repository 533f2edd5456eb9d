/* One debug file's symbols: see sym_table.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/flow_image.h"
#include "host/sym/sym_table.h"

int sym_builder_add(struct sym_builder *b, uint64_t addr, uint64_t size, const char *name, int rank)
{
    size_t nl = strlen(name) + 1;
    if (b->n == b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 256;
        struct sym_func *v = realloc(b->v, nc * sizeof *v);
        if (!v)
            return -1;
        b->v = v;
        int *r = realloc(b->rank, nc * sizeof *r);
        if (!r)
            return -1;
        b->rank = r;
        b->cap = nc;
    }
    if (b->slen + nl > b->scap) {
        size_t nc = b->scap ? 2 * b->scap : 4096;
        while (nc < b->slen + nl)
            nc *= 2;
        char *s = realloc(b->str, nc);
        if (!s)
            return -1;
        b->str = s;
        b->scap = nc;
    }
    memcpy(b->str + b->slen, name, nl);
    /* the name is an offset into the store until it stops moving */
    b->v[b->n].addr = addr;
    b->v[b->n].size = size;
    b->v[b->n].name = (const char *)(uintptr_t)b->slen;
    b->rank[b->n] = rank;
    b->slen += nl;
    b->n++;
    return 0;
}

struct key {
    uint64_t addr;
    int rank;
    size_t i;
};

static int key_cmp(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

int sym_builder_finish(struct sym_builder *b, struct sym_table *t)
{
    struct key *k = malloc((b->n ? b->n : 1) * sizeof *k);
    struct sym_func *out = malloc((b->n ? b->n : 1) * sizeof *out);
    if (!k || !out) {
        free(k);
        free(out);
        return -1;
    }
    for (size_t i = 0; i < b->n; i++)
        k[i] = (struct key){ b->v[i].addr, b->rank[i], i };
    qsort(k, b->n, sizeof *k, key_cmp);
    size_t n = 0;
    for (size_t i = 0; i < b->n; i++) {
        if (n && out[n - 1].addr == k[i].addr)
            continue; /* the best-ranked name at this address is kept */
        out[n] = b->v[k[i].i];
        out[n].name = b->str + (uintptr_t)out[n].name;
        n++;
    }
    free(k);
    free(b->v);
    free(b->rank);
    t->funcs = out;
    t->nfuncs = n;
    t->strings = b->str;
    memset(b, 0, sizeof *b);
    return 0;
}

static struct sym_table *open_table(const char *path, int symbols, char *err, size_t errlen)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    if (flow_read_file(path, &buf, &len, err, errlen) < 0)
        return NULL;
    struct sym_table *t = calloc(1, sizeof *t);
    if (!t) {
        free(buf);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    t->fd = -1;
    snprintf(t->path, sizeof t->path, "%s", path);
    int r;
    if (len >= 4 && !memcmp(buf,
                            "\x7f"
                            "ELF",
                            4)) {
        t->kind = SYM_FILE_ELF;
        r = sym_elf_load(t, buf, len, symbols, err, errlen);
    } else if (len >= 2 && buf[0] == 'M' && buf[1] == 'Z') {
        t->kind = SYM_FILE_PE;
        r = sym_pe_load(t, buf, len, symbols, err, errlen);
    } else {
        snprintf(err, errlen, "%s: neither an ELF file nor a PE/COFF image", path);
        r = -1;
    }
    free(buf);
    if (r < 0) {
        sym_table_free(t);
        return NULL;
    }
    return t;
}

struct sym_table *sym_table_load(const char *path, char *err, size_t errlen)
{
    return open_table(path, 1, err, errlen);
}

struct sym_table *sym_table_ident(const char *path, char *err, size_t errlen)
{
    return open_table(path, 0, err, errlen);
}

void sym_table_free(struct sym_table *t)
{
    if (!t)
        return;
    sym_elf_close(t);
    free(t->funcs);
    free(t->strings);
    free(t);
}

const struct sym_func *sym_table_func(const struct sym_table *t, uint64_t addr)
{
    size_t lo = 0, hi = t->nfuncs;
    /* the last function starting at or below addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->funcs[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return NULL;
    const struct sym_func *f = &t->funcs[lo - 1];
    if (f->size && addr - f->addr >= f->size)
        return NULL; /* past its end: between functions */
    return f;
}

int sym_table_line(struct sym_table *t, uint64_t addr, const char **file, unsigned *line)
{
    if (!t->has_dwarf)
        return -1;
    if (t->line_valid && t->line_addr == addr) {
        *file = t->line_file;
        *line = t->line_no;
        return t->line_file ? 0 : -1;
    }
    int r = sym_elf_line(t, addr, file, line);
    t->line_valid = 1;
    t->line_addr = addr;
    t->line_file = r == 0 ? *file : NULL;
    t->line_no = r == 0 ? *line : 0;
    return r;
}
