/* `dump [options] FILE[:FROM[-TO]]`: the packets of a trace file on the
 * stick (or, with --resident, of the resident tracer's trace in this
 * boot, tracing stopped first: efi/resident_capture.h), printed as libipt's ptdump prints them (the same formatter as the
 * host's `ptboot dump`, so the serial log diffs cleanly against either).
 * The file is loaded into firmware pages; the decoder itself allocates
 * nothing. Between the marker lines
 *   ptboot: dump begin file=<path|resident> bytes=<n> from=0x<off>
 *   ptboot: dump end packets=<n> errors=<n> skipped=<n>
 * every line is a ptdump line. */
#include <stdbool.h>
#include <string.h>

#include "decoder/ptd_fmt.h"
#include "decoder/ptd_opts.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/resident/capture.h"
#include "efi/resident/report.h"
#include "efi/platform/volume.h"

/* Traces larger than this are refused rather than exhausting the memory map
 * the firmware still needs to boot. */
#define DUMP_MAX_BYTES (512ull << 20)

static void dump_usage(void)
{
    efi_con_puts("usage: ptboot.efi dump [options] (FILE[:FROM[-TO]] | --resident[:FROM[-TO]])\n"
                 "options (as libipt's ptdump): --cpu none|f/m[/s]");
    for (unsigned i = 0; ptd_opts_dump_flag_name(i); i++)
        efi_con_printf(" %s", ptd_opts_dump_flag_name(i));
    for (unsigned i = 0; ptd_opts_dump_value_name(i); i++)
        efi_con_printf(" %s N", ptd_opts_dump_value_name(i));
    efi_con_puts("\n");
}

int efi_cmd_dump(struct efi_app *app, int argc, char **argv)
{
    struct ptd_fmt_options opt = { .flags = 0 };
    char *file = NULL;
    for (int i = 0; i < argc; i++) {
        uint32_t flag;
        unsigned family, model;
        bool has_cpu;
        const char *why;
        int r;
        if (ptd_opts_dump_flag(argv[i], &flag)) {
            opt.flags |= flag;
        } else if ((r = ptd_opts_dump_value(argv[i], i + 1 < argc ? argv[i + 1] : NULL, &opt,
                                            &why))) {
            /* ptdump's --mtc-freq, --nom-freq, --cpuid-0x15.eax/.ebx (time) */
            if (r < 0) {
                efi_con_printf("ptboot: error: dump: %s: %s\n", argv[i], why);
                return PTB_APP_USAGE;
            }
            i++;
        } else if (!strcmp(argv[i], "--cpu")) {
            /* ptdump's --cpu: the packet and timing errata of that CPU */
            if (i + 1 == argc || !ptd_opts_parse_cpu(argv[i + 1], &has_cpu, &family, &model)) {
                efi_con_puts("ptboot: error: dump: --cpu needs none or f/m[/s]\n");
                return PTB_APP_USAGE;
            }
            ptd_opts_dump_cpu(&opt, has_cpu, family, model);
            i++;
        } else if (!strncmp(argv[i], "--resident", 10) && (!argv[i][10] || argv[i][10] == ':')) {
            /* the resident tracer's trace: a "file" named resident */
            if (file) {
                efi_con_printf("ptboot: error: dump: more than one trace ('%s', '%s')\n", file,
                               argv[i]);
                return PTB_APP_USAGE;
            }
            file = argv[i];
        } else if (argv[i][0] == '-') {
            efi_con_printf("ptboot: error: dump: unknown option '%s'\n", argv[i]);
            dump_usage();
            return PTB_APP_USAGE;
        } else if (file) {
            efi_con_printf("ptboot: error: dump: more than one file ('%s', '%s')\n", file, argv[i]);
            return PTB_APP_USAGE;
        } else {
            file = argv[i];
        }
    }
    if (ptd_opts_dump_check(&opt)) {
        efi_con_printf("ptboot: error: dump: %s\n", ptd_opts_dump_check(&opt));
        return PTB_APP_USAGE;
    }
    if (!file) {
        efi_con_puts("ptboot: error: dump: no trace file given\n");
        dump_usage();
        return PTB_APP_USAGE;
    }
    uint64_t from, to;
    bool has_to;
    ptd_opts_split_range(file, &from, &to, &has_to);

    void *data = NULL;
    size_t len = 0;
    bool resident = file[0] == '-';
    if (resident) {
        struct resident_header *h = resident_find(app->st);
        if (!h) {
            efi_con_puts("ptboot: error: dump: --resident: no resident tracer in this boot\n");
            return PTB_APP_FAILED;
        }
        resident_stop_if_tracing(h);
        const uint8_t *trace;
        resident_trace_bytes(h, &trace, &len);
        data = (void *)trace;
        file = "resident";
    } else {
        enum efi_volume_result r = efi_volume_load(app->image, file, DUMP_MAX_BYTES, &data, &len);
        if (r != PTB_VOLUME_OK) {
            efi_con_printf("ptboot: error: dump: %s: %s\n", file, efi_volume_result_name(r));
            return PTB_APP_FAILED;
        }
    }
    if (!has_to)
        to = len;
    if (from > len || to > len || (has_to && to <= from)) {
        efi_con_printf("ptboot: error: dump: %s: bad range 0x%llx-0x%llx (file has %llu bytes)\n",
                       file, (unsigned long long)from, (unsigned long long)to,
                       (unsigned long long)len);
        efi_volume_free(data, len);
        return PTB_APP_USAGE;
    }

    efi_con_printf("ptboot: dump begin file=%s bytes=%llu from=0x%llx\n", file,
                   (unsigned long long)(to - from), (unsigned long long)from);
    static struct ptd_dump dump; /* ~1 KiB of state: off the stack */
    char line[PTD_FMT_LINE_MAX];
    int n;
    ptd_dump_init(&dump, &opt);
    ptd_dump_feed(&dump, (const uint8_t *)data + from, (size_t)(to - from));
    while ((n = ptd_dump_line(&dump, line, sizeof line)) > 0) {
        efi_con_write(line, (size_t)n);
        efi_con_write("\n", 1);
    }
    if (dump.no_psb)
        efi_con_printf("ptboot: dump: no PSB found in %llu bytes: nothing decoded\n",
                       (unsigned long long)(to - from));
    efi_con_printf("ptboot: dump end packets=%llu errors=%llu skipped=%llu\n",
                   (unsigned long long)dump.packets, (unsigned long long)dump.errors,
                   (unsigned long long)dump.skipped);
    if (!resident)
        efi_volume_free(data, len);
    return n < 0 ? PTB_APP_FAILED : PTB_APP_OK;
}
