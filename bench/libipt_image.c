/* libipt's image for the flow benchmark, in the setup asked for: see
 * libipt_image.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/libipt_image.h"

#define PAGE 4096u

static const char *const setup_names[] = {
    [BENCH_LIB_ISCACHE] = "iscache",
    [BENCH_LIB_CALLBACK] = "callback",
    [BENCH_LIB_FILE] = "file",
};

int bench_lib_setup_parse(const char *name)
{
    for (unsigned i = 0; i < sizeof(setup_names) / sizeof(setup_names[0]); i++)
        if (!strcmp(name, setup_names[i]))
            return (int)i;
    return -1;
}

const char *bench_lib_setup_name(enum bench_lib_setup s)
{
    return setup_names[s];
}

/* libipt's read-memory callback over the bytes ptboot decodes; libipt
 * wants -pte_nomap where nothing is mapped. */
static int read_mem(uint8_t *buf, size_t size, const struct pt_asid *asid, uint64_t ip, void *ctx)
{
    (void)asid;
    size_t n = flow_image_read(ctx, ip, buf, size);
    return n ? (int)n : -pte_nomap;
}

/* One file section, as a plain file section or through the cache. */
static int add_section(struct bench_lib_image *li, const char *file, uint64_t offset, uint64_t size,
                       uint64_t vaddr)
{
    if (!li->iscache)
        return pt_image_add_file(li->image, file, offset, size, NULL, vaddr);
    int isid = pt_iscache_add_file(li->iscache, file, offset, size, vaddr);
    if (isid < 0)
        return isid;
    return pt_image_add_cached(li->image, li->iscache, isid, NULL);
}

struct page_ref {
    uint64_t addr, idx;
};

static int page_cmp(const void *a, const void *b)
{
    const struct page_ref *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* PREFIX.dump as sections: each run of pages contiguous both in memory and
 * in the file is one section (as few sections as the file allows). */
static int add_pages(struct bench_lib_image *li, const char *prefix, uint64_t *bytes,
                     const char *prog)
{
    char dump[4096], addrf[4096], err[512];
    uint8_t *ab;
    size_t as;
    int rc = 0;

    snprintf(dump, sizeof(dump), "%s.dump", prefix);
    snprintf(addrf, sizeof(addrf), "%s.addr", prefix);
    if (flow_read_file(addrf, &ab, &as, err, sizeof(err)) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    size_t n = as / 8;
    struct page_ref *p = calloc(n ? n : 1, sizeof(*p));
    if (!p) {
        free(ab);
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    for (size_t k = 0; k < n; k++) {
        uint64_t a = 0;
        for (int j = 0; j < 8; j++)
            a |= (uint64_t)ab[k * 8 + j] << (8 * j);
        p[k].addr = a;
        p[k].idx = k;
    }
    qsort(p, n, sizeof(*p), page_cmp);
    for (size_t k = 0; k < n && rc == 0;) {
        size_t e = k;
        while (e + 1 < n && p[e + 1].addr == p[e].addr + PAGE && p[e + 1].idx == p[e].idx + 1)
            e++;
        uint64_t size = (e - k + 1) * PAGE;
        if (add_section(li, dump, p[k].idx * PAGE, size, p[k].addr) < 0) {
            fprintf(stderr, "%s: libipt refuses section %s at %#llx\n", prog, dump,
                    (unsigned long long)p[k].addr);
            rc = -1;
        }
        *bytes += size;
        k = e + 1;
    }
    free(p);
    free(ab);
    return rc;
}

/* FILE[:FROM[-TO]]:BASE as one section (flow_opts has checked the spec). */
static int add_raw(struct bench_lib_image *li, const char *spec, uint64_t *bytes, const char *prog)
{
    char buf[4096], *c, *r;
    uint64_t base, from = 0, size = UINT64_MAX;

    snprintf(buf, sizeof(buf), "%s", spec);
    c = strrchr(buf, ':');
    if (!c)
        return -1;
    *c = 0;
    base = strtoull(c + 1, NULL, 0);
    r = strrchr(buf, ':');
    if (r) {
        char *d;
        *r++ = 0;
        d = strchr(r, '-');
        from = strtoull(r, NULL, 0);
        if (d)
            size = strtoull(d + 1, NULL, 0) - from;
    }
    if (add_section(li, buf, from, size, base) < 0) {
        fprintf(stderr, "%s: libipt refuses %s\n", prog, spec);
        return -1;
    }
    *bytes += size == UINT64_MAX ? 0 : size;
    return 0;
}

int bench_lib_image_build(struct bench_lib_image *li, enum bench_lib_setup s, int argc, char **argv,
                          struct flow_image *mem, const char *prog)
{
    uint64_t bytes = 0;

    memset(li, 0, sizeof(*li));
    li->image = pt_image_alloc("bench");
    if (!li->image) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return -1;
    }
    if (s == BENCH_LIB_CALLBACK) {
        li->mem = mem;
        return pt_image_set_callback(li->image, read_mem, mem) < 0 ? -1 : 0;
    }
    if (s == BENCH_LIB_ISCACHE) {
        li->iscache = pt_iscache_alloc("bench");
        if (!li->iscache) {
            fprintf(stderr, "%s: out of memory\n", prog);
            return -1;
        }
    }
    for (int i = 1; i + 1 < argc; i++) {
        int rc = 0;
        if (!strcmp(argv[i], "--pages"))
            rc = add_pages(li, argv[++i], &bytes, prog);
        else if (!strcmp(argv[i], "--raw"))
            rc = add_raw(li, argv[++i], &bytes, prog);
        if (rc < 0)
            return -1;
    }
    /* A limit that keeps every section mapped with its block cache: libipt
     * counts a mapped section as its bytes plus a 4-byte block-cache entry
     * per byte (pt_section_memsize), so 16 times the code is ample. A
     * --raw FILE without TO counts as the loaded image's bytes. */
    if (li->iscache) {
        uint64_t all = 0;
        for (size_t k = 0; k < mem->nsegs; k++)
            all += mem->segs[k].size;
        if (all > bytes)
            bytes = all;
        if (pt_iscache_set_limit(li->iscache, bytes * 16 + (1u << 20)) < 0)
            return -1;
    }
    return 0;
}

void bench_lib_image_free(struct bench_lib_image *li)
{
    if (li->image)
        pt_image_free(li->image);
    if (li->iscache)
        pt_iscache_free(li->iscache);
    memset(li, 0, sizeof(*li));
}
