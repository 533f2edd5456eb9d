#!/usr/bin/env bash
# make bench-export: `ptboot export` on a 234 M-instruction trace: the real
# mruby trace (../shared/traces/real/mruby, 6.3 M instructions) 37 times in
# a row (26 MB; each copy starts with a PSB, so the program runs 37 times
# over), in every format, timed as whole processes with their peak memory,
# next to the export of one copy. The exports keep each distinct call stack
# once and write Chrome events as they come, so the memory beyond the trace
# buffer (which is read whole) stays that of one copy: it follows the
# number of distinct stacks, not the instructions. Skipped (saying so)
# without the real traces.
# Peak memory by GNU time (Debian's time, installed by scripts/setup.sh).
set -u
cd "$(dirname "$0")/.."
real=${PTBOOT_REAL_TRACES:-../shared/traces/real}/mruby
if [ ! -f "$real/trace.pt" ]; then
  echo "bench-export: $real not found, skipped"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copies=37
for _ in $(seq $copies); do cat "$real/trace.pt"; done > "$tmp/big.pt"

# measure CMD...: one process's CPU and wall time and peak RSS (GNU time:
# a small C parent, so its fork adds nothing to the child's peak), and the
# export's own line
measure() {
  /usr/bin/time -f 'cpu_s=%U+%S wall_s=%e peak_mb=%M' -o "$tmp/time" "$@" 2> "$tmp/err" > /dev/null || {
    cat "$tmp/err"; return 1; }
  awk '{ split($1, c, "[=+]"); sub(/peak_mb=/, "", $3); printf "cpu_s=%.2f %s peak_mb=%.1f ", c[2] + c[3], $2, $3 / 1024 }' "$tmp/time"
  sed -n '1s/^[^:]*: [^:]*: //p' "$tmp/err"
}
fail=0
for fmt in folded chrome html; do
  for n in 1 $copies; do
    pt=$real/trace.pt
    [ "$n" = 1 ] || pt=$tmp/big.pt
    line=$(measure build/ptboot export --pt "$pt" --pages "$real/pages" --filter 400000-4b6000 \
             --format "$fmt" -o "$tmp/out.$fmt") || { echo "bench-export: export failed"; exit 1; }
    peak=$(sed 's/.*peak_mb=\([0-9.]*\).*/\1/' <<<"$line")
    trace_mb=$(awk -v b="$(stat -c %s "$pt")" 'BEGIN { printf "%.1f", b / 1048576 }')
    beyond=$(awk -v p="$peak" -v t="$trace_mb" 'BEGIN { printf "%.1f", p - t }')
    out_mb=$(awk -v b="$(stat -c %s "$tmp/out.$fmt")" 'BEGIN { printf "%.1f", b / 1048576 }')
    echo "bench: export format=$fmt copies=$n trace_mb=$trace_mb beyond_trace_mb=$beyond out_mb=$out_mb $line"
    eval "beyond_$n=$beyond"
  done
  # memory must not grow with the instructions: within 8 MB of one copy's
  if awk -v a="$beyond_1" -v b="$(eval echo \$beyond_$copies)" 'BEGIN { exit !(b - a > 8) }'; then
    echo "bench-export: $fmt: memory beyond the trace grew from $beyond_1 MB to $(eval echo \$beyond_$copies) MB"
    fail=1
  fi
done
exit $fail
