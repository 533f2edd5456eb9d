#!/bin/bash
# `ptboot flow --capture DIR` needs no other option: on capture directories
# written by the app's own sideband writer (build/test/capture/mkcapture)
# from flowgen's random programs, it prints exactly what `ptboot flow` prints
# with the equivalent explicit options (code, filter, timing, CPU), and
# libipt (build/test/libipt_flow, playing ptxed) decodes trace.pt with the
# options `--libipt-args` prints (docs/capture-files.md) to the same lines.
# Broken captures give one clear error with the file and line.
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
P=build/ptboot
build/test/flowgen --seeds 8 --insns 3000 --write "$t/gen" > /dev/null || exit 1
pass() { echo "capture_dir: ok $*"; }
bad() { echo "capture_dir: FAIL $*"; fail=1; }
# same NAME FILE-A FILE-B: equal and long enough to mean something
same() {
    local n
    n=$(wc -l < "$2")
    if [ "$n" -gt 100 ] && cmp -s "$2" "$3"; then pass "$1 ($n lines)"
    else bad "$1 ($n lines; differences:)"; diff "$2" "$3" | head -6; fi
}
# Seeds 2 and 7 carry timing packets (MTCFreq 3, CPUID 15h 2/168); seed 3
# simulates a Skylake (its trace has SKL014's lost PGD IP), so its capture
# says the hardware wrote it on family 6 model 0x4e.
for s in 1 2 3 7; do
    g=$t/gen/seed$s
    c=$t/cap$s
    raws="--raw $g.a.bin:0x400000 --raw $g.32.bin:0x600000 --raw $g.out.bin:0x900000"
    opts="" mk=""
    case $s in
    2|7) opts="--mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168"
         mk="--mtc-freq 3 --cpuid-0x15 2/168" ;;
    3)   opts="--cpu 6/78"; mk="--unit hw --cpu 6/78" ;;
    esac
    build/test/capture/mkcapture "$c" --pt "$g.plain.pt" $raws --filter 400000-7fffff $mk || { bad "mkcapture seed $s"; continue; }
    show="--no-inst --time --event:time --event:ip"
    $P flow $show --capture "$c" > "$t/a" 2>&1
    $P flow $show --pt "$g.plain.pt" $raws --filter 400000-7fffff $opts > "$t/b" 2>&1
    same "seed $s: --capture equals the explicit options${opts:+ ($opts)}" "$t/a" "$t/b"
    # the capture's libipt options, as docs/capture-files.md gives them to
    # ptxed; libipt_flow takes one FilterEn range as --filter LO-HI
    args=$($P flow --capture "$c" --libipt-args) || { bad "seed $s: --libipt-args failed"; continue; }
    case "$args" in
    *"--raw $c/code.dump:0x0-0x40000:0x400000 --raw $c/code.dump:0x40000-0x50000:0x600000 --raw $c/code.dump:0x50000-0x60000:0x900000"*)
        pass "seed $s: one --raw per run of adjacent pages" ;;
    *) bad "seed $s: unexpected --raw options: $args" ;;
    esac
    # ptdump's options are the same minus the code and filters; libipt's
    # packet decoder (build/test/ref_ptdump, ptdump's format) reads trace.pt
    # as it is, and ptboot's dump agrees line for line
    cpu=$(grep -o -- '--cpu [0-9/]*' <<< "$args")
    build/test/ref_ptdump $cpu "$c/trace.pt" > "$t/r" 2>&1
    $P dump $cpu "$c/trace.pt" > "$t/d" 2>&1
    if grep -q 'error' "$t/r"; then bad "seed $s: libipt's packet decoder reports errors in trace.pt"
    else same "seed $s: libipt's packets of trace.pt${cpu:+ ($cpu)} equal ptboot dump" "$t/r" "$t/d"; fi
    largs=$(sed -E 's/--filter:addr0_cfg 1 --filter:addr0_a (0x[0-9a-f]+) --filter:addr0_b (0x[0-9a-f]+)/--filter \1-\2/' <<< "$args")
    build/test/libipt_flow --no-inst --time --event:time --event:ip $largs > "$t/l" 2>&1
    same "seed $s: libipt with '--libipt-args' equals --capture" "$t/l" "$t/a"
done
if grep -q '^cpu.family 6$' "$t/cap3/sideband.txt" && grep -q '^unit hw$' "$t/cap3/sideband.txt"; then
    pass "the hardware capture's sideband names its CPU"
else bad "cap3's sideband lacks the CPU"; fi
case "$($P flow --capture "$t/cap3" --libipt-args)" in
--cpu\ 6/78\ --filter:addr0_cfg\ 1*) pass "libipt args start with --cpu for a hardware capture" ;;
*) bad "libipt args for a hardware capture lack --cpu" ;;
esac

# options after --capture override the sideband's
$P flow --no-inst --capture "$t/cap2" --mtc-freq 0 --time > "$t/a" 2>&1
$P flow --no-inst --capture "$t/cap2" --time > "$t/b" 2>&1
if cmp -s "$t/a" "$t/b"; then bad "--mtc-freq after --capture had no effect"; else pass "--mtc-freq after --capture overrides"; fi

# broken captures: exit 1, the file and line named
check() { # name regex cmd...
    local name=$1 re=$2; shift 2
    "$@" > "$t/out" 2>&1; local rc=$?
    if [ $rc -eq 1 ] && grep -Eq -- "$re" "$t/out"; then pass "$name"
    else bad "$name: exit $rc, output:"; head -3 "$t/out"; fi
}
check "missing directory" "nope/sideband.txt: No such file" $P flow --capture "$t/nope"
cp -r "$t/cap1" "$t/bad"
sed -i 's/^config.full .*/config.full sometimes/' "$t/bad/sideband.txt"
check "bad sideband line" "bad/sideband.txt:[0-9]+: config.full: want ring or stop" $P flow --capture "$t/bad"
sed -i '/^end$/d; s/^config.full .*/config.full ring/' "$t/bad/sideband.txt"
check "truncated sideband" "bad/sideband.txt:[0-9]+: truncated" $P flow --capture "$t/bad"
cp "$t/cap1/sideband.txt" "$t/bad/"; rm "$t/bad/trace.pt"
check "missing trace" "bad/trace.pt: No such file" $P flow --capture "$t/bad"
cp "$t/cap1/trace.pt" "$t/bad/"; head -c 12 "$t/cap1/code.addr" > "$t/bad/code.addr"
check "damaged code snapshot" "bad/code" $P flow --capture "$t/bad"
# ... named once, with what is wrong: "bad/code: 1 addresses for ..."
if grep -q "bad/code: .*bad/code" "$t/out"; then bad "damaged code snapshot: path named twice: $(head -1 "$t/out")"
else pass "damaged code snapshot: path named once"; fi
exit $fail
