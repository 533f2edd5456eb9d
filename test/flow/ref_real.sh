#!/bin/bash
# The libipt reference flow (build/test/libipt_flow) gives the README's
# instruction counts on the real traces. Skips when they are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "ref_real:"
fail=0
for t in $REAL_TRACES; do
    real_trace_read "$t"
    got=$(build/test/libipt_flow --quiet --stat "${args[@]}" | sed -n 's/^insn: \([0-9]*\)\.$/\1/p')
    if [ "$got" != "$want" ]; then
        echo "ref_real: FAIL $name: $got instructions, README says $want"
        fail=1
    else
        echo "ref_real: ok $name: $got instructions"
    fi
done
exit $fail
