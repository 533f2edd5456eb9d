/* `flow`: the instruction flow of a trace, decoded on the target, printed
 * as libipt's ptxed prints it with --no-inst (the same driver as the host's
 * `ptboot flow --no-inst`, decoder/ptd_fmt_flow.h, so the serial log diffs
 * against it line for line). The code comes from page dumps on the stick
 * (--pages PREFIX), or from live memory (--live), read only where the UEFI
 * memory map has RAM: a corrupt trace cannot steer the decoder into MMIO
 * or unmapped space. --resident decodes the resident tracer's trace of this
 * boot instead (tracing stopped first), code from its snapshot and, for the
 * hardware unit, the recorded images still in memory
 * (efi/resident_capture.h), filtered to its range as `resident flow`.
 * It decodes block by block (libipt's block decoder; no disassembly to
 * print), through a block cache from the firmware's pages sized to the
 * code (--no-cache: none; blocks then end only where trace is needed, the
 * same instruction and event lines).
 * Between the marker lines
 *   ptboot: flow begin trace=<file> bytes=<n> pages=<n> live=<0|1>
 *   ptboot: flow end insns=<n> errors=<n>
 * every line is a ptxed line.
 *
 * --bench [N]: decode the whole trace N times (default 3, as --quiet: no
 * flow lines), timing each pass with the TSC, and print the best pass as
 *   bench: target-flow file=<name> insns=<n> minsn_per_s=<x> tsc_hz=<y> tsc_src=<cpuid15|stall>
 * (`make bench`'s bench/target_flow.sh). The TSC's rate comes from CPUID
 * leaf 15h when it gives one (SDM Vol. 3B 18.7.3: TSC Hz = ECX * EBX /
 * EAX), else from counting it across gBS->Stall(100 ms) (UEFI 2.10
 * 7.5.2); under QEMU TCG the TSC follows host time, so both measure
 * wall-clock time. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_opts.h"
#include "decoder/ptd_time.h"
#include "arch/x86/cpuid.h"
#include "efi/app.h"
#include "format/code_image.h"
#include "efi/platform/console.h"
#include "efi/platform/memmap.h"
#include "efi/resident/capture.h"
#include "efi/platform/volume.h"

#define FLOW_MAX_TRACE_BYTES      (512ull << 20)
#define FLOW_MAX_DUMP_BYTES       (1ull << 30)
#define FLOW_MAX_PAGE_SETS        4
#define FLOW_MAX_LIVE_RANGES      512
#define PATH_MAX_CHARS            200
#define FLOW_BENCH_ROUNDS_DEFAULT 3
#define FLOW_BENCH_ROUNDS_MAX     100
#define FLOW_BENCH_STALL_US       100000u /* calibration: 100 ms */
/* The block cache (decoder/ptd_flow.h) for at most this much memory: with
 * it blocks end where libipt's do (the host's --stat and --block:show-blocks
 * lines); without it only where trace is needed. */
#define FLOW_MAX_BCACHE_BYTES (256ull << 20)

struct loaded {
    void *data;
    size_t len;
};

struct flow_args {
    const char *pt;
    const char *pages[FLOW_MAX_PAGE_SETS];
    int npages;
    int live, resident, no_cache;
    unsigned bench;          /* --bench rounds, 0: no bench */
    struct ptd_flow_opts fo; /* ptxed's words (decoder/ptd_opts.h) */
    bool cpu_unknown;        /* --cpu names a CPU the table lacks */
    struct ptd_flow_config cfg;
    struct ptd_time_config tcfg; /* --mtc-freq, --nom-freq, --cpuid-0x15.* */
};

static void flow_usage(void)
{
    efi_con_puts("usage: ptboot.efi flow (--pt FILE (--pages PREFIX | --live) | --resident) "
                 "[--filter LO-HI]\n"
                 "                      [--cpu f/m] [--mode 16|32|64] [--no-inst] [--tail]\n"
                 "                      [--mtc-freq N] [--nom-freq N] [--cpuid-0x15.eax N]\n"
                 "                      [--cpuid-0x15.ebx N] [--no-cache] [--bench [N]]\n"
                 "                      and ptxed's words:\n"
                 "                     ");
    for (unsigned i = 0, col = 22; ptd_opts_flow_word_name(i); i++) {
        const char *w = ptd_opts_flow_word_name(i);
        size_t n = strlen(w) + 3;
        if (col + n > 78) {
            efi_con_puts("\n                     ");
            col = 22;
        }
        efi_con_printf(" [%s]", w);
        col += (unsigned)n;
    }
    efi_con_puts("\n");
}

static int usage_error(const char *what, const char *arg)
{
    efi_con_printf("ptboot: error: flow: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    flow_usage();
    return PTB_APP_USAGE;
}

static int parse(struct flow_args *a, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned family, model;
        bool has_cpu;
        uint64_t lo, hi;
        if (ptd_opts_flow_word(&a->fo, o)) {
            /* ptxed's word: the host's `ptboot flow` takes the same */
        } else if (!strcmp(o, "--tail")) {
            a->fo.fmt |= PTD_FMT_FLOW_TAIL;
        } else if (!strcmp(o, "--no-inst")) {
            /* the target prints IPs only, always */
        } else if (!strcmp(o, "--resident")) {
            a->resident = 1;
        } else if (!strcmp(o, "--live")) {
            a->live = 1;
        } else if (!strcmp(o, "--no-cache")) {
            a->no_cache = 1;
        } else if (!strcmp(o, "--bench")) {
            uint64_t n = FLOW_BENCH_ROUNDS_DEFAULT;
            if (v && v[0] >= '0' && v[0] <= '9') {
                if (!ptd_opts_parse_u64(v, &n) || n == 0 || n > FLOW_BENCH_ROUNDS_MAX)
                    return usage_error("--bench wants 1..100 rounds, not", v);
                i++;
            }
            a->bench = (unsigned)n;
            a->fo.fmt |= PTD_FMT_FLOW_QUIET;
        } else if (!v) {
            return usage_error(o[0] == '-' ? "missing value for" : "unexpected word", o);
        } else if (!strcmp(o, "--pt")) {
            a->pt = v, i++;
        } else if (!strcmp(o, "--pages")) {
            if (a->npages == FLOW_MAX_PAGE_SETS)
                return usage_error("too many --pages", NULL);
            a->pages[a->npages++] = v, i++;
        } else if (!strcmp(o, "--filter")) {
            if (!ptd_opts_parse_filter(v, &lo, &hi))
                return usage_error("--filter wants LO-HI (hex, LO <= HI), not", v);
            if (a->cfg.nfilter == 4)
                return usage_error("at most 4 filter ranges", NULL);
            a->cfg.filter_lo[a->cfg.nfilter] = lo;
            a->cfg.filter_hi[a->cfg.nfilter++] = hi;
            i++;
        } else if (!strcmp(o, "--cpu")) {
            if (!ptd_opts_parse_cpu(v, &has_cpu, &family, &model))
                return usage_error("--cpu wants none or f/m[/s], not", v);
            a->cpu_unknown = has_cpu && !ptd_errata_of_cpu(family, model, false, &a->cfg.errata);
            a->tcfg.errata = a->cfg.errata;
            i++;
        } else if (!strcmp(o, "--mtc-freq") || !strcmp(o, "--nom-freq") ||
                   !strcmp(o, "--cpuid-0x15.eax") || !strcmp(o, "--cpuid-0x15.ebx")) {
            uint64_t n;
            uint64_t max = !strcmp(o, "--mtc-freq")   ? PTD_TIME_MTC_FREQ_MAX
                           : !strcmp(o, "--nom-freq") ? 0xff
                                                      : 0xffffffffu;
            if (!ptd_opts_parse_u64(v, &n) || n > max)
                return usage_error("bad number for", o);
            if (!strcmp(o, "--mtc-freq"))
                a->tcfg.mtc_freq = (uint8_t)n;
            else if (!strcmp(o, "--nom-freq"))
                a->tcfg.nom_freq = (uint8_t)n;
            else if (!strcmp(o, "--cpuid-0x15.eax"))
                a->tcfg.cpuid_0x15_eax = (uint32_t)n;
            else
                a->tcfg.cpuid_0x15_ebx = (uint32_t)n;
            i++;
        } else if (!strcmp(o, "--mode")) {
            if (strcmp(v, "16") && strcmp(v, "32") && strcmp(v, "64"))
                return usage_error("--mode wants 16, 32 or 64, not", v);
            a->cfg.mode = (uint8_t)(v[0] == '1' ? 16 : v[0] == '3' ? 32 : 64);
            i++;
        } else {
            return usage_error("unknown option", o);
        }
    }
    if (a->resident && a->pt)
        return usage_error("--resident or --pt, not both", NULL);
    if (!a->pt && !a->resident)
        return usage_error("--pt FILE (or --resident) is required", NULL);
    /* time is tracked either way (libipt reports its errors); the
     * configuration makes MTC and CYC count */
    a->cfg.time = &a->tcfg;
    a->cfg.flags |= ptd_opts_flow_flags(&a->fo);
    if (!a->npages && !a->live && !a->resident)
        return usage_error("no code: give --pages PREFIX or --live", NULL);
    return PTB_APP_OK;
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* The TSC's frequency: CPUID 15h (ECX = crystal Hz, EBX/EAX = TSC/crystal
 * ratio) when all three are given, else counted across gBS->Stall. */
static uint64_t tsc_hz(const char **src)
{
    x86_cpuid_regs r;
    x86_cpuid_native(NULL, 0, 0, &r);
    if (r.eax >= 0x15) {
        x86_cpuid_native(NULL, 0x15, 0, &r);
        if (r.eax && r.ebx && r.ecx) {
            *src = "cpuid15";
            return (uint64_t)r.ecx * r.ebx / r.eax;
        }
    }
    *src = "stall";
    uint64_t t0 = rdtsc();
    BS->Stall(FLOW_BENCH_STALL_US);
    uint64_t t1 = rdtsc();
    return (t1 - t0) * (1000000u / FLOW_BENCH_STALL_US);
}

/* --bench: the decode alone, a->bench times, the best pass reported. */
static int flow_bench(struct flow_args *a, struct ptd_flow *flow, struct ptd_flow_lines *lines)
{
    const char *src = "";
    uint64_t hz = tsc_hz(&src), best = 0, insns = 0, errors = 0;
    char line[PTD_FMT_FLOW_LINE_MAX];
    enum ptd_flow_line_kind kind;
    int n = 0;
    for (unsigned r = 0; r < a->bench; r++) {
        uint64_t t0 = rdtsc();
        ptd_flow_init(flow, &a->cfg);
        ptd_flow_lines_init(lines, flow, a->fo.fmt);
        while ((n = ptd_flow_lines_next(lines, line, sizeof line, &kind)) > 0)
            ; /* quiet: error lines only, not printed while timing */
        uint64_t dt = rdtsc() - t0;
        if (n < 0)
            break;
        if (!best || dt < best)
            best = dt;
        insns = lines->insns;
        errors = lines->errors;
    }
    if (n < 0 || !best || !hz) {
        efi_con_printf("ptboot: error: flow: --bench: %s\n",
                       n < 0 ? "the decode failed" : "no TSC rate");
        return PTB_APP_FAILED;
    }
    /* millions of instructions per second, to 3 decimals, in integers:
     * insns * hz / best is instructions per second; insns * (hz / 1000)
     * stays below 2^64 up to 6e12 instructions at 3 GHz */
    uint64_t milli = insns * (hz / 1000u) / best;
    /* the file's name without directories and ".pt", as the host bench names it */
    char name[64];
    const char *b = a->pt;
    for (const char *p = a->pt; *p; p++)
        if (*p == '\\' || *p == '/' || *p == ':')
            b = p + 1;
    size_t len = strlen(b);
    if (len > 3 && !strcmp(b + len - 3, ".pt"))
        len -= 3;
    if (len >= sizeof name)
        len = sizeof name - 1;
    memcpy(name, b, len);
    name[len] = 0;
    efi_con_printf(
        "bench: target-flow file=%s insns=%llu minsn_per_s=%llu.%03llu tsc_hz=%llu tsc_src=%s "
        "rounds=%u best_ticks=%llu errors=%llu\n",
        name, (unsigned long long)insns, (unsigned long long)(milli / 1000),
        (unsigned long long)(milli % 1000), (unsigned long long)hz, src, a->bench,
        (unsigned long long)best, (unsigned long long)errors);
    return PTB_APP_OK;
}

static int load(struct efi_app *app, const char *path, uint64_t max, struct loaded *out)
{
    enum efi_volume_result r = efi_volume_load(app->image, path, max, &out->data, &out->len);
    if (r != PTB_VOLUME_OK) {
        efi_con_printf("ptboot: error: flow: %s: %s\n", path, efi_volume_result_name(r));
        return -1;
    }
    return 0;
}

int efi_cmd_flow(struct efi_app *app, int argc, char **argv)
{
    static struct flow_args a;
    static struct loaded trace, dumps[FLOW_MAX_PAGE_SETS], addrs[FLOW_MAX_PAGE_SETS];
    static struct ptd_flow flow;
    static struct ptd_flow_lines lines;
    static struct code_image image;
    static struct mem_range live_storage[FLOW_MAX_LIVE_RANGES];
    static struct mem_ranges live;
    memset(&a, 0, sizeof a);
    memset(&trace, 0, sizeof trace);
    memset(dumps, 0, sizeof dumps);
    memset(addrs, 0, sizeof addrs);
    int status = parse(&a, argc, argv);
    if (status != PTB_APP_OK)
        return status;

    EFI_PHYSICAL_ADDRESS page_table = 0, bcache = 0;
    UINTN page_table_pages = 0, bcache_pages = 0;
    struct resident_capture rc = { .pages = 0 };
    status = PTB_APP_FAILED;
    size_t npages = 0;
    if (a.resident) {
        struct resident_header *h = resident_find(app->st);
        if (!h) {
            efi_con_puts("ptboot: error: flow: --resident: no resident tracer in this boot\n");
            goto out;
        }
        resident_stop_if_tracing(h);
        if (resident_capture_open(&rc, h, "flow"))
            goto out;
        npages = rc.pages;
        if (!a.cfg.nfilter && h->filter_hi) {
            /* the range the unit traced, as `resident flow` decodes it */
            a.cfg.filter_lo[0] = h->filter_lo;
            a.cfg.filter_hi[0] = h->filter_hi;
            a.cfg.nfilter = 1;
        }
        a.pt = "resident";
    } else if (load(app, a.pt, FLOW_MAX_TRACE_BYTES, &trace)) {
        goto out;
    }
    for (int i = 0; i < a.npages; i++) {
        char path[PATH_MAX_CHARS + 8];
        size_t n = strlen(a.pages[i]);
        if (n > PATH_MAX_CHARS) {
            efi_con_printf("ptboot: error: flow: --pages %s: name too long\n", a.pages[i]);
            goto out;
        }
        memcpy(path, a.pages[i], n);
        memcpy(path + n, ".dump", 6);
        if (load(app, path, FLOW_MAX_DUMP_BYTES, &dumps[i]))
            goto out;
        memcpy(path + n, ".addr", 6);
        if (load(app, path, FLOW_MAX_DUMP_BYTES / CODE_PAGE_BYTES * 8, &addrs[i]))
            goto out;
        npages += addrs[i].len / 8;
    }
    /* The page table from the firmware's pages, sized to the dumps. */
    page_table_pages = (npages * sizeof(struct code_page) + 4095) / 4096 + 1;
    if (EFI_ERROR(
            BS->AllocatePages(AllocateAnyPages, EfiLoaderData, page_table_pages, &page_table))) {
        efi_con_printf("ptboot: error: flow: no memory for %llu pages\n",
                       (unsigned long long)npages);
        page_table_pages = 0;
        goto out;
    }
    code_image_init(&image, (struct code_page *)(UINTN)page_table, npages);
    if (rc.pages &&
        code_image_add_dump(&image, rc.code_dump, rc.pages * CODE_PAGE_BYTES,
                            (const uint8_t *)rc.code_addr, rc.pages * sizeof *rc.code_addr)) {
        efi_con_puts("ptboot: error: flow: --resident: the capture's code does not fit\n");
        goto out;
    }
    for (int i = 0; i < a.npages; i++) {
        int err =
            code_image_add_dump(&image, dumps[i].data, dumps[i].len, addrs[i].data, addrs[i].len);
        if (err) {
            efi_con_printf("ptboot: error: flow: --pages %s: %s\n", a.pages[i],
                           code_image_strerror(err));
            goto out;
        }
    }
    int err = code_image_finish(&image);
    if (err) {
        efi_con_printf("ptboot: error: flow: %s\n", code_image_strerror(err));
        goto out;
    }
    if (a.live) {
        UINTN descriptors;
        mem_ranges_init(&live, live_storage, FLOW_MAX_LIVE_RANGES);
        EFI_STATUS s = efi_memmap_readable(&live, &descriptors);
        if (EFI_ERROR(s) && s != EFI_BUFFER_TOO_SMALL) {
            efi_con_printf("ptboot: error: flow: no memory map (status 0x%llx)\n",
                           (unsigned long long)s);
            goto out;
        }
        image.live = &live;
    }

    a.cfg.trace = a.resident ? rc.trace : trace.data;
    a.cfg.size = a.resident ? rc.trace_len : trace.len;
    a.cfg.read = code_image_read;
    a.cfg.map = code_image_map; /* dump pages in place; live memory is copied */
    a.cfg.ctx = &image;
    if (!a.no_cache) {
        /* the block cache (blocks end where libipt's do; --no-cache: only
         * where trace is needed); every page its own section at worst,
         * entries made only where code runs */
        uint64_t bytes =
            PTD_FLOW_BCACHE_BYTES((uint64_t)image.count * CODE_PAGE_BYTES, image.count);
        if (bytes <= FLOW_MAX_BCACHE_BYTES &&
            !EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, (bytes + 4095) / 4096,
                                         &bcache))) {
            bcache_pages = (UINTN)((bytes + 4095) / 4096);
            a.cfg.bcache = (void *)(UINTN)bcache;
            a.cfg.bcache_size = (size_t)bytes;
        }
    }
    if (a.bench) {
        status = flow_bench(&a, &flow, &lines);
        goto out;
    }
    ptd_flow_init(&flow, &a.cfg);
    ptd_flow_lines_init(&lines, &flow, a.fo.fmt);
    lines.cpu_unknown = a.cpu_unknown;
    efi_con_printf("ptboot: flow begin trace=%s bytes=%llu pages=%llu live=%d\n", a.pt,
                   (unsigned long long)a.cfg.size, (unsigned long long)image.count, a.live);
    char line[PTD_FMT_FLOW_LINE_MAX];
    enum ptd_flow_line_kind kind;
    int n;
    while ((n = ptd_flow_lines_next(&lines, line, sizeof line, &kind)) > 0) {
        efi_con_write(line, (size_t)n);
        efi_con_write("\n", 1);
    }
    if (a.fo.stat) {
        bool insns, blocks;
        ptd_opts_flow_stats(&a.fo, &insns, &blocks);
        if (insns)
            efi_con_printf("insn: %llu.\n", (unsigned long long)lines.insns);
        if (blocks)
            efi_con_printf("blocks:\t%llu.\n", (unsigned long long)lines.blocks);
    }
    efi_con_printf("ptboot: flow end insns=%llu errors=%llu", (unsigned long long)lines.insns,
                   (unsigned long long)lines.errors);
    if (a.fo.fmt & PTD_FMT_FLOW_TAIL)
        efi_con_printf(" tail=%llu tail_end=%s", (unsigned long long)lines.tail_insns,
                       ptd_tail_end_name(lines.tail.end));
    efi_con_puts("\n");
    status = n < 0 ? PTB_APP_FAILED : PTB_APP_OK;
out:
    resident_capture_close(&rc);
    if (page_table_pages)
        BS->FreePages(page_table, page_table_pages);
    if (bcache_pages)
        BS->FreePages(bcache, bcache_pages);
    efi_volume_free(trace.data, trace.len);
    for (int i = 0; i < FLOW_MAX_PAGE_SETS; i++) {
        efi_volume_free(dumps[i].data, dumps[i].len);
        efi_volume_free(addrs[i].data, addrs[i].len);
    }
    return status;
}
