#!/usr/bin/env bash
# The boot-hang flight recorder (docs/hang.md) end to end in QEMU + OVMF,
# with the stand-in that hangs (test/image/ptbhang.c: ptbhang_wait_ready
# polls ptbhang_read_status for ever; one-shot: the boot after the reset
# it returns at once). Memory outside the firmware's map survives a
# reset (Debian's OVMF fills all free memory with 0xAF at DXE start:
# test/hang/survey.sh), so the runs that reset give QEMU a 16 MiB pc-dimm at
# 4 GiB and put the recorder there (--recorder-at 0x100000000); resets go
# through QEMU's monitor (scripts/qemu-run.sh QEMU_RESET_ON).
#   T  trace --hang-timeout 3 --hang-repeat \ptbhang.efi, which spins at
#      TPL_CALLBACK (no LoadOptions): the report event cannot run, so the
#      tick reports from TPL_NOTIFY (watchdog untouched); two hang reports
#      over COM1 (summaries naming the loop, the last transitions in it, the
#      framed dump: the host's summary of the recovered files is the same),
#      a reset, and the next boot's trace runs to the end
#   A  install: `recover` with nothing recorded says so; bad words refused;
#      install --hang-timeout 5 --hang-repeat --buffer 262144 --recorder-at
#   B  the installed boot: the stand-in hangs at TPL_APPLICATION; the driver
#      sends two hang reports (watchdog off for them), QEMU is reset; the next
#      boot's driver reports the recorder over COM1 and keeps a copy, and
#      `recover --serial-dump` prints the same summary, writes \ptboot\cap001
#      (recover.txt reset=1) and the framed dump: stick = dump, host summary
#      = target summary; then install again with a 4 KiB ring
#   C  the stand-in hangs with interrupts off (no hang report can come); QEMU
#      is reset after 12 s; the next boot recovers the wrapped ring (last
#      branches in the loop; host = target), then ptbpoke.efi damages the
#      kept copy: 600 bytes of the trace (decodes from the first intact PSB,
#      the damage counted, the end still in the loop), then the header
#      (refused: CRC, nothing decoded); uninstall
#   D  a new QEMU process (a power cycle: the pc-dimm is empty): `recover`
#      says there is no recorder header, no crash
. test/boot/lib.sh

so=build/test/image/ptbhang.so
for f in build/ptboot.efi build/ptbootdrv.efi build/ptbhang.efi build/ptbpoke.efi build/ptboot "$so"; do
  [ -f "$f" ] || { echo "hang: $f missing (make all test)"; exit 1; }
done
command -v socat > /dev/null || { echo "hang: socat missing (scripts/setup.sh installs it)"; exit 1; }
export BOOT_TIMEOUT=${BOOT_TIMEOUT:-150}
DIMM=(-m 256,slots=1,maxmem=1G -object memory-backend-ram,id=rec,size=16M -device pc-dimm,id=dimm0,memdev=rec)
AT=0x100000000
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
symbol() { nm "$so" | awk -v s="$1" '$3 == s { print $1; exit }'; }
read_status=$((0x$(symbol ptbhang_read_status)))
wait_ready=$((0x$(symbol ptbhang_wait_ready)))
mode_is=$((0x$(symbol ptbhang_mode_is)))  # the function after the loop's
# in_loop OFF: the offset lies in ptbhang_read_status or ptbhang_wait_ready
in_loop() { [ $(($1)) -ge $read_status ] && [ $(($1)) -lt $mode_is ]; }
hexoff() { printf '0x%x' "$1"; }

# block WHAT N NAME: the lines between the N-th "ptboot: WHAT begin" and
# the "ptboot: WHAT end" after it.
block() {
  awk -v b="ptboot: $1 begin" -v e="ptboot: $1 end" -v n="$2" \
    'index($0, b) == 1 { k++; on = k == n; next } index($0, e) == 1 { on = 0 } on' "$BOOT_DIR/$3.txt"
}
# last_edge SUMFILE: the "to" offset of the summary's last transition
last_to() { sed -n '/^== last /,$p' "$1" | awk 'NF == 4 && $3 == "->" { t = $4 } END { print t }' | sed 's/.*+//'; }
last_from() { sed -n '/^== last /,$p' "$1" | awk 'NF == 4 && $3 == "->" { f = $2 } END { print f }' | sed 's/.*+//'; }
# a function's row in a summary's functions table: its call count
fn_calls() { sed -n '/^== functions /,/^== /p' "$1" | awk -v f="$2" '$NF == f { print $1 }'; }
# host_same NAME N DIR WHAT [OPTIONS]: the host's summary of DIR (with
# --tail, on in hang and recovery reports, and OPTIONS, e.g. trace's
# --last 16) equals summary block N
host_same() {
  block "trace summary" "$2" "$1" > "$BOOT_DIR/$1.sum$2"
  # the host's notes on the capture (trace.wrapped/stopped, from its
  # sideband) come before the summary; the summary itself must be equal
  build/ptboot summary --capture "$3" --tail ${5:-} 2>&1 | grep -v '^note: trace\.' > "$BOOT_DIR/$1.host$2"
  check "$1: host: ptboot summary --capture of $4 = the target's summary ($(wc -l < "$BOOT_DIR/$1.sum$2") lines)" \
    "[ \$(wc -l < $BOOT_DIR/$1.sum$2) -gt 10 ] && cmp -s $BOOT_DIR/$1.host$2 $BOOT_DIR/$1.sum$2"
}
# named NAME DIR WHAT [OPTIONS]: with the stand-in's debug file the host's
# summary names the loop's functions (docs/symbols.md: the sideband's
# CodeView GUID finds build/test/image/ptbhang.so)
named() {
  build/ptboot summary --capture "$2" --tail ${4:-} --symbols "$so" > "$BOOT_DIR/$1.named" 2> "$BOOT_DIR/$1.named.err"
  check "$1: host: with ptbhang.so the functions are named: ptbhang_wait_ready, ptbhang_read_status, and the last transitions in them ($3)" \
    "sed -n '/^== functions /,/^== /p' $BOOT_DIR/$1.named | grep -q ' ptbhang_wait_ready' && sed -n '/^== functions /,/^== /p' $BOOT_DIR/$1.named | grep -q ' ptbhang_read_status' && sed -n '/^== last /,\$p' $BOOT_DIR/$1.named | grep -v '^==' | tail -1 | grep -Eq 'ptbhang_(read_status|wait_ready)'"
}
# recovered NAME FROM UPTO OUT: `ptboot serial` of the log from the first
# line matching FROM to the first matching UPTO after it (one dump: several
# carry the same file names) into OUT
recovered() {
  rm -rf "$4" && mkdir -p "$4"
  awk -v f="$2" -v u="$3" '$0 ~ f { on = 1 } on { print } on && $0 ~ u { exit }' "$BOOT_DIR/$1.txt" > "$BOOT_DIR/$1.cut"
  build/ptboot serial "$BOOT_DIR/$1.cut" --out "$4" > "$4.log" 2>&1
}

# ---- T: trace --hang-timeout --------------------------------------------------
boot_image hang-trace '--shutdown trace --unit soft --hang-timeout 3 --hang-repeat \ptbhang.efi' build/ptbhang.efi
QEMU_RESET_ON='^ptboot: hang report end n=2 ' QEMU_RESET_DELAY=0.5 boot_run hang-trace "${DIMM[@]}"
t=hang-trace
expect_rc $t 0 "the second boot's trace ended and shut down"
expect $t '^ptbhang: waiting mode=callback$' "the stand-in spins at TPL_CALLBACK"
expect $t '^ptboot: hang report begin n=1 after=3s unit=soft target=ptbhang tpl=notify watchdog=untouched$' \
  "3 s after the stand-in began: the TPL_CALLBACK event cannot run, the tick reports from TPL_NOTIFY"
expect $t '^ptboot: hang report end n=1 repeat=1$' "the first report ended, tracing went on"
expect $t '^ptboot: hang report begin n=2 after=3s ' "--hang-repeat: a second report 3 s later"
block "trace summary" 1 $t > "$BOOT_DIR/$t.s1"
check "$t: report 1 names the loop's functions: ptbhang+$(hexoff $wait_ready) entered once, ptbhang+$(hexoff $read_status) called in it" \
  "[ \"\$(fn_calls $BOOT_DIR/$t.s1 ptbhang+$(hexoff $wait_ready))\" = 1 ] && [ \"\$(fn_calls $BOOT_DIR/$t.s1 ptbhang+$(hexoff $read_status))\" -gt 100 ]"
check "$t: report 1's last transitions end in the loop (ptbhang_read_status / ptbhang_wait_ready)" \
  "in_loop \$(last_from $BOOT_DIR/$t.s1)"
expect $t '^ptboot: trace summary end lines=[0-9]+ insns=[1-9][0-9]+ errors=0$' "the reports decode without error"
expect $t '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=1 insns=[1-9][0-9]* errors=0 ' \
  "each report ends with the capture line (the unit's instructions)"
recovered $t '^ptboot: hang report begin n=1 ' '^ptboot: hang report end n=1' "$BOOT_DIR/$t-rec"
if [ -s "$BOOT_DIR/$t-rec/trace.pt" ]; then
  host_same $t 1 "$BOOT_DIR/$t-rec" "report 1's framed files" "--last 16"
  named $t "$BOOT_DIR/$t-rec" "report 1's framed files" "--last 16"
else
  not_ok "$t: report 1's serial dump was not recovered"
fi
expect $t '^ptbhang: hung before, returning$' "after the reset the stand-in returned at once"
expect $t '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=0 insns=[1-9][0-9]* errors=0 ' \
  "and the second boot's trace ended normally"

# ---- A: install -----------------------------------------------------------------
export OVMF_VARS_FILE=$BOOT_DIR/hang-vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
img=$BOOT_DIR/hang.img
files=(build/ptbootdrv.efi=EFI/ptboot/ptbootdrv.efi build/ptbhang.efi=ptbhang.efi build/ptbpoke.efi=ptbpoke.efi)
words="--image ptbhang.efi --hang-timeout 5 --hang-repeat --buffer 262144 --recorder-at $AT"
scripts/mkimage.sh "$img" build/ptboot.efi "--shutdown recover ; install --image ptbhang.efi --hang-timeout 0 ; install --image ptbhang.efi --recorder-at 0x1001 ; trace --hang-repeat \\ptbhang.efi ; install $words" "${files[@]}" || exit 1
set_cfg() {
  printf '%s\n' "$1" > "$BOOT_DIR/hang.cfg"
  mcopy -o -i "$img" "$BOOT_DIR/hang.cfg" ::/ptboot.cfg
}
run() {
  local name=$1
  shift
  cp "$img" "$BOOT_DIR/$name.img"
  boot_run "$name" "$@"
  cp "$BOOT_DIR/$name.img" "$img" # the stick as the run left it
}
run hang-install "${DIMM[@]}"
a=hang-install
expect $a '^ptboot: recover none reason=no recorder variable \(PtbootRecorder\)' "recover with nothing recorded says so"
expect $a '^ptboot: command 1/5 recover status=1$' "and fails"
expect $a '^ptboot: error: install: --hang-timeout 0: seconds, 1 to 86400$' "install refuses --hang-timeout 0"
expect $a '^ptboot: error: install: --recorder-at 0x1001: a page-aligned physical address$' "install refuses an unaligned --recorder-at"
expect $a '^ptboot: error: trace: --hang-repeat needs --hang-timeout$' "trace refuses --hang-repeat alone"
expect $a "^ptboot: install option=Driver[0-9A-F]{4} .*options='$words'" "install wrote the words"

# ---- B: a hang at TPL_APPLICATION, reset, recover -----------------------------------
set_cfg "--shutdown resident chain \\ptbhang.efi --args tpl ; recover --serial-dump ; install --image ptbhang.efi --hang-timeout 5 --buffer 4096 --recorder-at $AT"
QEMU_RESET_ON='^ptboot: hang report end n=2 ' QEMU_RESET_DELAY=0.5 run hang-tpl "${DIMM[@]}"
b=hang-tpl
expect_rc $b 0 "the boot after the reset shut down"
expect $b "^ptboot: resident recorder at=$AT bytes=[0-9]+ generation=1 place=outside-map .* hang_timeout=5 repeat=1 ring=1$" \
  "the driver put the recorder at $AT (outside the firmware's map), generation 1"
expect $b '^ptbhang: waiting mode=tpl$' "the stand-in hung at TPL_APPLICATION"
expect $b '^ptboot: hang report begin n=1 after=5s unit=soft image=ptbhang.efi tpl=callback watchdog=off$' \
  "the driver's hang report 5 s after tracing began, watchdog off"
expect $b '^ptboot: hang report end n=2 repeat=1$' "and a second with --hang-repeat"
block "trace summary" 1 $b > "$BOOT_DIR/$b.s1"
check "$b: report 1 names ptbhang.efi+$(hexoff $wait_ready) (entered once) and ptbhang.efi+$(hexoff $read_status) (its callee)" \
  "[ \"\$(fn_calls $BOOT_DIR/$b.s1 ptbhang.efi+$(hexoff $wait_ready))\" = 1 ] && [ \"\$(fn_calls $BOOT_DIR/$b.s1 ptbhang.efi+$(hexoff $read_status))\" -gt 100 ]"
check "$b: report 1's last transitions end in the loop" "in_loop \$(last_from $BOOT_DIR/$b.s1)"
# the recovered trace simply ends (no TIP.PGD): the tail (on in recovery
# reports) follows the code past the last packet to the loop's conditional
# branch, which only a packet could resolve
block "trace summary" 3 $b > "$BOOT_DIR/$b.s3"
tail_at=$(sed -n 's/^tail ends at ptbhang\.efi+\(0x[0-9a-f]*\): jcc needs trace .*/\1/p' "$BOOT_DIR/$b.s3")
check "$b: the recovery report's tail ends at the loop's jcc (ptbhang.efi+${tail_at:-?})" "[ -n '$tail_at' ] && in_loop $tail_at"
expect $b '^ptboot: resident previous boot.s recorder \(kept for `ptboot.efi recover`\):$' \
  "after the reset the driver found the previous boot's recorder"
expect $b '^ptboot: recover found generation=1 unit=soft region=0x100000000\+0x[0-9a-f]+ state=tracing reason=none image=ptbhang.efi hang_reports=2 ' \
  "generation 1, still tracing at the reset, two reports sent"
expect $b '^ptboot: recover trace source=unit end=exact bytes=[1-9][0-9]* wrapped=0$' "the soft unit's exact position"
expect $b "^ptboot: resident recorder at=$AT .*generation=2 " "and put this boot's recorder (generation 2) at the same place"
rl=$(grep -a '^ptboot: recover unit=' "$BOOT_DIR/$b.txt")
check "$b: the driver's and recover's final lines agree: $(echo "$rl" | head -1)" \
  "[ \$(echo \"\$rl\" | wc -l) -eq 2 ] && [ \"\$(echo \"\$rl\" | sort -u | wc -l)\" -eq 1 ]"
last=$(echo "$rl" | head -1 | sed -n 's/.* reset=1 last=ptbhang\.efi+\(0x[0-9a-f]*\)$/\1/p')
check "$b: last=ptbhang.efi+$last lies in the loop" "[ -n '$last' ] && in_loop $last"
expect $b '^ptboot: recover unit=soft bytes=[1-9][0-9]* insns=[1-9][0-9]* errors=0 reset=1 last=' "no decode error"
expect $b '^ptboot: recover files dir=\\ptboot\\cap001 trace=[1-9][0-9]* code-pages=[1-9]' "recover wrote \\ptboot\\cap001"
check "$b: the driver's recovery summary = recover's" "cmp -s <(block 'trace summary' 3 $b) <(block 'trace summary' 4 $b)"
rm -rf "$BOOT_DIR/$b-stick" && mkdir -p "$BOOT_DIR/$b-stick"
mcopy -s -i "$img" ::/ptboot/cap001 "$BOOT_DIR/$b-stick/" 2>/dev/null
check "$b: recover.txt says reset=1, generation 1, position from the unit" \
  "grep -qx reset=1 $BOOT_DIR/$b-stick/cap001/recover.txt && grep -qx generation=1 $BOOT_DIR/$b-stick/cap001/recover.txt && grep -qx source=unit $BOOT_DIR/$b-stick/cap001/recover.txt"
recovered $b '^ptboot: command 1/3 resident ' '^ptboot: serial-dump end files=5' "$BOOT_DIR/$b-rec"
check "$b: the serial dump = the files on the stick (trace.pt, code.dump, code.addr, sideband.txt, recover.txt)" \
  "(for f in trace.pt code.dump code.addr sideband.txt recover.txt; do cmp -s $BOOT_DIR/$b-rec/\$f $BOOT_DIR/$b-stick/cap001/\$f || exit 1; done)"
host_same $b 4 "$BOOT_DIR/$b-stick/cap001" "\\ptboot\\cap001"
named $b "$BOOT_DIR/$b-stick/cap001" "\\ptboot\\cap001, recovered after the reset"
expect $b '^ptboot: command 2/3 recover status=0$' "recover succeeded"

# ---- C: interrupts off, reset, recover, damage ------------------------------------
set_cfg '--shutdown resident chain \ptbhang.efi --args cli ; recover --keep --serial-dump --no-files ; resident chain \ptbpoke.efi --args "trace 600" ; recover --keep --no-files ; resident chain \ptbpoke.efi --args header ; recover ; uninstall'
QEMU_RESET_ON='^ptbhang: waiting mode=cli' QEMU_RESET_DELAY=12 run hang-cli "${DIMM[@]}"
c=hang-cli
expect_rc $c 0 "the boot after the reset shut down"
expect $c '^ptbhang: waiting mode=cli$' "the stand-in hung with interrupts off"
expect_not $c '^ptboot: hang report begin' "no hang report: no timer event runs with interrupts off"
expect $c '^ptboot: recover found generation=3 unit=soft .*state=tracing reason=none image=ptbhang.efi hang_reports=0 ' \
  "the next boot's driver found generation 3, still tracing"
expect $c '^ptboot: recover trace source=unit end=exact bytes=[1-9][0-9]* wrapped=1$' "the 4 KiB ring had wrapped"
rl=$(grep -a '^ptboot: recover unit=' "$BOOT_DIR/$c.txt" | head -2)
check "$c: the driver's and recover's final lines agree" "[ \"\$(echo \"\$rl\" | sort -u | wc -l)\" -eq 1 ]"
last=$(echo "$rl" | head -1 | sed -n 's/.* errors=0 reset=1 last=ptbhang\.efi+\(0x[0-9a-f]*\)$/\1/p')
check "$c: recovered without error, last=ptbhang.efi+$last in the loop" "[ -n '$last' ] && in_loop $last"
block "trace summary" 2 $c > "$BOOT_DIR/$c.s2"
check "$c: its last transitions end in the loop" "in_loop \$(last_from $BOOT_DIR/$c.s2)"
recovered $c '^ptboot: command 1/7 resident ' '^ptboot: serial-dump end files=5' "$BOOT_DIR/$c-rec"
host_same $c 2 "$BOOT_DIR/$c-rec" "the recovered files"
expect $c '^ptbpoke: trace at 0x' "ptbpoke overwrote 600 bytes of the kept trace"
block "trace summary" 3 $c > "$BOOT_DIR/$c.s3"
# the damage lies inside the stream (the ring wrapped: errors or skipped
# bytes counted) or before its first PSB (the stream starts later): either
# way fewer instructions than the intact copy's, decoded from a PSB
field() { sed -n "s/.* $1=\([0-9]*\) .*/\1/p"; }
intact=$(echo "$rl" | head -1)
damaged=$(grep -a '^ptboot: recover unit=' "$BOOT_DIR/$c.txt" | sed -n 3p)
check "$c: the damaged trace decodes from its first intact PSB: fewer instructions ($(field insns <<< "$damaged") of $(field insns <<< "$intact")), the damage counted or left before the first PSB" \
  "[ \$(field insns <<< \"\$damaged\") -lt \$(field insns <<< \"\$intact\") ] && { grep -Eq '^[1-9][0-9]* errors?, |^[0-9]+ errors?, [1-9][0-9]* bytes? skipped' $BOOT_DIR/$c.s3 || [ \$(field bytes <<< \"\$damaged\") -lt \$(field bytes <<< \"\$intact\") ]; }"
last3=$(grep -a '^ptboot: recover unit=' "$BOOT_DIR/$c.txt" | sed -n 3p | sed -n 's/.* last=ptbhang\.efi+\(0x[0-9a-f]*\)$/\1/p')
check "$c: and still ends in the loop (last=ptbhang.efi+$last3)" "[ -n '$last3' ] && in_loop $last3"
expect $c '^ptbpoke: header at 0x' "ptbpoke flipped a bit in the kept header"
expect $c '^ptboot: recover none reason=at 0x100000000: the recorder header is damaged \(its CRC does not hold\)$' \
  "the damaged header is refused"
check "$c: nothing decoded from it (no summary after the refusal)" \
  "! sed -n '/the recorder header is damaged/,\$p' $BOOT_DIR/$c.txt | grep -q '^ptboot: trace summary begin'"
expect $c '^ptboot: command 6/7 recover status=1$' "recover of the damaged header fails"
expect $c '^ptboot: uninstall removed=1 ' "uninstall"
expect_not $c 'X64 Exception' "no CPU exception anywhere"

# ---- D: a power cycle -------------------------------------------------------------
set_cfg '--shutdown recover'
run hang-cold "${DIMM[@]}"
expect hang-cold '^ptboot: recover none reason=at 0x100000000: no recorder header there ' \
  "after a power cycle the variable names memory without a recorder: said, nothing decoded"
expect hang-cold '^ptboot: exit status=1 ' "recover fails, the app ends normally"

echo "hang tests: $boot_failures failure(s)"
[ "$boot_failures" -eq 0 ]
