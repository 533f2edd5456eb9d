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
check() { # NAME EXPECTED-STATUS MAX-SECONDS OUTPUT SLEEP TIMEOUT (EXIT_STATUS from the caller)
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
# `make run` (EXIT_STATUS=app): the app's status, and QEMU stopped soon
# after the app's last line even when the config has no --shutdown (the
# stand-in then sleeps on, as the firmware's boot menu would)
export EXIT_STATUS=app
check app-failed 1 6 'ptboot: command 1/1 trace status=1\r\nptboot: exit status=1 sbrk_calls=0 msr_faults=0\r\n' 60 60
check app-usage 2 6 'ptboot: exit status=2 sbrk_calls=0 msr_faults=0\r\n' 60 60
check app-ok-no-shutdown 0 6 'ptboot: exit status=0 sbrk_calls=0 msr_faults=0\r\nBdsDxe: loading Boot0001\r\n' 60 60
check app-ok-shutdown 0 5 'ptboot: exit status=0 sbrk_calls=0 msr_faults=0\r\n' 0 60
check app-no-exit-line 5 5 'ptboot: start\r\n' 0 60
check app-timeout 3 6 'ptboot: start\r\n' 60 2
unset EXIT_STATUS
[ $failures -eq 0 ]
