/* build/bench/proc_time: whole-process time of commands, run in turn so
 * that a noisy machine slows them alike (`make bench-flow`).
 *
 *   proc_time [--pairs] ROUNDS [VAR=VALUE...] CMD [ARGS...] [-- [VAR=VALUE...] CMD [ARGS...]]...
 *
 * VAR=VALUE words before a command are set in that command's environment
 * only (as a shell does; e.g. LD_LIBRARY_PATH for one of them, which
 * would slow the others' start-up if set for all).
 * Runs each command ROUNDS times, alternating (A B A B ...), with stdout
 * to /dev/null (stderr kept), and prints one line per command:
 *   proc_time: cmd=<k> cpu_min_ms=<a> cpu_median_ms=<b> wall_min_ms=<x> wall_median_ms=<y> rounds=<n> name=<argv0>
 * cpu: the process's user + system time (wait4's rusage: what the process
 * itself cost, start-up, loading and exit included); wall: fork to exit.
 * On a shared machine the CPU time varies far less than the wall time,
 * which also counts the time spent waiting for a core.
 *
 * --pairs: each command runs twice in a row per round (A A B B ...); the
 * figures above are the second runs', each right after a run of itself
 * (as consecutive runs of one command, the usual way to time one), and
 * the line adds the first runs', each right after the other command:
 *   ... after_other_cpu_min_ms=<c> after_other_wall_min_ms=<z> rounds=<n> name=<argv0>
 * A process's time depends on the one before it: here `ptboot flow` on
 * foo took 1.12 ms after itself, 1.13-1.18 after a program that only
 * returns, and 1.23-1.41 after libipt's program (the difference comes
 * with the block cache's 2 MiB page, most likely colder then); libipt's
 * program 3.38-3.53, 3.46-3.63 and 3.46-3.66 (docs/performance.md).
 *
 * Exit status 1 when a command cannot be run or does not exit 0. */
#define _POSIX_C_SOURCE 200809L
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE
#endif
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS   8
#define MAX_ROUNDS 1000

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static double tv_ms(struct timeval t)
{
    return (double)t.tv_sec * 1e3 + (double)t.tv_usec * 1e-3;
}

/* The program of a command line, after its VAR=VALUE words. */
static const char *command_name(char **argv)
{
    while (*argv && strchr(*argv, '=') && **argv != '=')
        argv++;
    return *argv ? *argv : "";
}

/* One run of argv: its wall and CPU time in ms; -1 when it failed. */
static int run(char **argv, double *wall, double *cpu)
{
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, STDOUT_FILENO);
        for (; *argv && strchr(*argv, '=') && **argv != '='; argv++) {
            char *eq = strchr(*argv, '=');
            *eq = '\0';
            setenv(*argv, eq + 1, 1);
            *eq = '=';
        }
        if (!*argv)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "proc_time: cannot run %s\n", argv[0]);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return -1;
    *wall = now_ms() - t0;
    *cpu = tv_ms(ru.ru_utime) + tv_ms(ru.ru_stime);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "proc_time: %s exited with status %d\n", command_name(argv),
                WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    char **cmds[MAX_CMDS];
    int ncmds = 0;
    static double wall[MAX_CMDS][MAX_ROUNDS], cpu[MAX_CMDS][MAX_ROUNDS];
    /* --pairs: the first run of each pair (after the other command) */
    static double wall1[MAX_CMDS][MAX_ROUNDS], cpu1[MAX_CMDS][MAX_ROUNDS];
    bool pairs = argc > 1 && !strcmp(argv[1], "--pairs");
    if (pairs) {
        argv++;
        argc--;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: proc_time [--pairs] ROUNDS [VAR=VALUE...] CMD [ARGS...] [-- "
                        "[VAR=VALUE...] CMD [ARGS...]]...\n");
        return 2;
    }
    int rounds = atoi(argv[1]);
    if (rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "proc_time: ROUNDS must be 1..%d\n", MAX_ROUNDS);
        return 2;
    }
    cmds[ncmds++] = &argv[2];
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--"))
            continue;
        argv[i] = NULL;
        if (i + 1 < argc) {
            if (ncmds == MAX_CMDS) {
                fprintf(stderr, "proc_time: at most %d commands\n", MAX_CMDS);
                return 2;
            }
            cmds[ncmds++] = &argv[i + 1];
        }
    }
    for (int r = 0; r < rounds; r++)
        for (int c = 0; c < ncmds; c++) {
            if (pairs && run(cmds[c], &wall1[c][r], &cpu1[c][r]) < 0)
                return 1;
            if (run(cmds[c], &wall[c][r], &cpu[c][r]) < 0)
                return 1;
        }
    for (int c = 0; c < ncmds; c++) {
        qsort(wall[c], (size_t)rounds, sizeof(double), cmp_double);
        qsort(cpu[c], (size_t)rounds, sizeof(double), cmp_double);
        printf("proc_time: cmd=%d cpu_min_ms=%.3f cpu_median_ms=%.3f wall_min_ms=%.3f "
               "wall_median_ms=%.3f",
               c + 1, cpu[c][0], cpu[c][rounds / 2], wall[c][0], wall[c][rounds / 2]);
        if (pairs) {
            qsort(wall1[c], (size_t)rounds, sizeof(double), cmp_double);
            qsort(cpu1[c], (size_t)rounds, sizeof(double), cmp_double);
            printf(" after_other_cpu_min_ms=%.3f after_other_wall_min_ms=%.3f", cpu1[c][0],
                   wall1[c][0]);
        }
        printf(" rounds=%d name=%s\n", rounds, command_name(cmds[c]));
    }
    return 0;
}
