#!/usr/bin/env bash
# CI-sized differential run of the ILD against Zydis (see ild_vs_zydis.c):
# every structured sequence, 300k random ones and the real code pages, in all
# three modes. ILD_SEED=N reproduces or varies the random part.
set -u
exec build/test/ild_vs_zydis --seed "${ILD_SEED:-1}" --structured --random 300000 \
    --real ../shared/traces/real --real-random 30000
