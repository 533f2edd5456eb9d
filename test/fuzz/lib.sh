# Shared by the bounded libFuzzer runs (sourced). FUZZ_SECONDS bounds a run,
# FUZZ_CORPUS keeps the corpus between runs (`make fuzz`); without it a
# temporary corpus is made and removed.
set -u
B=${B:-build}

# fuzz_corpus: sets $corpus; returns 0 if it is empty (the caller seeds it).
fuzz_corpus() {
  corpus=${FUZZ_CORPUS:-}
  if [ -z "$corpus" ]; then
    corpus=$(mktemp -d)
    trap 'rm -rf "$corpus"' EXIT
  fi
  mkdir -p "$corpus"
  [ -z "$(ls -A "$corpus")" ]
}

# fuzz_run TARGET DEFAULT-SECONDS MAX-LEN: runs $B/test/TARGET over $corpus,
# shows libFuzzer's summary, and on a crash its tail and where the input is.
fuzz_run() {
  local target=$1 secs=${FUZZ_SECONDS:-$2} max_len=$3 out rc
  local prefix=$B/${target//_/-}-
  out=$(mktemp)
  "$B/test/$target" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$prefix" "$corpus" >"$out" 2>&1
  rc=$?
  grep -E "^(stat::number_of_executed_units|stat::peak_rss_mb)|ERROR|SUMMARY|Test unit written" "$out"
  if [ $rc -ne 0 ]; then
    tail -40 "$out"
    echo "$target: FAILED (crash input saved with prefix $prefix)"
  fi
  rm -f "$out"
  return $rc
}
