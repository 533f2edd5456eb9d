#!/bin/bash
# make bench: the flow benchmark on the real traces (skips when absent).
. test/flow/real_traces.env
if [ ! -d "$REAL_DIR" ]; then
    echo "bench: flow SKIP, $REAL_DIR not present"
    exit 0
fi
for t in $REAL_TRACES; do
    IFS=: read -r name filter want <<< "$t"
    build/ptboot bench --pt "$REAL_DIR/$name/trace.pt" --pages "$REAL_DIR/$name/pages" --filter "$filter" || exit 1
done
