#!/usr/bin/env bash
# make bench-big: large inputs, mapped (host/input_file.c) against read
# (PTBOOT_INPUT=read, the path pipes take), in one run: peak memory (GNU
# time's maximum resident set) and time, and the same output both ways.
#   - a page dump of BENCH_BIG_BYTES (bench/gen_pages: the real mruby pages
#     and filler images around them, in address order and shuffled) under
#     the mruby trace: `ptboot flow --quiet --stat`, the instruction count
#     as with mruby's own pages;
#   - a trace of BENCH_BIG_BYTES (the mruby trace over and over):
#     `ptboot dump --stats` (its text checksummed) and `ptboot summary`.
# BENCH_BIG_BYTES: 256M by default (K/M/G), 2G for the size of issue 17.
# The inputs go under TMPDIR (deleted at the end); when its free space is
# short the size is scaled down to what fits, and said. Skipped (exit 77,
# saying so) without the real traces.
set -u
cd "$(dirname "$0")/.."
real=${PTBOOT_REAL_TRACES:-../shared/traces/real}/mruby
P=build/ptboot
if [ ! -f "$real/trace.pt" ]; then
  echo "bench-big: $real not found, skipped"
  exit 77
fi
want=$(numfmt --from=iec "${BENCH_BIG_BYTES:-256M}") || { echo "bench-big: BENCH_BIG_BYTES=$BENCH_BIG_BYTES: want a size (256M, 2G)"; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-big.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# two inputs of the size at once (the dump's two orders one after the
# other), and 1 GiB to spare
free=$(( $(df --output=avail -B1 "$tmp" | tail -1) ))
size=$want
while [ $(( 2 * size + (1 << 30) )) -gt "$free" ] && [ "$size" -gt $(( 16 << 20 )) ]; do size=$(( size / 2 )); done
if [ "$size" != "$want" ]; then
  echo "bench-big: $(numfmt --to=iec "$free") free in $tmp: inputs of $(numfmt --to=iec "$size"), not $(numfmt --to=iec "$want")"
fi
mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# measure NAME ENV CMD...: one process, its stdout's checksum in
# $tmp/NAME.out (a dump's text is many times its trace); prints
# "cpu_s=.. wall_s=.. peak_mb=.." (GNU time: user + system time, which a
# shared machine disturbs less than the wall time; %M, KiB)
measure() {
  local name=$1 env=$2
  shift 2
  set -o pipefail
  env $env /usr/bin/time -f '%U %S %e %M' -o "$tmp/time" "$@" 2> "$tmp/$name.err" | md5sum > "$tmp/$name.out" || {
    echo "bench-big: $name failed: $(head -3 "$tmp/$name.err")"; return 1; }
  read -r user sys wall kb < "$tmp/time"
  awk -v u="$user" -v s="$sys" -v w="$wall" -v k="$kb" \
    'BEGIN { printf "cpu_s=%.2f wall_s=%.2f peak_mb=%.1f\n", u + s, w, k / 1024 }'
}
fail=0
# compare NAME WHAT: mapped and read runs' outputs (stdout and stderr) equal
compare() {
  if ! cmp -s "$tmp/$1.map.out" "$tmp/$1.read.out" || ! cmp -s "$tmp/$1.map.err" "$tmp/$1.read.err"; then
    echo "bench-big: $1: the mapped and the read runs differ"; fail=1
  fi
}
# ratio A B: A/B, B taken as 0.01 at least (GNU time's resolution), then
# ">" before the ratio
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b < 0.01) printf ">%.0f", a / 0.01; else printf "%.1f", a / b }'; }
# row NAME BYTES: both runs and their ratios (read / mapped)
row() {
  local name=$1 bytes=$2 m r
  shift 2
  m=$(measure "$name.map" "PTBOOT_INPUT=map" "$@") || { fail=1; return; }
  r=$(measure "$name.read" "PTBOOT_INPUT=read" "$@") || { fail=1; return; }
  compare "$name"
  local mc=${m#cpu_s=}; mc=${mc%% *}; local mp=${m##*peak_mb=}
  local rc=${r#cpu_s=}; rc=${rc%% *}; local rp=${r##*peak_mb=}
  echo "bench: big $name input_mb=$(mb "$bytes") mapped: $m read: $r memory_ratio=$(ratio "$rp" "$mp") cpu_ratio=$(ratio "$rc" "$mc")"
}

insns=$($P flow --pt "$real/trace.pt" --pages "$real/pages" --quiet --stat)
for order in ordered shuffled; do
  opt=
  [ $order = shuffled ] && opt="--shuffle 1"
  build/bench/gen_pages "$real/pages" "$size" "$tmp/pages" $opt > /dev/null || { echo "bench-big: gen_pages failed"; exit 1; }
  row "pages-$order" "$(stat -c %s "$tmp/pages.dump")" $P flow --pt "$real/trace.pt" --pages "$tmp/pages" --quiet --stat
  if [ "$(cat "$tmp/pages-$order.map.out")" != "$(md5sum <<<"$insns")" ]; then
    echo "bench-big: pages-$order: not '$insns' as with mruby's own pages"; fail=1
  fi
  rm -f "$tmp/pages.dump" "$tmp/pages.addr"
done

t=$(stat -c %s "$real/trace.pt")
n=$(( size / t )); [ "$n" -ge 1 ] || n=1
for _ in $(seq "$n"); do cat "$real/trace.pt"; done > "$tmp/big.pt"
b=$(stat -c %s "$tmp/big.pt")
row trace-dump "$b" $P dump --stats "$tmp/big.pt"
row trace-summary "$b" $P summary --pt "$tmp/big.pt" --pages "$real/pages"
exit $fail
