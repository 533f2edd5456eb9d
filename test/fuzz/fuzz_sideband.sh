#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_sideband.c (ASan + UBSan): the
# sideband text parser, and write/parse round trips. Seeds: the sideband
# files of the capture directories test/capture/mkcapture writes (the app's
# own writer). FUZZ_SECONDS (default 5) bounds the run; `make capture-fuzz`
# runs longer keeping its corpus in build/fuzz/sideband-corpus.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  tmp=$(mktemp -d)
  "$B/test/flowgen" --seeds 2 --insns 200 --write "$tmp" > /dev/null
  n=0
  for pt in "$tmp"/seed*.pt; do
    case $pt in *.plain.pt) continue ;; esac  # flowgen's copy for libipt 2.0.5
    g=${pt%.pt}
    for mk in "--unit hw --cpu 6/78 --stop 401000-401fff" "--mtc-freq 3 --cpuid-0x15 2/168 --nom-freq 20"; do
      n=$((n + 1))
      # shellcheck disable=SC2086
      "$B/test/capture/mkcapture" "$tmp/cap$n" --pt "$pt" --raw "$g.a.bin:0x400000" \
        --raw "$g.out.bin:0x900000" --filter 400000-7fffff $mk > /dev/null &&
        cp "$tmp/cap$n/sideband.txt" "$corpus/sideband$n"
    done
  done
  rm -rf "$tmp"
  printf 'ptboot-sideband 1\nunit hw\nend\n' > "$corpus/minimal"
fi
fuzz_run fuzz_sideband 5 16384
