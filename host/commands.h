/* Subcommands of the host CLI build/ptboot. Each takes the arguments after
 * its own name (argv[0] is the subcommand) and returns the process exit code. */
#ifndef PTBOOT_HOST_COMMANDS_H
#define PTBOOT_HOST_COMMANDS_H

int host_cmd_info(int argc, char **argv);
int host_cmd_plan(int argc, char **argv);
int host_cmd_dump(int argc, char **argv);
int host_cmd_bench(int argc, char **argv);
int host_cmd_flow(int argc, char **argv);
int host_cmd_serial(int argc, char **argv);
int host_cmd_summary(int argc, char **argv);
int host_cmd_export(int argc, char **argv);
int host_cmd_fv(int argc, char **argv);

/* "ptboot <git describe>": `ptboot --version` (build/gen/version.c,
 * scripts/version.sh; the app prints the same text). */
extern const char ptboot_version[];

#endif
