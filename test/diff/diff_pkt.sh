#!/usr/bin/env bash
# Differential test of the packet layer against libipt: random packet streams
# from both encoders, clean and corrupted. DIFF_STREAMS / DIFF_SEED override.
set -u
exec build/test/diff_pkt "${DIFF_STREAMS:-20000}" "${DIFF_SEED:-$(date +%s)}"
