#!/usr/bin/env bash
# Boots a USB-stick image in QEMU (TCG) with OVMF, the image attached as a
# USB mass-storage device on an xHCI controller, serial to stdout and to LOG.
#
# usage: scripts/qemu-run.sh IMAGE LOG [TIMEOUT-SECONDS] [extra qemu args...]
# exit: 0 QEMU ended by itself (the app shut the machine down)
#       3 timeout, 4 the firmware reported a CPU exception (it would hang),
#       other: QEMU failed to start.
# With EXIT_STATUS=app (`make run`): the app's own exit status instead.
# When the app's last line `ptboot: exit status=N ...` appears, QEMU gets
# EXIT_GRACE seconds (default 2) to end by itself (--shutdown) and is then
# stopped, so a config without --shutdown ends too; the script exits N
# (0 success, 1 a command failed, 2 bad usage: README "Serial output"),
# 3/4 as above, 5 when QEMU ended without that line.
# Environment: OVMF_CODE, OVMF_VARS (templates; a fresh copy of the vars is
# used per run), OVMF_VARS_FILE (a writable vars file used as it is and
# kept, so that a second run sees what the first stored), QEMU (binary),
# QEMU_CPU (default: qemu64), QUIET=1 (no echo of the serial output to
# stdout).
# Resets through QEMU's monitor (a unix socket in this run's temporary
# directory, spoken to with socat): QEMU_RESET_ON=REGEX (ERE) sends
# `system_reset` QEMU_RESET_DELAY seconds (default 2) after the log has one
# more line matching REGEX than resets were sent, at most QEMU_RESETS times
# (default 1). RAM is kept across such a reset (QEMU does not clear it; the
# firmware may overwrite parts), like a warm reset or the reset button on a
# real machine: the hang recorder's tests (test/hang/hang.sh) use it.
# Each reset sent is logged as "qemu-run: system_reset <n>" on stderr.
set -uo pipefail
[ $# -ge 2 ] || { echo "usage: $0 IMAGE LOG [TIMEOUT] [qemu args...]" >&2; exit 2; }
img=$1 log=$2 limit=${3:-60}
shift $(( $# >= 3 ? 3 : 2 ))
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_VARS=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
QEMU=${QEMU:-qemu-system-x86_64}
for f in "$img" "$OVMF_CODE" "$OVMF_VARS"; do
  [ -f "$f" ] || { echo "qemu-run: $f not found" >&2; exit 2; }
done

work=$(mktemp -d)
vars=$work/vars.fd
monitor=(-monitor none)
reset_on=${QEMU_RESET_ON:-}
if [ -n "$reset_on" ]; then
  command -v socat >/dev/null 2>&1 || { echo "qemu-run: QEMU_RESET_ON needs socat" >&2; rm -rf "$work"; exit 2; }
  monitor=(-monitor "unix:$work/monitor.sock,server=on,wait=off")
fi
resets_sent=0
# monitor_cmd TEXT: one HMP command through the socket (the short sleep
# keeps the connection open until QEMU has read the line).
monitor_cmd() {
  { printf '%s\n' "$1"; sleep 0.3; } | socat - "UNIX-CONNECT:$work/monitor.sock" > /dev/null 2>&1
}
if [ -n "${OVMF_VARS_FILE:-}" ]; then
  vars=$OVMF_VARS_FILE
  [ -f "$vars" ] || cp "$OVMF_VARS" "$vars"
else
  cp "$OVMF_VARS" "$vars"
fi
: > "$log"
"$QEMU" -nodefaults -machine q35 -m 256 -cpu "${QEMU_CPU:-qemu64}" \
  -display none -vga none "${monitor[@]}" -serial "file:$log" \
  -drive "if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE" \
  -drive "if=pflash,format=raw,unit=1,file=$vars" \
  -device qemu-xhci,id=xhci \
  -drive "if=none,id=stick,format=raw,file=$img" \
  -device usb-storage,bus=xhci.0,drive=stick,bootindex=1 \
  "$@" 2>"$log.qemu-stderr" &
qpid=$!
tailpid=
if [ "${QUIET:-0}" != 1 ]; then
  tail -n +1 -f --pid=$qpid "$log" 2>/dev/null &
  tailpid=$!
fi

rc=0
start=$SECONDS
app_status= exit_seen=
exit_re='ptboot: exit status=[0-9]+ '
while kill -0 $qpid 2>/dev/null; do
  if [ "${EXIT_STATUS:-}" = app ]; then
    if [ -z "$exit_seen" ] && grep -Eqa "$exit_re" "$log"; then
      exit_seen=$SECONDS
    fi
    if [ -n "$exit_seen" ] && (( SECONDS - exit_seen >= ${EXIT_GRACE:-2} )); then
      kill $qpid 2>/dev/null # the app is done; no --shutdown in its config
      break
    fi
  fi
  if grep -qa '!!!! X64 Exception' "$log"; then
    sleep 0.5 # let the register dump reach the log
    kill $qpid 2>/dev/null
    rc=4
    break
  fi
  if [ -n "$reset_on" ] && (( resets_sent < ${QEMU_RESETS:-1} )) &&
     (( $(grep -Eac -- "$reset_on" "$log") > resets_sent )); then
    sleep "${QEMU_RESET_DELAY:-2}"
    resets_sent=$((resets_sent + 1))
    echo "qemu-run: system_reset $resets_sent" >&2
    monitor_cmd system_reset
  fi
  if (( SECONDS - start >= limit )); then
    kill $qpid 2>/dev/null
    rc=3
    break
  fi
  sleep 0.2
done
wait $qpid 2>/dev/null
qrc=$?
[ -n "$tailpid" ] && { sleep 0.3; kill $tailpid 2>/dev/null; wait $tailpid 2>/dev/null; }
rm -rf "$work"
# QEMU's own warnings (unsupported CPU features under TCG) are noise unless
# the run failed.
[ $rc -ne 0 ] && [ -s "$log.qemu-stderr" ] && sed 's/^/qemu: /' "$log.qemu-stderr" >&2
case $rc in
  3) echo "qemu-run: timeout after ${limit}s" >&2 ;;
  4) echo "qemu-run: CPU exception reported by the firmware" >&2 ;;
  0) [ $qrc -eq 0 ] || [ -n "$exit_seen" ] || { echo "qemu-run: QEMU exited with $qrc" >&2; cat "$log.qemu-stderr" >&2; rc=$qrc; } ;;
esac
if [ "${EXIT_STATUS:-}" = app ] && [ $rc -eq 0 ]; then
  app_status=$(grep -Eoa "$exit_re" "$log" | head -n 1 | grep -Eo '[0-9]+')
  if [ -z "$app_status" ]; then
    echo "qemu-run: QEMU ended without the app's 'ptboot: exit status=N' line" >&2
    rc=5
  else
    [ "$app_status" -eq 0 ] || echo "qemu-run: the app ended with exit status $app_status" >&2
    rc=$app_status
  fi
fi
exit $rc
