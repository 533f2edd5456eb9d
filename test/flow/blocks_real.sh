#!/bin/bash
# The block API (ptd_flow_next_block, with and without the caller's caches)
# gives the same instructions, events and errors as the instruction API on
# the real traces of ../shared/traces/real (`ptboot bench --verify`): the
# check the benchmark also runs before timing. Skips when they are absent.
set -u
. test/flow/real_traces.env
if [ ! -d "$REAL_DIR" ]; then
    echo "blocks_real: SKIP, $REAL_DIR not present"
    exit 0
fi
fail=0
for t in $REAL_TRACES; do
    IFS=: read -r name filter want <<< "$t"
    if build/ptboot bench --verify --pt "$REAL_DIR/$name/trace.pt" --pages "$REAL_DIR/$name/pages" --filter "$filter"; then
        echo "blocks_real: ok $name"
    else
        echo "blocks_real: FAIL $name"
        fail=1
    fi
done
exit $fail
