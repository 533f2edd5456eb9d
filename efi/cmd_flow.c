/* `flow`: the instruction flow of a trace, decoded on the target, printed
 * as libipt's ptxed prints it with --no-inst (the same driver as the host's
 * `ptboot flow --no-inst`, decoder/ptd_fmt_flow.h, so the serial log diffs
 * against it line for line). The code comes from page dumps on the stick
 * (--pages PREFIX), or from live memory (--live), read only where the UEFI
 * memory map has RAM: a corrupt trace cannot steer the decoder into MMIO
 * or unmapped space. Between the marker lines
 *   ptboot: flow begin trace=<file> bytes=<n> pages=<n> live=<0|1>
 *   ptboot: flow end insns=<n> errors=<n>
 * every line is a ptxed line. */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "decoder/ptd_flow.h"
#include "decoder/ptd_fmt_flow.h"
#include "decoder/ptd_opts.h"
#include "decoder/ptd_time.h"
#include "efi/app.h"
#include "efi/code_image.h"
#include "efi/console.h"
#include "efi/memmap.h"
#include "efi/volume.h"

#define FLOW_MAX_TRACE_BYTES (512ull << 20)
#define FLOW_MAX_DUMP_BYTES (1ull << 30)
#define FLOW_MAX_PAGE_SETS 4
#define FLOW_MAX_LIVE_RANGES 512
#define PATH_MAX_CHARS 200

struct loaded {
    void *data;
    size_t len;
};

struct flow_args {
    const char *pt;
    const char *pages[FLOW_MAX_PAGE_SETS];
    int npages;
    int live, stat;
    uint32_t fmt_flags;
    struct ptd_flow_config cfg;
    struct ptd_time_config tcfg; /* --mtc-freq, --nom-freq, --cpuid-0x15.* */
};

static void flow_usage(void)
{
    efi_con_puts("usage: ptboot.efi flow --pt FILE (--pages PREFIX | --live) [--filter LO-HI]\n"
                 "                      [--cpu f/m] [--mode 16|32|64] [--event:ip] [--offset]\n"
                 "                      [--quiet] [--stat] [--no-inst] [--time] [--event:time]\n"
                 "                      [--mtc-freq N] [--nom-freq N] [--cpuid-0x15.eax N]\n"
                 "                      [--cpuid-0x15.ebx N]\n");
}

static int usage_error(const char *what, const char *arg)
{
    efi_con_printf("ptboot: error: flow: %s%s%s\n", what, arg ? " " : "", arg ? arg : "");
    flow_usage();
    return EFI_APP_USAGE;
}

static int parse(struct flow_args *a, int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        unsigned family, model;
        uint64_t lo, hi;
        if (!strcmp(o, "--event:ip")) {
            a->fmt_flags |= PTD_FMT_FLOW_EVENT_IP;
        } else if (!strcmp(o, "--offset")) {
            a->fmt_flags |= PTD_FMT_FLOW_OFFSET;
        } else if (!strcmp(o, "--quiet")) {
            a->fmt_flags |= PTD_FMT_FLOW_QUIET;
        } else if (!strcmp(o, "--stat")) {
            a->stat = 1;
        } else if (!strcmp(o, "--time")) {
            a->fmt_flags |= PTD_FMT_FLOW_TIME;
        } else if (!strcmp(o, "--event:time")) {
            a->fmt_flags |= PTD_FMT_FLOW_EVENT_TIME;
        } else if (!strcmp(o, "--no-inst")) {
            /* the target prints IPs only, always */
        } else if (!strcmp(o, "--live")) {
            a->live = 1;
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
            if (!ptd_opts_parse_cpu(v, &family, &model))
                return usage_error("--cpu wants none or f/m[/s], not", v);
            a->cfg.errata = family ? ptd_flow_errata_for_cpu(family, model) : 0;
            a->tcfg.errata = family ? ptd_time_errata_for_cpu(family, model) : 0;
            i++;
        } else if (!strcmp(o, "--mtc-freq") || !strcmp(o, "--nom-freq") ||
                   !strcmp(o, "--cpuid-0x15.eax") || !strcmp(o, "--cpuid-0x15.ebx")) {
            uint64_t n;
            uint64_t max = !strcmp(o, "--mtc-freq") ? PTD_TIME_MTC_FREQ_MAX
                           : !strcmp(o, "--nom-freq") ? 0xff : 0xffffffffu;
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
    if (!a->pt)
        return usage_error("--pt FILE is required", NULL);
    if (a->fmt_flags & (PTD_FMT_FLOW_TIME | PTD_FMT_FLOW_EVENT_TIME))
        a->cfg.time = &a->tcfg;
    if (!a->npages && !a->live)
        return usage_error("no code: give --pages PREFIX or --live", NULL);
    return EFI_APP_OK;
}

static int load(struct efi_app *app, const char *path, uint64_t max, struct loaded *out)
{
    enum efi_volume_result r = efi_volume_load(app->image, path, max, &out->data, &out->len);
    if (r != EFI_VOLUME_OK) {
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
    if (status != EFI_APP_OK)
        return status;

    EFI_PHYSICAL_ADDRESS page_table = 0;
    UINTN page_table_pages = 0;
    status = EFI_APP_FAILED;
    if (load(app, a.pt, FLOW_MAX_TRACE_BYTES, &trace))
        goto out;
    size_t npages = 0;
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
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, page_table_pages, &page_table))) {
        efi_con_printf("ptboot: error: flow: no memory for %llu pages\n", (unsigned long long)npages);
        page_table_pages = 0;
        goto out;
    }
    code_image_init(&image, (struct code_page *)(UINTN)page_table, npages);
    for (int i = 0; i < a.npages; i++) {
        int err = code_image_add_dump(&image, dumps[i].data, dumps[i].len, addrs[i].data, addrs[i].len);
        if (err) {
            efi_con_printf("ptboot: error: flow: --pages %s: %s\n", a.pages[i], code_image_strerror(err));
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
            efi_con_printf("ptboot: error: flow: no memory map (status 0x%llx)\n", (unsigned long long)s);
            goto out;
        }
        image.live = &live;
    }

    a.cfg.trace = trace.data;
    a.cfg.size = trace.len;
    a.cfg.read = code_image_read;
    a.cfg.ctx = &image;
    ptd_flow_init(&flow, &a.cfg);
    ptd_flow_lines_init(&lines, &flow, a.fmt_flags);
    efi_con_printf("ptboot: flow begin trace=%s bytes=%llu pages=%llu live=%d\n", a.pt,
                   (unsigned long long)trace.len, (unsigned long long)image.count, a.live);
    char line[PTD_FMT_FLOW_LINE_MAX];
    enum ptd_flow_line_kind kind;
    int n;
    while ((n = ptd_flow_lines_next(&lines, line, sizeof line, &kind)) > 0) {
        efi_con_write(line, (size_t)n);
        efi_con_write("\n", 1);
    }
    if (a.stat)
        efi_con_printf("insn: %llu.\n", (unsigned long long)lines.insns);
    efi_con_printf("ptboot: flow end insns=%llu errors=%llu\n", (unsigned long long)lines.insns,
                   (unsigned long long)lines.errors);
    status = n < 0 ? EFI_APP_FAILED : EFI_APP_OK;
out:
    if (page_table_pages)
        BS->FreePages(page_table, page_table_pages);
    efi_volume_free(trace.data, trace.len);
    for (int i = 0; i < FLOW_MAX_PAGE_SETS; i++) {
        efi_volume_free(dumps[i].data, dumps[i].len);
        efi_volume_free(addrs[i].data, addrs[i].len);
    }
    return status;
}
