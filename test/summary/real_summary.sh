#!/bin/bash
# `ptboot summary` on the real traces of ../shared/traces/real (skips when
# absent): its instruction count equals current libipt's (ptxed --stat, as
# test/flow/real_current.txt records it), and its calls per function equal those counted
# independently from `ptboot flow --event:ip` (with disassembly): the
# instruction after each executed `call` is the callee (or the IP of the
# [disabled] event when the call leaves the traced range, or its "at" when
# tracing stopped asynchronously before the callee's first instruction);
# `(caller of`, `irq>` and `in>` rows are no call instructions. The summary's
# text stays small (bytes per call event printed).
set -u
. test/lib/real_traces.sh
PTBOOT=${PTBOOT:-build/ptboot}
real_traces_begin "real_summary:"
# the value after key in a "summary: key value key value ..." line
get() { awk -v k="$1" '{ for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' <<< "$2"; }
fail=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    want=$(awk -v h="== $name --stat" '$0 == h { on = 1; next } /^== / { on = 0 }
                                         on && /^insn: / { sub(/^insn: /, ""); sub(/\.$/, ""); print }' \
           test/flow/real_current.txt)
    # every function listed (--top large, arena large enough for all)
    "$PTBOOT" summary "${args[@]}" --top 1000000 --arena 67108864 --stat > "$tmp/sum.txt" || {
        echo "real_summary: FAIL $name: ptboot summary exited $?"; fail=1; continue; }
    stat=$(tail -1 "$tmp/sum.txt")
    insns=$(get insns "$stat"); calls=$(get calls "$stat"); untracked=$(get untracked "$stat")
    if [ "$insns" != "$want" ]; then
        echo "real_summary: FAIL $name: $insns instructions, current libipt gives $want"
        fail=1
        continue
    fi
    if [ "$untracked" != 0 ]; then
        echo "real_summary: FAIL $name: $untracked untracked with a 64 MiB arena"
        fail=1
    fi
    # default limits: the text for the serial console
    "$PTBOOT" summary "${args[@]}" --stat > "$tmp/default.txt"
    text=$(get text "$(tail -1 "$tmp/default.txt")")
    bytes=$(head -n -1 "$tmp/default.txt" | wc -c)
    bound=$(get bound "$(tail -1 "$tmp/default.txt")")
    if [ "$text" -gt "$bound" ]; then
        echo "real_summary: FAIL $name: $text bytes of text, over the bound $bound"
        fail=1
    fi
    if [ "$text" != "$bytes" ]; then
        echo "real_summary: FAIL $name: stats say $text bytes of text, $bytes written"
        fail=1
    fi
    [ "$name" = mruby ] && { echo "real_summary: ok $name: $insns instructions; $bytes bytes of summary for $calls calls"; continue; }
    # calls per callee from the flow (independent of the summary's code)
    "$PTBOOT" flow --event:ip "${args[@]}" | awk '
        /^\[/ {
            if (pending && $0 ~ /^\[disabled, at: /) {
                # asynchronous: stopped before the first insn of the callee
                match($0, /at: [0-9a-f]+/)
                ip = substr($0, RSTART + 4, RLENGTH - 4); sub(/^0+/, "", ip)
                n["0x" (ip == "" ? "0" : ip)]++
                pending = 0
            } else if (pending && $0 ~ /^\[disabled/) {
                if (match($0, /ip: [0-9a-f]+/)) {
                    ip = substr($0, RSTART + 4, RLENGTH - 4); sub(/^0+/, "", ip)
                    n["0x" (ip == "" ? "0" : ip)]++
                } else n["(outside the trace)"]++
                pending = 0
            } else if ($0 ~ /error/) pending = 0
            next
        }
        /^[0-9a-f]+  / {
            if (pending) { ip = $1; sub(/^0+/, "", ip); n["0x" (ip == "" ? "0" : ip)]++; pending = 0 }
            if ($2 == "call") pending = 1
        }
        END { for (k in n) print k, n[k] }' | sort > "$tmp/flow.calls"
    # the summary's functions section: calls self-insns % name
    awk '/^== functions/ {on = 1; next} /^== / {on = 0} on && $4 !~ /^\(caller/ && $4 !~ /^irq>/ && $4 !~ /^in>/ && $1 > 0 {
            name = $4; for (i = 5; i <= NF; i++) name = name " " $i; print name, $1 }' "$tmp/sum.txt" |
        sort > "$tmp/sum.calls"
    flowtotal=$(awk '{s += $NF} END {print s + 0}' "$tmp/flow.calls")
    if [ "$flowtotal" != "$calls" ]; then
        echo "real_summary: FAIL $name: $calls calls in the summary, $flowtotal call instructions in the flow"
        fail=1
    elif ! cmp -s "$tmp/flow.calls" "$tmp/sum.calls"; then
        echo "real_summary: FAIL $name: calls per function differ (flow < > summary):"
        diff "$tmp/flow.calls" "$tmp/sum.calls" | head -8
        fail=1
    else
        echo "real_summary: ok $name: $insns instructions, $calls calls to $(wc -l < "$tmp/flow.calls") functions as in the flow; $bytes bytes of summary"
    fi
done
exit $fail
