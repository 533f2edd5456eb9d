/* Code images for the host flow tools: see flow_image.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoder/ptd_num.h"
#include "format/code_image.h"
#include "host/flow_image.h"

#define PAGE CODE_PAGE_BYTES

static int fail(struct flow_image *img, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->err, sizeof(img->err), fmt, ap);
    va_end(ap);
    return -1;
}

int flow_read_file(const char *path, uint8_t **buf, size_t *size, char *err,
                   size_t errsize)
{
    struct stat st;
    FILE *f;
    uint8_t *b;

    *buf = NULL;
    *size = 0;
    if (stat(path, &st) != 0) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errsize, "%s: not a regular file", path);
        return -1;
    }
    f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    b = malloc((size_t)st.st_size + 1);
    if (!b) {
        fclose(f);
        snprintf(err, errsize, "%s: out of memory", path);
        return -1;
    }
    if (st.st_size && fread(b, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
        fclose(f);
        free(b);
        snprintf(err, errsize, "%s: read error", path);
        return -1;
    }
    fclose(f);
    *buf = b;
    *size = (size_t)st.st_size;
    return 0;
}

int flow_map_file(const char *path, uint8_t **buf, size_t *size, char *err, size_t errsize)
{
    struct stat st;
    int fd = open(path, O_RDONLY);

    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            close(fd);
            *buf = p;
            *size = (size_t)st.st_size;
            return 1;
        }
    }
    if (fd >= 0)
        close(fd);
    return flow_read_file(path, buf, size, err, errsize);
}

void flow_release_file(uint8_t *buf, size_t size, int mapped)
{
    if (mapped)
        munmap(buf, size);
    else
        free(buf);
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
    for (size_t i = 0; i < img->nmaps; i++)
        munmap(img->maps[i].addr, img->maps[i].len);
    free(img->maps);
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
enum src_kind { SRC_COPY, SRC_BORROW, SRC_TAKE };

static int insert_bytes(struct flow_image *img, uint64_t base, const uint8_t *src,
                        size_t size, enum src_kind kind);

/* Keep segments sorted; merge overlapping/adjacent ones (a later segment's
 * bytes win where they overlap an earlier one). */
static int insert_src(struct flow_image *img, uint64_t base, const uint8_t *src,
                      size_t size, enum src_kind kind)
{
    int rc = insert_bytes(img, base, src, size, kind);
    if (kind == SRC_TAKE && rc < 0)
        free((uint8_t *)src);
    return rc;
}

static int insert_bytes(struct flow_image *img, uint64_t base, const uint8_t *src,
                        size_t size, enum src_kind kind)
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

int flow_image_add_buf(struct flow_image *img, uint64_t base, const uint8_t *buf,
                       size_t size)
{
    return insert(img, base, buf, size);
}

/* PREFIX.dump, mapped read-only when it can be (kept until
 * flow_image_free; *mapped set), else read into memory (freed by the
 * caller). A decode touches only the pages it runs through, and a mapped
 * file costs no copy: loading a dump of many pages for a short trace is
 * then no slower than the decode (docs/performance.md). */
static int load_dump(struct flow_image *img, const char *path, uint8_t **buf, size_t *size,
                     int *mapped)
{
    struct stat st;
    int fd = open(path, O_RDONLY);

    *mapped = 0;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        struct flow_mapping *m = realloc(img->maps, (img->nmaps + 1) * sizeof(*m));
        void *p = m ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (m)
            img->maps = m;
        if (p != MAP_FAILED) {
            close(fd);
            img->maps[img->nmaps].addr = p;
            img->maps[img->nmaps++].len = (size_t)st.st_size;
            *buf = p;
            *size = (size_t)st.st_size;
            *mapped = 1;
            return 0;
        }
    }
    if (fd >= 0)
        close(fd);
    return flow_read_file(path, buf, size, img->err, sizeof(img->err));
}

/* The pages through format/'s code dump reader, which checks them (sizes,
 * 4 KiB alignment, each address once) as the target does; runs of
 * consecutive addresses become one segment each, the file's bytes in place
 * when they follow each other there too (the usual dump, written in
 * address order), else a copy. */
int flow_image_add_pages(struct flow_image *img, const char *prefix)
{
    char path[4096];
    uint8_t *dump = NULL, *addr = NULL, *dump_owned;
    size_t dsize, asize, n, i, j;
    struct code_page *pages;
    struct code_image ci;
    int rc = 0, mapped;

    snprintf(path, sizeof(path), "%s.dump", prefix);
    if (load_dump(img, path, &dump, &dsize, &mapped) < 0)
        return -1;
    dump_owned = mapped ? NULL : dump;
    snprintf(path, sizeof(path), "%s.addr", prefix);
    if (flow_read_file(path, &addr, &asize, img->err, sizeof(img->err)) < 0) {
        free(dump_owned);
        return -1;
    }
    n = asize / 8;
    pages = calloc(n ? n : 1, sizeof(*pages));
    if (!pages) {
        free(dump_owned);
        free(addr);
        return fail(img, "out of memory");
    }
    code_image_init(&ci, pages, n);
    int e = code_image_add_dump(&ci, dump, dsize, addr, asize);
    if (e == CODE_IMAGE_OK)
        e = code_image_finish(&ci);
    if (e == CODE_IMAGE_E_SIZES)
        rc = fail(img, "%s: %zu addresses for %zu bytes of pages (want 8 bytes per 4 KiB page)",
                  prefix, asize / 8, dsize);
    else if (e != CODE_IMAGE_OK)
        rc = fail(img, "%s: %s", prefix, code_image_strerror(e));
    /* ci.pages is sorted by address now */
    for (i = 0; rc == 0 && i < ci.count;) {
        size_t k = i, in_file = i + 1;
        uint8_t *run;
        while (k + 1 < ci.count && pages[k + 1].addr == pages[k].addr + PAGE)
            k++;
        while (in_file <= k && pages[in_file].data == pages[in_file - 1].data + PAGE)
            in_file++;
        if (mapped && in_file == k + 1) {
            rc = insert_src(img, pages[i].addr, pages[i].data, (k - i + 1) * PAGE, SRC_BORROW);
            i = k + 1;
            continue;
        }
        run = malloc((k - i + 1) * PAGE);
        if (!run) {
            rc = fail(img, "out of memory");
            break;
        }
        for (j = i; j <= k; j++)
            memcpy(run + (j - i) * PAGE, pages[j].data, PAGE);
        rc = insert_src(img, pages[i].addr, run, (k - i + 1) * PAGE, SRC_TAKE);
        i = k + 1;
    }
    free(pages);
    free(dump_owned);
    free(addr);
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
    if (flow_read_file(file, &data, &size, img->err, sizeof(img->err)) < 0)
        return -1;
    if (!have_to)
        to = size;
    if (from > size || to > size || to < from) {
        free(data);
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
            snprintf(img->warn, sizeof img->warn, "--raw %s: 0x%llx-0x%llx overlaps code loaded before "
                     "(0x%llx-0x%llx): the later bytes are used there, as ptxed does", spec,
                     (unsigned long long)base, (unsigned long long)(base + len - 1),
                     (unsigned long long)s->base, (unsigned long long)(s->base + s->size - 1));
            break;
        }
    }
    rc = insert(img, base, data + from, (size_t)(to - from));
    free(data);
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

size_t flow_image_read(struct flow_image *img, uint64_t ip, uint8_t *buf, size_t size)
{
    size_t avail;
    const uint8_t *p = flow_image_ptr(img, ip, &avail);
    if (!p)
        return 0;
    if (avail > size)
        avail = size;
    memcpy(buf, p, avail);
    return avail;
}

const uint8_t *flow_image_map(struct flow_image *img, uint64_t ip, uint64_t *base, size_t *size)
{
    size_t avail;
    const uint8_t *p = flow_image_ptr(img, ip, &avail);
    if (!p)
        return NULL;
    /* flow_image_ptr() found it at img->last (or segment 0) */
    const struct flow_seg *s = &img->segs[img->last < img->nsegs ? img->last : 0];
    if (ip - s->base >= s->size || s->data + (ip - s->base) != p)
        return NULL;
    *base = s->base;
    *size = (size_t)s->size;
    return s->data;
}
