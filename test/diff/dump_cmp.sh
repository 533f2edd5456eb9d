#!/usr/bin/env bash
# `ptboot dump` must print byte-identical lines to the reference dumper over
# libipt's packet decoder (test/diff/ref_ptdump.c, ptdump's format; with
# --libipt-2.0, as corrupted bytes can look like packets newer than it), for the
# real traces (../shared/traces/real, skipped when absent) and for synthetic
# traces from our encoder, clean and corrupted, under ptdump's options.
set -u
B=${B:-build}
PTBOOT=$B/ptboot
REF=$B/test/ref_ptdump
GEN=$B/bench/gen_trace
REAL=${PTBOOT_REAL_TRACES:-../shared/traces/real}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0

optsets=("" "--raw" "--lastip" "--no-offset --raw" "--exec-mode --no-pad" "--no-sync --lastip --raw"
         "--no-timing --no-cyc" "--quiet" "--no-pad --no-offset --lastip --exec-mode"
         "--cpu 6/85 --no-pad" "--cpu 6/94")

compare() {   # file label
  local f=$1 label=$2 o
  for o in "${optsets[@]}"; do
    # shellcheck disable=SC2086
    "$REF" $o "$f" >"$tmp/ref.txt"
    # shellcheck disable=SC2086
    "$PTBOOT" dump --libipt-2.0 $o "$f" >"$tmp/ours.txt"
    n=$((n + 1))
    if ! cmp -s "$tmp/ref.txt" "$tmp/ours.txt"; then
      echo "FAIL: dump of $label with options '$o' differs from libipt's packet decoder:"
      diff "$tmp/ref.txt" "$tmp/ours.txt" | head -10
      fail=$((fail + 1))
    fi
  done
}

if [ -d "$REAL" ]; then
  for d in "$REAL"/*/; do
    t=$d/trace.pt
    [ -f "$t" ] || continue
    name=$(basename "$d")
    compare "$t" "real/$name"
    # zero packet errors on the real traces
    errs=$("$PTBOOT" dump --quiet "$t" | grep -c 'error' || true)
    n=$((n + 1))
    if [ "$errs" != 0 ]; then
      echo "FAIL: real/$name: $errs packet errors"
      fail=$((fail + 1))
    fi
  done
else
  echo "SKIP: real traces: $REAL not found (they live outside the repository)"
fi

seed=${DUMP_SEED:-$(date +%s)}
"$GEN" --size 400000 --seed "$seed" "$tmp/syn.pt" && compare "$tmp/syn.pt" "synthetic flow (seed $seed)"
"$GEN" --size 400000 --seed "$seed" --uniform "$tmp/syn.pt" && compare "$tmp/syn.pt" "synthetic (seed $seed)"
"$GEN" --size 200000 --seed "$seed" --uniform --corrupt 60 "$tmp/bad.pt" && compare "$tmp/bad.pt" "corrupted synthetic (seed $seed)"
"$GEN" --size 100000 --seed "$seed" --chaos --corrupt 30 "$tmp/chaos.pt" && compare "$tmp/chaos.pt" "chaotic synthetic (seed $seed)"

echo "dump_cmp: $n comparisons, $fail failed"
[ "$fail" -eq 0 ]
