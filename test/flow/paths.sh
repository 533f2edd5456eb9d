#!/bin/bash
# `ptboot flow` picks the fastest decode path its output allows (block by
# block with a block cache, host/cmd_flow.c choose_path); the lines must not
# depend on it. For every option set below, the default path's output is
# byte for byte that of the instruction path (--insn-decoder) and of the
# block path without a cache (--no-cache), and, where the libipt reference
# (build/test/libipt_flow) knows the options, that of libipt:
#  - on generated programs with ground truth (build/test/flowgen: timing
#    packets, interrupts, far transfers between 64- and 32-bit code, TSX,
#    calls out of the traced range), with the timing options;
#  - on the real traces of ../shared/traces/real (skipped, saying so, when
#    they are absent), and on them cut off at two thirds with --tail (the
#    static path after the last packet).
set -u
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# compare WHAT REF ARGS...: the three paths (and libipt when REF is set)
compare() {
    local what=$1 ref=$2
    shift 2
    local -a refopts=()
    for o in "$@"; do [ "$o" = --no-inst ] || refopts+=("$o"); done
    build/ptboot flow "$@" > "$tmp/fast" 2>&1
    build/ptboot flow --insn-decoder "$@" > "$tmp/insn" 2>&1
    build/ptboot flow --no-cache "$@" > "$tmp/nocache" 2>&1
    if ! cmp -s "$tmp/fast" "$tmp/insn"; then
        echo "paths: FAIL $what: the block path differs from the instruction path:"
        diff "$tmp/fast" "$tmp/insn" | head -6
        fail=1
    elif ! cmp -s "$tmp/fast" "$tmp/nocache"; then
        echo "paths: FAIL $what: the block path differs without its cache:"
        diff "$tmp/fast" "$tmp/nocache" | head -6
        fail=1
    elif [ -n "$ref" ] && ! build/test/libipt_flow "${refopts[@]}" > "$tmp/ref" 2>&1; then
        echo "paths: FAIL $what: the libipt reference failed"
        fail=1
    elif [ -n "$ref" ] && ! cmp -s "$tmp/fast" "$tmp/ref"; then
        echo "paths: FAIL $what: differs from libipt:"
        diff "$tmp/fast" "$tmp/ref" | head -6
        fail=1
    else
        echo "paths: ok $what: $(wc -l < "$tmp/fast") lines, the same on every path${ref:+ and as libipt}"
    fi
}

# generated programs (flowgen's timing configuration: MTCFreq 3, CPUID 0x15 2/168)
build/test/flowgen --seeds 13 --insns 3000 --write "$tmp/gen" > /dev/null || exit 1
T="--mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168"
for s in 3 7 12; do
    g="$tmp/gen/seed$s"
    read -r -a gargs <<< "--pt $g.pt --raw $g.a.bin:0x400000 --raw $g.32.bin:0x600000 --raw $g.out.bin:0x900000 $T"
    for o in "--quiet --stat" "--no-inst --stat --time --event:time" "--no-inst --event:tick --event:ip --time" \
             "--quiet --stat:blocks --event:tick" "--no-inst --offset --event:ip"; do
        read -r -a opts <<< "$o"
        ref=ref
        [ "${o#*--offset}" != "$o" ] || [ "${o#*stat:blocks}" != "$o" ] && ref=
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
    for s in "${sets[@]}"; do
        read -r -a opts <<< "${s#*|}"
        compare "$name ${opts[*]}" "${s%%|*}" "${opts[@]}" "${args[@]}"
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
