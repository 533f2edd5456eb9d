#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_opts.h"
#include "host/decode_opts.h"

static int parse_capture(struct flow_opts *fo, struct ptd_time_config *tcfg,
                         struct host_capture *cap, int argc, char **argv, int *i, const char *prog)
{
    static char err[4096 + 600]; /* a path and a reason */
    if (*i + 1 >= argc) {
        fprintf(stderr, "%s: --capture needs a directory\n", prog);
        return -2;
    }
    host_capture_free(cap);
    if (host_capture_load(argv[++*i], cap, fo, tcfg, err, sizeof err) < 0) {
        fprintf(stderr, "%s: --capture: %s\n", prog, err);
        return -1;
    }
    host_capture_warn(argv[*i], cap, prog, stderr);
    return 1;
}

int host_decode_opts_parse(struct flow_opts *fo, struct ptd_time_config *tcfg,
                           struct host_capture *cap, int argc, char **argv, int *i,
                           const char *prog)
{
    const char *a = argv[*i];
    if (!strcmp(a, "--capture"))
        return parse_capture(fo, tcfg, cap, argc, argv, i, prog);
    int mtc = !strcmp(a, "--mtc-freq"), nom = !strcmp(a, "--nom-freq");
    int eax = !strcmp(a, "--cpuid-0x15.eax"), ebx = !strcmp(a, "--cpuid-0x15.ebx");
    if (!mtc && !nom && !eax && !ebx)
        return 0;
    uint64_t v, max = mtc ? PTD_TIME_MTC_FREQ_MAX : nom ? 0xff : 0xffffffffu;
    if (*i + 1 >= argc || !ptd_opts_parse_u64(argv[*i + 1], &v) || v > max) {
        fprintf(stderr, "%s: %s needs a number up to %" PRIu64 "\n", prog, a, max);
        return -2;
    }
    ++*i;
    if (mtc)
        tcfg->mtc_freq = (uint8_t)v;
    else if (nom)
        tcfg->nom_freq = (uint8_t)v;
    else if (eax)
        tcfg->cpuid_0x15_eax = (uint32_t)v;
    else
        tcfg->cpuid_0x15_ebx = (uint32_t)v;
    return 1;
}

int host_decode_opts_take(struct flow_opts *fo, struct ptd_time_config *tcfg,
                          struct host_capture *cap, int argc, char **argv, int *i, const char *prog)
{
    const char *a = argv[*i];
    int r = flow_opts_parse(fo, argc, argv, i, prog);
    if (r < 0) /* a --pages/--raw/--elf/--pe file that does not load, else usage */
        return strncmp(a, "--pages", 7) && strncmp(a, "--raw", 5) && strcmp(a, "--elf") &&
                       strcmp(a, "--pe")
                   ? -2
                   : -1;
    if (r == 0)
        r = host_decode_opts_parse(fo, tcfg, cap, argc, argv, i, prog);
    return r;
}
