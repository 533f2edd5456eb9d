#!/usr/bin/env bash
# scripts/qemu-run.sh's own verdicts, without booting anything: a stand-in
# for the QEMU binary writes chosen serial output, and the runner must stop
# it fast on a firmware exception dump, on its timeout, and pass through a
# clean exit.
cd "$(dirname "$0")/../.." || exit 1
dir=build/test/qemu-run
mkdir -p "$dir"
fake=$dir/fake-qemu.sh
cat > "$fake" <<'FAKE'
#!/usr/bin/env bash
# Finds "-serial file:PATH", writes $FAKE_OUTPUT there, then sleeps
# $FAKE_SLEEP seconds (as a hung firmware would) and exits.
for a in "$@"; do case $a in file:*) log=${a#file:} ;; esac; done
printf '%b' "$FAKE_OUTPUT" >> "$log"
exec sleep "$FAKE_SLEEP"
FAKE
chmod +x "$fake"
: > "$dir/img"
failures=0
check() { # NAME EXPECTED-STATUS MAX-SECONDS OUTPUT SLEEP TIMEOUT
  local start=$SECONDS rc
  FAKE_OUTPUT=$4 FAKE_SLEEP=$5 QEMU=$fake QUIET=1 \
    scripts/qemu-run.sh "$dir/img" "$dir/$1.log" "$6" 2>/dev/null
  rc=$?
  local took=$((SECONDS - start))
  if [ $rc -eq "$2" ] && [ $took -le "$3" ]; then echo "ok: $1: status $rc after ${took}s"
  else echo "FAIL: $1: status $rc (expected $2) after ${took}s (at most $3)"; failures=$((failures + 1)); fi
}
check exception 4 5 'BdsDxe: starting\r\n!!!! X64 Exception Type - 0D(#GP - General Protection)  CPU Apic ID - 00000000 !!!!\r\nRIP  - 0\r\n' 60 60
check timeout 3 6 'ptboot: start\r\n' 60 2
check clean-exit 0 5 'ptboot: exit status=0\r\n' 0 60
[ $failures -eq 0 ]
