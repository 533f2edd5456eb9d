/* Finding an image's debug file among the --symbols paths: see
 * sym_search.h. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "format/pe_info.h"
#include "format/sideband.h"
#include "host/sym/sym_search.h"
#include "host/sym/sym_table.h"

#define SEARCH_DEPTH_MAX 32 /* directory levels: a symlink loop ends here */

void sym_search_init(struct sym_search *s)
{
    memset(s, 0, sizeof *s);
}

void sym_search_free(struct sym_search *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].path);
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* A candidate if the file is a linked ELF or a PE image: 1 added, 0 not
 * one, -1 out of memory. */
static int consider(struct sym_search *s, const char *path)
{
    unsigned char magic[18];
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    s->files_seen++;
    int elf = n == sizeof magic && !memcmp(magic,
                                           "\x7f"
                                           "ELF",
                                           4);
    if (!elf && !(n >= 2 && magic[0] == 'M' && magic[1] == 'Z'))
        return 0;
    /* e_type (little-endian, at 16): only executables and shared objects
     * are linked; object files and core dumps are not read further */
    if (elf && magic[5] == 1 && !(magic[16] == 2 || magic[16] == 3))
        return 0;
    char err[256];
    struct sym_table *t = sym_table_ident(path, err, sizeof err);
    if (!t)
        return 0;
    if (!t->linked) {
        sym_table_free(t);
        return 0;
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 64;
        struct sym_cand *v = realloc(s->v, nc * sizeof *v);
        if (!v) {
            sym_table_free(t);
            return -1;
        }
        s->v = v;
        s->cap = nc;
    }
    struct sym_cand *c = &s->v[s->n];
    memset(c, 0, sizeof *c);
    c->path = strdup(path);
    if (!c->path) {
        sym_table_free(t);
        return -1;
    }
    c->kind = t->kind;
    c->dwarf = t->dwarf_sections;
    memcpy(c->build_id, t->build_id, sizeof c->build_id);
    c->build_id_len = t->build_id_len;
    c->cv = t->cv;
    memcpy(c->cv_guid, t->cv_guid, sizeof c->cv_guid);
    c->cv_age = t->cv_age;
    s->n++;
    sym_table_free(t);
    return 1;
}

static int walk(struct sym_search *s, const char *dir, int depth)
{
    if (depth > SEARCH_DEPTH_MAX)
        return 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    char path[4096];
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path)
            continue;
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode))
            rc = walk(s, path, depth + 1);
        else if (S_ISREG(st.st_mode) && consider(s, path) < 0)
            rc = -1;
    }
    closedir(d);
    return rc;
}

int sym_search_add(struct sym_search *s, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "--symbols %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        if (walk(s, path, 0) < 0) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        return 0;
    }
    int r = consider(s, path);
    if (r <= 0) {
        snprintf(err, errlen,
                 r < 0 ? "out of memory" : "--symbols %s: not a linked ELF file or PE/COFF image",
                 path);
        return -1;
    }
    return 0;
}

/* The last component of a path with '/' or '\\' separators. */
static const char *base_of(const char *p)
{
    const char *b = p;
    for (; *p; p++)
        if (*p == '/' || *p == '\\')
            b = p + 1;
    return b;
}

/* How many trailing components two paths share ('/' and '\\' alike, case
 * ignored: a Windows build's path names the same file). */
static int common_tail(const char *a, const char *b)
{
    const char *x = a + strlen(a), *y = b + strlen(b);
    int n = 0;
    for (;;) {
        const char *xs = x, *ys = y;
        while (xs > a && xs[-1] != '/' && xs[-1] != '\\')
            xs--;
        while (ys > b && ys[-1] != '/' && ys[-1] != '\\')
            ys--;
        if (x - xs != y - ys || x == xs || strncasecmp(xs, ys, (size_t)(x - xs)))
            return n;
        n++;
        if (xs == a || ys == b)
            return n;
        x = xs - 1;
        y = ys - 1;
    }
}

/* Does c contradict the image's GUID (a different build)? Only when both
 * carry an identity. */
static int contradicts(const struct sym_cand *c, const struct sym_want *w)
{
    if (w->cv != SIDEBAND_CV_RSDS || !w->guid)
        return 0;
    if (c->kind == SYM_FILE_ELF && c->build_id_len >= 16)
        return memcmp(c->build_id, w->guid, 16) != 0;
    if (c->kind == SYM_FILE_PE && c->cv == PE_CV_RSDS)
        return memcmp(c->cv_guid, w->guid, 16) != 0;
    return 0;
}

static int quality(const struct sym_cand *c)
{
    return c->kind == SYM_FILE_ELF ? (c->dwarf ? 3 : 2) : 1;
}

/* The length of a name without its last extension ("x.efi": 1). */
static size_t stem_len(const char *b)
{
    const char *dot = strrchr(b, '.');
    return dot && dot > b ? (size_t)(dot - b) : strlen(b);
}

/* The stem (name without its last extension) of a path equals the image's
 * name, or that name's own stem: an image named after its file
 * ("osloader.efi", as the resident tracer names them) finds osloader.so. */
static int stem_is(const char *path, const char *name)
{
    const char *b = base_of(path);
    size_t n = stem_len(b);
    if (n == strlen(name) && !strncasecmp(b, name, n))
        return 1;
    return n == stem_len(name) && !strncasecmp(b, name, n);
}

int sym_search_match(const struct sym_search *s, const struct sym_want *w, const char **how)
{
    int best = -1, best_score = -1;
    /* 1: the GUID (or NB10 signature) */
    if (w->cv && w->guid) {
        for (size_t i = 0; i < s->n; i++) {
            const struct sym_cand *c = &s->v[i];
            int hit = 0;
            if (w->cv == SIDEBAND_CV_RSDS)
                hit = (c->kind == SYM_FILE_ELF && c->build_id_len >= 16 &&
                       !memcmp(c->build_id, w->guid, 16)) ||
                      (c->kind == SYM_FILE_PE && c->cv == PE_CV_RSDS &&
                       !memcmp(c->cv_guid, w->guid, 16));
            else
                hit = c->kind == SYM_FILE_PE && c->cv == PE_CV_NB10 &&
                      !memcmp(c->cv_guid, w->guid, 4);
            if (hit && quality(c) > best_score) {
                best = (int)i;
                best_score = quality(c);
            }
        }
        if (best >= 0) {
            *how = "guid";
            return best;
        }
    }
    /* 2: the CodeView path's file name, the longest matching tail */
    if (w->cv_path && w->cv_path[0] && *base_of(w->cv_path)) {
        for (size_t i = 0; i < s->n; i++) {
            const struct sym_cand *c = &s->v[i];
            int tail = common_tail(c->path, w->cv_path);
            if (tail < 1 || contradicts(c, w))
                continue;
            int score = tail * 4 + quality(c);
            if (score > best_score) {
                best = (int)i;
                best_score = score;
            }
        }
        if (best >= 0) {
            *how = "path";
            return best;
        }
    }
    /* 3: the image's name */
    if (w->name && w->name[0]) {
        for (size_t i = 0; i < s->n; i++) {
            const struct sym_cand *c = &s->v[i];
            if (!stem_is(c->path, w->name) || contradicts(c, w))
                continue;
            if (quality(c) > best_score) {
                best = (int)i;
                best_score = quality(c);
            }
        }
        if (best >= 0) {
            *how = "name";
            return best;
        }
    }
    return -1;
}
