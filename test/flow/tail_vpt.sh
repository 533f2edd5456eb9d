#!/bin/bash
# `ptboot flow --tail` on the virtual-PT recordings of OVMF
# (test/vpt/fixtures: the trace QEMU's plugin wrote and the instructions the
# CPU really ran, docs/vpt.md), each trace cut off at its packet boundaries
# (TAIL_VPT_CUTS of them, default 60, spread over each trace), as a full
# buffer or a reset cuts it:
#   - the flow's instructions are the first ones that ran, and the tail's
#     go on exactly as the real ones did, up to an event the code cannot
#     know (an interrupt, a disable) or the recording's end;
#   - without --tail the lines are those before "[tail]".
# Prints per fixture how far the flow alone stopped short of where the
# static path ends (the instructions the tail adds: min, max, total).
set -u
cd "$(dirname "$0")/../.."
fx=test/vpt/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
want=${TAIL_VPT_CUTS:-60}
for p in "$fx"/*.pt; do
    name=$(basename "$p" .pt)
    f=$fx/$name
    gzip -dc "$f.truth.gz" > "$tmp/truth.txt"
    filter=()
    [ -s "$f.filter" ] && filter=(--filter "$(cat "$f.filter")")
    opts=(--no-inst --pages "$f" "${filter[@]}")
    build/ptboot dump "$p" | while read -r off _; do echo $((16#$off)); done > "$tmp/offsets"
    total=$(wc -l < "$tmp/offsets")
    step=$(( total > want ? total / want : 1 ))
    cuts=0 tails=0 inferred=0 same=0 events=0 min=-1 max=0
    while read -r cut; do
        [ "$cut" -gt 0 ] || continue
        cuts=$((cuts + 1))
        [ $(( cuts % step )) -eq 0 ] || continue
        head -c "$cut" "$p" > "$tmp/cut.pt"
        build/ptboot flow "${opts[@]}" --pt "$tmp/cut.pt" --tail > "$tmp/tail.txt" 2>&1
        build/ptboot flow "${opts[@]}" --pt "$tmp/cut.pt" > "$tmp/plain.txt" 2>&1
        sed '/^\[tail\]$/,$d' "$tmp/tail.txt" > "$tmp/before.txt"
        if ! cmp -s "$tmp/before.txt" "$tmp/plain.txt"; then
            echo "tail_vpt: FAIL $name cut $cut: without --tail the lines differ"
            diff "$tmp/plain.txt" "$tmp/before.txt" | head -5
            fail=1
            continue
        fi
        r=$(awk -v run="ran" -f test/flow/tail_cmp.awk "$tmp/truth.txt" "$tmp/tail.txt")
        case "$r" in
        ok*)
            read -r _ n s e <<< "$r"
            if [ "$n" -gt 0 ]; then
                tails=$((tails + 1))
                [ "$min" -lt 0 ] || [ "$n" -lt "$min" ] && min=$n
                [ "$n" -gt "$max" ] && max=$n
            fi
            inferred=$((inferred + n)) same=$((same + s)) events=$((events + e))
            ;;
        *)
            echo "tail_vpt: FAIL $name cut $cut: $r"
            fail=1
            ;;
        esac
    done < "$tmp/offsets"
    if [ "$tails" -eq 0 ]; then
        echo "tail_vpt: FAIL $name: no cut had a tail"
        fail=1
    fi
    echo "tail_vpt: $name: $((cuts / step)) cuts of $cuts packet boundaries, $tails with a tail of $min..$max instructions, $inferred inferred, $same equal to what ran (past an event: $events)"
done
[ "$fail" -eq 0 ] && echo "tail_vpt: ok"
exit $fail
