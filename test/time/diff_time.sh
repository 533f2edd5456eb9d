#!/usr/bin/env bash
# Differential test of decoder/ptd_time against libipt's time tracking (its
# query decoder's pt_qry_time): random timing-heavy streams under random
# configurations, then whole traces driven as a flow decoder would: a
# realistic synthetic flow from bench/gen_trace (MTC/CYC, PSB+ TSC/CBR) and
# the real traces (../shared/traces/real, skipped when absent).
# TIME_STREAMS / TIME_SEED override.
set -u
B=${B:-build}
REAL=${PTBOOT_REAL_TRACES:-../shared/traces/real}
seed=${TIME_SEED:-$(date +%s)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
files=()
"$B/bench/gen_trace" --size 1000000 --seed "$seed" "$tmp/flow.pt" >/dev/null && files+=("$tmp/flow.pt")
if [ -d "$REAL" ]; then
  for t in "$REAL"/*/trace.pt; do [ -f "$t" ] && files+=("$t"); done
else
  echo "SKIP: real traces: $REAL not found (they live outside the repository)"
fi
"$B/test/diff_time" "${TIME_STREAMS:-20000}" "$seed" "${files[@]}" || exit 1
# what ran passed; without the real traces the test counts as skipped
[ -d "$REAL" ] || exit 77
