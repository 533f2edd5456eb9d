#!/usr/bin/env bash
# Nothing lost, nothing silent on a nearly full stick (issue #17): small FAT
# images filled up to a few KiB, booted in QEMU.
#  - tiny: too little room for even the smallest capture: `trace` refuses
#    before tracing, says how much is free and needed, status 1; the next
#    command still runs; no capture directory is made.
#  - shrink: room for a small capture only: the buffer and the snapshot
#    room shrink (a note says so), the capture is written whole with its
#    manifest (complete 1), and the host decodes it without a warning.
#  - images: `images --save` on a stick without room for its code snapshot:
#    the trace and sideband are written, the code is left out with the
#    reason, the manifest says complete 0, the status is 1, and `decode`
#    on the target and `ptboot summary --capture` on the host both say the
#    capture is incomplete.
#    Its files also go over serial with --line-bytes 48: data lines of at
#    most 48 bytes, recovered by `ptboot serial` equal to the stick's.
#  - no-shutdown: `make run`'s runner (EXIT_STATUS=app) returns the app's
#    exit status (1: `trace --unit hw` without Intel PT) and stops QEMU
#    when the app ends, though the config has no --shutdown.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh
PTBOOT=build/ptboot
export BOOT_TIMEOUT=60

# fill IMG KIB: a filler file leaves about KIB KiB free on the image.
fill() {
  local img=$1 want=$(($2 * 1024)) free
  free=$(mdir -i "$img" :: | awk '/bytes free/ { gsub(/[^0-9]/, ""); print }')
  [ -n "$free" ] && [ "$free" -gt "$want" ] || { echo "fill: cannot read free space of $img"; exit 1; }
  head -c $((free - want)) /dev/zero > "$BOOT_DIR/filler.bin"
  mcopy -i "$img" "$BOOT_DIR/filler.bin" ::/filler.bin || exit 1
  rm -f "$BOOT_DIR/filler.bin"
  mdir -i "$img" :: | awk '/bytes free/ { gsub(/[^0-9]/, ""); print }'
}

small_image() { # NAME CONFIG KIB-FREE
  MKIMAGE_SIZE=4M boot_image "$1" "$2" build/ptbtest.efi
  echo "$1: $(fill "$BOOT_DIR/$1.img" "$3") bytes free"
}

# ---- tiny: refused before tracing ----
small_image tiny "--shutdown trace --unit soft \\ptbtest.efi ; info" 16
boot_run tiny
expect_rc tiny 0 "clean shutdown"
expect tiny '^ptboot: error: trace: volume full: [0-9]+ KiB free, [0-9.]+ MiB needed \(at least [0-9]+ KiB' \
  "refused before tracing: free and needed sizes"
expect_not tiny '^ptboot: trace unit=' "nothing traced"
expect tiny '^ptboot: command 1/2 trace status=1$' "trace status 1"
expect tiny '^ptboot: info ' "the next command ran"
expect tiny '^ptboot: exit status=1 ' "exit status 1"
if mdir -i "$BOOT_DIR/tiny.img" ::/ptboot >/dev/null 2>&1; then not_ok "tiny: a \\ptboot directory was made"
else ok "tiny: no capture directory"; fi

# ---- shrink: a smaller buffer, a whole capture ----
small_image shrink "--shutdown trace --unit soft --serial-dump --line-bytes 48 \\ptbtest.efi" 400
boot_run shrink
expect_rc shrink 0 "clean shutdown"
expect shrink '^ptboot: trace: note: volume has [0-9]+ KiB free, the capture could need [0-9.]+ MiB: buffer 1.0 MiB -> [0-9]+ KiB, snapshot room 8.0 MiB -> [0-9]+ KiB$' \
  "a note says the buffer and the snapshot room shrank"
expect shrink '^ptboot: trace: files \\ptboot\\cap001 \(trace.pt sideband.txt code.dump code.addr manifest.txt\)$' \
  "files written"
expect_not shrink '^ptboot: error' "no error"
expect shrink '^ptboot: exit status=0 ' "exit status 0"
rm -rf "$BOOT_DIR/shrink-cap"
mkdir -p "$BOOT_DIR/shrink-cap"
mcopy -i "$BOOT_DIR/shrink.img" -s ::/ptboot/cap001 "$BOOT_DIR/shrink-cap/" 2>/dev/null
cap=$BOOT_DIR/shrink-cap/cap001
if grep -qx 'complete 1' "$cap/manifest.txt" 2>/dev/null &&
   [ "$(grep -c '^file ' "$cap/manifest.txt")" = 4 ]; then ok "shrink: manifest lists 4 files, complete 1"
else not_ok "shrink: manifest: $(tr '\n' '|' < "$cap/manifest.txt" 2>/dev/null)"; fi
# every file as the manifest says (size and CRC-32)
bad=0
while read -r kind name bytes crc; do
  [ "$kind" = file ] || continue
  got_bytes=$(stat -c %s "$cap/$name")
  got_crc=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$cap/$name")
  [ "bytes=$got_bytes" = "$bytes" ] && [ "crc32=$got_crc" = "$crc" ] || { bad=1; echo "    | $name: $got_bytes $got_crc vs $bytes $crc"; }
done < "$cap/manifest.txt"
[ $bad = 0 ] && ok "shrink: each file's size and CRC-32 match the manifest" || not_ok "shrink: a file differs from its manifest line"
insns=$(sed -n 's/^ptboot: trace unit=soft .* insns=\([0-9]*\) .*/\1/p' "$BOOT_DIR/shrink.txt")
$PTBOOT flow --capture "$cap" --quiet --stat > "$BOOT_DIR/shrink.flow" 2> "$BOOT_DIR/shrink.flow-err"
if grep -qx "insn: $insns." "$BOOT_DIR/shrink.flow" && [ ! -s "$BOOT_DIR/shrink.flow-err" ]; then
  ok "shrink: host flow --capture decodes $insns instructions, no warning"
else not_ok "shrink: host flow: $(cat "$BOOT_DIR/shrink.flow" "$BOOT_DIR/shrink.flow-err" | head -3 | tr '\n' '|') (want $insns)"; fi

# --line-bytes 48: every data line's payload (base64) at most 64 characters
longest=$(awk '$1 == "@PTF1" && $2 == "D" { if (length($7) > m) m = length($7) } END { print m + 0 }' "$BOOT_DIR/shrink.txt")
[ "$longest" = 64 ] && ok "shrink: --line-bytes 48: the longest data line carries 48 bytes" \
  || not_ok "shrink: --line-bytes 48: longest payload $longest base64 characters"
rm -rf "$BOOT_DIR/shrink-serial"
if $PTBOOT serial "$BOOT_DIR/shrink.txt" --out "$BOOT_DIR/shrink-serial" > /dev/null 2>&1 &&
   ( for f in trace.pt sideband.txt code.dump code.addr; do cmp -s "$BOOT_DIR/shrink-serial/$f" "$cap/$f" || exit 1; done ); then
  ok "shrink: the serial dump recovered equals the stick's files"
else not_ok "shrink: serial dump differs from the stick's files"; fi

# ---- images --save: the code left out, said, status 1 ----
small_image images "--shutdown images --save ; decode --no-summary \\ptboot\\cap001" 200
boot_run images
expect_rc images 0 "clean shutdown"
expect images '^ptboot: error: images: volume full: [0-9]+ KiB free, [0-9.]+ MiB needed for \\ptboot\\cap001: writing what fits, the trace first$' \
  "says the volume is full before writing"
expect images '^ptboot: error: images: \\ptboot\\cap001\\code.dump \([0-9.]+ [KM]iB\) not written: volume full: [0-9]+ KiB free, [0-9.]+ MiB needed$' \
  "code.dump left out, with why"
expect images '^ptboot: error: images: capture \\ptboot\\cap001 is incomplete: missing code.dump code.addr$' \
  "the capture is said incomplete"
expect images '^ptboot: command 1/2 images status=1$' "images status 1"
expect images '^ptboot: decode: warning: capture \\ptboot\\cap001 is incomplete: code.dump \([0-9]+ bytes\) missing: volume full' \
  "decode on the target says the capture is incomplete"
expect images '^ptboot: decode end insns=0 errors=0$' "decode still runs on what is there"
rm -rf "$BOOT_DIR/images-cap"
mkdir -p "$BOOT_DIR/images-cap"
mcopy -i "$BOOT_DIR/images.img" -s ::/ptboot/cap001 "$BOOT_DIR/images-cap/" 2>/dev/null
cap=$BOOT_DIR/images-cap/cap001
if grep -qx 'complete 0' "$cap/manifest.txt" 2>/dev/null && grep -q '^missing code.dump bytes=[0-9]* why=volume full' "$cap/manifest.txt" &&
   [ ! -e "$cap/code.dump" ]; then ok "images: manifest says complete 0, code.dump missing (no cut file left)"
else not_ok "images: manifest/code.dump: $(tr '\n' '|' < "$cap/manifest.txt" 2>/dev/null) $(ls "$cap" | tr '\n' ' ')"; fi
$PTBOOT summary --capture "$cap" > /dev/null 2> "$BOOT_DIR/images.summary-err"
if grep -q "warning: capture $cap is incomplete: code.dump ([0-9]* bytes) missing: volume full" "$BOOT_DIR/images.summary-err"; then
  ok "images: host summary --capture says the capture is incomplete"
else not_ok "images: host summary: $(head -3 "$BOOT_DIR/images.summary-err" | tr '\n' '|')"; fi

# ---- make run's runner: the app's status, no --shutdown needed ----
boot_image no-shutdown "trace --unit hw \\ptbtest.efi" build/ptbtest.efi
start=$SECONDS
EXIT_STATUS=app BOOT_TIMEOUT=60 boot_run no-shutdown
took=$((SECONDS - start))
expect_rc no-shutdown 1 "the app's exit status (trace --unit hw without Intel PT)"
if [ $took -lt 50 ]; then ok "no-shutdown: QEMU stopped when the app ended (${took}s)"
else not_ok "no-shutdown: QEMU ran ${took}s"; fi
boot_done
