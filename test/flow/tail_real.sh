#!/bin/bash
# `ptboot flow --tail` on the real traces of ../shared/traces/real, cut off
# at 40 places in their first 64 KiB (as a full buffer or a reset cuts a
# trace, mid-packet): the instructions before "[tail]" are the first ones of
# the whole trace's flow, and the tail's go on exactly as the whole trace's
# do, up to where that one has an event (an interrupt or a disable: what
# the code alone cannot know) or ends. Without --tail the cut decodes print
# the same lines as before "[tail]", and --quiet --stat:insn the same counts.
# Skips when the traces are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "tail_real:"
fail=0
span=65536
for t in $REAL_TRACES; do
    real_trace_read "$t"
    pt=$REAL_DIR/$name/trace.pt
    size=$(stat -c %s "$pt")
    [ "$size" -gt $((span * 2)) ] || span=$((size / 2))
    # the reference: the first 2*span bytes (past every cut by span)
    head -c $((span * 2)) "$pt" > "$tmp/whole.pt"
    build/ptboot flow --no-inst "${args[@]:2}" --pt "$tmp/whole.pt" > "$tmp/whole.txt"
    tails=0 inferred=0 compared=0 events=0
    for ((i = 1; i <= 40; i++)); do
        cut=$((span * i / 40 - (i * 7) % 13))
        head -c "$cut" "$pt" > "$tmp/cut.pt"
        build/ptboot flow --no-inst "${args[@]:2}" --pt "$tmp/cut.pt" --tail > "$tmp/tail.txt"
        build/ptboot flow --no-inst "${args[@]:2}" --pt "$tmp/cut.pt" > "$tmp/plain.txt"
        # without --tail: the lines before [tail]
        sed '/^\[tail\]$/,$d' "$tmp/tail.txt" > "$tmp/before.txt"
        if ! cmp -s "$tmp/before.txt" "$tmp/plain.txt"; then
            echo "tail_real: FAIL $name cut $cut: without --tail the lines differ"
            diff "$tmp/plain.txt" "$tmp/before.txt" | head -5
            fail=1
            continue
        fi
        # the check: awk over the whole flow, then the cut one with its tail
        r=$(awk -v run="whole trace" -f test/flow/tail_cmp.awk "$tmp/whole.txt" "$tmp/tail.txt")
        # --quiet --stat:insn: the counts alone, the same
        q=$(build/ptboot flow --no-inst "${args[@]:2}" --pt "$tmp/cut.pt" --tail --quiet --stat:insn | grep -v '^\[' | tr '\n' ' ')
        want="insn: $(grep -c '^[0-9a-f]' "$tmp/before.txt"). tail: $(sed -n '/^\[tail\]$/,$p' "$tmp/tail.txt" | grep -c '^[0-9a-f]') ("
        if [ "${q#"$want"}" = "$q" ]; then
            echo "tail_real: FAIL $name cut $cut: --quiet --stat says '$q', the lines '$want...'"
            fail=1
        fi
        case "$r" in
        ok*)
            read -r _ n same ev <<< "$r"
            [ "$n" -gt 0 ] && tails=$((tails + 1))
            inferred=$((inferred + n)) compared=$((compared + same)) events=$((events + ev))
            ;;
        *)
            echo "tail_real: FAIL $name cut $cut: $r"
            fail=1
            ;;
        esac
    done
    if [ "$tails" -eq 0 ]; then
        echo "tail_real: FAIL $name: no cut had a tail"
        fail=1
    fi
    echo "tail_real: $name: 40 cuts, $tails with a tail, $inferred instructions inferred, $compared equal to the whole trace's (the rest past an event: $events)"
done
[ "$fail" -eq 0 ] && echo "tail_real: ok"
exit $fail
