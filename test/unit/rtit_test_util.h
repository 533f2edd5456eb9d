/* Helpers shared by the test_rtit_* programs (header-only: each test is one
 * program). Capabilities of the real CPUs in test/fixtures/cpuid. */
#ifndef PTBOOT_TEST_RTIT_TEST_UTIL_H
#define PTBOOT_TEST_RTIT_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"

#define RTIT_FIXTURES "test/fixtures/cpuid/"

static const char *const rtit_fixture_names[] = {
    "broadwell-client.txt", "skylake-client.txt", "goldmont.txt", "icelake-client.txt",
    "alderlake.txt",        "sapphirerapids.txt", "amd.txt",
};
#define RTIT_FIXTURE_COUNT (sizeof(rtit_fixture_names) / sizeof(rtit_fixture_names[0]))

/* Capabilities of fixture `name`; aborts the test program if unreadable. */
static inline struct rtit_caps rtit_fixture_caps(const char *name)
{
    static struct x86_cpuid_dump dump;
    static char buf[65536];
    char path[256];
    struct rtit_caps caps;

    snprintf(path, sizeof(path), RTIT_FIXTURES "%s", name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    unsigned line;
    if (x86_cpuid_dump_parse(&dump, buf, n, &line) != 0) {
        fprintf(stderr, "%s:%u: parse error\n", path, line);
        exit(2);
    }
    rtit_caps_read(&caps, x86_cpuid_dump_query, &dump);
    return caps;
}

#endif
