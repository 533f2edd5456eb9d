#!/usr/bin/env bash
# `trace` of an OS loader: the target calls ExitBootServices and never
# returns to ptboot, so the capture is reported from the ExitBootServices
# notify over COM1 (efi/capture/capture.c, efi/capture/ebs_report.h, docs/trace.md
# "Tracing an OS loader"). The target is the resident test's OS-loader
# stand-in (test/resident/osloader.c: fib, mix rounds, GetMemoryMap,
# ExitBootServices, ResetSystem shutdown), traced with the soft unit:
#   - QEMU ends by the stand-in's shutdown (runner status 0), not a
#     timeout, and `trace` never got control back;
#   - the serial log has the EBS status line, the flow, the framed files
#     and the final `ptboot: trace unit=soft ... stopped=1` line;
#   - the flow is the stand-in's control flow: its functions (offsets from
#     nm) entered as often as its source says (fib(N) recursion, ROUNDS mix
#     rounds, the rest once), in source order, ending inside
#     osl_exit_boot_services (its ExitBootServices call);
#   - the decode summaries (decoder/ptd_sum.h) printed by the notify too:
#     in the functions table the stand-in's functions, named
#     osloader+0x<offset from nm>, with the calls the source implies, and
#     the instructions and errors of the final line;
#   - `ptboot serial LOG --out DIR` recovers trace.pt, code.dump, code.addr
#     and sideband.txt, and `ptboot flow --capture DIR` decodes them to the
#     same instructions, `ptboot summary --capture DIR` to the same
#     summaries; trace.pt has the final line's byte count.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

so=build/test/resident/osloader.so src=test/resident/osloader.c
for f in build/ptboot.efi build/osloader.efi build/ptboot "$so"; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make all)"; exit 1; }
done
name=trace_ebs
boot_image $name '--shutdown trace --unit soft --serial-dump \osloader.efi' build/osloader.efi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-60} boot_run $name
log=$BOOT_DIR/$name.txt

expect_rc $name 0 "QEMU ended by the stand-in's ResetSystem shutdown after ExitBootServices"
expect $name '^ptboot: trace: target \\osloader\.efi loaded at 0x[0-9a-f]+ ' "the stand-in was loaded"
expect $name '^ptboot: trace exit-boot-services unit=soft target=osloader steps=[1-9][0-9]* insns=[1-9][0-9]* bytes=[1-9][0-9]* entered=1$' \
  "the ExitBootServices notify stopped the soft unit and reported"
expect_not $name '^ptboot: trace: target returned' "trace never got control back"
expect_not $name '^ptboot: command 1/1 ' "the command never ended (the stand-in shut down)"
expect $name '^ptboot: serial-dump begin files=4$' "the files were sent framed"
final='^ptboot: trace unit=soft cpu=0 bytes=([0-9]+) wrapped=0 stopped=1 insns=([0-9]+) errors=0 images=[1-9][0-9]*$'
expect $name "$final" "the final trace line says stopped=1, no decode error"
bytes=$(sed -nE "s/$final/\\1/p" "$log" | tail -1)
insns=$(sed -nE "s/$final/\\2/p" "$log" | tail -1)
check() { if eval "$2"; then ok "$name: $1"; else not_ok "$name: $1"; fi; }

# The flow between the markers, as offsets into the stand-in.
flow() { sed -n '/^ptboot: flow begin /,/^ptboot: flow end /p' "$log" | sed '1d;$d'; }
flow > "$BOOT_DIR/$name.target"
# The summaries between theirs.
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end /p' "$log" | sed '1d;$d' > "$BOOT_DIR/$name.sum"
base=$(sed -n 's/^ptboot: trace: target .* loaded at \(0x[0-9a-f]*\) .*/\1/p' "$log" | head -1)
off=$BOOT_DIR/$name.offsets
if [ -z "$base" ] || [ -z "$insns" ]; then
  not_ok "$name: no load address or no final line"
else
  grep -E '^[0-9a-f]{16}$' "$BOOT_DIR/$name.target" | while read -r ip; do printf '%x\n' $((0x$ip - base)); done > "$off"
  # symbol NAME: its offset (the .so is linked at 0, as the PE image)
  symbol() { nm "$so" | awk -v s="$1" '$3 == s { print $1; exit }'; }
  hits() { grep -nx "$(printf '%x' $((0x$(symbol "$1"))))" "$off" | cut -d: -f1; }
  count() { hits "$1" | wc -l; }
  first() { hits "$1" | head -1; }
  last() { hits "$1" | tail -1; }
  # the counts the source implies: osl_fib(N) is entered 2*fib(N+1)-1 times
  def() { sed -n "s/^#define $1 \+\([0-9]*\)$/\1/p" "$src"; }
  N=$(def OSL_FIB_N) ROUNDS=$(def OSL_ROUNDS)
  fib() { local a=0 b=1 i; for ((i = 0; i < $1; i++)); do local t=$((a + b)); a=$b; b=$t; done; echo $a; }
  fib_calls=$((2 * $(fib $((N + 1))) - 1))
  check "flow: osl_fib entered $fib_calls times (osl_fib($N) recursion)" "[ \$(count osl_fib) -eq $fib_calls ]"
  check "flow: osl_mix entered $ROUNDS times" "[ \$(count osl_mix) -eq $ROUNDS ]"
  check "flow: efi_main, osl_wants_return, osl_exit_boot_services entered once each" \
    "[ \$(count efi_main) -eq 1 ] && [ \$(count osl_wants_return) -eq 1 ] && [ \$(count osl_exit_boot_services) -eq 1 ]"
  check "flow: in source order (_start, efi_main, fib..., mix..., wants_return, exit_boot_services)" \
    "[ \"\$(first _start)\" = 1 ] && [ \$(first efi_main) -lt \$(first osl_fib) ] && [ \$(last osl_fib) -lt \$(first osl_mix) ] && [ \$(last osl_mix) -lt \$(first osl_wants_return) ] && [ \$(first osl_wants_return) -lt \$(first osl_exit_boot_services) ]"
  lastip=$((0x$(tail -1 "$off")))
  check "flow: the trace ends inside osl_exit_boot_services (its ExitBootServices call)" \
    "[ $lastip -ge \$((0x\$(symbol osl_exit_boot_services))) ] && [ $lastip -lt \$((0x\$(symbol efi_main))) ]"
  check "flow: the final line counts the flow's $(wc -l < "$off") instructions ($insns)" "[ \$(wc -l < $off) -eq $insns ]"

  # The summaries: the functions table's call counts, by module+offset.
  sum_end='^ptboot: trace summary end lines=([0-9]+) insns=([0-9]+) errors=([0-9]+)$'
  expect $name "$sum_end" "the notify printed the summaries"
  check "summary: as many instructions as the final line ($insns), no error" \
    "grep -Eq '^ptboot: trace summary end lines=[1-9][0-9]* insns=$insns errors=0\$' $log"
  funcs() { sed -n '/^== functions /,/^== /p' "$BOOT_DIR/$name.sum" | sed '1d;$d'; }
  calls() { funcs | awk -v f="osloader+0x$(printf '%x' $((0x$(symbol "$1"))))" '$NF == f { print $1 }'; }
  check "summary: functions table: osl_fib called $fib_calls times, osl_mix $ROUNDS (osloader+0x.. at nm's offsets)" \
    "[ \"\$(calls osl_fib)\" = $fib_calls ] && [ \"\$(calls osl_mix)\" = $ROUNDS ]"
  check "summary: functions table: efi_main, osl_wants_return, osl_exit_boot_services called once each" \
    "[ \"\$(calls efi_main)\" = 1 ] && [ \"\$(calls osl_wants_return)\" = 1 ] && [ \"\$(calls osl_exit_boot_services)\" = 1 ]"
fi

# The serial dump, recovered and decoded on the host.
dir=$BOOT_DIR/$name.rec
rm -rf "$dir" && mkdir -p "$dir"
if build/ptboot serial "$log" --out "$dir" > "$dir.log" 2>&1 &&
   grep -q '4 file(s) in the log, 4 complete, 4 written' "$dir.log"; then
  ok "$name: serial dump recovered (trace.pt, code.dump, code.addr, sideband.txt)"
  check "host: trace.pt has the final line's $bytes bytes" "[ \$(stat -c %s $dir/trace.pt) -eq ${bytes:-0} ]"
  build/ptboot flow --no-inst --capture "$dir" > "$BOOT_DIR/$name.host" 2>&1
  check "host: ptboot flow --capture of the recovered files = the target's flow ($(wc -l < "$BOOT_DIR/$name.target") lines)" \
    "[ -s $BOOT_DIR/$name.target ] && cmp -s $BOOT_DIR/$name.host $BOOT_DIR/$name.target"
  build/ptboot summary --capture "$dir" --last 16 > "$BOOT_DIR/$name.host-sum.all" 2>&1
  grep -v '^note: ' "$BOOT_DIR/$name.host-sum.all" > "$BOOT_DIR/$name.host-sum"
  check "host: ptboot summary --capture of the recovered files = the target's summaries ($(wc -l < "$BOOT_DIR/$name.sum") lines)" \
    "[ \$(wc -l < $BOOT_DIR/$name.sum) -gt 20 ] && cmp -s $BOOT_DIR/$name.host-sum $BOOT_DIR/$name.sum"
  check "host: summary --capture says first that tracing stopped (trace.stopped 1)" \
    "head -1 $BOOT_DIR/$name.host-sum.all | grep -q '^note: trace.stopped 1: '"
  check "host: the sideband names the soft unit, the target (snapshotted) and stopped=1" \
    "grep -qx 'unit soft' $dir/sideband.txt && grep -q '^image base=$base .*flags=[a-z,]*snapshot,target name=osloader\$' $dir/sideband.txt && grep -qx 'trace.stopped 1' $dir/sideband.txt && grep -qx 'trace.bytes ${bytes:-x}' $dir/sideband.txt"
else
  not_ok "$name: serial dump not recovered"; sed 's/^/    | /' "$dir.log" | tail -5
fi
boot_done
