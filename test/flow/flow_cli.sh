#!/bin/bash
# ptboot flow's command line: help, clear errors and exit codes for bad
# options and missing files, the ptxed options it accepts, disassembly
# without --no-inst, and that decode errors do not end the run.
set -u
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
check() { # name expected-rc regex cmd...
    local name=$1 want=$2 re=$3; shift 3
    "$@" > "$t/out" 2>&1; local rc=$?
    if [ "$rc" != "$want" ] || ! grep -Eq -- "$re" "$t/out"; then
        echo "flow_cli: FAIL $name: exit $rc (want $want), output:"; head -5 "$t/out"; fail=1
    else
        echo "flow_cli: ok $name"
    fi
}
P=build/ptboot
check help 0 '^usage: ptboot flow' $P flow --help
check no-pt 2 'pt FILE is required' $P flow --no-inst
check bad-option 2 "unknown option '--bogus'" $P flow --bogus --pt x
check missing-pt 1 'nope.pt: No such file' $P flow --pt "$t/nope.pt"
check missing-pages 1 'nope.dump' $P flow --pt /dev/null --pages "$t/nope"
check bad-raw 1 'FILE\[:FROM\[-TO\]\]:BASE|bad base' $P flow --pt /dev/null --raw "$t/x"
check bad-filter 2 'want LO-HI' $P flow --pt /dev/null --filter 12
check bad-mode 2 'want 16, 32 or 64' $P flow --pt /dev/null --mode 8
check bad-cpu 2 'want FAMILY/MODEL' $P flow --pt /dev/null --cpu x
check missing-arg 2 'needs an argument' $P flow --pt
# a tiny program: psb, psbend, mode.exec 64, tip.pge 0x1000, tnt(taken) ...
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x23\x99\x01\x71\x00\x10\x00\x00\x00\x00\x06' > "$t/a.pt"
printf '\x90\x48\x89\xc3\x74\x00\xc3' > "$t/a.bin"   # nop; mov rbx,rax; jz +0 (taken); ret
check accepted-ptxed-options 0 '^\[enabled\]' $P flow --no-inst --check --insn-decoder --time --event:tick --resync-on-error --cpuid-0x15.eax 2 --mtc-freq 3 --pt "$t/a.pt" --raw "$t/a.bin:0x1000"
check disassembly 0 '0000000000001001  mov rbx, rax' $P flow --pt "$t/a.pt" --raw "$t/a.bin:0x1000"
# garbage after the PSB+: an error line, then the run goes on to the end
cat "$t/a.pt" > "$t/b.pt"; printf '\x02\x05\x02\x05' >> "$t/b.pt"; cat "$t/a.pt" >> "$t/b.pt"
check error-then-resync 0 '^\[[0-9a-f]+, [0-9a-f]+: error: ' $P flow --no-inst --pt "$t/b.pt" --raw "$t/a.bin:0x1000"
n=$(grep -c '^\[enabled\]' "$t/out")
if [ "$n" != 2 ]; then echo "flow_cli: FAIL resync: $n enabled events after the error, want 2"; fail=1; fi
exit $fail
