#!/usr/bin/env bash
# scripts/qemu-run.sh's own verdicts, without booting anything: a stand-in
# for the QEMU binary writes chosen serial output, and the runner must stop
# it fast on a firmware exception dump, on its timeout, and pass through a
# clean exit; with QEMU_RESET_ON it must send `system_reset` through the
# monitor socket (the stand-in listens on it with socat) after the pattern
# appears, once per match, and no more than QEMU_RESETS times.
cd "$(dirname "$0")/../.." || exit 1
dir=build/test/qemu-run
mkdir -p "$dir"
fake=$dir/fake-qemu.sh
cat > "$fake" <<'FAKE'
#!/usr/bin/env bash
# Finds "-serial file:PATH", writes $FAKE_OUTPUT there, then sleeps
# $FAKE_SLEEP seconds (as a hung firmware would) and exits.
# With "-monitor unix:PATH,...", what arrives on the socket goes to
# $FAKE_MONITOR.
for a in "$@"; do case $a in file:*) log=${a#file:} ;; unix:*) sock=${a#unix:}; sock=${sock%%,*} ;; esac; done
if [ -n "${sock:-}" ]; then
  socat -u "UNIX-LISTEN:$sock,fork" "OPEN:$FAKE_MONITOR,creat,append" &
  sleep 0.3
fi
printf '%b' "$FAKE_OUTPUT" >> "$log"
sleep "$FAKE_SLEEP"
[ -n "${sock:-}" ] && kill %1 2>/dev/null
exit 0
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

# resets: two lines match, QEMU_RESETS=1 allows one system_reset
if command -v socat > /dev/null; then
  rm -f "$dir/monitor.in"
  FAKE_MONITOR=$dir/monitor.in QEMU_RESET_ON='^ptbhang: waiting' QEMU_RESET_DELAY=0.2 \
    check reset 0 8 'ptbhang: waiting mode=cli\r\nptbhang: waiting mode=cli\r\n' 3 60
  if [ "$(grep -c '^system_reset$' "$dir/monitor.in" 2>/dev/null)" = 1 ]; then
    echo "ok: reset: one system_reset reached the monitor socket"
  else
    echo "FAIL: reset: the monitor got '$(tr '\n' ' ' < "$dir/monitor.in" 2>/dev/null)', not one system_reset"
    failures=$((failures + 1))
  fi
  rm -f "$dir/monitor.in"
  FAKE_MONITOR=$dir/monitor.in QEMU_RESET_ON='^ptbhang: waiting' QEMU_RESET_DELAY=0.2 QEMU_RESETS=2 \
    check resets 0 8 'ptbhang: waiting mode=cli\r\nptbhang: waiting mode=cli\r\n' 3 60
  if [ "$(grep -c '^system_reset$' "$dir/monitor.in" 2>/dev/null)" = 2 ]; then
    echo "ok: resets: QEMU_RESETS=2 and two matches: two system_reset"
  else
    echo "FAIL: resets: the monitor got '$(tr '\n' ' ' < "$dir/monitor.in" 2>/dev/null)', not two system_reset"
    failures=$((failures + 1))
  fi
else
  echo "FAIL: socat missing (scripts/setup.sh installs it)"
  failures=$((failures + 1))
fi
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
