#!/bin/bash
# `ptboot flow --no-inst` on the real traces of ../shared/traces/real gives
# exactly the lines of the libipt reference (build/test/libipt_flow, ptxed's
# format): every IP, event and error line, and the README's counts.
# Skips when the traces are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "real_flow:"
fail=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    args+=(--stat)
    build/ptboot flow --no-inst "${args[@]}" > "$tmp/ptboot.txt"
    build/test/libipt_flow "${args[@]}" > "$tmp/libipt.txt"
    got=$(sed -n 's/^insn: \([0-9]*\)\.$/\1/p' "$tmp/ptboot.txt")
    if ! cmp -s "$tmp/ptboot.txt" "$tmp/libipt.txt"; then
        echo "real_flow: FAIL $name: ptboot flow differs from libipt:"
        diff "$tmp/ptboot.txt" "$tmp/libipt.txt" | head -10
        fail=1
    elif [ "$got" != "$want" ]; then
        echo "real_flow: FAIL $name: $got instructions, README says $want"
        fail=1
    else
        echo "real_flow: ok $name: $(wc -l < "$tmp/ptboot.txt") lines identical to libipt, $got instructions"
    fi
    # with a Broadwell's errata (BDM70, BDM64) as libipt applies them for
    # --cpu 6/61: avscript_32's TIP.PGE after a PSB+ FUP is BDM70's pattern
    # and decodes without the error; on the smaller traces
    if [ "$name" != mruby ]; then
        build/ptboot flow --no-inst --cpu 6/61 "${args[@]}" > "$tmp/ptboot.cpu"
        build/test/libipt_flow --cpu 6/61 "${args[@]}" > "$tmp/libipt.cpu"
        if ! cmp -s "$tmp/ptboot.cpu" "$tmp/libipt.cpu"; then
            echo "real_flow: FAIL $name --cpu 6/61: ptboot flow differs from libipt:"
            diff "$tmp/ptboot.cpu" "$tmp/libipt.cpu" | head -6
            fail=1
        else
            echo "real_flow: ok $name --cpu 6/61: identical to libipt, $(grep -c error "$tmp/ptboot.cpu") error lines"
        fi
    fi
    # event lines with their IPs (--event:ip), on the smaller traces
    if [ "$name" != mruby ]; then
        build/ptboot flow --no-inst --event:ip "${args[@]}" | grep '^\[' > "$tmp/ptboot.ev"
        build/test/libipt_flow --event:ip "${args[@]}" | grep '^\[' > "$tmp/libipt.ev"
        if ! cmp -s "$tmp/ptboot.ev" "$tmp/libipt.ev"; then
            echo "real_flow: FAIL $name: --event:ip lines differ from libipt:"
            diff "$tmp/ptboot.ev" "$tmp/libipt.ev" | head -6
            fail=1
        else
            echo "real_flow: ok $name: $(wc -l < "$tmp/ptboot.ev") event lines with --event:ip identical"
        fi
    fi
done
exit $fail
