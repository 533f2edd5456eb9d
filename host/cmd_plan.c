/* `ptboot plan --cpuid FILE [config options]`: the MSR writes and ToPA
 * entries rtit_start() would perform for a configuration on the CPU of a
 * recorded CPUID dump, or the rule that forbids the configuration.
 * Options are documented in docs/plan.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_options.h"
#include "arch/x86/rtit_plan_report.h"
#include "arch/x86/rtit_topa.h"
#include "host/commands.h"
#include "host/cpuid_file.h"
#include "host/plan_capture.h"

static void emit_stdout(void *ctx, const char *line)
{
    (void)ctx;
    puts(line);
}

static void plan_usage(FILE *out)
{
    fprintf(out, "usage: ptboot plan --cpuid FILE [options]\n"
                 "       ptboot plan --rules      (every rule a configuration is checked against)\n"
                 "       ptboot plan --cpuid FILE --capture trace|resident [--unit hw|soft]\n"
                 "                   [--image BASE:SIZE]... [words]   (docs/capture-plan.md)\n"
                 "\n"
                 "Prints the ToPA entries ('topa <table> <index> 0x<entry>') and MSR writes\n"
                 "('wrmsr 0x<msr> 0x<value>', in order) that starting Intel PT with this\n"
                 "configuration performs on the CPU of FILE (a 'cpuid -r -1' or AIDA64 dump), or\n"
                 "'refused <rule> ...' and exit status 1 when a real CPU would fault or would\n"
                 "not do what was asked; a 'note: ...' line says when a default was adjusted.\n"
                 "\n"
                 "output:\n"
                 "  --output topa|single     output scheme (default: topa if enumerated)\n"
                 "  --regions N              ToPA regions (default 1)\n"
                 "  --region-size SIZE       ToPA region size, 4K..128M power of two (4K)\n"
                 "  --mode ring|stop         ToPA: wrap around, or stop when full (ring)\n"
                 "  --single-size SIZE       single-range size (4K)\n"
                 "  --buffer-base ADDR       physical base of the regions/range (0x40000000)\n"
                 "  --table-base ADDR        physical base of the first ToPA table (0x3ff00000;\n"
                 "                           below the buffer when more tables are needed)\n"
                 "packets:\n"
                 "  --user, --no-os          trace CPL>0 / do not trace CPL0 (default: OS only)\n"
                 "  --no-branch              BranchEn=0 (no COFI packets)\n"
                 "  --no-tsc, --dis-retc     TSCEn=0 / DisRETC=1\n"
                 "  --mtc N                  MTCEn=1, MTCFreq=N\n"
                 "  --cyc N                  CYCEn=1, CycThresh=N\n"
                 "  --psb N                  PSBFreq=N\n"
                 "  --ptwrite, --fup-on-ptw, --power-events, --event-trace, --dis-tnt,\n"
                 "  --inject-psb-pmi, --fabric\n"
                 "filters:\n"
                 "  --cr3 VALUE              CR3Filter=1, IA32_RTIT_CR3_MATCH=VALUE\n"
                 "  --filter N:START:END     ADDRn_CFG=1 (trace only inside [START,END])\n"
                 "  --trace-stop N:START:END ADDRn_CFG=2 (stop tracing on entering it)\n"
                 "  --range-cfg N:CFG:START:END  ADDRn_CFG=CFG (any encoding)\n"
                 "                           (each range N once; START <= END)\n"
                 "  --la57                   the firmware runs 5-level paging (CR4.LA57=1):\n"
                 "                           filters take 57-bit addresses (default 4-level)\n"
                 "SIZE and ADDR take decimal or 0x hex, SIZE also a K, M or G suffix.\n");
}

int host_cmd_plan(int argc, char **argv)
{
    const char *file = NULL;
    int i;

    /* First pass: --help, --rules and --cpuid (the defaults depend on
	 * the CPU). */
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            plan_usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--rules")) {
            for (int r = 1; r < RTIT_RULE_COUNT; r++)
                printf("%-28s %-18s %s\n", rtit_rule_name(r),
                       rtit_rule_kind_name(rtit_rule_kind(r)), rtit_rule_text(r));
            return 0;
        }
        if (!strcmp(argv[i], "--cpuid") && i + 1 < argc)
            file = argv[i + 1];
        /* --capture: a whole capture plan (host/plan_capture.c) */
        if (!strcmp(argv[i], "--capture"))
            return host_plan_capture(argc, argv);
    }
    if (!file) {
        if (argc > 1 && !strcmp(argv[argc - 1], "--cpuid"))
            fprintf(stderr, "ptboot plan: --cpuid needs a FILE\n");
        else
            fprintf(stderr, "ptboot plan: --cpuid FILE is required\n");
        plan_usage(stderr);
        return 2;
    }
    struct rtit_caps caps;
    if (host_cpuid_file_caps(file, "ptboot plan", &caps) < 0)
        return 1;

    struct rtit_config cfg;
    rtit_config_default(&cfg, &caps);
    cfg.buffer_phys = RTIT_PLAN_DEFAULT_BUFFER;
    cfg.table_phys = RTIT_PLAN_DEFAULT_TABLE;
    bool table_given = false;

    /* Second pass: the configuration options (arch/x86/rtit_options.h),
	 * as --name, --name VALUE or --name=VALUE. */
    for (i = 1; i < argc; i++) {
        char name[64], err[256];
        const char *o = argv[i], *value = NULL, *eq;
        if (!strcmp(o, "--cpuid")) {
            i++;
            continue;
        }
        if (!strcmp(o, "--la57")) {
            /* CR4.LA57 is the firmware's, not the CPU's: only the
			 * user knows it here (the app reads CR4 on target) */
            if (!caps.la57) {
                fprintf(stderr,
                        "ptboot plan: --la57: the CPU of %s has no 5-level paging "
                        "(CPUID.(7,0).ECX[16]=0)\n",
                        file);
                return 2;
            }
            caps.paging_la57 = true;
            continue;
        }
        if (strncmp(o, "--", 2) || strlen(o + 2) >= sizeof(name)) {
            fprintf(stderr, "ptboot plan: unknown option '%s'\n", o);
            plan_usage(stderr);
            return 2;
        }
        snprintf(name, sizeof(name), "%s", o + 2);
        if ((eq = strchr(o + 2, '=')) != NULL) {
            name[eq - (o + 2)] = '\0';
            value = eq + 1;
        }
        int takes = rtit_option_takes_value(name);
        if (takes < 0) {
            fprintf(stderr, "ptboot plan: unknown option '%s'\n", o);
            plan_usage(stderr);
            return 2;
        }
        if (takes && !value) {
            if (i + 1 >= argc) {
                fprintf(stderr, "ptboot plan: %s needs a value\n", o);
                return 2;
            }
            value = argv[++i];
        }
        if (rtit_option_apply(&cfg, name, value, err, sizeof(err))) {
            fprintf(stderr, "ptboot plan: %s\n", err);
            return 2;
        }
        table_given |= !strcmp(name, "table-base");
    }
    /* A default never puts a table inside the output; an address given
	 * is kept and judged (topa-table-overlap). */
    if (!table_given) {
        bool moved;
        cfg.table_phys = rtit_plan_default_table(&cfg, &caps, &moved);
        if (moved) {
            char note[200];
            rtit_plan_default_table_note(note, sizeof(note), &cfg, &caps);
            printf("note: %s\n", note);
        }
    }

    size_t ntables = cfg.output == RTIT_OUTPUT_TOPA && cfg.regions <= RTIT_TOPA_MAX_REGIONS
                         ? rtit_topa_tables_needed(cfg.regions, true)
                         : 1;
    uint64_t *tables = calloc(ntables, RTIT_TOPA_ENTRIES_PER_TABLE * sizeof(uint64_t));
    if (!tables) {
        fprintf(stderr, "ptboot plan: out of memory\n");
        return 1;
    }
    int r = rtit_plan_report(&cfg, &caps, tables, ntables, emit_stdout, NULL);
    free(tables);
    if (r < 0) {
        fprintf(stderr, "ptboot plan: internal error %d building ToPA tables\n", r);
        return 1;
    }
    if (fflush(stdout) || ferror(stdout))
        return 1;
    return r == RTIT_RULE_OK ? 0 : 1;
}
