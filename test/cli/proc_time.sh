#!/usr/bin/env bash
# build/bench/proc_time, the whole-process timer of `make bench-flow`
# (bench/proc_time.c): the order it runs commands in (A B A B, or with
# --pairs A A B B, each pair's second run the figure), each command's own
# VAR=VALUE environment, one line per command with the fields bench/flow.sh
# reads, and its exit codes (2 for bad usage, 1 for a command that fails).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/check.sh
T=build/bench/proc_time
log=$tmp/order

# each run appends its name (and its X) to the log
run_a=(X=a sh -c 'echo "A$X" >> "$0"' "$log")
run_b=(sh -c 'echo "B${X:-}" >> "$0"' "$log")

out=$("$T" 2 "${run_a[@]}" -- "${run_b[@]}") || not_ok "two commands: exit $?"
[ "$(tr '\n' ' ' < "$log")" = "Aa B Aa B " ] && ok "in turn: A B A B, X only in A's environment" ||
  not_ok "in turn: order $(tr '\n' ' ' < "$log")"
[ "$(grep -c '^proc_time: cmd=' <<< "$out")" = 2 ] && ok "in turn: a line per command" ||
  not_ok "in turn: lines: $out"
grep -q "^proc_time: cmd=1 cpu_min_ms=[0-9.]* cpu_median_ms=[0-9.]* wall_min_ms=[0-9.]* wall_median_ms=[0-9.]* rounds=2 name=sh$" <<< "$out" &&
  ok "in turn: the line's fields" || not_ok "in turn: fields: $out"
grep -q after_other <<< "$out" && not_ok "in turn: after_other without --pairs" ||
  ok "in turn: no after_other fields"

: > "$log"
out=$("$T" --pairs 2 "${run_a[@]}" -- "${run_b[@]}") || not_ok "--pairs: exit $?"
[ "$(tr '\n' ' ' < "$log")" = "Aa Aa B B Aa Aa B B " ] && ok "--pairs: A A B B per round" ||
  not_ok "--pairs: order $(tr '\n' ' ' < "$log")"
[ "$(grep -c ' after_other_cpu_min_ms=[0-9.]* after_other_wall_min_ms=[0-9.]* rounds=2 ' <<< "$out")" = 2 ] &&
  ok "--pairs: both lines give the first runs' figures" || not_ok "--pairs: fields: $out"

# which run of a pair is which: a command slow on its first run of a pair
# only (the marker file says which run this is) must show it in
# after_other, not in cpu_min
slow_first=(sh -c 'if [ -e "$0" ]; then rm "$0"; else : > "$0"; i=0; while [ $i -lt 50000 ]; do i=$((i + 1)); done; fi' "$tmp/mark")
out=$("$T" --pairs 3 "${slow_first[@]}") || not_ok "--pairs slow first: exit $?"
awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
     END { exit !(v["after_other_cpu_min_ms"] > 5 * v["cpu_min_ms"]) }' <<< "$out" &&
  ok "--pairs: the figure is the second run's, after_other the first's" ||
  not_ok "--pairs: slow first run not in after_other: $out"

"$T" 2 false > /dev/null 2> "$tmp/err"
r=$?
[ $r = 1 ] && grep -q "false exited with status 1" "$tmp/err" && ok "a failing command: exit 1, named" ||
  not_ok "a failing command: exit $r, $(cat "$tmp/err")"
for bad in "" "0 true" "1001 true" "--pairs" "--pairs x true"; do
  # shellcheck disable=SC2086
  "$T" $bad > /dev/null 2>&1
  r=$?
  [ $r = 2 ] && ok "usage '$bad': exit 2" || not_ok "usage '$bad': exit $r"
done
exit $fail
