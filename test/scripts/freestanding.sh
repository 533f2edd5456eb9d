#!/usr/bin/env bash
# decoder/ and format/ are freestanding (scripts/check-freestanding.sh): no
# symbol from outside (format/ may use decoder/'s), no header beyond
# stdint/stddef/stdbool, no writable global; on the objects the build
# links with no libc at -O2 and -O0.
cd "$(dirname "$0")/../.." || exit 1
fail=0
d=build/decoder-fs/libptd.o f=build/format-fs/format.o
for o in $d $f; do [ -f "$o" ] || { echo "freestanding: FAIL $o missing (make $o)"; exit 1; }; done
if bash scripts/check-freestanding.sh decoder $d ${d%.o}-O0.o; then echo "freestanding: ok decoder/"
else fail=1; fi
if bash scripts/check-freestanding.sh format $f ${f%.o}-O0.o $d; then echo "freestanding: ok format/"
else fail=1; fi
exit $fail
