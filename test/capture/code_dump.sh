#!/bin/bash
# The host reads code dumps (PREFIX.dump + PREFIX.addr, docs/capture-files.md)
# through format/code_image.h's reader, with the target's checks: a page
# address that is not 4 KiB aligned, or one that appears twice, is refused
# with the prefix and the reason (exit 1), and a good dump loads.
set -u
cd "$(dirname "$0")/../.."
P=build/ptboot
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
pass() { echo "code_dump: ok $*"; }
bad() { echo "code_dump: FAIL $*"; fail=1; }
# le64 N: the 8 little-endian bytes of N
le64() { local v=$1 i; for i in 0 1 2 3 4 5 6 7; do printf "\\x$(printf %02x $(( (v >> (8 * i)) & 255 )))"; done; }
head -c 8192 /dev/urandom > "$t/page2"
: > "$t/empty.pt"
mk() { # name addr1 addr2
    cp "$t/page2" "$t/$1.dump"
    { le64 "$2"; le64 "$3"; } > "$t/$1.addr"
}
mk ok 0x400000 0x401000
mk unaligned 0x400000 0x401008
mk twice 0x400000 0x400000
# expect NAME EXIT REGEX
expect() {
    $P flow --pages "$t/$1" --pt "$t/empty.pt" > "$t/out" 2>&1
    local rc=$?
    if [ $rc -eq "$2" ] && { [ -z "$3" ] || grep -Eq -- "$3" "$t/out"; }; then pass "$1 (exit $rc)"
    else bad "$1: exit $rc (want $2), output:"; head -3 "$t/out"; fi
}
expect ok 0 ''
expect unaligned 1 "unaligned: a page address is not 4 KiB aligned"
expect twice 1 "twice: the same page address twice"
exit $fail
