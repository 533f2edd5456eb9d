/* Options shared by `ptboot flow` and the flow benchmark: the trace, the
 * memory image and the decoder configuration (ptxed's option names). */
#ifndef HOST_FLOW_OPTS_H
#define HOST_FLOW_OPTS_H

#include <stdint.h>
#include <stddef.h>

#include "decoder/ptd_flow.h"
#include "host/code_load.h"
#include "host/flow_image.h"

struct flow_opts {
    const char *pt;
    struct flow_image img;
    struct ptd_flow_config cfg;
    uint8_t *trace;
    size_t tsize;
    struct input_file trace_file; /* the trace: mapped, or read (host/input_file.h) */
    int have_cpu;
    int cpu_unknown; /* --cpu names a CPU the errata table lacks */
    unsigned family, model;
    /* --filter:addrN_cfg/_a/_b */
    uint64_t addr_cfg[4], addr_a[4], addr_b[4];
    int have_addr[4];
    int no_cache;
    int no_insn_cache; /* set before flow_opts_finish: no decoded-instruction cache */
    void *cache;
    void *bcache;
    void *bcache_map; /* the mapping bcache lies in */
    size_t bcache_map_size;
    struct code_modules code; /* --elf / --pe files (host/code_load.h) */
};

#define FLOW_CACHE_BYTES (1u << 20)

void flow_opts_init(struct flow_opts *o);
void flow_opts_free(struct flow_opts *o);
/* Consumes argv[*i] (and its value) if it is an input/config option:
 * 1 consumed, 0 not ours, -1 error (message printed with prog). */
int flow_opts_parse(struct flow_opts *o, int argc, char **argv, int *i, const char *prog);
/* After parsing: read the trace, build the filter; -1 on error. */
int flow_opts_finish(struct flow_opts *o, const char *prog);

/* libptd's read callback over a flow_image. */
int flow_image_read_cb(void *ctx, uint64_t ip, uint8_t *buf, size_t size);
/* libptd's map callback over a flow_image (set by flow_opts_finish). */
const uint8_t *flow_image_map_cb(void *ctx, uint64_t ip, uint64_t *base, size_t *size);

#endif
