#!/usr/bin/env bash
# Runs the tests given as GROUP:PATH (a unit-test program, or a script run
# with bash when PATH ends in .sh), shows each one's output after a
# "=== PATH" line, and ends with a table of the groups (tests, passed,
# failed, skipped, seconds), the eight slowest tests (CI has a time
# budget: README, "Tests and benchmarks") and the line
#   tests: N passed, N failed, N skipped
# A test passes with exit 0, is skipped with exit 77 (its input is missing:
# it says what), and fails with anything else.
set -u
SKIP=77
pass=0 fail=0 skip=0 failed=() skipped=() groups=() times=()
declare -A g_n g_pass g_fail g_skip g_secs
for arg in "$@"; do
  g=${arg%%:*} t=${arg#*:}
  [ "$g" = "$arg" ] && g=other
  if [ -z "${g_n[$g]:-}" ]; then
    groups+=("$g"); g_n[$g]=0 g_pass[$g]=0 g_fail[$g]=0 g_skip[$g]=0 g_secs[$g]=0
  fi
  echo "=== $t"
  start=$(date +%s%N)
  if [[ $t == *.sh ]]; then bash "$t"; else "$t"; fi
  rc=$?
  secs=$(( ($(date +%s%N) - start) / 1000000 ))
  g_n[$g]=$((g_n[$g] + 1)) g_secs[$g]=$((g_secs[$g] + secs))
  times+=("$secs $t")
  if [ $rc -eq 0 ]; then
    pass=$((pass + 1)) g_pass[$g]=$((g_pass[$g] + 1))
  elif [ $rc -eq $SKIP ]; then
    skip=$((skip + 1)) g_skip[$g]=$((g_skip[$g] + 1)) skipped+=("$t")
  else
    fail=$((fail + 1)) g_fail[$g]=$((g_fail[$g] + 1)) failed+=("$t (exit $rc)")
  fi
done
echo
printf '%-10s %6s %7s %7s %8s %8s\n' group tests passed failed skipped seconds
total=0
for g in "${groups[@]}"; do
  printf '%-10s %6d %7d %7d %8d %8d.%d\n' "$g" "${g_n[$g]}" "${g_pass[$g]}" "${g_fail[$g]}" \
    "${g_skip[$g]}" $((g_secs[$g] / 1000)) $((g_secs[$g] % 1000 / 100))
  total=$((total + g_secs[$g]))
done
printf '%-10s %6d %7d %7d %8d %8d.%d\n' all $((pass + fail + skip)) $pass $fail $skip \
  $((total / 1000)) $((total % 1000 / 100))
echo
echo "slowest tests (seconds):"
printf '%s\n' "${times[@]}" | sort -rn | head -8 |
  while read -r ms t; do printf '%6d.%d  %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$t"; done
echo
for s in "${skipped[@]}"; do echo "SKIPPED: $s"; done
for f in "${failed[@]}"; do echo "FAILED: $f"; done
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
