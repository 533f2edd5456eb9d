#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_flow.c (ASan + UBSan) over trace +
# code for the query and flow layers; the corpus starts from flowgen's
# programs. FUZZ_SECONDS (default 10) bounds the run; `make flow-libfuzz`
# runs longer keeping its corpus in build/fuzz/flow-corpus.
set -u
B=${B:-build}
secs=${FUZZ_SECONDS:-10}
corpus=${FUZZ_CORPUS:-}
if [ -z "$corpus" ]; then
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
fi
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  # seeds: flowgen traces with the first KiB of their code
  seeds=$(mktemp -d)
  "$B/test/flowgen" --seeds 8 --insns 300 --write "$seeds" > /dev/null
  for pt in "$seeds"/seed*.pt; do
    s=${pt%.pt}
    { printf '\x03'; head -c 1024 "$s.a.bin"; cat "$pt"; } > "$corpus/$(basename "$s")"
  done
  rm -rf "$seeds"
fi
out=$(mktemp)
"$B/test/fuzz_flow" -max_total_time="$secs" -max_len=8192 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$B/fuzz-flow-" "$corpus" >"$out" 2>&1
rc=$?
grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY|Test unit written" "$out"
if [ $rc -ne 0 ]; then
  tail -40 "$out"
  echo "fuzz_flow: FAILED (crash input saved with prefix $B/fuzz-flow-)"
fi
rm -f "$out"
exit $rc
