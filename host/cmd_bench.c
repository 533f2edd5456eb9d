/* `ptboot bench ...`: the benchmarks against libipt are a program of their
 * own, build/ptboot-bench (bench/, built by `make bench`), so that
 * build/ptboot does not link libipt. This command runs that program from
 * the directory of this executable, with the same arguments. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/commands.h"

#define BENCH_PROGRAM "ptboot-bench"

int host_cmd_bench(int argc, char **argv)
{
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - sizeof(BENCH_PROGRAM) - 1);
    char *slash;

    (void)argc;
    if (n > 0)
        path[n] = '\0';
    if (n <= 0 || !(slash = strrchr(path, '/'))) {
        fprintf(stderr, "ptboot bench: cannot find this program's directory (/proc/self/exe)\n");
        return 1;
    }
    strcpy(slash + 1, BENCH_PROGRAM);
    execv(path, argv);
    if (errno == ENOENT)
        fprintf(stderr,
                "ptboot bench: the benchmarks are a separate program, %s, which is not "
                "built: `make bench` (or `make build/ptboot-bench`) builds it\n",
                path);
    else
        fprintf(stderr, "ptboot bench: cannot run %s: %s\n", path, strerror(errno));
    return 1;
}
