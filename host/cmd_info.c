/* `ptboot info [--cpuid FILE | --msr]`: the Intel PT capability report of a
 * recorded CPUID dump (`cpuid -r -1` raw format) or, without --cpuid, of
 * the CPU running the command; with --msr also the RTIT MSRs of CPU 0 as
 * Linux's msr driver shows them (/dev/cpu/0/msr: root, `modprobe msr`). */
#define _GNU_SOURCE /* sched_setaffinity */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "arch/x86/rtit_msr_snapshot.h"
#include "host/commands.h"
#include "host/cpuid_file.h"
#include <unistd.h>

#define MSR_DEV "/dev/cpu/0/msr"

/* RDMSR through the msr driver: the file offset is the MSR number; a
 * missing MSR fails with EIO (the driver caught the #GP). */
static int devmsr_rd(void *ctx, uint32_t msr, uint64_t *value)
{
    int fd = *(int *)ctx;
    return pread(fd, value, sizeof(*value), msr) == (ssize_t)sizeof(*value) ? 0 : -1;
}

static int devmsr_wr(void *ctx, uint32_t msr, uint64_t value)
{
    (void)ctx;
    (void)msr;
    (void)value;
    return -1; /* info never writes */
}

static void emit_stdout(void *ctx, const char *line)
{
    (void)ctx;
    puts(line);
}

static void info_usage(FILE *out)
{
    fprintf(out, "usage: ptboot info [--cpuid FILE | --msr]\n"
                 "\n"
                 "Prints the Intel PT capabilities (CPUID leaves 0, 1, 7, 14h, 15h,\n"
                 "80000008h) and ends with one machine-readable 'ptboot: info ...' line.\n"
                 "\n"
                 "  --cpuid FILE  read a recorded dump in the raw format of Debian's\n"
                 "                'cpuid -r -1' (or AIDA64's 'CPUID 00000014: ...' lines, as in\n"
                 "                InstLatx64's collection) instead of executing CPUID here\n"
                 "                ('-' reads standard input)\n"
                 "  --msr         also read the RTIT MSRs of CPU 0 through Linux's msr\n"
                 "                driver (" MSR_DEV "; root and 'modprobe msr')\n"
                 "  -h, --help    this text\n");
}

int host_cmd_info(int argc, char **argv)
{
    const char *file = NULL;
    int want_msr = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            info_usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--cpuid")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ptboot info: --cpuid needs a FILE\n");
                return 2;
            }
            file = argv[++i];
        } else if (!strcmp(argv[i], "--msr")) {
            want_msr = 1;
        } else if (!strncmp(argv[i], "--cpuid=", 8)) {
            file = argv[i] + 8;
        } else {
            fprintf(stderr, "ptboot info: unknown option '%s'\n", argv[i]);
            info_usage(stderr);
            return 2;
        }
    }

    if (file && want_msr) {
        fprintf(stderr, "ptboot info: --msr reads this machine, not a dump: "
                        "use one of --cpuid and --msr\n");
        return 2;
    }
    struct rtit_caps caps;
    struct rtit_msr_snapshot snap;
    const struct rtit_msr_snapshot *msrs = NULL;
    if (want_msr) {
        /* CPUID and the MSRs from the same CPU */
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(0, &one);
        if (sched_setaffinity(0, sizeof(one), &one))
            fprintf(stderr, "ptboot info: cannot run on CPU 0: %s\n", strerror(errno));
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
        int fd = -1;
        /* the device only matters when CPUID promises RTIT MSRs */
        if (caps.leaf7_pt && caps.has_leaf14) {
            fd = open(MSR_DEV, O_RDONLY);
            if (fd < 0) {
                fprintf(stderr,
                        "ptboot info: %s: %s (needs root and "
                        "'modprobe msr')\n",
                        MSR_DEV, strerror(errno));
                return 1;
            }
        }
        const struct rtit_msr_ops ops = { devmsr_rd, devmsr_wr, &fd };
        rtit_msr_snapshot_take(&snap, &caps, &ops);
        if (fd >= 0)
            close(fd);
        msrs = &snap;
    } else if (file) {
        if (host_cpuid_file_caps(file, "ptboot info", &caps) < 0)
            return 1;
    } else {
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
    }
    rtit_caps_report(&caps, msrs, emit_stdout, NULL);
    return ferror(stdout) ? 1 : 0;
}
