#!/bin/bash
# `ptboot flow --no-inst` on the real traces of ../shared/traces/real gives
# the lines of libipt 2.0.5 (build/test/libipt_flow, ptxed's format) where
# current libipt, ptboot's reference, decodes as 2.0.5 does: every IP,
# event and error line, and the README's counts. Where they differ,
# test/flow/real_current.sh checks current libipt's output instead:
#   - without --cpu, Unzip and avscript_32 hold status updates whose IP is
#     not where the flow stands; current libipt reports "bad status update"
#     and resyncs (2.0.5 goes on), so those two are compared here with
#     --cpu 6/61 (a Broadwell: BDM70 leaves those PSB+ out);
#   - exec-mode events: 2.0.5 makes one of every MODE.Exec, current libipt
#     only of one that changes the mode (libipt_flow applies that rule; its
#     --all-exec-modes prints 2.0.5's);
#   - --stat: the block decoder's "blocks:" line is current ptxed's (not
#     compared here).
# Skips when the traces are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "real_flow:"
fail=0
same() {    # what, ptboot options...: ptboot against libipt_flow
    local what=$1
    shift
    build/ptboot flow --no-inst "$@" | grep -v '^blocks:' > "$tmp/ptboot.txt"
    build/test/libipt_flow "$@" > "$tmp/libipt.txt"
    if ! cmp -s "$tmp/ptboot.txt" "$tmp/libipt.txt"; then
        echo "real_flow: FAIL $what: ptboot flow differs from libipt 2.0.5:"
        diff "$tmp/ptboot.txt" "$tmp/libipt.txt" | head -10
        fail=1
        return 1
    fi
    return 0
}
for t in $REAL_TRACES; do
    real_trace_read "$t"
    cpu=()
    case $name in Unzip|avscript_32) cpu=(--cpu 6/61) ;; esac
    label="$name${cpu[*]:+ ${cpu[*]}}"
    if same "$label" "${cpu[@]}" --stat "${args[@]}"; then
        got=$(sed -n 's/^insn: \([0-9]*\)\.$/\1/p' "$tmp/ptboot.txt")
        if [ -z "${cpu[*]}" ] && [ "$got" != "$want" ]; then
            echo "real_flow: FAIL $name: $got instructions, README says $want"
            fail=1
        else
            echo "real_flow: ok $label: $(wc -l < "$tmp/ptboot.txt") lines identical to libipt 2.0.5, $got instructions"
        fi
    fi
    # with a Broadwell's errata (BDM70, BDM64) on the others too (not
    # mruby: its size)
    if [ -z "${cpu[*]}" ] && [ "$name" != mruby ]; then
        same "$name --cpu 6/61" --cpu 6/61 --stat "${args[@]}" &&
            echo "real_flow: ok $name --cpu 6/61: identical to libipt 2.0.5"
    fi
    # event lines with their IPs (--event:ip), on the smaller traces
    if [ "$name" != mruby ]; then
        same "$label --event:ip" "${cpu[@]}" --event:ip "${args[@]}" &&
            echo "real_flow: ok $label: $(grep -c '^\[' "$tmp/ptboot.txt") event lines with --event:ip identical"
    fi
done
exit $fail
