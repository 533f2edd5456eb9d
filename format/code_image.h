/* The code the flow decoder reads on the target: pages from a page dump on
 * the stick (PREFIX.dump = 4 KiB pages, PREFIX.addr = one little-endian u64
 * address per page: the format of the real traces and of test/vpt), or live
 * memory, allowed only inside the RAM ranges of the UEFI memory map. Pure C
 * over caller storage, no UEFI types: the host unit tests run this code. */
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
    CODE_IMAGE_E_SIZES = -1,   /* dump is not addr-count pages, or addr not 8-byte units */
    CODE_IMAGE_E_FULL = -2,    /* more pages than storage */
    CODE_IMAGE_E_ALIGN = -3,   /* a page address not 4 KiB aligned */
    CODE_IMAGE_E_DUP = -4,     /* the same page twice */
};

void code_image_init(struct code_image *ci, struct code_page *storage, size_t capacity);
/* Adds every page of a dump; the buffers must outlive the image. */
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
