#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_cpuid.c (ASan + UBSan), seeded
# with the real CPUs' dumps. FUZZ_SECONDS (default 10) bounds the run;
# `make cpuid-fuzz` (part of `make fuzz`) runs longer keeping its corpus.
. "$(dirname "$0")/lib.sh"
fuzz_corpus && cp test/fixtures/cpuid/*.txt "$corpus/"
fuzz_run fuzz_cpuid 10 16384
