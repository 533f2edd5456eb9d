#!/bin/bash
# flowgen's random programs, their traces cut at every packet boundary and
# decoded with --tail, against the ground truth (test/flow/tailgen.c): the
# tail is a prefix of what ran and reaches the first instruction that needs
# trace; without --tail the lines are byte-identical; the block API gives
# the same tail; traces and code with flipped bytes end (ASan). `build/test/
# tailgen --seeds N --insns N` runs it longer.
set -u
build/test/tailgen --seeds 60 --insns 400 --corrupt
