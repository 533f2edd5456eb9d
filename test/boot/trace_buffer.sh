#!/usr/bin/env bash
# The trace buffer's edge cases on the target, with the software unit (QEMU
# TCG has no Intel PT), tracing build/ptbspin.efi (test/image/ptbspin.c: a
# trace several times the smallest buffer, with a PSB every 2 KiB):
#   - the full run (1 MiB ring, over twice 4 KiB of trace) for reference:
#     no wrap, no stop;
#   - buffer=4K ring: the ring wraps (wrapped=1), trace.pt starts at a PSB,
#     decodes without errors, its instructions are exactly the tail of the
#     full run's (host `ptboot flow --capture` of both stick directories,
#     addresses made image-relative), and the on-target decode's last 64
#     branches equal the full run's;
#   - buffer=4K mode=stop: stopped=1, the buffer full, single-stepping ends
#     there (the image runs on untraced and still returns EFI_SUCCESS), and
#     the decode is exactly a prefix of the full run's, also with --tail
#     (the static path after the last packet, docs/flow.md);
#   - a 256-byte single-range ring on ptbtest.efi (PSB every 4K and no MTC:
#     its trace, some hundred bytes more with the timer interrupts the unit
#     records, has one PSB at its start): it wraps, keeps no PSB, says so,
#     and reports bytes=0 insns=0.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

for f in build/ptbspin.efi build/ptbtest.efi build/ptboot; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make build/ptbspin.efi build/ptbtest.efi build/ptboot)"; exit 1; }
done
name=trace-buffer
opts="--unit soft --no-summary --last 64"
boot_image $name "--shutdown trace $opts \\ptbspin.efi ; trace $opts buffer=4K \\ptbspin.efi ; trace $opts buffer=4K mode=stop \\ptbspin.efi ; trace $opts --no-files output=single buffer=256 psb=1 no-mtc \\ptbtest.efi" \
  build/ptbspin.efi build/ptbtest.efi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-200} boot_run $name
# the log of command N of 4 alone in $BOOT_DIR/$name.N.txt
split_commands $name 4
expect_rc $name 0 "clean shutdown"
expect $name '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "every command ran, no heap"
if [ "$(grep -c '^ptboot: trace: target returned status 0x0$' "$BOOT_DIR/$name.txt")" = 4 ]; then
  ok "$name: the traced images computed their results right, all 4 times"
else
  not_ok "$name: an image did not return EFI_SUCCESS"
fi

final='^ptboot: trace unit=soft cpu=0 bytes=([0-9]+) wrapped=([01]) stopped=([01]) insns=([0-9]+) errors=([0-9]+) images=[0-9]+$'
field() { grep -Ea "$final" "$BOOT_DIR/$name.$1.txt" | tail -1 | sed -E "s/$final/\\$2/"; }
for i in 1 2 3 4; do
  read -r "bytes$i" "wrapped$i" "stopped$i" "insns$i" "errors$i" <<< "$(field $i 1) $(field $i 2) $(field $i 3) $(field $i 4) $(field $i 5)"
done
steps() { sed -n 's/^ptboot: trace: soft unit steps=\([0-9]*\) insns=\([0-9]*\) .*/\2/p' "$BOOT_DIR/$name.$1.txt"; }

# 1: the reference
if [ "$wrapped1$stopped1$errors1" = 000 ] && [ "${bytes1:-0}" -gt $((2 * 4096)) ] && [ "$insns1" = "$(steps 1)" ]; then
  ok "$name: full run: $bytes1 bytes (over twice the 4K buffer), $insns1 instructions, no wrap, no stop, no errors"
else
  not_ok "$name: full run: bytes=$bytes1 wrapped=$wrapped1 stopped=$stopped1 insns=$insns1 errors=$errors1"
fi
# 2: the ring wraps
if [ "$wrapped2$stopped2$errors2" = 100 ] && [ "${bytes2:-0}" -gt 0 ] && [ "$bytes2" -le 4096 ] &&
   [ "$insns2" -gt 0 ] && [ "$insns2" -lt "$insns1" ] && [ "$(steps 2)" = "$insns1" ]; then
  ok "$name: buffer=4K ring: wrapped=1, $bytes2 bytes kept, $insns2 of $insns1 instructions decoded, no errors"
else
  not_ok "$name: buffer=4K ring: bytes=$bytes2 wrapped=$wrapped2 stopped=$stopped2 insns=$insns2 errors=$errors2"
fi
# 3: stop when full
if [ "$wrapped3$stopped3$errors3" = 010 ] && [ "${bytes3:-0}" -gt 0 ] && [ "$bytes3" -le 4096 ] &&
   [ "$insns3" -gt 0 ] && [ "$(steps 3)" -lt "$insns1" ] && [ "$insns3" -le "$(steps 3)" ]; then
  ok "$name: buffer=4K mode=stop: stopped=1, $bytes3 bytes, stepping ended after $(steps 3) instructions, $insns3 decoded"
else
  not_ok "$name: buffer=4K mode=stop: bytes=$bytes3 wrapped=$wrapped3 stopped=$stopped3 insns=$insns3 errors=$errors3 steps=$(steps 3)"
fi
# 4: a ring below the PSB period keeps no PSB
if [ "$bytes4$wrapped4$stopped4$insns4$errors4" = 01000 ] &&
   grep -q '^ptboot: trace: note: the 256-byte ring wrapped and kept no PSB: nothing to decode (buffer= above 4096 bytes, the PSB period, keeps one)$' "$BOOT_DIR/$name.4.txt" &&
   grep -q '^(no trace: nothing from the first PSB on)$' "$BOOT_DIR/$name.4.txt"; then
  ok "$name: a 256-byte ring wraps, keeps no PSB, says so and decodes nothing"
else
  not_ok "$name: 256-byte ring: bytes=$bytes4 wrapped=$wrapped4 stopped=$stopped4 insns=$insns4 errors=$errors4"
  grep -a 'note: the\|no trace' "$BOOT_DIR/$name.4.txt" | sed 's/^/    | /'
fi

# The on-target decode's last 64 branches (module+offset names): the
# wrapped run's equal the full run's.
branches() { sed -n '/^ptboot: trace decode begin$/,/^ptboot: trace decode end /p' "$BOOT_DIR/$name.$1.txt" | grep '^branch '; }
branches 1 > "$BOOT_DIR/$name.br1"
branches 2 > "$BOOT_DIR/$name.br2"
if [ "$(wc -l < "$BOOT_DIR/$name.br1")" = 64 ] && cmp -s "$BOOT_DIR/$name.br1" "$BOOT_DIR/$name.br2"; then
  ok "$name: the wrapped run's last 64 branches on the target equal the full run's"
else
  not_ok "$name: last branches differ"; diff "$BOOT_DIR/$name.br1" "$BOOT_DIR/$name.br2" | head -6 | sed 's/^/    | /'
fi

# The stick's captures decoded on the host, addresses relative to the image.
dir=$BOOT_DIR/$name-files
rm -rf "$dir" && mkdir -p "$dir"
rel_flow() { # CAPDIR BASE-HEX [OPTION] -> image offsets of the decoded instructions
  build/ptboot flow --no-inst --capture "$1" ${3:-} |
    awk -v base="$2" 'BEGIN { b = 0; for (i = 1; i <= length(base); i++) b = b * 16 + index("0123456789abcdef", substr(base, i, 1)) - 1 }
      /^[0-9a-f]+$/ { v = 0; for (i = 1; i <= length($1); i++) v = v * 16 + index("0123456789abcdef", substr($1, i, 1)) - 1; printf "%x\n", v - b }'
}
for i in 1 2 3; do
  cap=$(sed -n 's/^ptboot: trace: files \\ptboot\\\(cap[0-9]*\) (.*/\1/p' "$BOOT_DIR/$name.$i.txt")
  base=$(sed -n 's/^ptboot: trace: target .* loaded at 0x\([0-9a-f]*\) .*/\1/p' "$BOOT_DIR/$name.$i.txt")
  mkdir -p "$dir/$i"
  for f in trace.pt sideband.txt code.dump code.addr manifest.txt; do
    mcopy -n -i "$BOOT_DIR/$name.img" "::/ptboot/$cap/$f" "$dir/$i/$f" 2>/dev/null
  done
  rel_flow "$dir/$i" "$base" > "$dir/flow$i.txt"
  [ "$i" = 3 ] && rel_flow "$dir/$i" "$base" --tail > "$dir/flow3-tail.txt"
done
n1=$(wc -l < "$dir/flow1.txt") n2=$(wc -l < "$dir/flow2.txt") n3=$(wc -l < "$dir/flow3.txt")
psb=$(head -c 16 "$dir/2/trace.pt" | od -An -tx1 | tr -d ' \n')
if [ "$psb" = 02820282028202820282028202820282 ] && [ "$(stat -c %s "$dir/2/trace.pt")" = "$bytes2" ]; then
  ok "$name: the wrapped trace.pt ($bytes2 bytes) starts at a PSB"
else
  not_ok "$name: the wrapped trace.pt does not start at a PSB ($psb)"
fi
if [ "$n1" = "$insns1" ] && [ "$n2" = "$insns2" ] && tail -n "$n2" "$dir/flow1.txt" | cmp -s - "$dir/flow2.txt"; then
  ok "$name: the wrapped run's $n2 instructions are exactly the last $n2 of the full run's $n1 (host decode)"
else
  not_ok "$name: the wrapped run is not the full run's tail ($n2 vs $n1 instructions)"
fi
if [ "$n3" = "$insns3" ] && [ "$n3" -gt 0 ] && head -n "$n3" "$dir/flow1.txt" | cmp -s - "$dir/flow3.txt"; then
  ok "$name: the stopped run's $n3 instructions are exactly the first $n3 of the full run's (host decode)"
else
  not_ok "$name: the stopped run is not the full run's prefix ($n3 vs $n1 instructions)"
fi
# --tail: where the stop-mode buffer filled, the static path goes on exactly
# as the full run did
nt=$(wc -l < "$dir/flow3-tail.txt")
if [ "$nt" -ge "$n3" ] && head -n "$nt" "$dir/flow1.txt" | cmp -s - "$dir/flow3-tail.txt" &&
   head -n "$n3" "$dir/flow3-tail.txt" | cmp -s - "$dir/flow3.txt"; then
  ok "$name: the stopped run with --tail: $((nt - n3)) instructions after the last packet, still the full run's first $nt"
else
  not_ok "$name: the stopped run's --tail is not the full run's prefix ($nt vs $n3 instructions)"
fi
boot_done
