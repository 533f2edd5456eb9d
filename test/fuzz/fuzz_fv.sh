#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_fv.c (ASan + UBSan): firmware
# volumes, files and sections (format/fv.c, format/ffs.c) and the host's
# image tree with LZMA sections and its writer (host/fv_image.c). Seeds:
# small images the target builds with the writers (FUZZ_FV_SEEDS) and
# OVMF's SEC volume. FUZZ_SECONDS (default 5) bounds the run; `make
# fuzz-fv` runs longer keeping its corpus in build/fuzz/fv-corpus.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  FUZZ_FV_SEEDS=$corpus "$B/test/fuzz_fv" > /dev/null 2>&1
  sec=/usr/share/OVMF/OVMF_CODE_4M.fd
  [ -f "$sec" ] && tail -c $((0x34000)) "$sec" > "$corpus/ovmf-secfv"
fi
fuzz_run fuzz_fv 5 262144
