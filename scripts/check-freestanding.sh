#!/usr/bin/env bash
# check-freestanding.sh LAYER OBJ OBJ-O0 [DEFINED.o]: a freestanding layer's
# sources, linked into one relocatable object with no libc (at -O2: OBJ,
# and at -O0: OBJ-O0, since what gcc emits for struct copies differs), need
# no symbol from outside (except those DEFINED.o defines: the layers below
# it), include no header beyond stdint/stddef/stdbool and hold no writable
# global. Run by the build for decoder/ and format/ (docs/architecture.md).
set -u
layer=$1 obj=$2 obj0=$3 below=${4:-}
fail() { echo "check-freestanding: $layer/: $*"; exit 1; }
undef=$(nm -u "$obj" "$obj0" | awk 'NF == 2 {print $2}' | sort -u)
if [ -n "$below" ]; then
    undef=$(comm -23 <(echo "$undef") <(nm --defined-only "$below" | awk '{print $3}' | sort -u))
fi
[ -z "$undef" ] || fail "needs external symbols: $undef"
if grep -n '#include <' "$layer"/*.[ch] | grep -v -E '<(stdint|stddef|stdbool)\.h>'; then
    fail "includes a header other than stdint/stddef/stdbool"
fi
writable=$(nm "$obj" | awk '$2 ~ /^[bBdDcCgGsS]$/ {print $3}' | sort -u)
[ -z "$writable" ] || fail "has mutable global state: $writable"
exit 0
