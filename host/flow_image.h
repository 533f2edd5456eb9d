/* Host-side code images for the flow tools: pages from a code dump
 * (PREFIX.dump = concatenated 4 KiB pages, PREFIX.addr = one little-endian
 * u64 virtual address per page, read and checked by format/code_image.h)
 * and raw files (ptxed's --raw
 * FILE[:FROM[-TO]]:BASE), as sorted, merged segments with one read
 * function usable as libptd's memory callback and as libipt's image
 * callback. Also used by test/ref/libipt_flow.c and the benchmarks. */
#ifndef HOST_FLOW_IMAGE_H
#define HOST_FLOW_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "host/input_file.h"

struct flow_seg {
    uint64_t base;
    uint64_t size;
    uint8_t *data;
    uint8_t *owned; /* what to free: data, or NULL (in a mapping) */
};

struct flow_image {
    struct flow_seg *segs;
    size_t nsegs, cap;
    struct input_file *files; /* page dumps and raw files segments point into */
    size_t nfiles;
    size_t last; /* segment of the last hit (locality) */
    /* segments that touch (a dump's pages out of file order, code next to
     * a --raw section) joined into one copy the first time the map
     * callback is asked for them, sorted by base: the decoder sees one
     * region there, as if the code had been loaded as one piece */
    struct flow_seg *joined;
    size_t njoined;
    char err[512];  /* why the last load failed */
    char warn[512]; /* what the last load overrode ("" when nothing) */
};

void flow_image_init(struct flow_image *img);
void flow_image_free(struct flow_image *img);

/* Each returns 0 or -1 with img->err set. */
int flow_image_add_pages(struct flow_image *img, const char *prefix);
/* spec: FILE[:FROM[-TO]]:BASE (numbers in C notation: 0x.. hex, else
 * decimal, as ptxed's strtoull(.., 0)). */
int flow_image_add_raw(struct flow_image *img, const char *spec);
int flow_image_add_buf(struct flow_image *img, uint64_t base, const uint8_t *buf, size_t size);

/* A file whose bytes the image keeps until flow_image_free (mapped; read
 * where it cannot be): its input_file, or NULL with img->err set. Bytes in
 * it are added in place with flow_image_add_kept (no copy: --elf takes
 * its segments from the file this way, and only the pages the decode
 * touches are read). */
const struct input_file *flow_image_keep_file(struct flow_image *img, const char *path);
/* bytes inside a file kept by flow_image_keep_file, at base: as
 * flow_image_add_buf, but in place (a copy only where segments merge) */
int flow_image_add_kept(struct flow_image *img, uint64_t base, const uint8_t *bytes, size_t size);

/* Bytes readable at ip, copied into buf (at most size): 0 if unmapped.
 * A read goes on across segments that touch, so it never stops early at
 * a segment boundary unless the next byte is unmapped. */
size_t flow_image_read(struct flow_image *img, uint64_t ip, uint8_t *buf, size_t size);

/* Direct pointer to the bytes at ip and how many follow, or NULL. */
const uint8_t *flow_image_ptr(struct flow_image *img, uint64_t ip, size_t *avail);

/* The whole region holding ip: its first byte, with *base and *size set;
 * NULL if unmapped. A segment is given in place; segments that touch are
 * given as one region, copied together on first use (kept until
 * flow_image_free). Regions never change after loading, so this is
 * libptd's map callback (ptd_map_fn) over the image. */
const uint8_t *flow_image_map(struct flow_image *img, uint64_t ip, uint64_t *base, size_t *size);

/* Read a whole file into a malloc'd buffer (one zero byte after it; pipes
 * too); -1 with err set on failure. */
int flow_read_file(const char *path, uint8_t **buf, size_t *size, char *err, size_t errsize);

/* The whole file in memory without a copy where it can be: a private
 * read-only mapping (1; its pages are read as they are touched, no zeroed
 * memory filled first), else read (0: pipes, PTBOOT_INPUT=read); -1 with
 * err set. host/input_file.h is the helper under both.
 * Release with flow_release_file(buf, size, that result). */
int flow_map_file(const char *path, uint8_t **buf, size_t *size, char *err, size_t errsize);
void flow_release_file(uint8_t *buf, size_t size, int mapped);

#endif
