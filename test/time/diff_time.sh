#!/usr/bin/env bash
# Differential test of decoder/ptd_time against libipt's time tracking (its
# query decoder's pt_qry_time): random timing-heavy streams under random
# configurations. TIME_STREAMS / TIME_SEED override.
set -u
exec build/test/diff_time "${TIME_STREAMS:-20000}" "${TIME_SEED:-$(date +%s)}"
