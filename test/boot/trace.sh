#!/usr/bin/env bash
# `trace` on the target with the software trace unit (QEMU TCG has no Intel
# PT): the test image build/ptbtest.efi (test/image/ptbtest.c) runs under
# single-stepping, and
#   - its on-target decode has the control flow its source implies: fib
#     called as often as the recursion fib(N) calls itself, each function
#     table entry once per round, the deep recursion DEPTH+1 times, and the
#     functions first called in program order (offsets from nm);
#   - the image still computed the right results (it returns EFI_SUCCESS
#     only then) and the soft unit's instruction count equals the decoder's;
#   - the final "ptboot: trace ..." line is there and agrees with the rest;
#   - the serial dump, recovered by the host's `ptboot serial`, decodes on
#     the host to the same summary lines (`ptboot summary`), and its
#     trace.pt has the byte count of the final line;
#   - the call into the firmware (CalculateCrc32) leaves the image: the
#     firmware runs free and a DR0 breakpoint resumes stepping on return;
#   - --unit hw on a CPU without PT and a missing file are refused with a
#     message, and the next command still runs;
#   - --stop-at (a TraceStop range) at ptbtest_deep: stopped=1, the calls
#     before it traced as above, nothing from deep on, and the image still
#     runs to its end (untraced) with the right results;
#   - `decode \ptboot\cap001` (the files the first soft trace wrote) prints
#     the same call counts and the same summary as that trace printed, and
#     `decode` alone finds the same capture through \ptboot\last.txt.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

so=build/test/image/ptbtest.so src=test/image/ptbtest.c
for f in build/ptbtest.efi "$so"; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make build/ptbtest.efi)"; exit 1; }
done
name=trace
deep_off=$(nm "$so" | awk '$3 == "ptbtest_deep" { print $1 }')
boot_image $name "--shutdown info ; trace --unit hw \\ptbtest.efi ; trace \\missing.efi ; trace --unit soft --serial-dump --last 16 \\ptbtest.efi ; trace --unit soft --no-files --no-summary --stop-at 0x$deep_off \\ptbtest.efi ; decode --last 16 \\ptboot\\cap001 ; decode --no-summary" build/ptbtest.efi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-100} boot_run $name
# the log of each of the 7 commands alone ($name.N.txt)
split_commands $name 7
log=$BOOT_DIR/$name.4.txt
expect_rc $name 0 "clean shutdown"
expect $name '^ptboot: exit status=1 sbrk_calls=0 msr_faults=0$' "no heap allocation; the refused commands give status 1"
expect $name '^ptboot: error: trace: --unit hw: this CPU has no usable Intel PT' "--unit hw refused without PT"
expect $name '^ptboot: error: trace: LoadImage \\missing.efi: not found \(no such file on that volume\)$' "missing target reported by name"
expect $name '^ptboot: command 4/7 trace status=0$' "the soft trace ran after the refusals"
expect $name '^ptboot: command 5/7 trace status=0$' "the TraceStop trace ran"
expect $name '^ptboot: command 6/7 decode status=0$' "decode of \\ptboot\\cap001 ran"
expect $name '^ptboot: command 7/7 decode status=0$' "decode of last.txt's capture ran"
expect $name '^ptboot: trace: unit=soft \(asked for \(--unit soft\)\)$' "unit and why"
if [ "$(grep -c '^ptboot: trace: target returned status 0x0$' "$BOOT_DIR/$name.txt")" = 2 ]; then
  ok "$name: the traced image computed its results right, both times"
else
  not_ok "$name: the traced image did not return EFI_SUCCESS twice"
fi

# Expected control flow from the source's constants and the ELF symbols.
def() { sed -n "s/^#define $1 \+\([0-9]*\)$/\1/p" "$src"; }
N=$(def PTBTEST_FIB_N) ROUNDS=$(def PTBTEST_ROUNDS) DEPTH=$(def PTBTEST_DEPTH)
fib_calls() { local n=$1; if [ "$n" -lt 2 ]; then echo 1; else echo $((1 + $(fib_calls $((n - 1))) + $(fib_calls $((n - 2))))); fi; }
FIBC=$(fib_calls "$N")
off() { printf '0x%x' "$((16#$(nm "$so" | awk -v s="$1" '$3 == s { print $1 }')))"; }
# program order: crt0's _relocate, efi_main, then the calls in efi_main
order=(_relocate efi_main ptbtest_fib ptbtest_table ptbtest_op_add ptbtest_op_mul
       ptbtest_op_xor ptbtest_op_odd ptbtest_deep ptbtest_crc32)
declare -A count=([_relocate]=1 [efi_main]=1 [ptbtest_fib]=$FIBC [ptbtest_table]=1
  [ptbtest_op_add]=$ROUNDS [ptbtest_op_mul]=$ROUNDS [ptbtest_op_xor]=$ROUNDS
  [ptbtest_op_odd]=$ROUNDS [ptbtest_deep]=$((DEPTH + 1)) [ptbtest_crc32]=1)
expected=$BOOT_DIR/$name.calls.expected got=$BOOT_DIR/$name.calls.got
for f in "${order[@]}"; do echo "call ptbtest+$(off "$f") count=${count[$f]}"; done > "$expected"
sed -n '/^ptboot: trace decode begin$/,/^ptboot: trace decode end /p' "$log" | grep '^call ' > "$got"
if cmp -s "$expected" "$got"; then
  ok "$name: call targets, counts and first-call order as the source says (fib($N): $FIBC calls, depth $DEPTH)"
else
  not_ok "$name: call targets differ from the source's control flow"
  diff "$expected" "$got" | head -12 | sed 's/^/    | /'
fi

# TraceStop at ptbtest_deep: the same calls up to the function table's, none after.
stop_calls=$BOOT_DIR/$name.stop.got
sed -n '/^ptboot: trace decode begin$/,/^ptboot: trace decode end /p' "$BOOT_DIR/$name.5.txt" | grep '^call ' > "$stop_calls"
if grep -v -e "+$(off ptbtest_deep) " -e "+$(off ptbtest_crc32) " "$expected" | cmp -s - "$stop_calls"; then
  ok "$name: --stop-at ptbtest_deep: the calls before it as the source says, none from there on"
else
  not_ok "$name: --stop-at: calls differ"; diff <(grep -v -e "+$(off ptbtest_deep) " -e "+$(off ptbtest_crc32) " "$expected") "$stop_calls" | head -8 | sed 's/^/    | /'
fi
if grep -Eq '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=1 insns=[1-9][0-9]* errors=0 images=[0-9]+$' "$BOOT_DIR/$name.5.txt"; then
  ok "$name: --stop-at: the final line says stopped=1"
else
  not_ok "$name: --stop-at: no final line with stopped=1"
fi

# The one call into the firmware (CalculateCrc32) ran free: one SKIP_CALL,
# one DR0 breakpoint back at the return address.
if grep -Eq '^ptboot: trace: soft unit .* skips=1 .* breakpoints=1 free_runs=1 unexpected=0 self=[0-9]+$' "$log"; then
  ok "$name: the call into the firmware ran free, DR0 brought stepping back"
else
  not_ok "$name: no free run ended by the DR0 breakpoint"; grep -a 'soft unit' "$log" | sed 's/^/    | /'
fi
final='^ptboot: trace unit=soft cpu=0 bytes=([0-9]+) wrapped=0 stopped=0 insns=([0-9]+) errors=0 images=([0-9]+)$'
if grep -Eq "$final" "$log"; then ok "$name: final trace line"; else not_ok "$name: no final trace line"; fi
line=$(grep -Ea "$final" "$log" | tail -1)
bytes=$(sed -E "s/$final/\1/" <<< "$line") insns=$(sed -E "s/$final/\2/" <<< "$line")
images=$(sed -E "s/$final/\3/" <<< "$line")
unit_insns=$(sed -n 's/^ptboot: trace: soft unit steps=[0-9]* insns=\([0-9]*\) .*/\1/p' "$log" | tail -1)
dec=$(sed -n 's/^ptboot: trace decode end insns=\([0-9]*\) errors=0 .*/\1/p' "$log")
if [ -n "$insns" ] && [ "$insns" -gt 1000 ] && [ "$insns" = "$unit_insns" ] && [ "$insns" = "$dec" ]; then
  ok "$name: $insns instructions stepped, decoded and reported alike"
else
  not_ok "$name: instruction counts disagree (final=$insns unit=$unit_insns decode=$dec)"
fi

# The serial dump, recovered and decoded on the host.
dir=$BOOT_DIR/$name-files
rm -rf "$dir" && mkdir -p "$dir"
if build/ptboot serial "$log" --out "$dir" > "$dir/serial.out" 2>&1 &&
   grep -q '4 file(s) in the log, 4 complete, 4 written' "$dir/serial.out"; then
  ok "$name: serial dump recovered (trace.pt, code.dump, code.addr, sideband.txt)"
else
  not_ok "$name: serial dump not recovered"; sed 's/^/    | /' "$dir/serial.out" | tail -5
fi
if [ "$(stat -c %s "$dir/trace.pt" 2>/dev/null)" = "$bytes" ]; then
  ok "$name: trace.pt has the final line's $bytes bytes"
else
  not_ok "$name: trace.pt size differs from bytes=$bytes"
fi
nimg=$(grep -c '^image ' "$dir/sideband.txt")
if [ -n "$images" ] && [ "$nimg" = "$images" ] &&
   grep -q '^image .*flags=while,unloaded,snapshot,target name=ptbtest$' "$dir/sideband.txt"; then
  ok "$name: sideband lists the $images images of the final line, the target loaded while watching, snapshotted, unloaded"
else
  not_ok "$name: sideband images ($nimg) and the final line ($images) disagree, or the target's row is wrong"
  grep 'name=ptbtest' "$dir/sideband.txt" | sed 's/^/    | /'
fi
# the files on the stick are the ones the serial dump carried
capdir=$(sed -n 's/^ptboot: trace: files \\ptboot\\\(cap[0-9]*\) .*/\1/p' "$log")
mkdir -p "$dir/stick"
same=0
for f in trace.pt sideband.txt code.dump code.addr; do
  mcopy -n -i "$BOOT_DIR/$name.img" "::/ptboot/$capdir/$f" "$dir/stick/$f" 2>/dev/null &&
    cmp -s "$dir/stick/$f" "$dir/$f" && same=$((same + 1))
done
if [ -n "$capdir" ] && [ "$same" = 4 ]; then
  ok "$name: \\ptboot\\$capdir on the stick holds the same 4 files, byte for byte"
else
  not_ok "$name: files on the stick ($capdir) differ from the serial dump ($same of 4 equal)"
fi
# the host's view of the capture (images, timing: the soft unit's clock)
build/ptboot summary --capture "$dir" --last 16 2>&1 | grep -v '^note: ' > "$BOOT_DIR/$name.expected"
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end /p' "$log" | sed '1d;$d' > "$BOOT_DIR/$name.got"
lines=$(wc -l < "$BOOT_DIR/$name.expected")
if [ "$lines" -gt 50 ] && cmp -s "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got"; then
  ok "$name: on-target summary ($lines lines) identical to the host's ptboot summary of the dumped files"
else
  not_ok "$name: on-target summary differs from the host's ($lines lines)"
  diff "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got" | head -10 | sed 's/^/    | /'
fi

# `decode DIR` and `decode` (last.txt) later in the boot: the files of
# command 4 decode to the calls and the summary command 4 printed.
decode_calls() { sed -n '/^ptboot: trace decode begin$/,/^ptboot: trace decode end /p' "$1" | grep '^call '; }
summary_of() { sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end /p' "$1"; }
d6=$BOOT_DIR/$name.6.txt d7=$BOOT_DIR/$name.7.txt
if [ "$capdir" = cap001 ] &&
   grep -Eq "^ptboot: decode source=\\\\ptboot\\\\cap001 bytes=$bytes pages=[1-9][0-9]* images=$images\$" "$d6" &&
   grep -Eq "^ptboot: decode source=\\\\ptboot\\\\cap001 bytes=$bytes " "$d7"; then
  ok "$name: decode read \\ptboot\\cap001 ($bytes bytes, $images images), by name and through last.txt"
else
  not_ok "$name: decode did not read command 4's capture (files in '$capdir')"; grep -a '^ptboot: decode' "$d6" "$d7" | sed 's/^/    | /'
fi
if cmp -s "$expected" <(decode_calls "$d6") && cmp -s "$expected" <(decode_calls "$d7"); then
  ok "$name: decode's call targets and counts are the source's, as the trace's own decode"
else
  not_ok "$name: decode's calls differ from the source's"; diff "$expected" <(decode_calls "$d6") | head -8 | sed 's/^/    | /'
fi
if [ "$(summary_of "$d6" | wc -l)" -gt 50 ] && cmp -s <(summary_of "$log") <(summary_of "$d6"); then
  ok "$name: decode's summary ($(summary_of "$d6" | wc -l) lines) identical to the one the trace printed"
else
  not_ok "$name: decode's summary differs from the trace's"; diff <(summary_of "$log") <(summary_of "$d6") | head -8 | sed 's/^/    | /'
fi
if grep -qx "ptboot: decode end insns=$insns errors=0" "$d6" && ! grep -q '^ptboot: trace summary' "$d7"; then
  ok "$name: decode counted the trace's $insns instructions; --no-summary printed none"
else
  not_ok "$name: decode's count or --no-summary is off"; grep -a '^ptboot: decode end' "$d6" "$d7" | sed 's/^/    | /'
fi
boot_done
