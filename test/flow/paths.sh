#!/bin/bash
# `ptboot flow` runs ptxed's block loop and spends per instruction only what
# its output needs (decoder/ptd_fmt_flow.c: instructions walked by their
# lengths for --no-inst lines, blocks only counted with nothing to print;
# docs/flow.md "Decode paths"); the lines must not depend on it. For every
# option set below:
#  - without the block cache (--no-cache) the lines are byte for byte the
#    same but for the "blocks:" count (blocks then end only where trace is
#    needed, as libipt's without a cache);
#  - ptxed's instruction loop (--insn-decoder) prints the same lines but for
#    the "blocks:" count (that loop has none) and, with --offset, the
#    offsets (each of ptxed's loops prints its decoder's);
#  - with disassembly, the same lines with the instruction after each IP
#    (on the generated programs and the two small real traces);
#  - where the libipt reference (build/test/libipt_flow, libipt 2.0.5's
#    instruction decoder) knows the options and decodes as current libipt
#    does (foo and mruby), the instruction loop's lines are libipt's;
# on generated programs with ground truth (build/test/flowgen: timing
# packets, interrupts, far transfers between 64- and 32-bit code, TSX,
# calls out of the traced range), with the timing options, and on the real
# traces of ../shared/traces/real (skipped, saying so, when they are
# absent), also cut off at two thirds with --tail (the static path after
# the last packet).
set -u
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# the lines of $1 without ptxed's "blocks:" count (and, with --offset, the
# offsets at the start of each line): what every path prints alike
same_lines() {
    if [ "$offsets" = 1 ]; then
        grep -v '^blocks:' "$1" | sed -E 's/^[0-9a-f]{16}  //'
    else
        grep -v '^blocks:' "$1"
    fi
}

# compare WHAT REF ARGS...: the paths (and libipt when REF is set)
compare() {
    local what=$1 ref=$2 o
    shift 2
    local -a refopts=()
    offsets=0
    for o in "$@"; do
        [ "$o" = --no-inst ] || refopts+=("$o")
        [ "$o" = --offset ] && offsets=1
    done
    build/ptboot flow "$@" > "$tmp/fast" 2>&1
    build/ptboot flow --insn-decoder "$@" > "$tmp/insn" 2>&1
    build/ptboot flow --no-cache "$@" > "$tmp/nocache" 2>&1
    if ! cmp -s <(grep -v '^blocks:' "$tmp/fast") <(grep -v '^blocks:' "$tmp/nocache"); then
        echo "paths: FAIL $what: the block loop differs without its cache:"
        diff "$tmp/fast" "$tmp/nocache" | head -6
        fail=1
    elif ! cmp -s <(same_lines "$tmp/fast") <(same_lines "$tmp/insn"); then
        echo "paths: FAIL $what: the block loop differs from the instruction loop:"
        diff <(same_lines "$tmp/fast") <(same_lines "$tmp/insn") | head -6
        fail=1
    elif [ "$disasm" = 1 ] && [ "${refopts[*]}" != "$*" ] && [ "${refopts[*]#*--quiet}" = "${refopts[*]}" ] &&
         ! cmp -s <(build/ptboot flow "${refopts[@]}" | grep -v '^blocks:' | cut -c1-16) \
                  <(grep -v '^blocks:' "$tmp/fast" | cut -c1-16); then
        echo "paths: FAIL $what: with disassembly the IPs differ"
        fail=1
    elif [ -n "$ref" ] && ! build/test/libipt_flow "${refopts[@]}" > "$tmp/ref" 2>&1; then
        echo "paths: FAIL $what: the libipt reference failed"
        fail=1
    elif [ -n "$ref" ] && ! cmp -s <(grep -v '^blocks:' "$tmp/insn") "$tmp/ref"; then
        echo "paths: FAIL $what: differs from libipt:"
        diff <(grep -v '^blocks:' "$tmp/insn") "$tmp/ref" | head -6
        fail=1
    else
        echo "paths: ok $what: $(wc -l < "$tmp/fast") lines, the same on every path${ref:+ and as libipt}"
    fi
}

disasm=1
# generated programs (flowgen's timing configuration: MTCFreq 3, CPUID 0x15 2/168)
build/test/flowgen --seeds 13 --insns 3000 --write "$tmp/gen" > /dev/null || exit 1
T="--mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168"
for s in 3 7 12; do
    g="$tmp/gen/seed$s"
    read -r -a gargs <<< "--pt $g.pt --raw $g.a.bin:0x400000 --raw $g.32.bin:0x600000 --raw $g.out.bin:0x900000 $T"
    for o in "--quiet --stat" "--no-inst --stat --time --event:time" "--no-inst --event:tick --event:ip --time" \
             "--quiet --stat:blocks --event:tick" "--no-inst --offset --event:ip"; do
        read -r -a opts <<< "$o"
        # no libipt here: 2.0.5 differs from current libipt (ptboot's
        # reference) on these programs' ticks and filter exits
        # (test/flow/flow_current.sh checks current libipt's lines)
        ref=
        compare "flowgen seed $s $o" "$ref" "${opts[@]}" "${gargs[@]}"
    done
done

. test/lib/real_traces.sh
if [ ! -d "$REAL_DIR" ]; then
    echo "paths: real traces SKIP, $REAL_DIR not present"
    exit $fail
fi
# option sets; "ref" marks those build/test/libipt_flow also takes
sets=(
    "ref|--quiet --stat"
    "ref|--quiet"
    "ref|--no-inst --stat"
    "ref|--no-inst --event:ip"
    "|--quiet --stat:blocks"
    "|--quiet --offset"
    "|--no-inst --offset --stat"
    "|--no-inst --offset --event:ip --time --event:time"
    "|--no-inst --stat:blocks"
    "|--quiet --cpu 6/61 --stat"
    "|--no-inst --cpu 6/78"
)
for t in $REAL_TRACES; do
    real_trace_read "$t"
    case $name in Unzip|foo) disasm=1 ;; *) disasm=0 ;; esac
    for s in "${sets[@]}"; do
        read -r -a opts <<< "${s#*|}"
        ref=${s%%|*}
        # current libipt (ptboot's reference) reports status updates on
        # Unzip and avscript_32 that 2.0.5 does not (test/flow/real_current.sh)
        case $name in Unzip|avscript_32) ref= ;; esac
        compare "$name ${opts[*]}" "$ref" "${opts[@]}" "${args[@]}"
    done
    # cut off at two thirds: --tail goes on from where each path stopped
    size=$(stat -c %s "$REAL_DIR/$name/trace.pt")
    head -c $((size * 2 / 3)) "$REAL_DIR/$name/trace.pt" > "$tmp/cut.pt"
    for o in "--no-inst --tail" "--quiet --stat --tail" "--no-inst --tail --offset --event:ip"; do
        read -r -a opts <<< "$o"
        compare "$name cut at 2/3 $o" "" "${opts[@]}" "${args[@]:2}" --pt "$tmp/cut.pt"
    done
done
exit $fail
