/* build/ptboot: the workstation CLI over the same decoder and arch code the
 * UEFI app uses. Dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "host/commands.h"

struct host_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct host_command host_commands[] = {
    { "info", host_cmd_info, "Intel PT capabilities of this CPU or of a recorded CPUID dump" },
    { "plan", host_cmd_plan, "MSR writes and ToPA entries a configuration would program" },
    { "dump", host_cmd_dump, "packet dump of a trace, in libipt ptdump's format" },
    { "flow", host_cmd_flow, "instruction flow of a trace, in libipt ptxed's format" },
    { "summary", host_cmd_summary,
      "decode summary: call tree, time per image, hot blocks, last branches" },
    { "export", host_cmd_export,
      "calls as Chrome trace JSON, folded stacks or an HTML report with a flame graph" },
    { "fv", host_cmd_fv,
      "firmware volumes of a flash image; ptboot's driver put into its DXE volume" },
    { "serial", host_cmd_serial,
      "recover the files of a serial dump from a serial log, and decode them" },
    { "bench", host_cmd_bench,
      "packet-layer and flow throughput against libipt (runs build/ptboot-bench)" },
};
#define HOST_COMMAND_COUNT (sizeof host_commands / sizeof host_commands[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: ptboot <command> [options]\n\ncommands:\n");
    for (size_t i = 0; i < HOST_COMMAND_COUNT; i++)
        fprintf(out, "  %-8s %s\n", host_commands[i].name, host_commands[i].summary);
    fprintf(out,
            "\n'ptboot <command> --help' describes a command's options; 'ptboot --version'\n"
            "names the build (%s).\n",
            ptboot_version);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("%s\n", ptboot_version);
        return 0;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < HOST_COMMAND_COUNT; i++)
        if (!strcmp(argv[1], host_commands[i].name))
            return host_commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptboot: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
