#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_pkt.c (ASan + UBSan). The corpus
# starts from synthetic traces; FUZZ_SECONDS (default 20) bounds the run.
# `make fuzz` runs it for longer with a corpus kept in build/fuzz/.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  for s in 1 2 3; do
    "$B/bench/gen_trace" --size 1024 --seed $s "$corpus/flow$s.pt"
    "$B/bench/gen_trace" --size 1024 --seed $s --uniform --all-kinds "$corpus/all$s.pt"
    "$B/bench/gen_trace" --size 512 --seed $s --chaos --corrupt 4 "$corpus/chaos$s.pt"
  done
fi
fuzz_run fuzz_pkt 20 4096
