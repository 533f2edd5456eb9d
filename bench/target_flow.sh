#!/usr/bin/env bash
# `make bench`: the on-target decode rate in QEMU. Boots QEMU once with a
# stick carrying one real trace and its code pages (../shared/traces/real,
# test/flow/real_traces.env; BENCH_TARGET_TRACE picks which, default
# mruby), runs `flow --bench` there (the decode alone, timed with the TSC,
# best of 3 passes) and prints its line
#   bench: target-flow file=<name> insns=<n> minsn_per_s=<x> tsc_hz=<y> ...
# then the host's rate for the same decode path on the same trace (`ptboot
# flow --quiet`: block by block with a block cache sized to the trace, as
# the target; best of 3 wall-clock runs, file loading included) and the
# ratio:
#   bench: host-flow file=<name> insns=<n> minsn_per_s=<x>
#   bench: target-vs-host file=<name> ratio=<target/host>
# Skips (exit 0, saying so) when the real traces are absent.
cd "$(dirname "$0")/.." || exit 1
. test/flow/real_traces.env
real=${PTBOOT_REAL_TRACES:-$REAL_DIR}
name=${BENCH_TARGET_TRACE:-mruby}
if [ ! -f "$real/$name/trace.pt" ]; then
  echo "bench-target-flow: $real/$name not found, on-target decode rate skipped"
  exit 0
fi
filter= expected=
for t in $REAL_TRACES; do
  IFS=: read -r n f c <<< "$t"
  [ "$n" = "$name" ] && filter=$f expected=$c
done
[ -n "$filter" ] || { echo "bench-target-flow: $name is not in test/flow/real_traces.env"; exit 1; }
for f in build/ptboot build/ptboot.efi; do
  [ -f "$f" ] || { echo "bench-target-flow: $f missing"; exit 1; }
done

. test/boot/lib.sh
BOOT_DIR=build/bench/boot
mkdir -p "$BOOT_DIR"
cp "$real/$name/trace.pt" "$BOOT_DIR/$name.pt"
cp "$real/$name/pages.dump" "$BOOT_DIR/$name-code.dump"
cp "$real/$name/pages.addr" "$BOOT_DIR/$name-code.addr"
boot_image target-flow "--shutdown flow --pt $name.pt --pages $name-code --filter $filter --bench 3" \
  "$BOOT_DIR/$name.pt" "$BOOT_DIR/$name-code.dump" "$BOOT_DIR/$name-code.addr"
BOOT_TIMEOUT=${BOOT_TIMEOUT:-600} boot_run target-flow
line=$(grep -a '^bench: target-flow ' "$BOOT_DIR/target-flow.txt")
if [ "$boot_rc" -ne 0 ] || [ -z "$line" ]; then
  echo "bench-target-flow: no result from the target (runner status $boot_rc; log $BOOT_DIR/target-flow.txt)"
  grep -a 'ptboot' "$BOOT_DIR/target-flow.txt" | tail -5 | sed 's/^/    | /'
  exit 1
fi
echo "$line"
tinsns=$(sed -n 's/.* insns=\([0-9]*\) .*/\1/p' <<< "$line")
trate=$(sed -n 's/.* minsn_per_s=\([0-9.]*\) .*/\1/p' <<< "$line")
[ "$tinsns" = "$expected" ] ||
  echo "bench-target-flow: note: the target decoded $tinsns instructions, libipt $expected"

# The host: the same decoder, driver and path (blocks, block cache), best of 3.
best=
for r in 1 2 3; do
  t0=$(date +%s%N)
  out=$(build/ptboot flow --no-inst --quiet --stat --pt "$BOOT_DIR/$name.pt" \
        --pages "$BOOT_DIR/$name-code" --filter "$filter")
  t1=$(date +%s%N)
  dt=$((t1 - t0))
  { [ -z "$best" ] || [ "$dt" -lt "$best" ]; } && best=$dt
done
hinsns=$(sed -n 's/^insn: \([0-9]*\)\.$/\1/p' <<< "$out")
awk -v n="$hinsns" -v ns="$best" -v t="$trate" -v name="$name" 'BEGIN {
  h = n / (ns / 1e9) / 1e6
  printf "bench: host-flow file=%s insns=%d minsn_per_s=%.3f\n", name, n, h
  printf "bench: target-vs-host file=%s ratio=%.3f\n", name, t / h }'
