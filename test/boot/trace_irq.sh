#!/usr/bin/env bash
# Interrupts under the software trace unit (issue #21), checked against
# QEMU's own record of the same boot. For ptbtest.efi and ptbtimer.efi (a
# longer program with a periodic timer event of its own, whose notify
# function the firmware runs from its timer interrupt while the program is
# traced: test/image/ptbtimer.c), `trace --unit soft` runs in QEMU with the
# virtual-PT plugin recording every instruction executed inside the image
# (build/vpt/vpt.so keep=) and `-d int` logging every interrupt and
# exception; then
#   - the program computed its results right (status 0), the machine goes
#     on after the trace (the gates and pages are back: a second trace and
#     `info` run);
#   - the irqs of the on-target summary, the unit's interrupts= and the
#     hardware interrupts QEMU's log shows at an instruction of the image
#     are the same number; and the flow's "[disabled, at: X, ip: H]"
#     events name, in order, the IPs and handlers of those log lines;
#   - the instructions the host decodes (`ptboot flow --capture`) are the
#     ones the plugin saw run in the image, one for one (the interrupts
#     changed nothing), and libipt decodes the same flow, events included;
#   - ptbtimer: its notify function is traced where it ran, nested in the
#     interrupt ("[enabled, ip: notify]", "in> ptbtimer+notify" in the
#     summary as often as the plugin saw it entered); its #UD (an
#     exception at a traced instruction, CLIP) is recorded and its own
#     handler traced, nested in the firmware's exception entry;
#   - time: the summary is not "too coarse", the handlers got their time.
# A probe boot first (one step) tells where the image loads; the plugin
# needs the range before the boot, and the main boot must load it there
# too.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

for f in build/ptbtest.efi build/ptbtimer.efi build/vpt/vpt.so build/vpt/vpt_encode \
         build/test/libipt_flow build/ptboot build/test/image/ptbtimer.so; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make test builds it)"; exit 1; }
done

# irq_case NAME IMAGE [EXTRA-COMMANDS]
irq_case() {
  local name=$1 img=$2 extra=${3:-} n
  local probe=$name-probe
  boot_image "$probe" "--shutdown trace --unit soft --max-steps 1 --no-decode --no-files \\$img.efi" "build/$img.efi"
  BOOT_TIMEOUT=60 boot_run "$probe"
  local loaded='^ptboot: trace: target \\[a-z]*\.efi loaded at (0x[0-9a-f]+) size (0x[0-9a-f]+) '
  local lo size hi
  lo=$(sed -En "s/$loaded.*/\1/p" "$BOOT_DIR/$probe.txt")
  size=$(sed -En "s/$loaded.*/\2/p" "$BOOT_DIR/$probe.txt")
  if [ -z "$lo" ]; then not_ok "$name: the probe boot did not load $img.efi"; return; fi
  hi=$(printf '%x' $((lo + size)))
  lo=${lo#0x}

  n=$(( 2 + $(grep -o ';' <<< "$extra" | wc -l) ))
  [ -z "$extra" ] && n=1
  local rec=$BOOT_DIR/$name-rec
  rm -f "$rec".*
  boot_image "$name" "--shutdown trace --unit soft --last 8 \\$img.efi${extra:+ ; $extra}" "build/$img.efi"
  BOOT_TIMEOUT=${BOOT_TIMEOUT:-240} boot_run "$name" \
    -plugin "build/vpt/vpt.so,out=$rec,enter=$lo-$hi,keep=$lo-$hi" -d plugin,int -D "$rec.log"
  expect_rc "$name" 0 "clean shutdown"
  expect "$name" "^ptboot: trace: target \\\\$img\\.efi loaded at 0x$lo " "loaded where the probe said (0x$lo)"
  expect "$name" '^ptboot: trace: target returned status 0x0$' "the traced program computed its results right"
  [ -n "$extra" ] && expect "$name" "^ptboot: command $n/$n .* status=0$" "the commands after the trace ran"
  expect "$name" '^ptboot: trace: soft unit events .* vectors=[1-9][0-9]* watch=[1-9][0-9]* splits=[0-9]+ splits_kept=0$' \
    "IDT chained, pages watched, every split undone"

  # the capture's files
  local dir=$BOOT_DIR/$name-files
  rm -rf "$dir" && mkdir -p "$dir"
  for f in trace.pt sideband.txt code.dump code.addr; do
    mcopy -n -i "$BOOT_DIR/$name.img" "::/ptboot/cap001/$f" "$dir/$f" 2>/dev/null
  done

  # QEMU's interrupts at an instruction of the image: hardware interrupts
  # (vector 0x20 and up) and exceptions but #DB (the single steps) and #PF
  # (the watch's landings), in order: "IP VECTOR"
  awk -v lo=$((16#$lo)) -v hi=$((16#$hi)) '
    / v=[0-9a-f][0-9a-f] e=/ {
      v = ""; ip = ""; sw = 0
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^v=/) v = substr($i, 3)
        if ($i == "i=1") sw = 1
        if ($i ~ /^IP=/) { split(substr($i, 4), p, ":"); ip = p[2] }
      }
      if (v == "01" || v == "0e" || sw || ip == "") next
      a = 0
      for (k = 1; k <= length(ip); k++) a = a * 16 + index("0123456789abcdef", substr(ip, k, 1)) - 1
      if (a >= lo && a < hi) printf "%016x %s\n", a, v
    }' "$rec.log" > "$BOOT_DIR/$name.qemu-irqs"
  local qirqs unit_irqs sum_irqs
  qirqs=$(wc -l < "$BOOT_DIR/$name.qemu-irqs")
  unit_irqs=$(sed -n 's/^ptboot: trace: soft unit events interrupts=\([0-9]*\) .*/\1/p' "$BOOT_DIR/$name.txt" | head -1)
  sum_irqs=$(sed -n 's/^== summary: .* \([0-9]*\) irqs, .*/\1/p' "$BOOT_DIR/$name.txt" | head -1)
  if [ "$qirqs" -gt 0 ] && [ "$qirqs" = "$unit_irqs" ] && [ "$qirqs" = "$sum_irqs" ]; then
    ok "$name: $qirqs interrupts inside the image in QEMU's log, the unit's and the summary's"
  else
    not_ok "$name: interrupts: QEMU's log $qirqs, unit $unit_irqs, summary $sum_irqs"
  fi

  # the host's flow, libipt's flow
  # (stderr apart: the files made here from the serial dump have no
  # manifest.txt, which the host warns of)
  build/ptboot flow --capture "$dir" --no-inst --event:ip > "$dir/ptboot.flow" 2> "$dir/ptboot.flow.err"
  build/test/libipt_flow --pt "$dir/trace.pt" --pages "$dir/code" --filter "$lo-$(printf '%x' $((16#$hi - 1)))" \
    --event:ip > "$dir/libipt.flow" 2>&1
  if cmp -s "$dir/ptboot.flow" "$dir/libipt.flow" && [ -s "$dir/ptboot.flow" ]; then
    ok "$name: ptboot and libipt decode the same flow ($(wc -l < "$dir/ptboot.flow") lines, events included)"
  else
    not_ok "$name: ptboot's flow differs from libipt's"; diff "$dir/ptboot.flow" "$dir/libipt.flow" | head -6 | sed 's/^/    | /'
  fi
  # the interrupts in the flow: [disabled, at: X, ip: H] with H a handler
  # (not a call out), in QEMU's order
  sed -n 's/^\[disabled, at: \([0-9a-f]*\), ip: \([0-9a-f]*\)\]$/\1 \2/p' "$dir/ptboot.flow" > "$dir/flow.irqs"
  if [ "$(cut -d' ' -f1 "$dir/flow.irqs")" = "$(cut -d' ' -f1 "$BOOT_DIR/$name.qemu-irqs")" ] &&
     [ "$(cut -d' ' -f2 "$dir/flow.irqs" | sort -u | wc -l)" -ge 1 ]; then
    ok "$name: [disabled, at: X] where QEMU took each interrupt, in order ($(wc -l < "$dir/flow.irqs"))"
  else
    not_ok "$name: the flow's interrupted IPs differ from QEMU's log"
    diff <(cut -d' ' -f1 "$dir/flow.irqs") <(cut -d' ' -f1 "$BOOT_DIR/$name.qemu-irqs") | head -6 | sed 's/^/    | /'
  fi
  # every one is followed by the return: [enabled|resumed, ip: X] (or just
  # after X: a fault's handler may step over the instruction), nested code
  # of the image in between
  if awk 'function h(x,  v, k) { v = 0; for (k = 1; k <= 16; k++) v = v * 16 + index("0123456789abcdef", substr(x, k, 1)) - 1; return v }
          /^\[disabled, at: [0-9a-f]*, ip: / { split($0, a, "at: "); st[++n] = h(substr(a[2], 1, 16)); next }
          n && /^\[(enabled|resumed), ip: / { split($0, a, "ip: "); d = h(substr(a[2], 1, 16)) - st[n]; if (d >= 0 && d < 15) n-- }
          END { exit n != 0 }' "$dir/ptboot.flow"; then
    ok "$name: each interrupt returns where it came in ([resumed]/[enabled] at the interrupted IP)"
  else
    not_ok "$name: an interrupt without its return in the flow"
  fi

  # the instructions: QEMU's record of the image, one for one (but for
  # faulting instructions, which the plugin records before they run: a
  # fault is no executed instruction for a CPU's trace; here each faults
  # every time it runs)
  awk '$2 < "20" { print $1 }' "$BOOT_DIR/$name.qemu-irqs" | sort -u > "$dir/faults"
  build/vpt/vpt_encode --list "$rec" 2>&1 | grep -vxF -f "$dir/faults" > "$dir/qemu.insns"
  grep -v '^\[' "$dir/ptboot.flow" > "$dir/flow.insns"
  local ni
  ni=$(wc -l < "$dir/flow.insns")
  if [ "$ni" -gt 1000 ] && cmp -s "$dir/flow.insns" "$dir/qemu.insns"; then
    ok "$name: the $ni decoded instructions are those QEMU ran in the image, in order"
  else
    not_ok "$name: decoded instructions ($ni) differ from QEMU's record ($(wc -l < "$dir/qemu.insns"))"
    diff "$dir/flow.insns" "$dir/qemu.insns" | head -6 | sed 's/^/    | /'
  fi

  # time: fine enough to rank by, the handlers' time counted
  expect_not "$name" '^time too coarse to rank by' "time fine enough to rank functions by (MTC)"
  if grep -Eq '^ +[1-9][0-9]* +0 +0\.0% +[1-9][0-9]* +[0-9.]+% irq> CpuDxe\+0x[0-9a-f]+$' "$BOOT_DIR/$name.txt"; then
    ok "$name: the interrupt handler's time is in the summary (irq> CpuDxe, no instructions)"
  else
    not_ok "$name: no irq> line with ticks in the summary"
  fi
  [ -n "${KEEP_LOG:-}" ] || rm -f "$rec.log"   # QEMU's log with a register dump per step: large
}

irq_case irq-ptbtest ptbtest "trace --unit soft --no-files --no-summary --no-decode \\ptbtest.efi ; info"

# ptbtimer: the notify, entered from the interrupt, traced where it ran
irq_case irq-timer ptbtimer
name=irq-timer dir=$BOOT_DIR/irq-timer-files
notify=$(printf '0x%x' "$((16#$(nm build/test/image/ptbtimer.so | awk '$3 == "ptbtimer_notify" { print $1 }')))")
lo=$(sed -n 's/^image base=0x\([0-9a-f]*\) .* name=ptbtimer$/\1/p' "$dir/sideband.txt")
if [ -n "$lo" ]; then
  nip=$(printf '%016x' $((16#$lo + notify)))
  entered=$(grep -c "^\[enabled, ip: $nip\]$" "$dir/ptboot.flow")
  ran=$(grep -c "^$nip$" "$dir/qemu.insns")
  if [ "$entered" -gt 0 ] && [ "$entered" = "$ran" ] &&
     grep -Eq "^ +$entered +[0-9]+ .* in> ptbtimer\+$notify\$" "$BOOT_DIR/$name.txt"; then
    ok "$name: the notify function ran $ran times nested in interrupts, traced each time (in> ptbtimer+$notify)"
  else
    not_ok "$name: notify entered $entered times in the flow, $ran in QEMU's record, or no in> line"
  fi
  # its #UD: FUP(the UD2) + TIP.PGD (the firmware's exception entry),
  # the handler of the image entered and traced, back after the UD2
  ud=$(awk '$2 == "06" { print $1 }' "$BOOT_DIR/$name.qemu-irqs")
  uh=$(printf '%016x' $((16#$lo + 16#$(nm build/test/image/ptbtimer.so | awk '$3 == "ptbtimer_ud" { print $1 }'))))
  if [ "$(wc -w <<< "$ud")" = 1 ] && grep -q "^\[disabled, at: $ud, ip: [0-9a-f]*\]$" "$dir/ptboot.flow" &&
     grep -q "^\[enabled, ip: $uh\]$" "$dir/ptboot.flow" &&
     grep -q "^\[enabled, ip: $(printf '%016x' $((16#$ud + 2)))\]$" "$dir/ptboot.flow"; then
    ok "$name: its #UD at the UD2 (0x$ud) recorded, its handler traced, back after the UD2"
  else
    not_ok "$name: the #UD is not in the flow as QEMU saw it (log: '$ud')"
  fi
else
  not_ok "$name: no ptbtimer row in the sideband"
fi
boot_done
