#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_cpuid.c (ASan + UBSan), seeded
# with the real CPUs' dumps. FUZZ_SECONDS (default 10) bounds the run;
# `make cpuid-fuzz` (part of `make fuzz`) runs longer keeping its corpus.
set -u
B=${B:-build}
secs=${FUZZ_SECONDS:-10}
corpus=${FUZZ_CORPUS:-}
if [ -z "$corpus" ]; then
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
fi
mkdir -p "$corpus"
[ -n "$(ls -A "$corpus")" ] || cp test/fixtures/cpuid/*.txt "$corpus/"
out=$(mktemp)
"$B/test/fuzz_cpuid" -max_total_time="$secs" -max_len=16384 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$B/fuzz-cpuid-" "$corpus" >"$out" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY|Test unit written" "$out"
if [ $rc -ne 0 ]; then
  tail -40 "$out"
  echo "fuzz_cpuid: FAILED (crash input saved with prefix $B/fuzz-cpuid-)"
fi
rm -f "$out"
exit $rc
