/* TEMPORARY while the subcommands are written in parallel: weak fallbacks so
 * the CLI links before every command exists. Removed once all are in. */
#include <stdio.h>
#include "host/commands.h"

static int unbuilt(const char *name)
{
    fprintf(stderr, "ptboot: '%s' is not built yet\n", name);
    return 2;
}
__attribute__((weak)) int host_cmd_info(int argc, char **argv) { (void)argc; (void)argv; return unbuilt("info"); }
__attribute__((weak)) int host_cmd_plan(int argc, char **argv) { (void)argc; (void)argv; return unbuilt("plan"); }
__attribute__((weak)) int host_cmd_dump(int argc, char **argv) { (void)argc; (void)argv; return unbuilt("dump"); }
__attribute__((weak)) int host_cmd_bench(int argc, char **argv) { (void)argc; (void)argv; return unbuilt("bench"); }
__attribute__((weak)) int host_cmd_flow(int argc, char **argv) { (void)argc; (void)argv; return unbuilt("flow"); }
