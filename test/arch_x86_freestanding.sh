#!/usr/bin/env bash
# arch/x86 builds into the UEFI app with newlib: only <stdint.h> <stddef.h>
# <stdbool.h> <string.h> <stdio.h>, no allocation, no file I/O, no floating
# point formats, no writable globals. Checked on the sources and on the
# host objects (no .data/.bss, no undefined symbols beyond a short list;
# ptd_* is decoder/, itself freestanding: the software trace unit writes
# its packets through decoder/ptd_tracer).
set -u
fail=0
allowed='^(stdint|stddef|stdbool|string|stdio)\.h$'
for f in arch/x86/*.[ch]; do
	while read -r inc; do
		if ! [[ $inc =~ $allowed ]]; then
			echo "FAIL: $f includes <$inc>"; fail=1
		fi
	done < <(sed -n 's/^#include <\([^>]*\)>.*/\1/p' "$f")
	if grep -nE '\b(malloc|calloc|realloc|free|fopen|fread|fwrite|printf|fprintf|sscanf|getenv)\s*\(' "$f" | grep -v '^\s*/\?\*'; then
		echo "FAIL: $f calls a hosted-only function"; fail=1
	fi
	if grep -nE '%[-0-9.]*[fFeEgGaA]' "$f"; then
		echo "FAIL: $f uses a floating-point format"; fail=1
	fi
done
for o in build/host/arch/x86/*.o; do
	data=$(size -A "$o" | awk '$1 ~ /^\.(data|bss)/ && $1 !~ /^\.data\.rel\.ro/ && $2 > 0 {print $1}')
	if [ -n "$data" ]; then
		echo "FAIL: $o has writable data: $data"; fail=1
	fi
	und=$(nm -u "$o" | awk '{print $2}' | grep -vE '^(memset|memcpy|memmove|memcmp|memchr|strlen|strcmp|strncmp|strchr|snprintf|x86_.*|rtit_.*|capture_.*|ptd_.*|_GLOBAL_OFFSET_TABLE_|__stack_chk_fail)$')
	if [ -n "$und" ]; then
		echo "FAIL: $o needs: $und"; fail=1
	fi
done
[ $fail -eq 0 ] && echo "ok: arch/x86 sources and objects are freestanding"
exit $fail
