/* Code images for the host flow tools: see flow_image.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_num.h"
#include "format/code_image.h"
#include "host/flow_image.h"
#include "host/input_file.h"

#define PAGE CODE_PAGE_BYTES

static int fail(struct flow_image *img, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->err, sizeof(img->err), fmt, ap);
    va_end(ap);
    return -1;
}

/* Both through the one input helper (host/input_file.h): small files
 * (sideband, addresses, capture files) read, traces mapped. */
int flow_read_file(const char *path, uint8_t **buf, size_t *size, char *err, size_t errsize)
{
    struct input_file f;
    int rc = input_file_open(&f, path, INPUT_READ, err, errsize);
    *buf = rc < 0 ? NULL : f.data;
    *size = rc < 0 ? 0 : f.size;
    return rc;
}

int flow_map_file(const char *path, uint8_t **buf, size_t *size, char *err, size_t errsize)
{
    struct input_file f;
    if (input_file_open(&f, path, input_file_how(), err, errsize) < 0) {
        *buf = NULL;
        *size = 0;
        return -1;
    }
    *buf = f.data;
    *size = f.size;
    return f.mapped;
}

void flow_release_file(uint8_t *buf, size_t size, int mapped)
{
    struct input_file f = { .data = buf, .size = size, .mapped = mapped };
    input_file_close(&f);
}

void flow_image_init(struct flow_image *img)
{
    memset(img, 0, sizeof(*img));
}

void flow_image_free(struct flow_image *img)
{
    for (size_t i = 0; i < img->nsegs; i++)
        free(img->segs[i].owned);
    free(img->segs);
    for (size_t i = 0; i < img->nfiles; i++)
        input_file_close(&img->files[i]);
    free(img->files);
    for (size_t i = 0; i < img->njoined; i++)
        free(img->joined[i].owned);
    free(img->joined);
    memset(img, 0, sizeof(*img));
}

static int seg_cmp(const void *a, const void *b)
{
    const struct flow_seg *x = a, *y = b;
    return x->base < y->base ? -1 : x->base > y->base;
}

/* Where a new segment's bytes come from: copied from the caller's buffer;
 * borrowed (a mapping of the image's, valid as long as the image); or taken
 * (a malloc'd buffer the image then owns and frees). A segment that touches
 * no other uses borrowed or taken bytes in place. */
enum src_kind {
    SRC_COPY,
    SRC_BORROW,
    SRC_TAKE
};

static int insert_bytes(struct flow_image *img, uint64_t base, const uint8_t *src, size_t size,
                        enum src_kind kind);

/* Keep segments sorted; merge overlapping/adjacent ones (a later segment's
 * bytes win where they overlap an earlier one). */
static int insert_src(struct flow_image *img, uint64_t base, const uint8_t *src, size_t size,
                      enum src_kind kind)
{
    int rc = insert_bytes(img, base, src, size, kind);
    if (kind == SRC_TAKE && rc < 0)
        free((uint8_t *)src);
    return rc;
}

static int insert_bytes(struct flow_image *img, uint64_t base, const uint8_t *src, size_t size,
                        enum src_kind kind)
{
    struct flow_seg *s;
    uint64_t lo = base, hi = base + size;
    size_t i, first, last;
    uint8_t *data;

    if (!size) {
        if (kind == SRC_TAKE)
            free((uint8_t *)src);
        return 0;
    }
    if (hi < lo)
        return fail(img, "section at %#llx wraps around", (unsigned long long)base);
    /* find segments touching [lo, hi] */
    first = img->nsegs;
    last = 0;
    for (i = 0; i < img->nsegs; i++) {
        s = &img->segs[i];
        if (s->base <= hi && lo <= s->base + s->size) {
            if (first == img->nsegs)
                first = i;
            last = i;
        }
    }
    if (first == img->nsegs) {
        if (img->nsegs == img->cap) {
            size_t nc = img->cap ? img->cap * 2 : 16;
            struct flow_seg *ns = realloc(img->segs, nc * sizeof(*ns));
            if (!ns)
                return fail(img, "out of memory");
            img->segs = ns;
            img->cap = nc;
        }
        if (kind != SRC_COPY) {
            data = (uint8_t *)src;
        } else {
            data = malloc(size);
            if (!data)
                return fail(img, "out of memory");
            memcpy(data, src, size);
        }
        img->segs[img->nsegs].base = base;
        img->segs[img->nsegs].size = size;
        img->segs[img->nsegs].data = data;
        img->segs[img->nsegs].owned = kind == SRC_BORROW ? NULL : data;
        img->nsegs++;
        qsort(img->segs, img->nsegs, sizeof(*img->segs), seg_cmp);
        return 0;
    }
    /* merge segments first..last with the new bytes */
    {
        uint64_t mlo = lo < img->segs[first].base ? lo : img->segs[first].base;
        uint64_t mhi = hi;
        uint64_t lend = img->segs[last].base + img->segs[last].size;
        if (lend > mhi)
            mhi = lend;
        data = calloc(1, (size_t)(mhi - mlo));
        if (!data)
            return fail(img, "out of memory");
        for (i = first; i <= last; i++) {
            s = &img->segs[i];
            memcpy(data + (s->base - mlo), s->data, s->size);
            free(s->owned);
        }
        memcpy(data + (lo - mlo), src, size);
        if (kind == SRC_TAKE)
            free((uint8_t *)src);
        img->segs[first].base = mlo;
        img->segs[first].size = mhi - mlo;
        img->segs[first].data = data;
        img->segs[first].owned = data;
        memmove(&img->segs[first + 1], &img->segs[last + 1],
                (img->nsegs - last - 1) * sizeof(*img->segs));
        img->nsegs -= last - first;
    }
    return 0;
}

static int insert(struct flow_image *img, uint64_t base, const uint8_t *src, size_t size)
{
    return insert_src(img, base, src, size, SRC_COPY);
}

int flow_image_add_buf(struct flow_image *img, uint64_t base, const uint8_t *buf, size_t size)
{
    return insert(img, base, buf, size);
}

/* A file whose bytes segments use in place (mapped, or read where it
 * cannot be), kept until flow_image_free: its copy in img->files. */
static struct input_file *keep_file(struct flow_image *img, const char *path)
{
    struct input_file *v = realloc(img->files, (img->nfiles + 1) * sizeof(*v));
    if (!v) {
        fail(img, "out of memory");
        return NULL;
    }
    img->files = v;
    if (input_file_open(&v[img->nfiles], path, input_file_how(), img->err, sizeof(img->err)) < 0)
        return NULL;
    return &v[img->nfiles++];
}

const struct input_file *flow_image_keep_file(struct flow_image *img, const char *path)
{
    return keep_file(img, path);
}

int flow_image_add_kept(struct flow_image *img, uint64_t base, const uint8_t *bytes, size_t size)
{
    return insert_src(img, base, bytes, size, SRC_BORROW);
}

/* A run of pages [lo, hi) against the loaded segments: 1 if it overlaps
 * one (bytes there would be replaced: the merging insert), 0 if not. */
static int overlaps(const struct flow_image *img, uint64_t lo, uint64_t hi)
{
    size_t l = 0, h = img->nsegs;
    while (l < h) { /* the first segment ending after lo */
        size_t m = l + (h - l) / 2;
        if (img->segs[m].base + img->segs[m].size <= lo)
            l = m + 1;
        else
            h = m;
    }
    return l < img->nsegs && img->segs[l].base < hi;
}

/* The pages through format/'s code dump reader, which checks them (sizes,
 * 4 KiB alignment, each address once, not all zero) as the target does.
 * The pages are indexed in place: a sorted table of segments, one per run
 * of pages that follow each other in memory and in the file, pointing into
 * the dump's mapping (or its read buffer); nothing is copied, whatever the
 * file's order. A run over code loaded before replaces it there through
 * the merging insert (a copy), as a later --raw does. */
int flow_image_add_pages(struct flow_image *img, const char *prefix)
{
    char path[4096];
    struct input_file addr, *dump;
    struct code_page *pages;
    struct code_image ci;
    size_t n, i, nruns = 0;
    int rc = 0;

    snprintf(path, sizeof(path), "%s.dump", prefix);
    if (!(dump = keep_file(img, path)))
        return -1;
    snprintf(path, sizeof(path), "%s.addr", prefix);
    if (input_file_open(&addr, path, input_file_how(), img->err, sizeof(img->err)) < 0)
        return -1;
    n = addr.size / 8;
    pages = calloc(n ? n : 1, sizeof(*pages));
    if (!pages) {
        input_file_close(&addr);
        return fail(img, "out of memory");
    }
    code_image_init(&ci, pages, n);
    int e = code_image_add_dump(&ci, dump->data, dump->size, addr.data, addr.size);
    if (e == CODE_IMAGE_OK)
        e = code_image_finish(&ci);
    if (e == CODE_IMAGE_E_SIZES)
        rc = fail(img, "%s: %zu addresses for %zu bytes of pages (want 8 bytes per 4 KiB page)",
                  prefix, addr.size / 8, dump->size);
    else if (e != CODE_IMAGE_OK)
        rc = fail(img, "%s: %s", prefix, code_image_strerror(e));
    input_file_close(&addr);
    /* code_image_finish sorted the pages and found their runs */
    int clash = 0;
    for (i = 0; rc == 0 && i < ci.count; i = pages[i].run_last + 1) {
        nruns++;
        clash |= overlaps(img, pages[i].addr, pages[pages[i].run_last].addr + PAGE);
    }
    if (rc == 0 && !clash && img->nsegs + nruns > img->cap) {
        struct flow_seg *ns = realloc(img->segs, (img->nsegs + nruns) * sizeof(*ns));
        if (!ns)
            rc = fail(img, "out of memory");
        else {
            img->segs = ns;
            img->cap = img->nsegs + nruns;
        }
    }
    for (i = 0; rc == 0 && i < ci.count; i = pages[i].run_last + 1) {
        size_t len = (pages[i].run_last - i + 1) * PAGE;
        if (clash) {
            rc = insert_src(img, pages[i].addr, pages[i].data, len, SRC_BORROW);
            continue;
        }
        struct flow_seg *s = &img->segs[img->nsegs++];
        s->base = pages[i].addr;
        s->size = len;
        s->data = (uint8_t *)pages[i].data;
        s->owned = NULL;
    }
    /* appended in address order after the segments loaded before */
    if (rc == 0 && !clash)
        qsort(img->segs, img->nsegs, sizeof(*img->segs), seg_cmp);
    free(pages);
    return rc;
}

/* ptxed's reading (strtoull's base 0), through the one parser */
static int parse_u64(const char *s, uint64_t *v)
{
    return ptd_num_parse(s, PTD_NUM_AUTO, v) ? 0 : -1;
}

int flow_image_add_raw(struct flow_image *img, const char *spec)
{
    char buf[4096], *colon, *range = NULL, *file;
    uint64_t base, from = 0, to = 0;
    int have_to = 0;
    uint8_t *data;
    size_t size;
    int rc;

    if (strlen(spec) >= sizeof(buf))
        return fail(img, "--raw %s: too long", spec);
    strcpy(buf, spec);
    colon = strrchr(buf, ':');
    if (!colon)
        return fail(img, "--raw %s: want FILE[:FROM[-TO]]:BASE", spec);
    *colon = 0;
    if (parse_u64(colon + 1, &base) < 0)
        return fail(img, "--raw %s: bad base address '%s'", spec, colon + 1);
    file = buf;
    colon = strrchr(buf, ':');
    if (colon) {
        char *dash;
        range = colon + 1;
        *colon = 0;
        dash = strchr(range, '-');
        if (dash) {
            *dash = 0;
            if (parse_u64(dash + 1, &to) < 0)
                return fail(img, "--raw %s: bad end offset '%s'", spec, dash + 1);
            have_to = 1;
        }
        if (parse_u64(range, &from) < 0)
            return fail(img, "--raw %s: bad start offset '%s'", spec, range);
    }
    struct input_file *in = keep_file(img, file);
    if (!in)
        return -1;
    data = in->data;
    size = in->size;
    if (!have_to)
        to = size;
    if (from > size || to > size || to < from) {
        return fail(img, "--raw %s: range %#llx-%#llx outside the file (%zu bytes)", spec,
                    (unsigned long long)from, (unsigned long long)to, size);
    }
    /* Overlapping sections: as ptxed (libipt's pt_image_add), the later
     * bytes are used there; unlike ptxed, said (flow_opts prints it). */
    img->warn[0] = 0;
    uint64_t len = to - from;
    for (size_t i = 0; len && i < img->nsegs; i++) {
        const struct flow_seg *s = &img->segs[i];
        uint64_t lo = s->base > base ? s->base : base;
        uint64_t hi = s->base + s->size < base + len ? s->base + s->size : base + len;
        if (lo < hi) {
            snprintf(img->warn, sizeof img->warn,
                     "--raw %s: 0x%llx-0x%llx overlaps code loaded before "
                     "(0x%llx-0x%llx): the later bytes are used there, as ptxed does",
                     spec, (unsigned long long)base, (unsigned long long)(base + len - 1),
                     (unsigned long long)s->base, (unsigned long long)(s->base + s->size - 1));
            break;
        }
    }
    /* the file's bytes in place (a copy only where sections merge) */
    rc = insert_src(img, base, data + from, (size_t)(to - from), SRC_BORROW);
    return rc;
}

const uint8_t *flow_image_ptr(struct flow_image *img, uint64_t ip, size_t *avail)
{
    size_t lo, hi;
    struct flow_seg *s;

    if (img->nsegs == 0)
        return NULL;
    s = &img->segs[img->last < img->nsegs ? img->last : 0];
    if (ip - s->base < s->size) {
        *avail = (size_t)(s->size - (ip - s->base));
        return s->data + (ip - s->base);
    }
    lo = 0;
    hi = img->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        s = &img->segs[mid];
        if (ip < s->base)
            hi = mid;
        else if (ip - s->base >= s->size)
            lo = mid + 1;
        else {
            img->last = mid;
            *avail = (size_t)(s->size - (ip - s->base));
            return s->data + (ip - s->base);
        }
    }
    return NULL;
}

/* Segments that touch (a page dump's runs in different places of its
 * file, pages next to a --raw section) are read as one. */
size_t flow_image_read(struct flow_image *img, uint64_t ip, uint8_t *buf, size_t size)
{
    size_t done = 0, avail;
    const uint8_t *p;
    while (done < size && (p = flow_image_ptr(img, ip + done, &avail)) != NULL) {
        if (avail > size - done)
            avail = size - done;
        memcpy(buf + done, p, avail);
        done += avail;
    }
    return done;
}

/* The joined copy holding ip, or NULL; *at: where one for ip would go */
static struct flow_seg *joined_find(struct flow_image *img, uint64_t ip, size_t *at)
{
    size_t lo = 0, hi = img->njoined;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        struct flow_seg *j = &img->joined[mid];
        if (ip < j->base)
            hi = mid;
        else if (ip - j->base >= j->size)
            lo = mid + 1;
        else
            return j;
    }
    *at = lo;
    return NULL;
}

/* Segments first..last (touching) copied into one region, kept sorted */
static struct flow_seg *join(struct flow_image *img, size_t first, size_t last, size_t at)
{
    uint64_t lo = img->segs[first].base, len = img->segs[last].base + img->segs[last].size - lo;
    struct flow_seg *v = realloc(img->joined, (img->njoined + 1) * sizeof(*v));
    uint8_t *data = len <= SIZE_MAX ? malloc((size_t)len) : NULL;
    if (v)
        img->joined = v;
    if (!v || !data) {
        free(data);
        return NULL;
    }
    for (size_t i = first; i <= last; i++)
        memcpy(data + (img->segs[i].base - lo), img->segs[i].data, (size_t)img->segs[i].size);
    memmove(&v[at + 1], &v[at], (img->njoined - at) * sizeof(*v));
    img->njoined++;
    v[at].base = lo;
    v[at].size = len;
    v[at].data = v[at].owned = data;
    return &v[at];
}

const uint8_t *flow_image_map(struct flow_image *img, uint64_t ip, uint64_t *base, size_t *size)
{
    size_t avail, at = 0;
    const struct flow_seg *j = img->njoined ? joined_find(img, ip, &at) : NULL;
    if (!j) {
        const uint8_t *p = flow_image_ptr(img, ip, &avail);
        if (!p)
            return NULL;
        /* flow_image_ptr() found it at img->last (or segment 0) */
        size_t i = img->last < img->nsegs ? img->last : 0, first = i, last = i;
        const struct flow_seg *s = &img->segs[i];
        if (ip - s->base >= s->size || s->data + (ip - s->base) != p)
            return NULL;
        while (first > 0 &&
               img->segs[first - 1].base + img->segs[first - 1].size == img->segs[first].base)
            first--;
        while (last + 1 < img->nsegs &&
               img->segs[last].base + img->segs[last].size == img->segs[last + 1].base)
            last++;
        j = first == last ? s : join(img, first, last, at);
        if (!j) /* no memory for the copy: the segment alone */
            j = s;
    }
    *base = j->base;
    *size = (size_t)j->size;
    return j->data;
}
