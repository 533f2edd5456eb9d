#!/usr/bin/env bash
# The resident boot tracer end to end (docs/resident.md), in five QEMU runs
# that share one OVMF variable store (scripts/qemu-run.sh OVMF_VARS_FILE)
# and one stick: ptboot.efi as \EFI\BOOT\BOOTX64.EFI, the driver at
# \EFI\ptboot\ptbootdrv.efi, the OS-loader stand-in at
# \EFI\ptboot\osloader.efi; only ptboot.cfg changes between runs.
#   0 someone else's Driver0000 (a missing file) is put first into the
#                  store (efivars --add-driver): install and uninstall must
#                  leave it and its place in DriverOrder alone
#   1 install      `resident status` finds nothing, `install` refuses a bad
#                  word, `install --image osloader.efi` twice (the second
#                  replaces the first): Driver#### and DriverOrder as read
#                  from the variable store file afterwards (efivars)
#   2 traced boot  BDS loads the driver from Driver####, ptboot.efi finds it
#                  armed (configuration table) and chain-loads the stand-in,
#                  which is traced from its entry point until it calls
#                  ExitBootServices; the driver reports over COM1 from the
#                  ExitBootServices notify; the stand-in shuts down. The
#                  on-target flow must show the stand-in's known control flow
#                  (symbols of build/test/resident/osloader.so) and equal the
#                  host's decode of the files recovered from the serial dump;
#                  the on-target summaries (decoder/ptd_sum.h) have the
#                  source's call counts (osl_fib 2*fib(N+1)-1, osl_mix
#                  ROUNDS) under osloader.efi+0x<nm offset> and equal the
#                  host's `ptboot summary --capture` of the recovered files.
#   3 same boot    the stand-in returns ("return"): `resident status flow
#                  dump save` later in the same boot find the stopped trace;
#                  the files `save` wrote on the stick decode on the host to
#                  the same flow; the app's own `flow --resident`, `dump
#                  --resident` and `decode` read the same capture from the
#                  configuration table: the same flow and packets, and the
#                  stand-in's call counts
#   3b TraceStop   run 3 ended by installing again with --trace-stop at
#                  osl_mix: the trace of this boot stops there (reason unit)
#                  and installs again with --unit hw
#   4 uninstall    the hw driver, on a CPU without Intel PT, says why it
#                  failed in the header (`resident status`); then our
#                  Driver#### gone, DriverOrder gone
#   5 clean boot   no driver loads, `resident` finds nothing, `uninstall`
#                  again removes nothing
. test/boot/lib.sh

for f in build/ptboot.efi build/ptbootdrv.efi build/osloader.efi build/ptbtest.efi build/ptboot build/test/efivars \
         build/test/resident/osloader.so; do
  [ -f "$f" ] || { echo "resident: $f missing (make all test)"; exit 1; }
done
export OVMF_VARS_FILE=$BOOT_DIR/resident-vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
build/test/efivars "$OVMF_VARS_FILE" --add-driver 0 "someone else" '\EFI\other\drv.efi' 0 > /dev/null || exit 1
export BOOT_TIMEOUT=${BOOT_TIMEOUT:-60}
files=(build/ptbootdrv.efi=EFI/ptboot/ptbootdrv.efi build/osloader.efi=EFI/ptboot/osloader.efi
       build/ptbtest.efi=ptbtest.efi)
img=$BOOT_DIR/resident.img
so=build/test/resident/osloader.so

# set_cfg TEXT: the stick's ptboot.cfg for the next run (same stick).
set_cfg() {
  printf '%s\n' "$1" > "$BOOT_DIR/resident.cfg"
  mcopy -o -i "$img" "$BOOT_DIR/resident.cfg" ::/ptboot.cfg
}
# run NAME: boots the stick; the log is $BOOT_DIR/NAME.txt.
run() {
  cp "$img" "$BOOT_DIR/$1.img"
  boot_run "$1"
}
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

# symbol NAME: its offset in the image (the .so is linked at 0, as the PE).
symbol() { nm "$so" | awk -v s="$1" '$3 == s { print $1; exit }'; }
# block WHAT N NAME: the lines between the N-th "ptboot: WHAT begin" and
# the "ptboot: WHAT end" after it in NAME's log.
block() {
  awk -v b="ptboot: $1 begin " -v e="ptboot: $1 end " -v n="$2" \
    'index($0 " ", b) == 1 { k++; on = k == n; next } index($0 " ", e) == 1 { on = 0 } on' "$BOOT_DIR/$3.txt"
}
# flow_offsets NAME BASE: the flow lines (IPs only) of the first flow in
# NAME's log, as offsets from BASE (hex).
flow_offsets() {
  block flow 1 "$1" | grep -E '^[0-9a-f]{16}$' | while read -r ip; do printf '%x\n' $((0x$ip - $2)); done
}
# count OFFSETS-FILE SYMBOL: how often the symbol's first instruction ran.
count() { grep -cx "$(printf '%x' $((0x$(symbol "$2"))))" "$1"; }
# first/last line number of the symbol's entry in OFFSETS-FILE
first() { grep -nx "$(printf '%x' $((0x$(symbol "$2"))))" "$1" | head -1 | cut -d: -f1; }
last() { grep -nx "$(printf '%x' $((0x$(symbol "$2"))))" "$1" | tail -1 | cut -d: -f1; }

# ---- 1: install ----------------------------------------------------------------
scripts/mkimage.sh "$img" build/ptboot.efi "" "${files[@]}" || exit 1
set_cfg "--shutdown resident status ; install --image osloader.efi --bogus 1 ; install --image osloader.efi ; install --image osloader.efi"
run resident-install
expect_rc resident-install 0 "the app shut the machine down"
expect resident-install "^ptboot: resident none" "no resident tracer before install"
expect resident-install "^ptboot: error: install: unknown option '--bogus'" "install refused an unknown word"
expect resident-install "^ptboot: removed Driver[0-9A-F]{4} \\(ours\\)" "the second install replaced the first"
expect resident-install "^ptboot: install option=Driver[0-9A-F]{4} bytes=[0-9]+ file=\\\\EFI\\\\ptboot\\\\ptbootdrv\\.efi options='--image osloader\\.efi' order=[0-9A-F]{4}" \
  "install wrote a Driver#### option and DriverOrder"
build/test/efivars "$OVMF_VARS_FILE" > "$BOOT_DIR/resident-vars-1.txt"
num=$(sed -n 's/^ptboot: install option=Driver\([0-9A-F]\{4\}\) .*/\1/p' "$BOOT_DIR/resident-install.txt" | tail -1)
opt=$(grep "^Driver$num " "$BOOT_DIR/resident-vars-1.txt")
# The file node and End node the option must end its FilePathList with,
# built here from UEFI 2.10 section 10.3.5.4 (type 4, subtype 4, length,
# UCS-2 path with its NUL) and 10.3.1 (7f ff 0400).
path='\EFI\ptboot\ptbootdrv.efi'
node_len=$((4 + 2 * (${#path} + 1)))
node=$(printf '0404%02x%02x' $((node_len & 255)) $((node_len >> 8)))$(printf '%s' "$path" | iconv -t UTF-16LE | od -An -v -tx1 | tr -d ' \n')0000
check "vars: Driver$num is active, ours, with the words as OptionalData" \
  "[[ \"\$opt\" == *'attr=0x00000001 desc=\"ptboot resident tracer\" file=\\EFI\\ptboot\\ptbootdrv.efi '* && \"\$opt\" == *' optional=\"--image osloader.efi\"' ]]"
check "vars: Driver$num's device path ends in the driver's file node + End" \
  "[[ \"\$opt\" == *\"dp=\"*\"${node}7fff0400 \"* ]]"
check "vars: Driver$num's device path starts at the PCI root (a full path)" \
  "[[ \"\$opt\" == *'dp=02010c00d041030a'* ]]"
check "vars: ours got a free number ($num), not the other driver's" "[ '$num' != 0000 ]"
check "vars: DriverOrder is ours first, then the other driver" "grep -qx 'DriverOrder $num,0000' '$BOOT_DIR/resident-vars-1.txt'"
check "vars: the other driver's option is untouched" \
  "grep -q '^Driver0000 attr=0x00000001 desc=\"someone else\" file=\\\\EFI\\\\other\\\\drv.efi ' '$BOOT_DIR/resident-vars-1.txt'"
check "vars: exactly one option of ours" "[ \$(grep -c 'desc=\"ptboot resident tracer\"' '$BOOT_DIR/resident-vars-1.txt') -eq 1 ]"

# ---- 2: the traced boot, to ExitBootServices ------------------------------------
set_cfg '--shutdown resident status ; trace --unit soft --no-files \ptbtest.efi ; resident chain \EFI\ptboot\osloader.efi'
run resident-boot
t=$BOOT_DIR/resident-boot.txt
expect_rc resident-boot 0 "the stand-in shut the machine down after ExitBootServices"
expect resident-boot "^ptboot: resident driver start .*options='--image osloader\\.efi'" "the driver ran, with the option's words"
expect resident-boot "^ptboot: resident driver ready unit=soft image=osloader\\.efi" "the driver stayed resident"
expect resident-boot "^ptboot: resident armed image=osloader\\.efi entry=0x" "it armed at the stand-in's entry when it loaded"
expect resident-boot "^ptboot: resident status state=armed .*image=osloader\\.efi" "ptboot.efi found it through the configuration table"
expect resident-boot "^ptboot: resident exit-boot-services state=stopped reason=exit-boot-services" "ExitBootServices stopped the trace"
expect resident-boot "^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=1 insns=[1-9][0-9]* errors=0 images=[1-9]" "the capture line"
expect_not resident-boot "resident chain returned" "the stand-in never returned (it exited boot services)"
expect resident-boot '^ptboot: error: trace: soft unit: the resident tracer of this boot holds the #DB vector \(state=armed image=osloader\.efi\): `resident stop`' \
  "trace --unit soft while the driver is armed: refused, saying who holds #DB"
base=$(sed -n 's/^ptboot: resident image [0-9]* base=\(0x[0-9a-f]*\) .*name=osloader\.efi traced$/\1/p' "$t" | head -1)
insns=$(sed -n 's/^ptboot: trace unit=soft .* insns=\([0-9]*\) .*/\1/p' "$t")
if [ -z "$base" ]; then
  not_ok "resident-boot: no traced image line"
else
  flow_offsets resident-boot "$base" > "$BOOT_DIR/resident-boot.offsets"
  f=$BOOT_DIR/resident-boot.offsets
  # osl_fib(6) enters osl_fib 2*fib(7)-1 = 25 times; osl_mix runs 4 rounds
  check "flow: osl_fib entered 25 times" "[ \$(count $f osl_fib) -eq 25 ]"
  check "flow: osl_mix entered 4 times" "[ \$(count $f osl_mix) -eq 4 ]"
  check "flow: efi_main, osl_wants_return, osl_exit_boot_services once each" \
    "[ \$(count $f efi_main) -eq 1 ] && [ \$(count $f osl_wants_return) -eq 1 ] && [ \$(count $f osl_exit_boot_services) -eq 1 ]"
  check "flow: in source order (_start, efi_main, fib..., mix..., wants_return, exit_boot_services)" \
    "[ \$(first $f _start) -eq 1 ] && [ \$(first $f efi_main) -lt \$(first $f osl_fib) ] && [ \$(last $f osl_fib) -lt \$(first $f osl_mix) ] && [ \$(last $f osl_mix) -lt \$(first $f osl_wants_return) ] && [ \$(first $f osl_wants_return) -lt \$(first $f osl_exit_boot_services) ]"
  lastip=$((0x$(tail -1 "$f")))
  check "flow: the trace ends inside osl_exit_boot_services (its ExitBootServices call)" \
    "[ $lastip -ge \$((0x\$(symbol osl_exit_boot_services))) ] && [ $lastip -lt \$((0x\$(symbol efi_main))) ]"
  check "flow: as many instructions decoded as the unit traced ($insns)" "[ \$(wc -l < $f) -eq $insns ]"
  # the summaries the driver printed from the notify: the functions
  # table's call counts as the source's #defines imply
  block "trace summary" 1 resident-boot > "$BOOT_DIR/resident-boot.sum"
  expect resident-boot "^ptboot: trace summary end lines=[1-9][0-9]* insns=$insns errors=0$" \
    "the driver printed the summaries ($insns instructions, no error)"
  def() { sed -n "s/^#define $1 \+\([0-9]*\)$/\1/p" test/resident/osloader.c; }
  fibn() { local a=0 b=1 i t; for ((i = 0; i < $1; i++)); do t=$((a + b)); a=$b; b=$t; done; echo $a; }
  fib_calls=$((2 * $(fibn $(($(def OSL_FIB_N) + 1))) - 1)) rounds=$(def OSL_ROUNDS)
  sum_calls() { sed -n '/^== functions /,/^== /p' "$BOOT_DIR/resident-boot.sum" | sed '1d;$d' |
    awk -v f="osloader.efi+0x$(printf '%x' $((0x$(symbol "$1"))))" '$NF == f { print $1 }'; }
  check "summary: functions table: osl_fib called $fib_calls times, osl_mix $rounds (osloader.efi+0x.. at nm's offsets)" \
    "[ \"\$(sum_calls osl_fib)\" = $fib_calls ] && [ \"\$(sum_calls osl_mix)\" = $rounds ] && [ \"\$(sum_calls osl_wants_return)\" = 1 ]"
  # the serial dump, recovered on the host, decodes to the same flow
  rm -rf "$BOOT_DIR/resident-rec" && mkdir -p "$BOOT_DIR/resident-rec"
  if build/ptboot serial "$t" --out "$BOOT_DIR/resident-rec" > "$BOOT_DIR/resident-rec.log" 2>&1; then
    build/ptboot flow --no-inst --capture "$BOOT_DIR/resident-rec" > "$BOOT_DIR/resident-boot.host" 2>&1
    block flow 1 resident-boot > "$BOOT_DIR/resident-boot.target"
    check "host: the recovered capture (trace.pt, code, sideband.txt) decodes to the target's flow ($insns instructions)" \
      "cmp -s $BOOT_DIR/resident-boot.host $BOOT_DIR/resident-boot.target"
    build/ptboot summary --capture "$BOOT_DIR/resident-rec" 2>&1 | grep -v '^note: ' > "$BOOT_DIR/resident-boot.host-sum"
    check "host: ptboot summary --capture of the recovered files = the driver's summaries ($(wc -l < "$BOOT_DIR/resident-boot.sum") lines)" \
      "[ \$(wc -l < $BOOT_DIR/resident-boot.sum) -gt 20 ] && cmp -s $BOOT_DIR/resident-boot.host-sum $BOOT_DIR/resident-boot.sum"
    # names and source lines from the stand-in's debug file (docs/symbols.md)
    line_of() { addr2line -e "$so" "0x$(symbol "$1")" | sed 's/ .*//; s|.*/||'; }
    named() { grep -qE "^ +$2 +[0-9]+ .* $1 \\($(line_of "$1")\\)\$" "$BOOT_DIR/resident-boot.names"; }
    build/ptboot summary --capture "$BOOT_DIR/resident-rec" --symbols build/test/resident > "$BOOT_DIR/resident-boot.names" 2>/dev/null
    check "host: --symbols names osl_mix ($rounds calls, $(line_of osl_mix)) and osl_fib ($fib_calls calls, $(line_of osl_fib))" \
      "named osl_mix $rounds && named osl_fib $fib_calls"
    sbt=$BOOT_DIR/resident-rec/sideband.txt
    check "host: the sideband names the soft unit and the target with its snapshot" \
      "grep -qx 'unit soft' $sbt && grep -q '^image base=$base .*flags=[a-z,]*target.* name=osloader.efi\$' $sbt && grep -q 'flags=[a-z,]*snapshot' $sbt"
  else
    not_ok "host: ptboot serial could not recover the dump"
    sed 's/^/    | /' "$BOOT_DIR/resident-rec.log" | head
  fi
fi

# ---- 3: the same boot reads the trace --------------------------------------------
mix=$(symbol osl_mix)
set_cfg "--shutdown resident chain \\EFI\\ptboot\\osloader.efi --args return status flow dump save ; flow --resident ; dump --resident ; decode ; trace --unit soft --no-files --no-summary \\ptbtest.efi ; install --image osloader.efi --trace-stop $mix"
run resident-same
expect_rc resident-same 0 "the app shut the machine down"
expect resident-same '^ptboot: resident chain returned \\EFI\\ptboot\\osloader\.efi status=0x0' "the stand-in returned"
expect resident-same "^ptboot: resident status state=stopped reason=returned .*image=osloader\\.efi" "tracing stopped when its entry returned"
expect resident-same "^ptboot: flow end insns=[1-9][0-9]* errors=0" "resident flow decoded it"
expect resident-same "^ptboot: dump end packets=[1-9][0-9]* errors=0" "resident dump printed its packets"
expect resident-same "^ptboot: exit status=0 " "the app ended well"
base3=$(sed -n 's/^ptboot: resident armed image=osloader\.efi entry=\(0x[0-9a-f]*\) .*/\1/p' "$BOOT_DIR/resident-same.txt")
if [ -n "$base3" ] && [ -n "$base" ]; then
  base3=$((base3 - 0x$(symbol _start)))
  flow_offsets resident-same "$base3" > "$BOOT_DIR/resident-same.offsets"
  g=$BOOT_DIR/resident-same.offsets
  n=$(first "$BOOT_DIR/resident-boot.offsets" osl_wants_return)
  check "same boot: osl_fib 25, osl_mix 4, no ExitBootServices" \
    "[ \$(count $g osl_fib) -eq 25 ] && [ \$(count $g osl_mix) -eq 4 ] && [ \$(count $g osl_exit_boot_services) -eq 0 ]"
  check "same boot: identical to the traced boot up to osl_wants_return ($n instructions)" \
    "cmp -s <(head -n $n $BOOT_DIR/resident-boot.offsets) <(head -n $n $g)"
else
  not_ok "resident-same: no armed line"
fi

expect resident-same '^ptboot: resident saved dir=\\ptboot\\cap[0-9]{3} trace=[1-9][0-9]* code-pages=[1-9]' "resident save wrote the capture files"
saved=$(sed -n 's/^ptboot: resident saved dir=\\ptboot\\\(cap[0-9]*\) .*/\1/p' "$BOOT_DIR/resident-same.txt")
rm -rf "$BOOT_DIR/resident-saved" && mkdir -p "$BOOT_DIR/resident-saved"
if [ -n "$saved" ] && mcopy -s -i "$BOOT_DIR/resident-same.img" "::/ptboot/$saved" "$BOOT_DIR/resident-saved/" 2>/dev/null; then
  build/ptboot flow --no-inst --capture "$BOOT_DIR/resident-saved/$saved" > "$BOOT_DIR/resident-same.host" 2>&1
  block flow 1 resident-same > "$BOOT_DIR/resident-same.target"
  check "host: the saved capture on the stick decodes to the same flow ($(wc -l < "$BOOT_DIR/resident-same.target") lines)" \
    "[ -s $BOOT_DIR/resident-same.target ] && cmp -s $BOOT_DIR/resident-same.host $BOOT_DIR/resident-same.target"
else
  not_ok "resident-same: no saved capture on the stick"
fi

# the app's own commands on the same capture (configuration table)
rs=resident-same
expect $rs "^ptboot: flow begin trace=resident bytes=[1-9][0-9]* pages=[1-9][0-9]* live=0$" "flow --resident found the trace and the snapshot's pages"
check "flow --resident: the same $(block flow 1 $rs | wc -l) lines as resident flow" \
  "[ \$(block flow 1 $rs | wc -l) -gt 100 ] && cmp -s <(block flow 1 $rs) <(block flow 2 $rs)"
check "dump --resident: the same $(block dump 1 $rs | wc -l) packet lines as resident dump" \
  "[ \$(block dump 1 $rs | wc -l) -gt 20 ] && cmp -s <(block dump 1 $rs) <(block dump 2 $rs)"
rbytes=$(sed -n 's/^ptboot: resident status state=stopped .* bytes=\([0-9]*\) .*/\1/p' "$BOOT_DIR/$rs.txt" | head -1)
expect $rs "^ptboot: decode source=resident bytes=$rbytes pages=[1-9][0-9]* images=[1-9][0-9]*$" "decode took the resident capture by default ($rbytes bytes)"
calls() { block "trace decode" 1 $rs | grep -q "^call osloader\.efi+0x$(printf '%x' $((0x$(symbol "$1")))) count=$2\$"; }
check "decode: efi_main called once, osl_fib 25 times, osl_mix 4, osl_wants_return once (the source's counts)" \
  "calls efi_main 1 && calls osl_fib 25 && calls osl_mix 4 && calls osl_wants_return 1"
check "decode: the instructions of resident flow, no error" \
  "grep -qx \"ptboot: decode end insns=\$(sed -n 's/^ptboot: flow end insns=\([0-9]*\) errors=0\$/\1/p' $BOOT_DIR/$rs.txt | head -1) errors=0\" $BOOT_DIR/$rs.txt"
expect $rs "^ptboot: trace summary end lines=[1-9][0-9]* insns=[1-9][0-9]* errors=0$" "decode printed the summaries"
# the driver's session is over: it gives #DB back, the app's trace steps
expect $rs "^ptboot: trace: note: the resident tracer \(state=stopped\) gave the #DB vector back$" "trace --unit soft after the driver's trace ended: the vector is given back"
expect $rs "^ptboot: trace: target returned status 0x0$" "and the app's own soft trace of ptbtest.efi ran, with the right results"
expect $rs "^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=0 insns=[1-9][0-9]{3,} errors=0 images=" "its capture line"

# ---- 3b: a TraceStop address ends the trace ----------------------------------------
expect resident-same "^ptboot: install option=Driver$num .* options='--image osloader\\.efi --trace-stop $mix'" "reinstalled with --trace-stop"
set_cfg '--shutdown resident chain \EFI\ptboot\osloader.efi --args return flow status ; install --image osloader.efi --unit hw'
run resident-stop
expect resident-stop "^ptboot: resident status state=stopped reason=unit .*image=osloader\\.efi" "the TraceStop address stopped the trace"
base4=$(sed -n 's/^ptboot: resident armed image=osloader\.efi entry=\(0x[0-9a-f]*\) .*/\1/p' "$BOOT_DIR/resident-stop.txt")
if [ -n "$base4" ]; then
  flow_offsets resident-stop $((base4 - 0x$(symbol _start))) > "$BOOT_DIR/resident-stop.offsets"
  h=$BOOT_DIR/resident-stop.offsets
  check "TraceStop: osl_fib ran 25 times, nothing of osl_mix was traced" \
    "[ \$(count $h osl_fib) -eq 25 ] && [ \$(count $h osl_mix) -eq 0 ] && [ \$(count $h osl_wants_return) -eq 0 ]"
  check "TraceStop: the trace is the traced boot's up to the first call of osl_mix" \
    "cmp -s <(head -n \$(wc -l < $h) $BOOT_DIR/resident-boot.offsets) $h && [ \$(wc -l < $h) -lt \$(first $BOOT_DIR/resident-boot.offsets osl_mix) ]"
else
  not_ok "resident-stop: no armed line"
fi

# ---- 4: uninstall ---------------------------------------------------------------
set_cfg "--shutdown resident status ; uninstall"
run resident-uninstall
expect resident-uninstall "^ptboot: resident error: --unit hw: no usable Intel PT on this CPU" "the hw driver refused on QEMU's CPU (COM1 line)"
expect resident-uninstall "^ptboot: resident status state=failed .*unit=hw " "resident status reports the failure"
expect resident-uninstall "^ptboot: resident failed: --unit hw: no usable Intel PT on this CPU" "with the driver's reason"
expect resident-uninstall "^ptboot: removed Driver$num \\(ours\\)" "uninstall removed our option"
expect resident-uninstall "^ptboot: uninstall removed=1 order=0000$" "and left DriverOrder to the other driver"
build/test/efivars "$OVMF_VARS_FILE" > "$BOOT_DIR/resident-vars-4.txt"
check "vars: no option of ours left" "! grep -q 'desc=\"ptboot resident tracer\"' '$BOOT_DIR/resident-vars-4.txt'"
check "vars: the other driver's option and DriverOrder 0000 remain" \
  "grep -q '^Driver0000 attr=0x00000001 desc=\"someone else\"' '$BOOT_DIR/resident-vars-4.txt' && grep -qx 'DriverOrder 0000' '$BOOT_DIR/resident-vars-4.txt'"

# ---- 5: the next boot is not traced ------------------------------------------------
set_cfg "--shutdown resident status ; uninstall"
run resident-clean
expect_not resident-clean "resident driver start" "no driver loaded"
expect resident-clean "^ptboot: resident none" "no resident tracer in the configuration table"
expect resident-clean "^ptboot: uninstall removed=0 order=0000$" "a second uninstall finds nothing to remove"
boot_done
