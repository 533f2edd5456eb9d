/* `plan [trace|resident] [--unit hw|soft] [--image BASE:SIZE]... [--cpuid FILE]
 * [--check-cpus] [words]`: what a capture would program on this CPU (or the CPU of a
 * CPUID dump on the stick), as arch/x86/capture_plan.h decides it: the
 * decisions, the ToPA entries and the MSR writes, or the rule that refuses
 * it. Nothing is written. The text is the host's `ptboot plan --cpuid FILE
 * --capture MODE ...` line for line.
 *
 * --check-cpus also prepares the per-CPU buffers of a hardware plan
 * (efi_mp_trace_prepare: every CPU's own CPUID, the plan checked against
 * it, buffer and ToPA tables built) and reports which CPUs it fits, then
 * frees them: still no MSR is written. */
#include <string.h>
#include <efi.h>

#include "arch/x86/capture_plan.h"
#include "arch/x86/cpuid.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_topa.h"
#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/cmd/cpuid_file.h"
#include "efi/capture/mp.h"

#define PLAN_MAX_WORDS 48
/* ToPA tables the report can show (2 MiB of 4 KiB regions, 2 GiB of the
 * default 64 KiB regions per table...): 8 tables of 4 KiB, off the stack. */
#define PLAN_TABLES 8

static uint64_t tables[PLAN_TABLES * RTIT_TOPA_ENTRIES_PER_TABLE];
static struct capture_plan plan;

static void emit(void *ctx, const char *line)
{
    (void)ctx;
    efi_con_printf("%s\n", line);
}

static int usage(const char *why, const char *arg)
{
    efi_con_printf("ptboot: error: plan: %s '%s' (usage: plan [trace|resident] [--unit hw|soft] "
                   "[--image BASE:SIZE]... [--cpuid FILE] [--check-cpus] [words])\n",
                   why, arg);
    return PTB_APP_USAGE;
}

static int parse_image(const char *s, struct capture_image *im)
{
    char buf[40];
    const char *colon = strchr(s, ':');
    if (!colon || (size_t)(colon - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(colon - s));
    buf[colon - s] = '\0';
    return rtit_parse_u64(buf, &im->base, false) || rtit_parse_u64(colon + 1, &im->size, true) ? -1
                                                                                               : 0;
}

static struct efi_mp_trace mp_trace;

/* One line per CPU: does the plan fit that CPU's own capabilities? */
static void check_per_cpu(struct efi_app *app)
{
    EFI_BOOT_SERVICES *bs = app->st->BootServices;
    EFI_STATUS s = efi_mp_trace_prepare(&mp_trace, bs, &plan);
    if (EFI_ERROR(s)) {
        efi_con_printf("ptboot: plan cpus: no memory for the per-CPU buffers (status 0x%lx)\n",
                       (unsigned long)s);
        return;
    }
    unsigned fit = 0;
    for (unsigned n = 0; n < mp_trace.mp.count && n < PTB_MP_MAX_CPUS; n++) {
        const struct efi_mp_trace_cpu *c = &mp_trace.cpu[n];
        if (!c->seen && !c->pages && c->rule == RTIT_RULE_OK)
            continue; /* not among the CPUs wanted */
        fit += c->used;
        efi_con_printf("ptboot: plan cpu n=%u bsp=%d fits=%s rule=%s pages=%lu\n", n,
                       n == mp_trace.mp.bsp, c->used ? "yes" : "no", rtit_rule_name(c->rule),
                       (unsigned long)c->pages);
    }
    efi_con_printf("ptboot: plan cpus wanted=%u fit=%u count=%u\n", mp_trace.cpus, fit,
                   mp_trace.mp.count);
    efi_mp_trace_free(&mp_trace, bs);
}

int efi_cmd_plan(struct efi_app *app, int argc, char **argv)
{
    struct capture_request req;
    struct capture_image images[RTIT_MAX_RANGES];
    const char *words[PLAN_MAX_WORDS];
    const char *dump_file = NULL;
    bool check_cpus = false;
    size_t nw = 0, ni = 0;

    memset(&req, 0, sizeof req);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "trace") || !strcmp(a, "resident")) { /* not option words */
            req.mode = a[0] == 'r' ? CAPTURE_RESIDENT : CAPTURE_TRACE;
        } else if (!strcmp(a, "--unit") || !strcmp(a, "--image") || !strcmp(a, "--cpuid")) {
            if (i + 1 >= argc)
                return usage("needs a value:", a);
            const char *v = argv[++i];
            if (a[2] == 'c') {
                dump_file = v;
            } else if (a[2] == 'u') {
                if (!strcmp(v, "soft"))
                    req.unit = CAPTURE_UNIT_SOFT;
                else if (!strcmp(v, "hw"))
                    req.unit = CAPTURE_UNIT_HW;
                else
                    return usage("--unit is hw or soft, not", v);
            } else if (ni == RTIT_MAX_RANGES || parse_image(v, &images[ni++])) {
                return usage("--image BASE:SIZE (at most 4), not", v);
            }
        } else if (!strcmp(a, "--check-cpus")) {
            check_cpus = true;
        } else if (nw == PLAN_MAX_WORDS) {
            return usage("too many words at", a);
        } else {
            /* the host's spellings: --cpus, --name=value */
            words[nw++] = !strcmp(a, "--cpus") ? "cpus=all" : !strncmp(a, "--", 2) ? a + 2 : a;
        }
    }

    struct rtit_caps caps;
    if (dump_file) {
        int st = efi_cpuid_file_caps(app, "plan", dump_file, &caps);
        if (st != PTB_APP_OK)
            return st;
    } else {
        rtit_caps_read(&caps, x86_cpuid_native, NULL);
    }
    req.images = images;
    req.n_images = ni;
    req.words = words;
    req.n_words = nw;
    int st = capture_plan_make(&plan, &caps, &req);
    if (st == CAPTURE_PLAN_E_WORD || st == CAPTURE_PLAN_E_ARG) {
        efi_con_printf("ptboot: error: plan: %s\n", plan.error);
        return PTB_APP_USAGE;
    }
    efi_con_printf("ptboot: plan begin source=%s\n", dump_file ? dump_file : "this-cpu");
    int r = capture_plan_report(&plan, &caps, tables, PLAN_TABLES, emit, NULL);
    if (r < 0 && st == CAPTURE_PLAN_OK)
        efi_con_printf("(ToPA tables not shown: more than %u tables)\n", (unsigned)PLAN_TABLES);
    if (st == CAPTURE_PLAN_OK && plan.cpus != 1 && !dump_file) {
        /* what cpus=N|all means on this machine */
        struct efi_mp mp;
        int m = efi_mp_init(&mp, app->st->BootServices);
        efi_con_printf("ptboot: plan cpus: %u processor(s), %u enabled (mp=%s)\n", mp.count,
                       mp.enabled, efi_mp_result_name(m));
    }
    if (st == CAPTURE_PLAN_OK && check_cpus && plan.unit == CAPTURE_UNIT_HW)
        check_per_cpu(app);
    efi_con_printf("ptboot: plan end status=%s\n", st == CAPTURE_PLAN_OK ? "ok" : "refused");
    return st == CAPTURE_PLAN_OK ? PTB_APP_OK : PTB_APP_FAILED;
}
