/* Options shared by `ptboot flow` and the flow benchmark: see flow_opts.h. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "decoder/ptd_num.h"
#include "decoder/ptd_opts.h"
#include "host/flow_opts.h"

void flow_opts_init(struct flow_opts *o)
{
    memset(o, 0, sizeof(*o));
    flow_image_init(&o->img);
}

void flow_opts_free(struct flow_opts *o)
{
    flow_image_free(&o->img);
    code_modules_free(&o->code);
    if (o->trace)
        input_file_close(&o->trace_file);
    free(o->cache);
    if (o->bcache)
        munmap(o->bcache_map, o->bcache_map_size);
    o->trace = NULL;
    o->cache = NULL;
    o->bcache = NULL;
}

/* The block cache's memory: fresh pages, in 2 MiB pages where the kernel
 * gives them (transparent huge pages) and the cache spans whole ones: the
 * cache fills its memory from the start on, so a decode that touches many
 * pages of it (a big image: foo's 150) takes one huge page instead, each
 * small page a page fault (about 1.5 us here, a huge page about 65 us;
 * a cache under 2 MiB, a small image, touches too few to gain). */
#define BCACHE_HUGE (2u << 20)
static void *bcache_alloc(struct flow_opts *o, size_t bytes)
{
    size_t size = bytes + BCACHE_HUGE;
    uint8_t *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    o->bcache_map = m;
    o->bcache_map_size = size;
    uint8_t *a = (uint8_t *)(((uintptr_t)m + BCACHE_HUGE - 1) & ~(uintptr_t)(BCACHE_HUGE - 1));
#ifdef MADV_HUGEPAGE
    /* under 2 MiB no huge page fits: the call would only split the mapping */
    if (bytes >= BCACHE_HUGE)
        (void)madvise(a, bytes, MADV_HUGEPAGE);
#endif
    return a;
}

int flow_image_read_cb(void *ctx, uint64_t ip, uint8_t *buf, size_t size)
{
    return (int)flow_image_read(ctx, ip, buf, size);
}

const uint8_t *flow_image_map_cb(void *ctx, uint64_t ip, uint64_t *base, size_t *size)
{
    return flow_image_map(ctx, ip, base, size);
}

/* base 16: hex (0x optional), else as strtoull's base 0; K/M/G taken
 * (decoder/ptd_num.h, the one parser) */
static int num(const char *s, uint64_t *v, int base)
{
    return ptd_num_parse(s, base == 16 ? PTD_NUM_HEX : PTD_NUM_AUTO, v) ? 0 : -1;
}

int flow_opts_parse(struct flow_opts *o, int argc, char **argv, int *i, const char *prog)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    unsigned n;
    char field[8];

    if (!strcmp(a, "--no-cache")) {
        o->no_cache = 1;
        return 1;
    }
    if (strcmp(a, "--pt") && strcmp(a, "--pages") && strcmp(a, "--raw") && strcmp(a, "--elf") &&
        strcmp(a, "--pe") && strcmp(a, "--filter") && strcmp(a, "--cpu") && strcmp(a, "--mode") &&
        strncmp(a, "--filter:addr", 13))
        return 0;
    if (!v) {
        fprintf(stderr, "%s: %s needs an argument\n", prog, a);
        return -1;
    }
    (*i)++;
    if (!strcmp(a, "--pt")) {
        o->pt = v;
    } else if (!strcmp(a, "--pages")) {
        if (flow_image_add_pages(&o->img, v) < 0) {
            fprintf(stderr, "%s: --pages: %s\n", prog, o->img.err);
            return -1;
        }
    } else if (!strcmp(a, "--raw")) {
        if (flow_image_add_raw(&o->img, v) < 0) {
            fprintf(stderr, "%s: %s\n", prog, o->img.err);
            return -1;
        }
        if (o->img.warn[0])
            fprintf(stderr, "%s: warning: %s\n", prog, o->img.warn);
    } else if (!strcmp(a, "--elf") || !strcmp(a, "--pe")) {
        char err[4096 + 256];
        if ((a[3] == 'l' ? code_load_elf : code_load_pe)(&o->img, &o->code, v, err, sizeof err) <
            0) {
            fprintf(stderr, "%s: %s\n", prog, err);
            return -1;
        }
    } else if (!strcmp(a, "--filter")) {
        char buf[128], *dash;
        uint64_t lo, hi;
        snprintf(buf, sizeof(buf), "%s", v);
        dash = strchr(buf, '-');
        if (!dash) {
            fprintf(stderr, "%s: --filter %s: want LO-HI (hex)\n", prog, v);
            return -1;
        }
        *dash = 0;
        if (num(buf, &lo, 16) < 0 || num(dash + 1, &hi, 16) < 0 || hi < lo) {
            fprintf(stderr, "%s: --filter %s: want LO-HI (hex, LO <= HI)\n", prog, v);
            return -1;
        }
        if (o->cfg.nfilter >= 4) {
            fprintf(stderr, "%s: at most 4 filter ranges\n", prog);
            return -1;
        }
        o->cfg.filter_lo[o->cfg.nfilter] = lo;
        o->cfg.filter_hi[o->cfg.nfilter] = hi;
        o->cfg.nfilter++;
    } else if (!strcmp(a, "--cpu")) {
        bool has_cpu;
        if (!ptd_opts_parse_cpu(v, &has_cpu, &o->family, &o->model)) {
            fprintf(stderr, "%s: --cpu %s: want FAMILY/MODEL[/STEPPING] (e.g. 6/142) or none\n",
                    prog, v);
            return -1;
        }
        o->have_cpu = has_cpu;
    } else if (!strcmp(a, "--mode")) {
        if (!strcmp(v, "16") || !strcmp(v, "32") || !strcmp(v, "64")) {
            o->cfg.mode = (uint8_t)atoi(v);
        } else {
            fprintf(stderr, "%s: --mode %s: want 16, 32 or 64\n", prog, v);
            return -1;
        }
    } else {
        uint64_t x;
        if (sscanf(a, "--filter:addr%u_%7s", &n, field) != 2 || n > 3 ||
            (strcmp(field, "cfg") && strcmp(field, "a") && strcmp(field, "b"))) {
            fprintf(stderr, "%s: unknown option %s\n", prog, a);
            return -1;
        }
        if (num(v, &x, 0) < 0) {
            fprintf(stderr, "%s: %s %s: not a number\n", prog, a, v);
            return -1;
        }
        if (!strcmp(field, "cfg"))
            o->addr_cfg[n] = x;
        else if (!strcmp(field, "a"))
            o->addr_a[n] = x;
        else
            o->addr_b[n] = x;
        o->have_addr[n] = 1;
    }
    return 1;
}

int flow_opts_finish(struct flow_opts *o, const char *prog)
{
    char err[512];
    if (!o->pt) {
        fprintf(stderr, "%s: --pt FILE is required\n", prog);
        return -1;
    }
    if (input_file_open(&o->trace_file, o->pt, input_file_how(), err, sizeof(err)) < 0) {
        o->trace = NULL;
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    o->trace = o->trace_file.data;
    o->tsize = o->trace_file.size;
    for (unsigned n = 0; n < 4; n++) {
        /* addrN_cfg 1: FilterEn (2: TraceStop, no filter for the flow) */
        if (o->have_addr[n] && o->addr_cfg[n] == 1 && o->cfg.nfilter < 4) {
            o->cfg.filter_lo[o->cfg.nfilter] = o->addr_a[n];
            o->cfg.filter_hi[o->cfg.nfilter] = o->addr_b[n];
            o->cfg.nfilter++;
        }
    }
    o->cfg.trace = o->trace;
    o->cfg.size = o->tsize;
    o->cfg.read = flow_image_read_cb;
    /* the image is loaded now and stays as it is: code read in place */
    o->cfg.map = flow_image_map_cb;
    o->cfg.ctx = &o->img;
    o->cpu_unknown = o->have_cpu && !ptd_errata_of_cpu(o->family, o->model, false, &o->cfg.errata);
    /* the decoded-instruction cache: 1 MiB (--no-cache or no_insn_cache:
     * none) */
    if (!o->no_cache) {
        o->cache = o->no_insn_cache ? NULL : malloc(FLOW_CACHE_BYTES);
        o->cfg.cache = o->cache;
        o->cfg.cache_size = o->cache ? FLOW_CACHE_BYTES : 0;
        /* the block cache: room for every segment of the image (libipt's
         * block boundaries, docs/flow.md) */
        uint64_t code = 0;
        for (size_t k = 0; k < o->img.nsegs; k++)
            code += o->img.segs[k].size;
        size_t bytes = PTD_FLOW_BCACHE_BYTES(code, o->img.nsegs);
        o->bcache = bcache_alloc(o, bytes);
        o->cfg.bcache = o->bcache;
        o->cfg.bcache_size = o->bcache ? bytes : 0;
        /* fresh anonymous pages: zero, not cleared again by the cache */
        if (o->bcache)
            o->cfg.flags |= PTD_FLOW_F_BCACHE_ZEROED;
    }
    return 0;
}
