#!/usr/bin/env bash
# `trace --cpus` on QEMU with two processors (-smp 2) and no Intel PT:
#   - with the soft unit, the BSP is traced exactly as without --cpus (the
#     same call targets and counts, the same instruction count), the AP is
#     reported as not traced with the reason, cpus.txt on the stick lists
#     both (and the serial dump carries the same cpus.txt), and the command
#     ends normally (status 0, clean shutdown);
#   - the word cpus=3 does the same as --cpus, saying only 2 are there;
#   - with --unit hw it is refused with a message (no PT), and the next
#     command still runs.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

[ -f build/ptbtest.efi ] || { echo "FAIL: build/ptbtest.efi missing (make build/ptbtest.efi)"; exit 1; }
name=trace-mp
boot_image $name "--shutdown trace --unit soft --no-summary --last 0 \\ptbtest.efi ; trace --unit soft --cpus --serial-dump --no-summary --last 0 \\ptbtest.efi ; trace --unit hw --cpus \\ptbtest.efi ; trace --unit soft --no-summary --no-files --last 0 cpus=3 \\ptbtest.efi" build/ptbtest.efi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-150} boot_run $name -smp 2
# the log of command N of 4 alone in $BOOT_DIR/$name.N.txt
split_commands $name 4
expect_rc $name 0 "clean shutdown (no AP hang)"
expect $name '^ptboot: command 2/4 trace status=0$' "soft trace with --cpus ends normally"
expect $name '^ptboot: command 4/4 trace status=0$' "soft trace with cpus=3 ends normally"
expect $name '^ptboot: trace: note: cpus: 3 asked for, 2 here$' "cpus=3 on two processors: says so"
expect $name '^ptboot: error: trace: --unit hw: this CPU has no usable Intel PT' "--unit hw --cpus refused without PT"
expect $name '^ptboot: command 3/4 trace status=1$' "the refusal is a failed command"
expect $name '^ptboot: exit status=1 sbrk_calls=0 msr_faults=0$' "no heap; the refused command gives status 1"

final='^ptboot: trace unit=soft cpu=0 bytes=([0-9]+) wrapped=0 stopped=0 insns=([0-9]+) errors=0 images=[0-9]+$'
for i in 2 4; do
  f=$BOOT_DIR/$name.$i.txt
  if grep -q '^ptboot: trace: note: cpus: the soft unit traces the BSP only' "$f" &&
     grep -q '^ptboot: trace: note: cpus: 2 processor(s) here (mp=ok); the soft unit single-steps the BSP (cpu 0) only, 1 AP(s) not traced$' "$f"; then
    ok "$name: command $i: notes say the soft unit steps the BSP only, 1 AP not traced"
  else
    not_ok "$name: command $i: no note about the BSP-only soft unit"; grep -a 'note' "$f" | sed 's/^/    | /'
  fi
  # the AP's line, then the BSP's final line last
  if [ "$(grep -a '^ptboot: trace unit=' "$f" | sed -n 1p)" = "ptboot: trace unit=soft cpu=1 traced=0 reason=soft-unit-steps-the-bsp-only" ] &&
     [ "$(grep -a '^ptboot: trace unit=' "$f" | wc -l)" = 2 ] &&
     grep -a '^ptboot: trace unit=' "$f" | tail -1 | grep -Eq "$final"; then
    ok "$name: command $i: the AP reported not traced with the reason, then the BSP's final line"
  else
    not_ok "$name: command $i: per-CPU lines wrong"; grep -a '^ptboot: trace unit' "$f" | sed 's/^/    | /'
  fi
done

# The BSP's trace with --cpus equals the one without: calls, counts, insns, bytes.
calls() { sed -n '/^ptboot: trace decode begin$/,/^ptboot: trace decode end /p' "$1" | grep -E '^call |^ptboot: trace decode end '; }
calls "$BOOT_DIR/$name.1.txt" > "$BOOT_DIR/$name.calls1"
calls "$BOOT_DIR/$name.2.txt" > "$BOOT_DIR/$name.calls2"
calls "$BOOT_DIR/$name.4.txt" > "$BOOT_DIR/$name.calls4"
n1=$(grep -c '^call ' "$BOOT_DIR/$name.calls1")
if [ "$n1" -ge 8 ] && cmp -s "$BOOT_DIR/$name.calls1" "$BOOT_DIR/$name.calls2" &&
   cmp -s "$BOOT_DIR/$name.calls1" "$BOOT_DIR/$name.calls4"; then
  ok "$name: the BSP's decode with --cpus / cpus=3 equals the one without ($n1 call targets, same counts and totals)"
else
  not_ok "$name: the BSP's decode differs with --cpus"
  diff "$BOOT_DIR/$name.calls1" "$BOOT_DIR/$name.calls2" | head -8 | sed 's/^/    | /'
fi
# the instructions (the bytes vary with time: the soft unit's MTCs and the
# timer interrupts it records)
b1=$(grep -Ea "$final" "$BOOT_DIR/$name.1.txt" | sed -E "s/$final/\2 \1/")
b2=$(grep -Ea "$final" "$BOOT_DIR/$name.2.txt" | sed -E "s/$final/\2 \1/")
if [ -n "$b1" ] && [ "${b1%% *}" = "${b2%% *}" ]; then ok "$name: same insns with and without --cpus (${b1%% *})"
else not_ok "$name: insns differ: '$b1' vs '$b2'"; fi

# cpus.txt beside trace.pt on the stick (command 2 wrote the second capture)
capdir=$(sed -n 's/^ptboot: trace: files \\ptboot\\\(cap[0-9]*\) (.*/\1/p' "$BOOT_DIR/$name.2.txt")
dir=$BOOT_DIR/$name-files
rm -rf "$dir" && mkdir -p "$dir"
mcopy -n -i "$BOOT_DIR/$name.img" "::/ptboot/$capdir/cpus.txt" "$dir/cpus.txt" 2>/dev/null
mcopy -n -i "$BOOT_DIR/$name.img" "::/ptboot/$capdir/trace.pt" "$dir/trace.pt" 2>/dev/null
bytes=${b2##* }
if [ -n "$capdir" ] && [ "$(sed -n 1p "$dir/cpus.txt" 2>/dev/null)" = "cpu n=0 bsp=1 traced=1 file=trace.pt bytes=$bytes wrapped=0 stopped=0" ] &&
   [ "$(sed -n 2p "$dir/cpus.txt")" = "cpu n=1 bsp=0 traced=0 reason=soft-unit-steps-the-bsp-only" ] &&
   [ "$(wc -l < "$dir/cpus.txt")" = 2 ] && [ "$(stat -c %s "$dir/trace.pt")" = "$bytes" ]; then
  ok "$name: \\ptboot\\$capdir\\cpus.txt lists the BSP (trace.pt, $bytes bytes) and the AP not traced"
else
  not_ok "$name: cpus.txt in '$capdir' wrong"; sed 's/^/    | /' "$dir/cpus.txt" 2>/dev/null
fi
# the serial dump of command 2 carries the same cpus.txt (5 files)
rm -rf "$dir/serial" && mkdir -p "$dir/serial"
if build/ptboot serial "$BOOT_DIR/$name.2.txt" --out "$dir/serial" > "$dir/serial.out" 2>&1 &&
   grep -q '5 file(s) in the log, 5 complete, 5 written' "$dir/serial.out" &&
   cmp -s "$dir/serial/cpus.txt" "$dir/cpus.txt" && cmp -s "$dir/serial/trace.pt" "$dir/trace.pt"; then
  ok "$name: the serial dump carries trace.pt and cpus.txt, equal to the stick's"
else
  not_ok "$name: serial dump of the --cpus capture"; tail -3 "$dir/serial.out" | sed 's/^/    | /'
fi
boot_done
