#!/bin/bash
# The block API (ptd_flow_next_block, with and without the caller's caches)
# gives the same instructions, events and errors as the instruction API on
# the real traces of ../shared/traces/real (`ptboot bench --verify`): the
# check the benchmark also runs before timing. Skips when they are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "blocks_real:"
fail=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    if build/ptboot bench --verify "${args[@]}"; then
        echo "blocks_real: ok $name"
    else
        echo "blocks_real: FAIL $name"
        fail=1
    fi
done
exit $fail
