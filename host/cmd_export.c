/* `ptboot export`: a trace's calls as Chrome Trace Event JSON, folded
 * stacks or a self-contained HTML report (host/export/export.h,
 * docs/export.md), from a capture directory or from --pt and code options,
 * with names from --symbols. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder/ptd_opts.h"
#include "host/capture.h"
#include "host/cmd_summary.h"
#include "host/commands.h"
#include "host/decode_opts.h"
#include "host/export/export.h"
#include "host/sym/names_opts.h"

#define PROG               "ptboot export"
#define MAX_MODULES        4096
#define MAX_CPUS           256
#define EXPORT_STACK_DEPTH 1024 /* the summary's shadow stack for an export */

static void usage(FILE *to)
{
    fprintf(to,
            "usage: ptboot export --capture DIR --format chrome|folded|html -o FILE [options]\n"
            "       ptboot export --pt FILE [code options] --format F -o FILE [options]\n"
            "A trace's calls for timeline and flame-graph viewers (docs/export.md):\n"
            "  chrome   Chrome Trace Event JSON (Perfetto UI, chrome://tracing): a track per\n"
            "           CPU, a nested slice per call, instants for errors, overflows,\n"
            "           enables/disables and image loads\n"
            "  folded   folded stacks \"a;b;c N\" (flamegraph.pl, inferno, speedscope)\n"
            "  html     one self-contained page: flame graph, time per image, functions,\n"
            "           call tree, errors and gaps, the capture's facts\n"
            "Trace and code (as ptboot flow): --capture DIR, or --pt FILE with --pages PREFIX,\n"
            "  --raw FILE[:FROM[-TO]]:BASE, --elf FILE[:BASE], --pe FILE[:BASE], --filter LO-HI,\n"
            "  --filter:addrN_cfg/_a/_b V, --cpu F/M[/S]|none, --mode 16|32|64, --no-cache;\n"
            "  timing: --mtc-freq N --nom-freq N --cpuid-0x15.eax N --cpuid-0x15.ebx N\n"
            "  (a capture's trace-cpuN.pt files, listed in its cpus.txt, are exported too)\n"
            "Names:\n"
            "  --symbols PATH             debug files (a file, or a directory searched)\n"
            "  --module BASE:SIZE:NAME    an image (hex base and size), repeatable\n"
            "Output:\n"
            "  --format chrome|folded|html\n"
            "  -o FILE, --output FILE     where to write (- for stdout)\n"
            "  --weight insns|ticks       folded and html weights (insns)\n"
            "  --clock auto|tsc|insns     chrome timestamps: the TSC when the trace has time\n"
            "                             (auto), or instruction counts\n"
            "  --tsc-hz N                 the TSC's frequency (else from the sideband's CPUID 15h\n"
            "                             or nominal ratio; unknown: timestamps in ticks)\n"
            "  --title TEXT               the report's and timeline's title\n"
            "Exit status: 0 written (decode errors are in the export), 1 bad input or output\n"
            "file, 2 bad usage.\n");
}

struct cpu_trace {
    unsigned n;
    char path[4096];
};

/* The traced processors of a capture (its cpus.txt: "cpu n=N ... traced=1
 * file=NAME ..."); the BSP's trace.pt is the one already loaded. Returns
 * how many, at least the BSP. */
static unsigned capture_cpus(const struct host_capture *cap, struct cpu_trace *cpus)
{
    char dir[4096], path[4200], line[512];
    snprintf(dir, sizeof dir, "%s", cap->trace_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    unsigned k = 0;
    cpus[k].n = 0;
    cpus[k++].path[0] = '\0'; /* the BSP: fo's trace */
    snprintf(path, sizeof path, "%s/cpus.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return k;
    while (fgets(line, sizeof line, f) && k < MAX_CPUS) {
        unsigned n, bsp, traced;
        char file[256];
        if (sscanf(line, "cpu n=%u bsp=%u traced=%u file=%255s", &n, &bsp, &traced, file) == 4 &&
            traced) {
            if (bsp) {
                cpus[0].n = n;
                continue;
            }
            cpus[k].n = n;
            snprintf(cpus[k].path, sizeof cpus[k].path, "%s/%s", dir, file);
            k++;
        }
    }
    fclose(f);
    return k;
}

static uint64_t sideband_tsc_hz(const struct sideband *sb)
{
    /* CPUID 15h: TSC = crystal * EBX / EAX (SDM Vol. 3 18.7.3); else the
     * nominal ratio times the 100 MHz bus clock (MSR_PLATFORM_INFO[15:8]) */
    if (sb->cpu.cpuid15_eax && sb->cpu.cpuid15_ebx && sb->cpu.cpuid15_ecx)
        return (uint64_t)sb->cpu.cpuid15_ecx * sb->cpu.cpuid15_ebx / sb->cpu.cpuid15_eax;
    if (sb->cpu.nom_freq_valid && sb->cpu.nom_freq)
        return (uint64_t)sb->cpu.nom_freq * 100000000u;
    return 0;
}

int host_cmd_export(int argc, char **argv)
{
    static struct ptd_sum_module mods[MAX_MODULES];
    static struct ptd_time_config tcfg;
    static struct host_capture cap;
    static struct names names;
    static struct export x;
    static struct cpu_trace cpus[MAX_CPUS];
    struct flow_opts fo;
    struct ptd_sum_config c;
    const char *outpath = NULL, *format = NULL;
    uint64_t tsc_hz = 0;
    int rc = 0;

    memset(&c, 0, sizeof c);
    memset(&tcfg, 0, sizeof tcfg);
    memset(&x, 0, sizeof x);
    c.modules = mods;
    flow_opts_init(&fo);
    names_init(&names);
    export_stacks_init(&x.stacks);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int r = host_decode_opts_take(&fo, &tcfg, &cap, argc, argv, &i, PROG);
        if (r == 0)
            r = names_opts_take(&names, argc, argv, &i, PROG);
        if (r < 0) {
            rc = -r;
            goto out;
        }
        if (r > 0)
            continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            goto out;
        }
        if (strcmp(a, "--format") && strcmp(a, "-o") && strcmp(a, "--output") &&
            strcmp(a, "--weight") && strcmp(a, "--clock") && strcmp(a, "--tsc-hz") &&
            strcmp(a, "--title") && strcmp(a, "--module")) {
            fprintf(stderr, PROG ": unknown option '%s' (see ptboot export --help)\n", a);
            rc = 2;
            goto out;
        }
        if (!v) {
            fprintf(stderr, PROG ": %s needs an argument\n", a);
            rc = 2;
            goto out;
        }
        i++;
        if (!strcmp(a, "--format")) {
            format = v;
            if (!strcmp(v, "chrome"))
                x.format = EXPORT_CHROME;
            else if (!strcmp(v, "folded"))
                x.format = EXPORT_FOLDED;
            else if (!strcmp(v, "html"))
                x.format = EXPORT_HTML;
            else {
                fprintf(stderr, PROG ": --format %s: want chrome, folded or html\n", v);
                rc = 2;
                goto out;
            }
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            outpath = v;
        } else if (!strcmp(a, "--weight")) {
            if (!strcmp(v, "insns"))
                x.weight = EXPORT_W_INSNS;
            else if (!strcmp(v, "ticks"))
                x.weight = EXPORT_W_TICKS;
            else {
                fprintf(stderr, PROG ": --weight %s: want insns or ticks\n", v);
                rc = 2;
                goto out;
            }
        } else if (!strcmp(a, "--clock")) {
            if (!strcmp(v, "auto"))
                x.clock = EXPORT_CLOCK_AUTO;
            else if (!strcmp(v, "tsc"))
                x.clock = EXPORT_CLOCK_TSC;
            else if (!strcmp(v, "insns"))
                x.clock = EXPORT_CLOCK_INSNS;
            else {
                fprintf(stderr, PROG ": --clock %s: want auto, tsc or insns\n", v);
                rc = 2;
                goto out;
            }
        } else if (!strcmp(a, "--tsc-hz")) {
            if (!ptd_opts_parse_u64(v, &tsc_hz) || !tsc_hz) {
                fprintf(stderr, PROG ": --tsc-hz %s: want a frequency in Hz (not 0)\n", v);
                rc = 2;
                goto out;
            }
        } else if (!strcmp(a, "--title")) {
            x.title = v;
        } else { /* --module */
            if (c.nmodules >= MAX_MODULES || host_summary_parse_module(v, &mods[c.nmodules]) < 0) {
                fprintf(stderr, PROG ": --module wants BASE:SIZE:NAME (hex, up to %d)\n",
                        MAX_MODULES);
                rc = 2;
                goto out;
            }
            c.nmodules++;
        }
    }
    if (!fo.pt || !x.format || !outpath) {
        fprintf(stderr, PROG ": %s is required (see ptboot export --help)\n",
                !fo.pt    ? "--pt FILE or --capture DIR"
                : !format ? "--format chrome|folded|html"
                          : "-o FILE");
        rc = 2;
        goto out;
    }
    if (flow_opts_finish(&fo, PROG) < 0) {
        rc = 1;
        goto out;
    }
    /* the modules as the summary has them: given, the capture's, the files */
    size_t given = c.nmodules;
    for (size_t k = 0; k < cap.nmodules && c.nmodules < MAX_MODULES; k++) {
        mods[c.nmodules].base = cap.modules[k].base;
        mods[c.nmodules].size = cap.modules[k].size;
        mods[c.nmodules].name = cap.modules[k].name;
        c.nmodules++;
    }
    c.nmodules = names_opts_code_modules(&fo, mods, c.nmodules, MAX_MODULES);
    if (names_opts_finish(&names, &cap, &fo, mods, given) < 0) {
        fprintf(stderr, PROG ": out of memory\n");
        rc = 1;
        goto out;
    }
    if (names_opts_active(&names)) {
        c.name = names_sum_name;
        c.name_ctx = &names;
    }
    c.stack_depth = EXPORT_STACK_DEPTH;
    tcfg.errata = fo.cfg.errata;

    x.out = strcmp(outpath, "-") ? fopen(outpath, "w") : stdout;
    if (!x.out) {
        fprintf(stderr, PROG ": %s: %s\n", outpath, strerror(errno));
        rc = 1;
        goto out;
    }
    static char obuf[1 << 20];
    setvbuf(x.out, obuf, _IOFBF, sizeof obuf);
    x.names = &names;
    x.sb = cap.sb;
    x.tsc_hz = tsc_hz ? tsc_hz : cap.sb ? sideband_tsc_hz(cap.sb) : 0;
    x.ncpus = cap.sb ? capture_cpus(&cap, cpus) : 1;
    if (!cap.sb)
        cpus[0].n = 0, cpus[0].path[0] = '\0';

    struct ptd_flow *f = malloc(sizeof *f);
    /* the summary's tables sized from the largest trace, as `summary` does */
    /* (the loaded trace's size: a pipe's is known only once read) */
    uint64_t biggest = fo.tsize;
    struct stat st;
    for (unsigned k = 0; k < x.ncpus; k++) {
        const char *path = cpus[k].path;
        if (path[0] && stat(path, &st) == 0 && (uint64_t)st.st_size > biggest)
            biggest = (uint64_t)st.st_size;
    }
    size_t arena_size = host_summary_arena_bytes(biggest);
    /* zeroed pages: the first walk's tables cost what it uses (later
     * walks clear the arena the first one used) */
    void *arena = calloc(1, arena_size), *bcache = malloc(FLOW_CACHE_BYTES);
    if (!f || !arena || !bcache) {
        fprintf(stderr, PROG ": out of memory\n");
        free(f), free(arena), free(bcache);
        rc = 1;
        goto out;
    }
    if (x.format == EXPORT_CHROME)
        export_chrome_begin(&x);
    for (unsigned k = 0; k < x.ncpus && rc == 0; k++) {
        struct input_file trace = { 0 };
        char err[4400];
        struct ptd_flow_config fcfg = fo.cfg;
        x.trace_in = &fo.trace_file;
        if (cpus[k].path[0]) {
            if (input_file_open(&trace, cpus[k].path, input_file_how(), err, sizeof err) < 0) {
                fprintf(stderr, PROG ": %s\n", err);
                rc = 1;
                break;
            }
            fcfg.trace = trace.data;
            fcfg.size = trace.size;
            x.trace_in = &trace;
        }
        if (!fo.no_cache) {
            fcfg.bcache = bcache;
            fcfg.bcache_size = FLOW_CACHE_BYTES;
            fcfg.flags &= ~(unsigned)PTD_FLOW_F_BCACHE_ZEROED; /* malloc'ed */
        }
        fcfg.time = &tcfg;
        ptd_flow_init(f, &fcfg);
        struct ptd_sum_config cc = c;
        cc.arena = arena;
        if (k == 0)
            cc.flags |= PTD_SUM_F_ARENA_ZEROED;
        cc.arena_size = arena_size;
        if (export_walk(&x, cpus[k].n, f, &cc) < 0) {
            fprintf(stderr, PROG ": out of memory\n");
            rc = 1;
        }
        x.trace_in = NULL;
        if (trace.data)
            input_file_close(&trace);
    }
    free(f), free(arena), free(bcache);
    if (rc == 0) {
        if (x.format == EXPORT_CHROME)
            export_chrome_end(&x);
        else if (x.format == EXPORT_FOLDED)
            rc = export_folded_write(&x) < 0 ? 1 : 0;
        else
            rc = export_html_write(&x) < 0 ? 1 : 0;
    }
    if (fflush(x.out) != 0 || ferror(x.out)) {
        fprintf(stderr, PROG ": %s: write error\n", outpath);
        rc = 1;
    }
    if (x.out != stdout)
        fclose(x.out);
    if (rc == 0)
        fprintf(stderr,
                PROG ": %s: %s, %" PRIu64 " instruction%s, %" PRIu64
                     " call%s, %u stack%s, %u CPU%s\n",
                outpath, format, x.insns, x.insns == 1 ? "" : "s", x.calls, x.calls == 1 ? "" : "s",
                x.stacks.n, x.stacks.n == 1 ? "" : "s", x.ncpus, x.ncpus == 1 ? "" : "s");
    names_report(&names, stderr, PROG);
out:
    export_stacks_free(&x.stacks);
    for (uint32_t k = 0; k < x.nn; k++)
        free(x.nv[k].name);
    free(x.nv);
    free(x.nhash);
    free(x.stack);
    free(x.img);
    free(x.summary_text);
    names_free(&names);
    flow_opts_free(&fo);
    host_capture_free(&cap);
    return rc;
}
