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

# Time tracking (--time, --tcal) cannot be compared with libipt here: its
# packet decoder API has no time, and its pt_time is internal. The values are
# checked against libipt's query decoder by test/time/diff_time.c, the column
# format by test/unit/test_ptd_fmt.c (libipt's own expected outputs). Here:
# with the timing options every packet line is the same as without them once
# the tracking column and the time diagnostics are taken away, and the column
# is where ptdump puts it.
timesets=("--time --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 --nom-freq 24"
          "--time --time-delta --no-wall-clock --mtc-freq 9 --cpuid-0x15.eax 1 --cpuid-0x15.ebx 3 --cpu 6/94"
          "--tcal --time-delta --keep-tcal-on-ovf --nom-freq 36 --mtc-freq 0 --cpuid-0x15.eax 3 --cpuid-0x15.ebx 250"
          "--tcal --no-tcal --raw --lastip")

colre='^([0-9a-f]{16}  )?([0-9a-f]+ +)?[a-z.0-9]+ +.{25} (tsc  (<unavailable>|[+-]?[0-9a-f]{1,16})|fcr  (<unavailable>|[+-]?[0-9]+(\.[0-9]{0,3})?))$'

compare_time() {   # file label
  local f=$1 label=$2 o base
  for o in "${timesets[@]}"; do
    base=$(echo " $o" | sed -E 's/ --(time|tcal|time-delta|no-wall-clock|keep-tcal-on-ovf|no-tcal)\b//g;
                                 s/ --(mtc-freq|nom-freq|cpuid-0x15\.eax|cpuid-0x15\.ebx) [0-9]+//g')
    # shellcheck disable=SC2086
    "$REF" $base "$f" >"$tmp/ref.txt"
    # shellcheck disable=SC2086
    "$PTBOOT" dump --libipt-2.0 $o "$f" >"$tmp/time.txt"
    n=$((n + 1))
    grep -vE '^\[[0-9a-f]+: (calibration error|error (calibrating|updating|printing) time)' "$tmp/time.txt" |
      sed -E 's/ +(tsc|fcr)  [^ ]*$//' >"$tmp/ours.txt"
    if ! cmp -s "$tmp/ref.txt" "$tmp/ours.txt"; then
      echo "FAIL: dump of $label with '$o' changes packet lines (beyond the time column):"
      diff "$tmp/ref.txt" "$tmp/ours.txt" | head -10
      fail=$((fail + 1))
    fi
    # the column: after the payload padded to 25, "tsc  "/"fcr  " and a value
    # (cut at 16 characters, as ptdump's field: large ratios lose decimals)
    if grep -E '  (tsc|fcr)  [^ ]+$' "$tmp/time.txt" | grep -vqE "$colre"; then
      echo "FAIL: dump of $label with '$o': a time column out of place:"
      grep -E '  (tsc|fcr)  [^ ]+$' "$tmp/time.txt" | grep -vE "$colre" | head -3
      fail=$((fail + 1))
    fi
  done
}

compare() {   # file label
  local f=$1 label=$2 o
  compare_time "$f" "$label"
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
[ "$fail" -eq 0 ] || exit 1
# what ran passed; without the real traces the test counts as skipped
[ -d "$REAL" ] || exit 77
