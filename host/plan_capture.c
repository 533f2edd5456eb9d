#include "host/plan_capture.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_topa.h"
#include "host/cpuid_file.h"

#define MAX_WORDS 64

static void emit_stdout(void *ctx, const char *line)
{
    (void)ctx;
    puts(line);
}

static int usage(void)
{
    fprintf(stderr, "usage: ptboot plan --cpuid FILE --capture trace|resident [--unit hw|soft]\n"
                    "                   [--image BASE:SIZE]... [--la57] [words]\n"
                    "--la57: the firmware runs 5-level paging (CR4.LA57=1; default 4-level)\n"
                    "words (docs/capture-plan.md): buffer=SIZE no-mtc no-filter cpus=N|all\n"
                    "  unit=hw|soft and every configuration word of `ptboot plan` as name or\n"
                    "  name=value (a leading -- is allowed: --mtc=3, --cpus)\n");
    return 2;
}

/* "BASE:SIZE" */
static int parse_image(const char *s, struct capture_image *im)
{
    char buf[64];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof(buf))
        return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    if (rtit_parse_u64(buf, &im->base, false) || rtit_parse_u64(colon + 1, &im->size, true))
        return -1;
    return 0;
}

int host_plan_capture(int argc, char **argv)
{
    struct capture_request req;
    struct capture_image images[RTIT_MAX_RANGES];
    const char *words[MAX_WORDS];
    const char *file = NULL;
    size_t nw = 0, ni = 0;
    bool la57 = false;

    memset(&req, 0, sizeof(req));
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--cpuid") || !strcmp(a, "--capture") || !strcmp(a, "--image") ||
            !strcmp(a, "--unit")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ptboot plan: %s needs a value\n", a);
                return usage();
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--cpuid")) {
                file = v;
            } else if (!strcmp(a, "--capture")) {
                if (!strcmp(v, "trace"))
                    req.mode = CAPTURE_TRACE;
                else if (!strcmp(v, "resident"))
                    req.mode = CAPTURE_RESIDENT;
                else {
                    fprintf(stderr, "ptboot plan: --capture trace or resident, not '%s'\n", v);
                    return usage();
                }
            } else if (!strcmp(a, "--unit")) {
                if (!strcmp(v, "soft"))
                    req.unit = CAPTURE_UNIT_SOFT;
                else if (!strcmp(v, "hw"))
                    req.unit = CAPTURE_UNIT_HW;
                else {
                    fprintf(stderr, "ptboot plan: --unit hw or soft, not '%s'\n", v);
                    return usage();
                }
            } else {
                if (ni == RTIT_MAX_RANGES || parse_image(v, &images[ni])) {
                    fprintf(stderr, "ptboot plan: --image BASE:SIZE (at most %u), not '%s'\n",
                            RTIT_MAX_RANGES, v);
                    return usage();
                }
                ni++;
            }
            continue;
        }
        if (!strcmp(a, "--la57")) {
            la57 = true;
            continue;
        }
        if (nw == MAX_WORDS) {
            fprintf(stderr, "ptboot plan: too many words\n");
            return usage();
        }
        if (!strcmp(a, "--cpus"))
            a = "cpus=all";
        words[nw++] = a; /* --name[=value] as given (arch/x86/capture_plan.c) */
    }
    if (!file) {
        fprintf(stderr, "ptboot plan: --cpuid FILE is required\n");
        return usage();
    }
    struct rtit_caps caps;
    if (host_cpuid_file_caps(file, "ptboot plan", &caps) < 0)
        return 1;
    if (la57) {
        /* CR4.LA57 is the firmware's state: the app reads it on target */
        if (!caps.la57) {
            fprintf(stderr,
                    "ptboot plan: --la57: the CPU of %s has no 5-level paging "
                    "(CPUID.(7,0).ECX[16]=0)\n",
                    file);
            return 2;
        }
        caps.paging_la57 = true;
    }

    req.images = images;
    req.n_images = ni;
    req.words = words;
    req.n_words = nw;
    struct capture_plan *plan = malloc(sizeof(*plan));
    if (!plan) {
        fprintf(stderr, "ptboot plan: out of memory\n");
        return 1;
    }
    int st = capture_plan_make(plan, &caps, &req);
    size_t ntables = 1;
    if (st == CAPTURE_PLAN_OK && plan->cfg.output == RTIT_OUTPUT_TOPA)
        ntables = rtit_topa_tables_needed(plan->cfg.regions, true);
    uint64_t *tables = calloc(ntables, RTIT_TOPA_ENTRIES_PER_TABLE * sizeof(uint64_t));
    if (!tables) {
        free(plan);
        fprintf(stderr, "ptboot plan: out of memory\n");
        return 1;
    }
    if (st == CAPTURE_PLAN_E_WORD || st == CAPTURE_PLAN_E_ARG) {
        fprintf(stderr, "ptboot plan: %s\n", plan->error);
        free(tables);
        free(plan);
        return 2;
    }
    int r = capture_plan_report(plan, &caps, tables, ntables, emit_stdout, NULL);
    free(tables);
    free(plan);
    if (fflush(stdout) || ferror(stdout))
        return 1;
    return r == 0 ? 0 : 1;
}
