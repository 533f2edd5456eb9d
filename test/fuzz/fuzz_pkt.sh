#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_pkt.c (ASan + UBSan). The corpus
# starts from synthetic traces; FUZZ_SECONDS (default 20) bounds the run.
# `make fuzz` runs it for longer with a corpus kept in build/fuzz/.
set -u
B=${B:-build}
secs=${FUZZ_SECONDS:-20}
corpus=${FUZZ_CORPUS:-}
if [ -z "$corpus" ]; then
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
fi
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  for s in 1 2 3; do
    "$B/bench/gen_trace" --size 1024 --seed $s "$corpus/flow$s.pt"
    "$B/bench/gen_trace" --size 1024 --seed $s --uniform --all-kinds "$corpus/all$s.pt"
    "$B/bench/gen_trace" --size 512 --seed $s --chaos --corrupt 4 "$corpus/chaos$s.pt"
  done
fi
out=$(mktemp)
"$B/test/fuzz_pkt" -max_total_time="$secs" -max_len=4096 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$B/fuzz-" "$corpus" >"$out" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY|Test unit written" "$out"
if [ $rc -ne 0 ]; then
  tail -40 "$out"
  echo "fuzz_pkt: FAILED (crash input saved with prefix $B/fuzz-)"
fi
rm -f "$out"
exit $rc
