#!/bin/bash
# The cases of test/unit/test_ptd_events.c that libipt 2.0.5 (CI's
# libipt-dev) decodes as current libipt does (the errata scans with the
# CPU, OVF and PSB+, PIP/VMCS at an asynchronous branch, an error without
# --resync-on-error): `ptboot flow --no-inst` against build/test/libipt_flow
# on the very traces the unit test writes. The others are checked against
# current libipt's recorded output by the unit test itself.
set -u
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
PTD_TEST_WRITE=$t build/test/test_ptd_events > /dev/null 2>&1
cases="apl11-cpu apl12-cpu skd010-cpu ovf-disabled ovf-flushes ovf-flushes-mwait ovf-in-psb
       pip-vmcs-async resync-off"
fail=0
for n in $cases; do
    if [ ! -f "$t/$n.pt" ]; then
        echo "events_205: FAIL $n: the unit test wrote no such case"
        fail=1
        continue
    fi
    # shellcheck disable=SC2046
    opts=$(cat "$t/$n.opts")
    build/ptboot flow --no-inst $opts --raw "$t/$n.bin:0x1000" --pt "$t/$n.pt" > "$t/$n.ptboot" 2>&1
    build/test/libipt_flow $opts --raw "$t/$n.bin:0x1000" --pt "$t/$n.pt" > "$t/$n.libipt" 2>&1
    if cmp -s "$t/$n.ptboot" "$t/$n.libipt"; then
        echo "events_205: ok $n ($opts): $(wc -l < "$t/$n.ptboot") lines as libipt 2.0.5's"
    else
        echo "events_205: FAIL $n ($opts): ptboot and libipt 2.0.5 differ:"
        diff "$t/$n.ptboot" "$t/$n.libipt" | head -6
        fail=1
    fi
done
exit $fail
