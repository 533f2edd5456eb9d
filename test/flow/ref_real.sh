#!/bin/bash
# The libipt reference flow (build/test/libipt_flow) gives the README's
# instruction counts on the real traces. Skips when they are absent.
set -u
. test/flow/real_traces.env
if [ ! -d "$REAL_DIR" ]; then
    echo "ref_real: SKIP, $REAL_DIR not present"
    exit 0
fi
fail=0
for t in $REAL_TRACES; do
    IFS=: read -r name filter want <<< "$t"
    got=$(build/test/libipt_flow --quiet --stat --pt "$REAL_DIR/$name/trace.pt" \
          --pages "$REAL_DIR/$name/pages" --filter "$filter" | sed -n 's/^insn: \([0-9]*\)\.$/\1/p')
    if [ "$got" != "$want" ]; then
        echo "ref_real: FAIL $name: $got instructions, README says $want"
        fail=1
    else
        echo "ref_real: ok $name: $got instructions"
    fi
done
exit $fail
