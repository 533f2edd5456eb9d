#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_sum.c (ASan + UBSan): the decode
# summary (decoder/ptd_sum*) over trace + code with small arenas and
# limits. Seeds: flowgen's programs (their first KiB of code and their
# trace), as for fuzz_flow, under a few summary configurations.
# FUZZ_SECONDS (default 6) bounds the run; `make capture-fuzz` runs longer
# keeping its corpus in build/fuzz/sum-corpus.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  seeds=$(mktemp -d)
  "$B/test/flowgen" --seeds 6 --insns 300 --write "$seeds" > /dev/null
  n=0
  for pt in "$seeds"/seed*.pt; do
    case $pt in *.plain.pt) continue ;; esac  # flowgen's copy for libipt 2.0.5
    s=${pt%.pt}
    n=$((n + 1))
    # byte 1: arena 0, 100 B, 4 KiB, 64 KiB (odd address for n > 3); small limits for even n
    ssel=$(printf '\\x%02x' $(( (n % 4) | (n > 3 ? 4 : 0) | (n % 2 ? 0 : 8) )))
    { printf '\x03'; printf "$ssel"; head -c 1024 "$s.a.bin"; cat "$pt"; } > "$corpus/$(basename "$s")"
  done
  rm -rf "$seeds"
fi
fuzz_run fuzz_sum 6 8192
