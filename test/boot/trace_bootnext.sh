#!/usr/bin/env bash
# `trace --boot-next` (efi/cmd/trace.c, docs/trace.md): the boot option the
# firmware would take next is found, its device path made loadable and the
# image traced. Three QEMU runs, each on its own copy of one OVMF variable
# store (scripts/qemu-run.sh OVMF_VARS_FILE; build/test/efivars reads and
# writes the store from outside):
#   1 prepare   a fresh store; OVMF's BDS creates its options (the stick,
#               UiApp, the internal shell) and boots the stick (`info`).
#   2 next      a Boot0100 "osloader stand-in" option is added whose
#               FilePathList is the short-form File Path \osloader.efi
#               (UEFI 2.10 section 3.1.2; the same file-path-only form
#               efivars --add-driver writes), placed in BootOrder right
#               after the stick's option: OVMF boots the stick (its fw_cfg
#               boot order puts the stick first and keeps file-path
#               options after it), ptboot's `trace --boot-next` skips
#               BootCurrent, says it chose Boot0100 with its description
#               and path, expands the path to the full one on the stick,
#               and traces the stand-in (test/resident/osloader.c) with the
#               soft unit through ExitBootServices: the COM1 report's flow
#               has the stand-in's functions (nm offsets) as often and in
#               the order the source's #defines imply (as trace_ebs.sh),
#               and QEMU ends by the stand-in's shutdown.
#   3 none      BootNext = the internal shell; its startup.nsh removes the
#               stick's option (bcfg boot rm) and starts ptboot, so
#               BootOrder holds only a hidden option (UiApp) and
#               BootCurrent (the shell): `trace --boot-next` says no option
#               qualifies, and the next command (`info`) still runs.
# (BootOrder holding only BootCurrent cannot be prepared in the store:
# OVMF's BDS puts its shell option back into BootOrder at every boot.)
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

so=build/test/resident/osloader.so src=test/resident/osloader.c
for f in build/ptboot.efi build/osloader.efi build/test/efivars "$so"; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make all test)"; exit 1; }
done
export BOOT_TIMEOUT=${BOOT_TIMEOUT:-45}
vars=$BOOT_DIR/trace_bootnext
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

# ---- 1: let OVMF create its boot options ---------------------------------------
name=trace_bootnext-prep
export OVMF_VARS_FILE=$vars-prep.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
boot_image $name '--shutdown info' build/osloader.efi
boot_run $name
expect_rc $name 0 "ptboot shut the machine down"
build/test/efivars "$OVMF_VARS_FILE" --boot > "$vars-prep.txt"
order=$(sed -n 's/^BootOrder //p' "$vars-prep.txt")
stick=$(sed -n 's/^Boot\([0-9A-F]\{4\}\) attr=0x00000001 desc="[^"]*USB[^"]*" .*/\1/p' "$vars-prep.txt" | head -1)
shell=$(sed -n 's/^Boot\([0-9A-F]\{4\}\) attr=0x00000001 desc="EFI Internal Shell" .*/\1/p' "$vars-prep.txt" | head -1)
check "prep: OVMF made an option for the stick ($stick) and the shell ($shell), stick first in BootOrder ($order)" \
  "[ -n '$stick' ] && [ -n '$shell' ] && [ '${order%%,*}' = '$stick' ] && ! grep -q '^Boot0100 ' '$vars-prep.txt'"
if [ -z "$stick" ] || [ -z "$shell" ] || [ "${order%%,*}" != "$stick" ]; then
  sed 's/^/    | /' "$vars-prep.txt"
  boot_done
  exit
fi

# ---- 2: the next option is the stand-in -----------------------------------------
name=trace_bootnext
export OVMF_VARS_FILE=$vars-next.fd
cp "$vars-prep.fd" "$OVMF_VARS_FILE"
rest=${order#"$stick"}
build/test/efivars "$OVMF_VARS_FILE" --add-boot 100 "osloader stand-in" '\osloader.efi' "$stick,0100$rest" > /dev/null || exit 1
boot_image $name '--shutdown trace --unit soft --no-files --boot-next' build/osloader.efi
boot_run $name
log=$BOOT_DIR/$name.txt
build/test/efivars "$OVMF_VARS_FILE" --boot > "$vars-next.txt"

expect_rc $name 0 "QEMU ended by the stand-in's ResetSystem shutdown after ExitBootServices"
expect $name "^ptboot: trace: --boot-next: BootOrder $stick,0100(,[0-9A-F]{4})*, BootCurrent $stick\$" \
  "ptboot was booted from the stick's option, Boot0100 next in BootOrder"
expect $name "^ptboot: trace: --boot-next: Boot$stick skipped: BootCurrent " "BootCurrent (the stick) skipped"
expect $name '^ptboot: trace: --boot-next: Boot0100 "osloader stand-in" path \\osloader\.efi \(short-form file path\) -> PciRoot\((0x)?0\)/Pci\([^)]*\)/Usb\([^)]*\)/\\osloader\.efi$' \
  "chose Boot0100, its description and path, expanded to the full path on the stick"
expect $name '^ptboot: trace: target Boot0100 "osloader stand-in" loaded at 0x[0-9a-f]+ size 0x[0-9a-f]+ entry 0x[0-9a-f]+ as osloader$' \
  "the stand-in was loaded from the option"
expect $name '^ptboot: trace exit-boot-services unit=soft target=osloader steps=[1-9][0-9]* insns=[1-9][0-9]* bytes=[1-9][0-9]* entered=1$' \
  "the ExitBootServices notify stopped the soft unit and reported"
expect_not $name '^ptboot: trace: target returned' "trace never got control back"
expect_not $name '^ptboot: command 1/1 ' "the command never ended (the stand-in shut down)"
final='^ptboot: trace unit=soft cpu=0 bytes=([0-9]+) wrapped=0 stopped=1 insns=([0-9]+) errors=0 images=[1-9][0-9]*$'
expect $name "$final" "the final trace line says stopped=1, no decode error"
insns=$(sed -nE "s/$final/\\2/p" "$log" | tail -1)
check "$name: the firmware kept Boot0100 after the stick in BootOrder ($(sed -n 's/^BootOrder //p' "$vars-next.txt"))" \
  "grep -Eq '^BootOrder $stick,0100(,|\$)' '$vars-next.txt'"

# The flow as offsets into the stand-in, checked against its symbols (the
# .so is linked at 0, as the PE image) and the source's #defines.
base=$(sed -n 's/^ptboot: trace: target .* loaded at \(0x[0-9a-f]*\) .*/\1/p' "$log" | head -1)
off=$BOOT_DIR/$name.offsets
if [ -z "$base" ] || [ -z "$insns" ]; then
  not_ok "$name: no load address or no final line"
else
  sed -n '/^ptboot: flow begin /,/^ptboot: flow end /p' "$log" | grep -E '^[0-9a-f]{16}$' |
    while read -r ip; do printf '%x\n' $((0x$ip - base)); done > "$off"
  symbol() { nm "$so" | awk -v s="$1" '$3 == s { print $1; exit }'; }
  hits() { grep -nx "$(printf '%x' $((0x$(symbol "$1"))))" "$off" | cut -d: -f1; }
  count() { hits "$1" | wc -l; }
  first() { hits "$1" | head -1; }
  last() { hits "$1" | tail -1; }
  def() { sed -n "s/^#define $1 \+\([0-9]*\)$/\1/p" "$src"; }
  N=$(def OSL_FIB_N) ROUNDS=$(def OSL_ROUNDS)
  fib() { local a=0 b=1 i t; for ((i = 0; i < $1; i++)); do t=$((a + b)); a=$b; b=$t; done; echo $a; }
  fib_calls=$((2 * $(fib $((N + 1))) - 1))
  check "$name: flow: osl_fib entered $fib_calls times (osl_fib($N) recursion)" "[ \$(count osl_fib) -eq $fib_calls ]"
  check "$name: flow: osl_mix entered $ROUNDS times" "[ \$(count osl_mix) -eq $ROUNDS ]"
  check "$name: flow: efi_main, osl_wants_return, osl_exit_boot_services entered once each" \
    "[ \$(count efi_main) -eq 1 ] && [ \$(count osl_wants_return) -eq 1 ] && [ \$(count osl_exit_boot_services) -eq 1 ]"
  check "$name: flow: in source order (_start, efi_main, fib..., mix..., wants_return, exit_boot_services)" \
    "[ \"\$(first _start)\" = 1 ] && [ \$(first efi_main) -lt \$(first osl_fib) ] && [ \$(last osl_fib) -lt \$(first osl_mix) ] && [ \$(last osl_mix) -lt \$(first osl_wants_return) ] && [ \$(first osl_wants_return) -lt \$(first osl_exit_boot_services) ]"
  lastip=$((0x$(tail -1 "$off")))
  check "$name: flow: the trace ends inside osl_exit_boot_services (its ExitBootServices call)" \
    "[ $lastip -ge \$((0x\$(symbol osl_exit_boot_services))) ] && [ $lastip -lt \$((0x\$(symbol efi_main))) ]"
  check "$name: flow: the final line counts the flow's $(wc -l < "$off") instructions ($insns)" "[ \$(wc -l < $off) -eq $insns ]"
  # the summaries' functions table, by module+offset
  sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end /p' "$log" | sed '1d;$d' > "$BOOT_DIR/$name.sum"
  calls() { sed -n '/^== functions /,/^== /p' "$BOOT_DIR/$name.sum" | sed '1d;$d' |
    awk -v f="osloader+0x$(printf '%x' $((0x$(symbol "$1"))))" '$NF == f { print $1 }'; }
  check "$name: summary: osl_fib called $fib_calls times, osl_mix $ROUNDS, osl_exit_boot_services once (osloader+0x.. at nm's offsets)" \
    "[ \"\$(calls osl_fib)\" = $fib_calls ] && [ \"\$(calls osl_mix)\" = $ROUNDS ] && [ \"\$(calls osl_exit_boot_services)\" = 1 ]"
  check "$name: summary: as many instructions as the final line ($insns), no error" \
    "grep -Eq '^ptboot: trace summary end lines=[1-9][0-9]* insns=$insns errors=0\$' $log"
fi

# ---- 3: no option qualifies ---------------------------------------------------------
name=trace_bootnext-none
export OVMF_VARS_FILE=$vars-none.fd
cp "$vars-prep.fd" "$OVMF_VARS_FILE"
build/test/efivars "$OVMF_VARS_FILE" --set BootNext "$shell" > /dev/null || exit 1
boot_image $name '--shutdown trace --unit soft --boot-next ; info' build/osloader.efi
# the stick's option is first in BootOrder when the shell runs (run 1)
printf 'bcfg boot rm 0\r\nfs0:\\EFI\\BOOT\\BOOTX64.EFI\r\n' > "$BOOT_DIR/$name.nsh"
mcopy -i "$BOOT_DIR/$name.img" "$BOOT_DIR/$name.nsh" ::/startup.nsh || exit 1
boot_run $name
expect_rc $name 0 "ptboot shut the machine down"
expect $name "^ptboot: trace: --boot-next: BootOrder [0-9A-F,]*, BootCurrent $shell\$" "the shell (BootNext) started ptboot"
expect_not $name "^ptboot: trace: --boot-next: BootOrder .*$stick" "the stick's option was removed from BootOrder"
expect $name "^ptboot: trace: --boot-next: Boot$shell skipped: BootCurrent " "BootCurrent skipped"
expect $name "^ptboot: error: trace: --boot-next: no active, visible boot option in BootOrder [0-9A-F,]* other than BootCurrent $shell\$" \
  "no option qualifies: a clear error"
expect_not $name '^ptboot: trace: target ' "nothing was loaded"
expect $name '^ptboot: command 1/2 trace status=[1-9]' "trace failed"
expect $name '^ptboot: info pt=' "the next command ran"
expect $name '^ptboot: command 2/2 info status=0$' "and succeeded"
boot_done
