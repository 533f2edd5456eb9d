#!/usr/bin/env bash
# Runs each test program or script given (scripts by path ending in .sh),
# shows its output, and ends with a single "tests: N passed, N failed" line.
set -u
pass=0 fail=0 failed=()
for t in "$@"; do
  echo "=== $t"
  if [[ $t == *.sh ]]; then bash "$t"; else "$t"; fi
  rc=$?
  if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t (exit $rc)"); fi
done
echo
for f in "${failed[@]}"; do echo "FAILED: $f"; done
echo "tests: $pass passed, $fail failed"
[ $fail -eq 0 ]
