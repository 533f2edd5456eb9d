/* The code dump format and its one reader and writer, for the target and
 * the host alike.
 *
 * A code dump is two files: PREFIX.dump, 4 KiB pages one after the other,
 * and PREFIX.addr, one little-endian u64 address per page (the format of
 * the real traces, of test/vpt and of the app's code snapshots,
 * docs/capture-files.md). Every address is 4 KiB aligned and appears once.
 *
 * The writer (struct code_dump) appends pages into caller storage, as the
 * app's snapshots do. The reader (struct code_image) checks a dump against
 * those rules and serves its pages to the flow decoder (libptd's read and
 * map callbacks); on the target it can also read live memory, allowed only
 * inside the RAM ranges of the UEFI memory map. The host's code images
 * (host/flow_image.c) load page dumps through it too. Pure C over caller
 * storage, no UEFI types, no allocation. */
#ifndef PTBOOT_FORMAT_CODE_IMAGE_H
#define PTBOOT_FORMAT_CODE_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "format/memrange.h"

#define CODE_PAGE_BYTES 4096

struct code_page {
    uint64_t addr;
    const uint8_t *data;
    /* set by code_image_finish: the run of pages this one belongs to
     * (consecutive addresses whose data also follow each other in memory,
     * as a dump's pages in address order do), indices first..last */
    size_t run_first, run_last;
};

struct code_image {
    struct code_page *pages; /* caller's storage, sorted by code_image_finish */
    size_t count, capacity;
    const struct mem_ranges *live; /* non-NULL: read live memory there */
};

enum code_image_error {
    CODE_IMAGE_OK = 0,
    CODE_IMAGE_E_SIZES = -1, /* dump is not addr-count pages, or addr not 8-byte units */
    CODE_IMAGE_E_FULL = -2,  /* more pages than storage */
    CODE_IMAGE_E_ALIGN = -3, /* a page address not 4 KiB aligned */
    CODE_IMAGE_E_DUP = -4,   /* the same page twice */
    CODE_IMAGE_E_ZERO = -5,  /* every page address is 0: not a list of addresses */
};

/* The i-th address of a .addr file's bytes, and its writer. */
uint64_t code_dump_addr(const void *addr, size_t i);
void code_dump_set_addr(void *addr, size_t i, uint64_t page_addr);

/* ---- writer ---- */

/* A code dump being written into caller storage: cap pages and cap
 * addresses. The addresses are stored as the .addr file holds them
 * (little-endian), which on x86 is also an array of uint64_t. */
struct code_dump {
    uint8_t *pages;
    uint64_t *addr;
    size_t cap, count;
};

void code_dump_init(struct code_dump *d, uint8_t *pages, uint64_t *addr, size_t cap);
/* Appends the 4 KiB page at page_addr, copied from src. Returns
 * CODE_IMAGE_OK, CODE_IMAGE_E_ALIGN or CODE_IMAGE_E_FULL. The caller
 * keeps each address once (code_dump_find tells whether it is there). */
int code_dump_add(struct code_dump *d, uint64_t page_addr, const uint8_t *src);
/* The index of page_addr's page in d, or d->count. */
size_t code_dump_find(const struct code_dump *d, uint64_t page_addr);
/* Bytes of the two files as written so far. */
size_t code_dump_pages_bytes(const struct code_dump *d);
size_t code_dump_addr_bytes(const struct code_dump *d);

/* ---- reader ---- */

void code_image_init(struct code_image *ci, struct code_page *storage, size_t capacity);
/* Adds every page of a dump after checking its sizes and alignment; the
 * buffers must outlive the image. */
int code_image_add_dump(struct code_image *ci, const uint8_t *dump, size_t dump_len,
                        const uint8_t *addr, size_t addr_len);
/* Sorts the pages; returns CODE_IMAGE_E_DUP if two share an address. */
int code_image_finish(struct code_image *ci);
/* libptd's read callback (ctx = struct code_image *): up to size bytes at
 * ip, across adjacent pages; 0 where nothing is mapped. */
int code_image_read(void *ctx, uint64_t ip, uint8_t *buf, size_t size);
/* libptd's map callback (ptd_map_fn, ctx = struct code_image *, after
 * code_image_finish): the run of dump pages holding ip, in place (no
 * copy); NULL where no page holds ip, live memory included (it may change
 * under the decoder: it is always copied through code_image_read). */
const uint8_t *code_image_map(void *ctx, uint64_t ip, uint64_t *base, size_t *size);
const char *code_image_strerror(int err);

#endif
