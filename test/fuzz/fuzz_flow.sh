#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_flow.c (ASan + UBSan) over trace +
# code for the query and flow layers; the corpus starts from flowgen's
# programs. FUZZ_SECONDS (default 10) bounds the run; `make flow-libfuzz`
# runs longer keeping its corpus in build/fuzz/flow-corpus.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  # seeds: flowgen traces with the first KiB of their code
  seeds=$(mktemp -d)
  "$B/test/flowgen" --seeds 8 --insns 300 --write "$seeds" > /dev/null
  for pt in "$seeds"/seed*[0-9].pt; do
    s=${pt%.pt}
    { printf '\x03'; head -c 1024 "$s.a.bin"; cat "$pt"; } > "$corpus/$(basename "$s")"
  done
  rm -rf "$seeds"
fi
fuzz_run fuzz_flow 10 8192
