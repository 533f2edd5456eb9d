#!/usr/bin/env bash
# CI-sized differential run of the ILD against Zydis (see ild_vs_zydis.c):
# every structured sequence, 300k random ones and the real code pages, in all
# three modes; then 16-bit code once more against Zydis' real mode.
# ILD_SEED=N reproduces or varies the random part.
set -u
seed="${ILD_SEED:-1}"
real=${PTBOOT_REAL_TRACES:-../shared/traces/real}
build/test/ild_vs_zydis --seed "$seed" --structured --random 300000 \
    --real "$real" --real-random 30000 || exit 1
build/test/ild_vs_zydis --seed "$seed" --mode 16 --real-mode16 --structured --random 100000 || exit 1
# what ran passed; without the real code pages the test counts as skipped
[ -d "$real" ] || exit 77
