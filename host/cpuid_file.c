#include "host/cpuid_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Dumps are a few KiB; refuse anything absurd rather than read it all. */
#define CPUID_FILE_MAX (4u << 20)

struct x86_cpuid_dump *host_cpuid_file_load(const char *path, const char *who)
{
    /* "-": standard input, e.g. `cpuid -r -1 | ptboot info --cpuid -` */
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(CPUID_FILE_MAX);
    struct x86_cpuid_dump *dump = malloc(sizeof(*dump));
    if (!buf || !dump) {
        fprintf(stderr, "%s: out of memory\n", who);
        goto fail;
    }
    size_t n = fread(buf, 1, CPUID_FILE_MAX, f);
    if (ferror(f)) {
        fprintf(stderr, "%s: %s: read error: %s\n", who, path, strerror(errno));
        goto fail;
    }
    if (n == CPUID_FILE_MAX) {
        fprintf(stderr, "%s: %s: larger than %u bytes, not a CPUID dump\n", who, path,
                CPUID_FILE_MAX);
        goto fail;
    }
    unsigned line = 0;
    int err = x86_cpuid_dump_parse(dump, buf, n, &line);
    if (err) {
        if (line)
            fprintf(stderr, "%s: %s:%u: %s\n", who, path, line, x86_cpuid_dump_strerror(err));
        else
            fprintf(stderr, "%s: %s: %s\n", who, path, x86_cpuid_dump_strerror(err));
        goto fail;
    }
    free(buf);
    if (!is_stdin)
        fclose(f);
    return dump;
fail:
    free(buf);
    free(dump);
    if (!is_stdin)
        fclose(f);
    return NULL;
}

int host_cpuid_file_caps(const char *path, const char *who, struct rtit_caps *caps)
{
    struct x86_cpuid_dump *dump = host_cpuid_file_load(path, who);
    if (!dump)
        return -1;
    rtit_caps_read(caps, x86_cpuid_dump_query, dump);
    free(dump);
    return 0;
}
