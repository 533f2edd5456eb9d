/* The code dump format, its writer and its reader: see code_image.h. */
#include "format/code_image.h"

/* ---- the format ---- */

uint64_t code_dump_addr(const void *addr, size_t i)
{
    const uint8_t *p = (const uint8_t *)addr + 8 * i;
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--)
        v = v << 8 | p[k];
    return v;
}

void code_dump_set_addr(void *addr, size_t i, uint64_t page_addr)
{
    uint8_t *p = (uint8_t *)addr + 8 * i;
    for (int k = 0; k < 8; k++)
        p[k] = (uint8_t)(page_addr >> (8 * k));
}

/* ---- writer ---- */

void code_dump_init(struct code_dump *d, uint8_t *pages, uint64_t *addr, size_t cap)
{
    d->pages = pages;
    d->addr = addr;
    d->cap = cap;
    d->count = 0;
}

int code_dump_add(struct code_dump *d, uint64_t page_addr, const uint8_t *src)
{
    if (page_addr % CODE_PAGE_BYTES)
        return CODE_IMAGE_E_ALIGN;
    if (d->count >= d->cap)
        return CODE_IMAGE_E_FULL;
    uint8_t *page = d->pages + d->count * CODE_PAGE_BYTES;
    for (size_t k = 0; k < CODE_PAGE_BYTES; k++)
        page[k] = src[k];
    code_dump_set_addr(d->addr, d->count, page_addr);
    d->count++;
    return CODE_IMAGE_OK;
}

size_t code_dump_find(const struct code_dump *d, uint64_t page_addr)
{
    /* the address as stored, so the search compares whole words */
    uint64_t want;
    code_dump_set_addr(&want, 0, page_addr);
    size_t i;
    for (i = 0; i < d->count; i++)
        if (d->addr[i] == want)
            break;
    return i;
}

size_t code_dump_pages_bytes(const struct code_dump *d)
{
    return d->count * CODE_PAGE_BYTES;
}

size_t code_dump_addr_bytes(const struct code_dump *d)
{
    return d->count * 8;
}

/* ---- reader ---- */

void code_image_init(struct code_image *ci, struct code_page *storage, size_t capacity)
{
    ci->pages = storage;
    ci->count = 0;
    ci->capacity = capacity;
    ci->live = NULL;
}

int code_image_add_dump(struct code_image *ci, const uint8_t *dump, size_t dump_len,
                        const uint8_t *addr, size_t addr_len)
{
    size_t n = addr_len / 8;
    if (addr_len % 8 || dump_len != n * CODE_PAGE_BYTES)
        return CODE_IMAGE_E_SIZES;
    if (n > ci->capacity - ci->count)
        return CODE_IMAGE_E_FULL;
    /* an address list of zeros (a file cut and zero-filled, the wrong
     * file) would put every page at 0: refused as such, not as the
     * duplicates it also is */
    size_t zeros = 0;
    for (size_t i = 0; i < n; i++)
        zeros += code_dump_addr(addr, i) == 0;
    if (n && zeros == n)
        return CODE_IMAGE_E_ZERO;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = code_dump_addr(addr, i);
        if (a % CODE_PAGE_BYTES)
            return CODE_IMAGE_E_ALIGN;
        ci->pages[ci->count + i].addr = a;
        ci->pages[ci->count + i].data = dump + i * CODE_PAGE_BYTES;
    }
    ci->count += n;
    return CODE_IMAGE_OK;
}

/* b's bytes follow a's, both in the address space and in memory */
static int contiguous(const struct code_page *a, const struct code_page *b)
{
    return b->addr - a->addr == CODE_PAGE_BYTES && b->data == a->data + CODE_PAGE_BYTES;
}

/* Heap sort by address: no recursion, no allocation, n log n whatever the
 * order (the Shell sort it replaces, gaps up to 701, took 0.96 s against
 * 0.36 s for a shuffled 2 GiB dump's 524,288 pages); a dump already in
 * address order, the usual, is only checked. */
static void sift_down(struct code_page *p, size_t root, size_t n)
{
    struct code_page x = p[root];
    for (size_t child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && p[child + 1].addr > p[child].addr)
            child++;
        if (p[child].addr <= x.addr)
            break;
        p[root] = p[child];
    }
    p[root] = x;
}

int code_image_finish(struct code_image *ci)
{
    struct code_page *p = ci->pages;
    size_t n = ci->count;
    int sorted = 1;
    for (size_t i = 1; i < n && sorted; i++)
        sorted = p[i - 1].addr <= p[i].addr;
    if (!sorted) {
        for (size_t i = n / 2; i-- > 0;)
            sift_down(p, i, n);
        for (size_t end = n; end-- > 1;) {
            struct code_page t = p[0];
            p[0] = p[end];
            p[end] = t;
            sift_down(p, 0, end);
        }
    }
    for (size_t i = 1; i < ci->count; i++)
        if (p[i].addr == p[i - 1].addr)
            return CODE_IMAGE_E_DUP;
    /* runs for code_image_map: forward for their first page, backward
     * for their last */
    for (size_t i = 0; i < ci->count; i++)
        p[i].run_first = i > 0 && contiguous(&p[i - 1], &p[i]) ? p[i - 1].run_first : i;
    for (size_t i = ci->count; i-- > 0;)
        p[i].run_last = i + 1 < ci->count && contiguous(&p[i], &p[i + 1]) ? p[i + 1].run_last : i;
    return CODE_IMAGE_OK;
}

/* Index of the page holding ip, or count. */
static size_t find_page(const struct code_image *ci, uint64_t ip)
{
    uint64_t page = ip - ip % CODE_PAGE_BYTES;
    size_t lo = 0, hi = ci->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ci->pages[mid].addr < page)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ci->count && ci->pages[lo].addr == page ? lo : ci->count;
}

int code_image_read(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    const struct code_image *ci = ctx;
    size_t done = 0;
    if (size > 0x7fffffff)
        size = 0x7fffffff;
    size_t i = find_page(ci, ip);
    /* Pages first: a snapshot wins over whatever memory holds now. */
    while (done < size && i < ci->count && ci->pages[i].addr == ip - ip % CODE_PAGE_BYTES) {
        size_t off = (size_t)(ip % CODE_PAGE_BYTES);
        size_t n = CODE_PAGE_BYTES - off;
        if (n > size - done)
            n = size - done;
        for (size_t k = 0; k < n; k++)
            buf[done + k] = ci->pages[i].data[off + k];
        done += n;
        ip += n;
        i++;
    }
    if (done == 0 && ci->live) {
        uint64_t avail = mem_ranges_readable_from(ci->live, ip);
        size_t n = avail < size ? (size_t)avail : size;
        const volatile uint8_t *mem = (const volatile uint8_t *)(uintptr_t)ip;
        for (size_t k = 0; k < n; k++)
            buf[k] = mem[k];
        done = n;
    }
    return (int)done;
}

const uint8_t *code_image_map(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    const struct code_image *ci = ctx;
    size_t i = find_page(ci, ip);
    if (i == ci->count)
        return NULL;
    const struct code_page *first = &ci->pages[ci->pages[i].run_first];
    *base = first->addr;
    *size = (ci->pages[i].run_last - ci->pages[i].run_first + 1) * (size_t)CODE_PAGE_BYTES;
    return first->data;
}

const char *code_image_strerror(int err)
{
    switch (err) {
    case CODE_IMAGE_OK: return "ok";
    case CODE_IMAGE_E_SIZES:
        return "page dump and address list do not match (4 KiB pages, 8-byte addresses)";
    case CODE_IMAGE_E_FULL: return "too many pages";
    case CODE_IMAGE_E_ALIGN: return "a page address is not 4 KiB aligned";
    case CODE_IMAGE_E_DUP: return "the same page address twice";
    case CODE_IMAGE_E_ZERO:
        return "every page address is 0 (not an address list: a file of zeros?)";
    }
    return "unknown error";
}
