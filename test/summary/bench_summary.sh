#!/bin/bash
# make bench: `ptboot summary` on the real traces (skips when absent): decode
# speed, size of the text with the default limits, the time it takes over a
# 115200-baud serial line (10 bits a byte), bytes per call event, and the
# bound on the text for any trace (ptd_sum_text_bound); the goal is that
# the summary of a 1 MiB trace goes over serial in under 30 s.
set -u
. test/lib/real_traces.sh
PTBOOT=${PTBOOT:-build/ptboot}
real_traces_begin "bench: summary"
fail=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    best=
    for round in 1 2 3; do
        s=$(date +%s%N)
        "$PTBOOT" summary "${args[@]}" --stat > "$tmp/sum.txt" || exit 1
        e=$(date +%s%N)
        ns=$((e - s))
        if [ -z "$best" ] || [ "$ns" -lt "$best" ]; then best=$ns; fi
    done
    stat=$(tail -1 "$tmp/sum.txt")
    get() { awk -v k="$1" '{ for (i = 2; i < NF; i++) if ($i == k) print $(i + 1) }' <<< "$stat"; }
    bytes=$(get bytes); insns=$(get insns); calls=$(get calls); text=$(get text); bound=$(get bound)
    awk -v n="$name" -v b="$bytes" -v i="$insns" -v ns="$best" -v t="$text" -v c="$calls" -v B="$bound" 'BEGIN {
        printf "bench: summary %s: %d trace bytes, %d insns in %.1f ms (%.0f M insns/s incl. process start); %d bytes of text = %.1f s at 115200 baud, %.2f bytes per call event (any trace: at most %d bytes = %.1f s)\n",
            n, b, i, ns / 1e6, i / (ns / 1e3), t, t * 10 / 115200, c ? t / c : 0, B, B * 10 / 115200 }'
    # the goal: a (1 MiB) trace's summary in under 30 s; the text is bounded
    # by the limits, not by the trace
    if [ "$text" -gt "$bound" ] || [ $((bound * 10 / 115200)) -ge 30 ]; then
        echo "bench: summary FAIL $name: $text bytes of text, bound $bound: 30 s or more at 115200 baud"
        fail=1
    fi
done
exit $fail
