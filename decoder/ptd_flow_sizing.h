/* libptd instruction-flow layer: how big a block cache to hand the flow
 * (ptd_flow_config.bcache) for a trace, on the host and on the target
 * alike.
 *
 * The cache holds the blocks the trace runs through, and a bigger trace
 * runs through more of them; but ptd_flow_init writes every entry (to empty
 * it), so each of the cache's pages costs a page fault on a workstation
 * (about 3 us here) and a pass over memory on the target, and on a short
 * trace that costs more than the misses of a smaller cache. A quarter of
 * the trace's size, rounded up to a power of two, from 64 KiB to 1 MiB,
 * is within a few percent of the best size on every real trace measured
 * (docs/performance.md). */
#ifndef PTD_FLOW_SIZING_H
#define PTD_FLOW_SIZING_H

#include <stddef.h>

#define PTD_FLOW_BCACHE_MIN ((size_t)64 << 10)
#define PTD_FLOW_BCACHE_MAX ((size_t)1 << 20)

static inline size_t ptd_flow_bcache_bytes(size_t trace_bytes)
{
    size_t n = PTD_FLOW_BCACHE_MIN;
    while (n < PTD_FLOW_BCACHE_MAX && n < trace_bytes / 4)
        n *= 2;
    return n;
}

#endif
