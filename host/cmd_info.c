/* `ptboot info [--cpuid FILE]`: the Intel PT capability report of a recorded
 * CPUID dump (`cpuid -r -1` raw format) or, without --cpuid, of the CPU
 * running the command (CPUID only: the host has no MSR access here). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "host/commands.h"
#include "host/cpuid_file.h"

static void emit_stdout(void *ctx, const char *line)
{
	(void)ctx;
	puts(line);
}

static void info_usage(FILE *out)
{
	fprintf(out,
		"usage: ptboot info [--cpuid FILE]\n"
		"\n"
		"Prints the Intel PT capabilities (CPUID leaves 0, 1, 7, 14h, 15h,\n"
		"80000008h) and ends with one machine-readable 'ptboot: info ...' line.\n"
		"\n"
		"  --cpuid FILE  read a recorded dump in the raw format of Debian's\n"
		"                'cpuid -r -1' instead of executing CPUID here\n"
		"                ('-' reads standard input)\n"
		"  -h, --help    this text\n");
}

int host_cmd_info(int argc, char **argv)
{
	const char *file = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			info_usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--cpuid")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "ptboot info: --cpuid needs a FILE\n");
				return 2;
			}
			file = argv[++i];
		} else if (!strncmp(argv[i], "--cpuid=", 8)) {
			file = argv[i] + 8;
		} else {
			fprintf(stderr, "ptboot info: unknown option '%s'\n", argv[i]);
			info_usage(stderr);
			return 2;
		}
	}

	struct rtit_caps caps;
	if (file) {
		struct x86_cpuid_dump *dump = host_cpuid_file_load(file, "ptboot info");
		if (!dump)
			return 1;
		rtit_caps_read(&caps, x86_cpuid_dump_query, dump);
		free(dump);
	} else {
		rtit_caps_read(&caps, x86_cpuid_native, NULL);
	}
	rtit_caps_report(&caps, NULL, emit_stdout, NULL);
	return ferror(stdout) ? 1 : 0;
}
