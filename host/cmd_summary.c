/* `ptboot summary [flow options] [--module BASE:SIZE:NAME ...] [--top N]
 * [--last N] ...`: the decode summary the UEFI app prints over serial
 * (call tree with module+offset names, time and instructions per image and
 * function, hot blocks and edges, the last transitions, errors), from the
 * same driver (decoder/ptd_sum.h); docs/summary.md explains the text. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder/ptd_num.h"
#include "decoder/ptd_opts.h"
#include "decoder/ptd_sum.h"
#include "decoder/ptd_time.h"
#include "host/capture.h"
#include "host/cmd_summary.h"
#include "host/commands.h"
#include "host/decode_opts.h"
#include "host/flow_hints.h"
#include "host/progress.h"
#include "host/sym/names_opts.h"

#define MAX_MODULES 4096
/* the host's default arena: HOST_SUM_ARENA_PER_BYTE bytes per trace byte,
 * between PTD_SUM_ARENA_SUGGESTED and HOST_SUM_ARENA_MAX */
#define HOST_SUM_ARENA_PER_BYTE 16
#define HOST_SUM_ARENA_MAX      (1ull << 30)

static void to_file(void *ctx, const char *line, size_t len)
{
    FILE *out = ctx;
    fwrite(line, 1, len, out);
    fputc('\n', out);
}

int host_summary_write(struct flow_opts *fo, const struct ptd_time_config *tcfg,
                       const struct ptd_sum_config *cfg, int stat, FILE *out)
{
    struct ptd_sum_config c = *cfg;
    struct ptd_flow *f = malloc(sizeof(*f));
    struct ptd_sum *s = malloc(sizeof(*s));
    void *arena = NULL;
    if (!c.arena) {
        c.arena_size = PTD_SUM_ARENA_SUGGESTED;
        c.arena = arena = malloc(c.arena_size);
    }
    if (!f || !s || !c.arena) {
        fprintf(stderr, "ptboot summary: out of memory\n");
        free(f), free(s), free(arena);
        return 1;
    }
    if (!c.line) {
        c.line = to_file;
        c.ctx = out;
    }
    struct ptd_flow_config fcfg = fo->cfg; /* with its caches */
    fcfg.time = tcfg;
    ptd_flow_init(f, &fcfg);
    /* ptd_sum_run's steps, with progress on a terminal */
    struct progress pr;
    progress_start(&pr, "ptboot summary", fo->tsize);
    progress_input(&pr, &fo->trace_file, 0);
    ptd_sum_init(s, &c);
    while (ptd_sum_decode(s, f, 4096) > 0)
        progress_update(&pr, ptd_flow_offset(f));
    progress_end(&pr);
    ptd_sum_print(s);
    const struct ptd_sum_stats *st = ptd_sum_stats(s);
    if (stat)
        fprintf(out,
                "summary: bytes %" PRIu64 " insns %" PRIu64 " blocks %" PRIu64 " calls %" PRIu64
                " returns %" PRIu64 " irqs %" PRIu64 " errors %" PRIu64 " skipped %" PRIu64
                " functions %" PRIu64 " nodes %" PRIu64 " untracked %" PRIu64 " lines %" PRIu64
                " text %" PRIu64 " bound %" PRIu64 "\n",
                st->bytes, st->insns, st->blocks, st->calls, st->returns, st->irqs, st->errors,
                st->bytes_skipped, st->functions, st->nodes, st->untracked, st->lines,
                st->text_bytes, ptd_sum_text_bound(&c));
    free(f), free(s), free(arena);
    return 0;
}

static void usage(FILE *to)
{
    fprintf(to,
            "usage: ptboot summary [options] --pt FILE\n"
            "       ptboot summary [options] --capture DIR\n"
            "Decode summary of an Intel PT trace, as ptboot.efi prints it over serial\n"
            "(docs/summary.md): call tree, time and instructions per image and function,\n"
            "hot blocks and edges, the last transitions, errors and gaps.\n"
            "Trace and code (as ptboot flow):\n"
            "  --pt FILE --pages PREFIX --raw FILE[:FROM[-TO]]:BASE --filter LO-HI\n"
            "  --filter:addrN_cfg/_a/_b V --cpu F/M[/S]|none --mode 16|32|64 --no-cache\n"
            "Timing: --mtc-freq N --nom-freq N --cpuid-0x15.eax N --cpuid-0x15.ebx N\n"
            "Capture (docs/capture-files.md):\n"
            "  --capture DIR              DIR/trace.pt, its code snapshot, CPU, timing, filters\n"
            "                             and its image table (options after it override)\n"
            "  --elf FILE[:BASE] --pe FILE[:BASE]  code from an ELF's segments or a PE's sections\n"
            "Images:\n"
            "  --module BASE:SIZE:NAME    an image (hex base and size), repeatable; looked up\n"
            "                             before the capture's images\n"
            "  --symbols PATH             debug files (a file, or a directory searched): names\n"
            "                             as function+0xOFF (file:line) (docs/symbols.md)\n"
            "Limits:\n"
            "  --top N                    top N images, functions, blocks, edges (20; at least 1)\n"
            "  --last N                   last N transitions (32; 0: none)\n"
            "  --depth N                  shadow stack depth (256; at least 1, at most a quarter\n"
            "                             of the arena)\n"
            "  --tree-depth N             call tree depth (24; 0: no call tree)\n"
            "  --tree-lines N             call tree lines (400; 0: no call tree)\n"
            "  --tree-permille N          fold tree nodes under N/1000 of the insns (2; 0: none)\n"
            "  --tree-all                 every tree node (up to --tree-lines)\n"
            "  --arena BYTES              table memory (K/M/G taken; default 16 bytes per trace\n"
            "                             byte, 1M to 1G; the target uses 1M)\n"
            "  --tail                     the static path after the trace's end closes the last\n"
            "                             transitions, marked (tail), with where it ends\n"
            "                             (\"spins at X\" for an endless loop)\n"
            "  --stat                     a last line \"summary: bytes N insns N ...\"\n"
            "Exit status: 0 decoded (decode errors are in the summary), 1 bad input,\n"
            "2 bad usage.\n");
}

size_t host_summary_arena_bytes(uint64_t trace_bytes)
{
    uint64_t t = trace_bytes * HOST_SUM_ARENA_PER_BYTE;
    return (size_t)(t < PTD_SUM_ARENA_SUGGESTED ? PTD_SUM_ARENA_SUGGESTED
                    : t > HOST_SUM_ARENA_MAX    ? HOST_SUM_ARENA_MAX
                                                : t);
}

int host_summary_parse_module(const char *v, struct ptd_sum_module *m)
{
    const char *end;
    uint64_t base, size;
    if (!ptd_num_parse_pair(v, PTD_NUM_HEX, &base, &size, &end) || *end != ':' || !end[1] || !size)
        return -1;
    m->base = base;
    m->size = size;
    m->name = end + 1;
    return 0;
}

int host_cmd_summary(int argc, char **argv)
{
    static struct ptd_sum_module mods[MAX_MODULES];
    static struct ptd_time_config tcfg;
    static struct host_capture cap;
    static struct names names;
    struct flow_opts fo;
    struct ptd_sum_config c;
    int stat = 0, rc, arena_given = 0;
    uint64_t arena_size = PTD_SUM_ARENA_SUGGESTED, depth = PTD_SUM_STACK_DEFAULT;

    memset(&c, 0, sizeof(c));
    memset(&tcfg, 0, sizeof(tcfg));
    c.modules = mods;
    flow_opts_init(&fo);
    names_init(&names);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = host_decode_opts_take(&fo, &tcfg, &cap, argc, argv, &i, "ptboot summary");
        if (r == 0)
            r = names_opts_take(&names, argc, argv, &i, "ptboot summary");
        if (r < 0) {
            flow_opts_free(&fo);
            names_free(&names);
            return -r;
        }
        if (r > 0)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            flow_opts_free(&fo);
            return 0;
        } else if (!strcmp(a, "--stat")) {
            stat = 1;
        } else if (!strcmp(a, "--tree-all")) {
            c.flags |= PTD_SUM_F_TREE_ALL;
        } else if (!strcmp(a, "--tail")) {
            c.flags |= PTD_SUM_F_TAIL;
        } else if (!strcmp(a, "--module")) {
            if (i + 1 >= argc || c.nmodules >= MAX_MODULES ||
                host_summary_parse_module(argv[i + 1], &mods[c.nmodules]) < 0) {
                fprintf(stderr, "ptboot summary: --module wants BASE:SIZE:NAME (hex, up to %d)\n",
                        MAX_MODULES);
                flow_opts_free(&fo);
                return 2;
            }
            c.nmodules++;
            i++;
        } else if (!strcmp(a, "--top") || !strcmp(a, "--last") || !strcmp(a, "--depth") ||
                   !strcmp(a, "--tree-depth") || !strcmp(a, "--tree-lines") ||
                   !strcmp(a, "--tree-permille") || !strcmp(a, "--arena")) {
            uint64_t v, max = !strcmp(a, "--arena") ? (1ull << 32) : 0xffffffffu;
            if (i + 1 >= argc || !ptd_opts_parse_u64(argv[i + 1], &v) || v > max) {
                fprintf(stderr,
                        "ptboot summary: %s needs a number up to %" PRIu64 " (K/M/G taken)\n", a,
                        max);
                flow_opts_free(&fo);
                return 2;
            }
            i++;
            /* 0 means what it says (no such section) or is refused; it
             * never silently means the default (docs/summary.md) */
            const char *zero =
                !strcmp(a, "--top") ? "would leave every table empty (the default is 20)"
                : !strcmp(a, "--depth")
                    ? "leaves no shadow stack to follow calls with (the default is 256)"
                : !strcmp(a, "--arena") ? "leaves no memory for the tables"
                                        : NULL;
            if (!v && zero) {
                fprintf(stderr, "ptboot summary: %s 0 %s\n", a, zero);
                flow_opts_free(&fo);
                return 2;
            }
            if (!strcmp(a, "--top"))
                c.top = (unsigned)v;
            else if (!strcmp(a, "--last") && !v)
                c.flags |= PTD_SUM_F_NO_LAST;
            else if (!strcmp(a, "--last"))
                c.last = (unsigned)v;
            else if (!strcmp(a, "--depth"))
                depth = v;
            else if ((!strcmp(a, "--tree-depth") || !strcmp(a, "--tree-lines")) && !v)
                c.flags |= PTD_SUM_F_NO_TREE;
            else if (!strcmp(a, "--tree-depth"))
                c.tree_depth = (unsigned)v;
            else if (!strcmp(a, "--tree-lines"))
                c.tree_lines = (unsigned)v;
            else if (!strcmp(a, "--tree-permille") && !v)
                c.flags |= PTD_SUM_F_TREE_ALL;
            else if (!strcmp(a, "--tree-permille"))
                c.tree_permille = (unsigned)v;
            else
                arena_size = v, arena_given = 1;
        } else {
            fprintf(stderr, "ptboot summary: unknown option '%s' (see ptboot summary --help)\n", a);
            flow_opts_free(&fo);
            return 2;
        }
    }
    if (!fo.pt) {
        fprintf(
            stderr,
            "ptboot summary: --pt FILE or --capture DIR is required (see ptboot summary --help)\n");
        flow_opts_free(&fo);
        host_capture_free(&cap);
        return 2;
    }
    if (flow_opts_finish(&fo, "ptboot summary") < 0) {
        flow_opts_free(&fo);
        host_capture_free(&cap);
        return 1;
    }
    if (!cap.sb)
        flow_hint_no_code(&fo, "ptboot summary", stderr);
    /* what the capture's sideband says of the trace's ends, before the
     * summary (which cannot tell from the packets) */
    if (cap.sb && cap.sb->trace.wrapped)
        printf(
            "note: trace.wrapped 1: the ring buffer wrapped, the trace holds its newest bytes only "
            "(from the first PSB among them); the start of the run is missing\n");
    if (cap.sb && cap.sb->trace.stopped)
        printf(
            "note: trace.stopped 1: tracing stopped before the run ended (buffer full, a TraceStop "
            "range, or ExitBootServices); the rest of the run is missing\n");
    /* the capture's images after the explicit ones */
    size_t given = c.nmodules;
    for (size_t k = 0; k < cap.nmodules && c.nmodules < MAX_MODULES; k++) {
        mods[c.nmodules].base = cap.modules[k].base;
        mods[c.nmodules].size = cap.modules[k].size;
        mods[c.nmodules].name = cap.modules[k].name;
        c.nmodules++;
    }
    /* then the --elf/--pe files; names from the debug files over all */
    c.nmodules = names_opts_code_modules(&fo, mods, c.nmodules, MAX_MODULES);
    if (names_opts_finish(&names, &cap, &fo, mods, given) == 0 && names_opts_active(&names)) {
        c.name = names_sum_name;
        c.name_ctx = &names;
    }
    tcfg.errata = fo.cfg.errata;
    /* On the host the tables are sized from the trace (the target keeps
     * PTD_SUM_ARENA_SUGGESTED): 16 bytes of arena per trace byte, 1 MiB to
     * 1 GiB; and the shadow stack may take a quarter of it at most. */
    uint64_t frames = depth * sizeof(struct ptd_sum_frame);
    if (!arena_given) {
        arena_size = host_summary_arena_bytes(fo.tsize);
        if (frames <= HOST_SUM_ARENA_MAX / 4 && arena_size < 4 * frames)
            arena_size = 4 * frames;
    }
    if (frames > arena_size / 4) {
        fprintf(stderr,
                "ptboot summary: --depth %" PRIu64 " needs %" PRIu64
                " bytes of shadow stack, more than a "
                "quarter of the %" PRIu64 "-byte arena: at most --depth %" PRIu64
                ", or a larger --arena\n",
                depth, frames, arena_size,
                (uint64_t)(arena_size / 4 / sizeof(struct ptd_sum_frame)));
        flow_opts_free(&fo);
        host_capture_free(&cap);
        return 2;
    }
    c.stack_depth = (unsigned)depth;
    /* zeroed by the kernel as pages are touched: a large arena costs the
     * slots the trace uses, not its size (docs/performance.md) */
    void *arena = calloc(1, arena_size ? arena_size : 1);
    if (!arena) {
        fprintf(stderr, "ptboot summary: out of memory\n");
        flow_opts_free(&fo);
        host_capture_free(&cap);
        return 1;
    }
    c.flags |= PTD_SUM_F_ARENA_ZEROED;
    c.arena = arena;
    c.arena_size = arena_size;
    rc = host_summary_write(&fo, &tcfg, &c, stat, stdout);
    fflush(stdout);
    names_report(&names, stderr, "ptboot summary");
    names_free(&names);
    free(arena);
    flow_opts_free(&fo);
    host_capture_free(&cap);
    return rc;
}
