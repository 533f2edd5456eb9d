/* libipt's view of the benchmark's code (bench/bench_flow.c): the same
 * --pages/--raw inputs ptboot decodes, given to libipt in one of the ways
 * its documentation offers, so the benchmark can name which one it timed:
 *   iscache   file sections in an image-section cache (pt_iscache_add_file
 *             + pt_image_add_cached, with a cache limit that keeps every
 *             section mapped): what ptxed does, and libipt's fastest setup
 *             on the real traces (docs/performance.md);
 *   callback  a read-memory callback (pt_image_set_callback) over the
 *             bytes ptboot reads, in memory;
 *   file      file sections without a cache (pt_image_add_file): the
 *             benchmark's setup before issue 13, kept to reproduce the old
 *             figures (libipt maps and unmaps sections on the hot path). */
#ifndef BENCH_LIBIPT_IMAGE_H
#define BENCH_LIBIPT_IMAGE_H

#include <intel-pt.h>

#include "host/flow_image.h"

enum bench_lib_setup {
    BENCH_LIB_ISCACHE,
    BENCH_LIB_CALLBACK,
    BENCH_LIB_FILE,
};

struct bench_lib_image {
    struct pt_image *image;
    struct pt_image_section_cache *iscache; /* BENCH_LIB_ISCACHE only */
    struct flow_image *mem;                 /* BENCH_LIB_CALLBACK's bytes */
};

/* "iscache", "callback", "file" -> the setup, or -1. */
int bench_lib_setup_parse(const char *name);
const char *bench_lib_setup_name(enum bench_lib_setup s);

/* Builds libipt's image from argv's --pages PREFIX / --raw SPEC options
 * (mem: the same code, loaded by flow_opts, for the callback). Returns 0,
 * or -1 with a message on stderr prefixed by prog. */
int bench_lib_image_build(struct bench_lib_image *li, enum bench_lib_setup s, int argc, char **argv,
                          struct flow_image *mem, const char *prog);
void bench_lib_image_free(struct bench_lib_image *li);

#endif
