/* `ptboot dump [options] FILE`: packet dump in libipt ptdump's format, over
 * the same formatter the UEFI app uses (decoder/ptd_fmt.c). Options follow
 * ptdump's so scripts written for it keep working. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_fmt.h"
#include "decoder/ptd_opts.h"
#include "host/commands.h"
#include "host/cmd_dump.h"
#include "host/input_file.h"
#include "host/progress.h"

static void dump_usage(FILE *out)
{
    fprintf(
        out,
        "usage: ptboot dump [<options>] <ptfile>[:<from>[-<to>]]\n"
        "\n"
        "Prints the packets of an Intel PT trace, one per line, in the format of\n"
        "libipt's ptdump (so the two can be diffed).\n"
        "\n"
        "options:\n"
        "  --help|-h                 this text.\n"
        "  --no-sync                 don't try to sync to the first PSB, assume a valid\n"
        "                            sync point at the beginning of the trace.\n"
        "  --quiet                   don't print anything but errors.\n"
        "  --no-pad                  don't show PAD packets.\n"
        "  --no-timing               don't show timing packets.\n"
        "  --no-cyc                  don't show CYC packets.\n"
        "  --no-offset               don't show the offset as the first column.\n"
        "  --raw                     show raw packet bytes.\n"
        "  --lastip                  show last IP updates on packets with IP payloads.\n"
        "  --exec-mode               show the current execution mode on mode.exec packets.\n"
        "  --stats                   print packet/error/skipped-byte counts to stderr.\n"
        "  --libipt-2.0              decode as libipt 2.0's ptdump: only the packets it\n"
        "                            knows (CFE, EVD, BBP, BEP, TRIG are unknown opcodes),\n"
        "                            its errata lists, PWRE's HW bit as --libipt-pwre.\n"
        "  --libipt-pwre             read PWRE's HW flag from bit 3, as libipt does (the\n"
        "                            SDM, and by default ptboot, have it in bit 7).\n"
        "  --time                    show the estimated TSC on timing packets.\n"
        "  --tcal                    show time calibration information.\n"
        "  --time-delta              show timing information as delta.\n"
        "  --no-tcal                 skip timing calibration.\n"
        "                            this will result in errors when CYC packets are encountered.\n"
        "  --no-wall-clock           suppress the no-time error and print relative time.\n"
        "  --keep-tcal-on-ovf        preserve timing calibration on overflow.\n"
        "  --cpu none|f/m[/s]        decode with that CPU's errata workarounds (SKD007,\n"
        "                            SKZ84 for packets, SKL168 for timing), as ptdump does;\n"
        "                            a CPU libipt does not know: a diagnostic, no errata.\n"
        "  --mtc-freq <n>            set the MTC frequency (IA32_RTIT_CTL[17:14]) to <n>.\n"
        "  --nom-freq <n>            set the nominal frequency (MSR_PLATFORM_INFO[15:8]) to <n>.\n"
        "  --cpuid-0x15.eax <n>      set the value of cpuid[0x15].eax.\n"
        "  --cpuid-0x15.ebx <n>      set the value of cpuid[0x15].ebx.\n"
        "  --filter:addr<N>_cfg/_a/_b <n>\n"
        "                            accepted for ptdump compatibility (no effect on a dump).\n"
        "  <ptfile>[:<from>[-<to>]]  the trace; an optional byte offset or range.\n");
}

static int parse_u64(const char *prog, const char *opt, const char *arg, uint64_t max,
                     uint64_t *out)
{
    if (!arg || !*arg || (arg[0] == '-' && arg[1] == '-')) {
        fprintf(stderr, "%s: %s: missing argument.\n", prog, opt);
        return -1;
    }
    if (!ptd_opts_parse_u64(arg, out)) {
        fprintf(stderr, "%s: %s: bad argument: %s.\n", prog, opt, arg);
        return -1;
    }
    if (*out > max) {
        fprintf(stderr, "%s: %s: value too big: %s.\n", prog, opt, arg);
        return -1;
    }
    return 0;
}

int host_load_file(const char *prog, const char *path, uint8_t **buf, size_t *size)
{
    struct input_file f;
    char err[4400];
    if (input_file_open(&f, path, INPUT_READ, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    *buf = f.data;
    *size = f.size;
    return 0;
}

int host_cmd_dump(int argc, char **argv)
{
    const char *prog = "ptboot dump";
    struct ptd_fmt_options opt = { 0 };
    char *file = NULL;
    int stats = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        uint64_t v;

        if (a[0] != '-') {
            if (file) {
                fprintf(stderr, "%s: more than one trace file: %s and %s\n", prog, file, a);
                return 2;
            }
            file = argv[i];
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            dump_usage(stdout);
            return 0;
        }
        uint32_t flag;
        const char *why;
        int r;
        if (ptd_opts_dump_flag(a, &flag)) /* the option words the UEFI app takes */
            opt.flags |= flag;
        else if ((r = ptd_opts_dump_value(a, i + 1 < argc ? argv[i + 1] : NULL, &opt, &why)) != 0) {
            if (r < 0) {
                int show = i + 1 < argc && strcmp(why, "missing argument");
                fprintf(stderr, "%s: %s: %s%s%s.\n", prog, a, why, show ? ": " : "",
                        show ? argv[i + 1] : "");
                return 2;
            }
            i++;
        } else if (!strcmp(a, "--stats"))
            stats = 1;
        else if (!strcmp(a, "--cpu")) {
            /* ptdump: decode with the errata workarounds of that CPU */
            const char *c = i + 1 < argc ? argv[++i] : NULL;
            unsigned fam, mod;
            bool has_cpu;
            if (!c) {
                fprintf(stderr, "%s: --cpu: missing argument.\n", prog);
                return 2;
            }
            if (ptd_opts_parse_cpu(c, &has_cpu, &fam, &mod)) {
                ptd_opts_dump_cpu(&opt, has_cpu, fam, mod);
            } else {
                fprintf(stderr, "%s: cpu must be specified as f/m[/s]\n", prog);
                return 2;
            }
        } else if (!strncmp(a, "--filter:addr", 13) &&
                   (strstr(a, "_cfg") || strstr(a, "_a") || strstr(a, "_b"))) {
            if (parse_u64(prog, a, i + 1 < argc ? argv[++i] : NULL, UINT64_MAX, &v) < 0)
                return 2;
        } else {
            fprintf(stderr, "%s: unknown option: %s\n", prog, a);
            fprintf(stderr, "try 'ptboot dump --help'\n");
            return 2;
        }
    }
    if (ptd_opts_dump_check(&opt)) {
        fprintf(stderr, "%s: %s\n", prog, ptd_opts_dump_check(&opt));
        return 2;
    }
    if (!file) {
        fprintf(stderr, "%s: no trace file given\n", prog);
        fprintf(stderr, "usage: ptboot dump [<options>] <ptfile>   (--help for the options)\n");
        return 2;
    }

    uint64_t from, to;
    bool has_to;
    uint8_t *buf;
    size_t size;
    struct input_file in;
    char err[4400];
    ptd_opts_split_range(file, &from, &to, &has_to);
    if (input_file_open(&in, file, input_file_how(), err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    buf = in.data;
    size = in.size;
    if (from >= size && (from || size)) {
        fprintf(stderr, "%s: bad offset 0x%llx into %s (%zu bytes)\n", prog,
                (unsigned long long)from, file, size);
        input_file_close(&in);
        return 1;
    }
    if (has_to && (to <= from || to > size)) {
        fprintf(stderr, "%s: bad range 0x%llx-0x%llx in %s (%zu bytes)\n", prog,
                (unsigned long long)from, (unsigned long long)to, file, size);
        input_file_close(&in);
        return 1;
    }

    struct ptd_dump *d = malloc(sizeof *d);
    char line[PTD_FMT_LINE_MAX];
    int n;
    if (!d) {
        input_file_close(&in);
        return 1;
    }
    ptd_dump_init(d, &opt);
    ptd_dump_feed(d, buf + from, (size_t)((has_to ? to : size) - from));
    struct progress pr;
    progress_start(&pr, prog, (uint64_t)((has_to ? to : size) - from));
    progress_input(&pr, &in, from);
    while ((n = ptd_dump_line(d, line, sizeof line)) > 0) {
        fwrite(line, 1, (size_t)n, stdout);
        fputc('\n', stdout);
        progress_update(&pr, ptd_pkt_offset(&d->dec));
    }
    progress_end(&pr);
    if (d->no_psb) {
        unsigned long long n = (unsigned long long)((has_to ? to : size) - from);
        fprintf(
            stderr,
            "%s: no PSB found in %llu byte%s: nothing decoded (--no-sync decodes from the first "
            "byte)\n",
            prog, n, n == 1 ? "" : "s");
    }
    if (stats)
        fprintf(stderr, "%s: %llu packet%s, %llu error%s, %llu byte%s skipped\n", prog,
                (unsigned long long)d->packets, d->packets == 1 ? "" : "s",
                (unsigned long long)d->errors, d->errors == 1 ? "" : "s",
                (unsigned long long)d->skipped, d->skipped == 1 ? "" : "s");
    free(d);
    input_file_close(&in);
    if (n < 0) {
        fprintf(stderr, "%s: %s\n", prog, ptd_errstr(n));
        return 1;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s: write error: %s\n", prog, strerror(errno));
        return 1;
    }
    return 0;
}
