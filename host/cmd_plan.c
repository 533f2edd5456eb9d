/* `ptboot plan --cpuid FILE [config options]`: the MSR writes and ToPA
 * entries rtit_start() would perform for a configuration on the CPU of a
 * recorded CPUID dump, or the rule that forbids the configuration.
 * Options are documented in docs/plan.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/rtit_config.h"
#include "arch/x86/rtit_plan_report.h"
#include "arch/x86/rtit_topa.h"
#include "host/commands.h"
#include "host/cpuid_file.h"

static void emit_stdout(void *ctx, const char *line)
{
	(void)ctx;
	puts(line);
}

static void plan_usage(FILE *out)
{
	fprintf(out,
"usage: ptboot plan --cpuid FILE [options]\n"
"       ptboot plan --rules      (every rule a configuration is checked against)\n"
"\n"
"Prints the ToPA entries ('topa <table> <index> 0x<entry>') and MSR writes\n"
"('wrmsr 0x<msr> 0x<value>', in order) that starting Intel PT with this\n"
"configuration performs on the CPU of FILE (a 'cpuid -r -1' dump), or\n"
"'refused <rule> ...' and exit status 1 when a real CPU would fault.\n"
"\n"
"output:\n"
"  --output topa|single     output scheme (default: topa if enumerated)\n"
"  --regions N              ToPA regions (default 1)\n"
"  --region-size SIZE       ToPA region size, 4K..128M power of two (4K)\n"
"  --mode ring|stop         ToPA: wrap around, or stop when full (ring)\n"
"  --single-size SIZE       single-range size (4K)\n"
"  --buffer-base ADDR       physical base of the regions/range (0x40000000)\n"
"  --table-base ADDR        physical base of the first ToPA table (0x3ff00000)\n"
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
"SIZE and ADDR take decimal or 0x hex, SIZE also a K, M or G suffix.\n");
}

static int parse_u64(const char *s, uint64_t *out, int allow_suffix)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno)
		return -1;
	if (allow_suffix && *end) {
		unsigned shift = 0;
		switch (*end) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -1;
		}
		if (end[1] || v > (UINT64_MAX >> shift))
			return -1;
		v <<= shift;
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_unsigned(const char *s, unsigned *out)
{
	uint64_t v;
	if (parse_u64(s, &v, 0) || v > 0xffffffffu)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* "N:START:END" or, with cfg == NULL... "N:CFG:START:END" */
static int parse_range(const char *s, int with_cfg, unsigned *n, unsigned *cfg,
		       uint64_t *start, uint64_t *end)
{
	char buf[128];
	char *f[4];
	int want = with_cfg ? 4 : 3, got = 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	char *p = buf;
	while (got < 4) {
		f[got++] = p;
		p = strchr(p, ':');
		if (!p)
			break;
		*p++ = '\0';
	}
	if (got != want || p)
		return -1;
	if (parse_unsigned(f[0], n) || *n >= RTIT_MAX_RANGES)
		return -1;
	if (with_cfg && parse_unsigned(f[1], cfg))
		return -1;
	return parse_u64(f[want - 2], start, 0) || parse_u64(f[want - 1], end, 0) ? -1 : 0;
}

/* Size code for a ToPA region of `bytes` (4 KiB << code), or -1. */
static int size_code(uint64_t bytes)
{
	for (unsigned c = 0; c <= RTIT_TOPA_MAX_SIZE_CODE; c++)
		if (RTIT_TOPA_REGION_BYTES(c) == bytes)
			return (int)c;
	return -1;
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
				       rtit_rule_kind_name(rtit_rule_kind(r)),
				       rtit_rule_text(r));
			return 0;
		}
		if (!strcmp(argv[i], "--cpuid") && i + 1 < argc)
			file = argv[i + 1];
	}
	if (!file) {
		fprintf(stderr, "ptboot plan: --cpuid FILE is required\n");
		plan_usage(stderr);
		return 2;
	}
	struct x86_cpuid_dump *dump = host_cpuid_file_load(file, "ptboot plan");
	if (!dump)
		return 1;
	struct rtit_caps caps;
	rtit_caps_read(&caps, x86_cpuid_dump_query, dump);
	free(dump);

	struct rtit_config cfg;
	rtit_config_default(&cfg, &caps);
	cfg.buffer_phys = RTIT_PLAN_DEFAULT_BUFFER;
	cfg.table_phys = RTIT_PLAN_DEFAULT_TABLE;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char *arg = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t v;
		unsigned n, c;
		int ok = 1, takes_arg = 1;

#define IS(name) (!strcmp(o, name))
		if (IS("--cpuid")) {
			/* handled above */
		} else if (IS("--output")) {
			if (arg && !strcmp(arg, "topa"))
				cfg.output = RTIT_OUTPUT_TOPA;
			else if (arg && !strcmp(arg, "single"))
				cfg.output = RTIT_OUTPUT_SINGLE;
			else
				ok = 0;
		} else if (IS("--mode")) {
			if (arg && !strcmp(arg, "ring"))
				cfg.when_full = RTIT_FULL_RING;
			else if (arg && !strcmp(arg, "stop"))
				cfg.when_full = RTIT_FULL_STOP;
			else
				ok = 0;
		} else if (IS("--regions")) {
			ok = arg && !parse_unsigned(arg, &cfg.regions);
		} else if (IS("--region-size")) {
			int code;
			ok = arg && !parse_u64(arg, &v, 1) && (code = size_code(v)) >= 0;
			if (ok)
				cfg.region_size_code = (unsigned)code;
		} else if (IS("--single-size")) {
			ok = arg && !parse_u64(arg, &cfg.single_size, 1);
		} else if (IS("--buffer-base")) {
			ok = arg && !parse_u64(arg, &cfg.buffer_phys, 0);
		} else if (IS("--table-base")) {
			ok = arg && !parse_u64(arg, &cfg.table_phys, 0);
		} else if (IS("--mtc")) {
			ok = arg && !parse_unsigned(arg, &cfg.mtc_freq);
			cfg.mtc_en = true;
		} else if (IS("--cyc")) {
			ok = arg && !parse_unsigned(arg, &cfg.cyc_thresh);
			cfg.cyc_en = true;
		} else if (IS("--psb")) {
			ok = arg && !parse_unsigned(arg, &cfg.psb_freq);
		} else if (IS("--cr3")) {
			ok = arg && !parse_u64(arg, &cfg.cr3, 0);
			cfg.cr3_filter = true;
		} else if (IS("--filter") || IS("--trace-stop")) {
			uint64_t s, e;
			ok = arg && !parse_range(arg, 0, &n, NULL, &s, &e);
			if (ok)
				cfg.range[n] = (struct rtit_addr_range){
					IS("--filter") ? RTIT_ADDR_CFG_FILTER : RTIT_ADDR_CFG_STOP, s, e};
		} else if (IS("--range-cfg")) {
			uint64_t s, e;
			ok = arg && !parse_range(arg, 1, &n, &c, &s, &e);
			if (ok)
				cfg.range[n] = (struct rtit_addr_range){c, s, e};
		} else {
			takes_arg = 0;
			if (IS("--user"))
				cfg.user = true;
			else if (IS("--no-os"))
				cfg.os = false;
			else if (IS("--no-branch"))
				cfg.branch_en = false;
			else if (IS("--no-tsc"))
				cfg.tsc_en = false;
			else if (IS("--dis-retc"))
				cfg.dis_retc = true;
			else if (IS("--ptwrite"))
				cfg.ptw_en = true;
			else if (IS("--fup-on-ptw"))
				cfg.fup_on_ptw = true;
			else if (IS("--power-events"))
				cfg.pwr_evt_en = true;
			else if (IS("--event-trace"))
				cfg.event_en = true;
			else if (IS("--dis-tnt"))
				cfg.dis_tnt = true;
			else if (IS("--inject-psb-pmi"))
				cfg.inject_psb_pmi = true;
			else if (IS("--fabric"))
				cfg.fabric_en = true;
			else {
				fprintf(stderr, "ptboot plan: unknown option '%s'\n", o);
				plan_usage(stderr);
				return 2;
			}
		}
#undef IS
		if (!ok) {
			if (arg)
				fprintf(stderr, "ptboot plan: bad value '%s' for %s\n", arg, o);
			else
				fprintf(stderr, "ptboot plan: %s needs a value\n", o);
			return 2;
		}
		if (takes_arg)
			i++;
	}

	size_t ntables = cfg.output == RTIT_OUTPUT_TOPA && cfg.regions <= RTIT_TOPA_MAX_REGIONS
				 ? rtit_topa_tables_needed(cfg.regions, true) : 1;
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
