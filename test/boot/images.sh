#!/usr/bin/env bash
# `images` on OVMF: every loaded image listed with base, size, entry and a
# name; the names of OVMF's drivers are those of the user-interface sections
# of OVMF's own firmware files (read here from OVMF_CODE with xz and
# binutils' strings); this app is listed with its PE SizeOfImage and entry
# point (objdump -p). `images --save --load FILE` records FILE when the
# firmware loads it (RegisterProtocolNotify), flags it unloaded after
# UnloadImage, and writes a capture directory to the stick that the host
# reads back: the sideband parses, the code snapshot holds this app's code.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

cp build/ptboot.efi "$BOOT_DIR/second.efi"
boot_image images "--shutdown images --save --load second.efi" "$BOOT_DIR/second.efi"
boot_run images
expect_rc images 0 "app shut the machine down"
expect images '^ptboot: images count=[0-9]+$' "count line"
expect images '^ptboot: exit status=0 sbrk_calls=0 ' "no heap allocation"

# OVMF's own names: the UCS-2 strings of its DXE firmware volume (LZMA
# compressed inside OVMF_CODE: each stream start tried with xz).
code=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
: > "$BOOT_DIR/ovmf-names.txt"
for off in $(grep -obUaP '\x5d\x00\x00[\x00-\x80][\x00-\x04]' "$code" | cut -d: -f1 | head -64); do
  tail -c +$((off + 1)) "$code" | xz --format=lzma -dc 2>/dev/null | strings -e l -n 3 >> "$BOOT_DIR/ovmf-names.txt"
done
sort -u -o "$BOOT_DIR/ovmf-names.txt" "$BOOT_DIR/ovmf-names.txt"
sed -n 's/^ptboot: image .* src=ui name=//p' "$BOOT_DIR/images.txt" | sort -u > "$BOOT_DIR/images-ui.txt"
nui=$(wc -l < "$BOOT_DIR/images-ui.txt")
unknown=$(comm -23 "$BOOT_DIR/images-ui.txt" "$BOOT_DIR/ovmf-names.txt")
if [ "$nui" -ge 20 ] && [ -z "$unknown" ]; then
  ok "images: $nui driver names, each a user-interface string of OVMF's firmware volume"
else
  not_ok "images: $nui names from firmware files; not in OVMF's strings: $(echo $unknown)"
fi
for drv in DxeCore PciBusDxe PcRtc DiskIoDxe; do
  expect images "^ptboot: image base=0x[0-9a-f]+ size=0x[0-9a-f]+ entry=0x[0-9a-f]+ src=ui name=$drv\$" "OVMF's $drv listed"
done
expect_not images '^ptboot: image .* name=\?$' "every image has a name"

# This app: the size and entry of its PE headers, named from its path.
size=$(objdump -p build/ptboot.efi | awk '/^SizeOfImage/ { print $2 }')
entry=$(objdump -p build/ptboot.efi | awk '/^AddressOfEntryPoint/ { print $2 }')
self=$(grep -a '^ptboot: images self ' "$BOOT_DIR/images.txt")
base=$(sed -n 's/.* base=\(0x[0-9a-f]*\) .*/\1/p' <<< "$self")
if [ -n "$base" ] && [ "$self" = "ptboot: images self base=$base size=$(printf 0x%x $((16#$size))) entry=$(printf 0x%x $((base + 16#$entry))) name=BOOTX64" ]; then
  ok "images: this app at $base with SizeOfImage 0x$size and entry +0x$entry, named BOOTX64"
else
  not_ok "images: this app's line '$self' (SizeOfImage 0x$size, entry +0x$entry)"
fi

# --load: recorded as it loaded (by the notify function), snapshotted,
# then flagged unloaded; this app snapshotted as the target.
expect images '^ptboot: images recorded base=0x[0-9a-f]+ size=0x[0-9a-f]+ flags=while,unloaded,snapshot name=second$' "loaded file recorded while watching, unloaded, snapshotted"
expect images "^ptboot: images recorded base=$base size=0x[0-9a-f]+ flags=before,snapshot,target name=BOOTX64\$" "this app snapshotted as the target"
expect images '^ptboot: capture dir=\\ptboot\\cap001 images=[0-9]+ notified=1 snapshot_pages=[0-9]+ skipped=0$' "capture written, one image notified"

# The files on the stick, read back with mtools, decoded by the host.
cap=$BOOT_DIR/images-cap
rm -rf "$cap" && mkdir -p "$cap"
if mcopy -i "$BOOT_DIR/images.img" -s ::/ptboot "$cap/" 2>/dev/null && [ -d "$cap/ptboot/cap001" ]; then
  ok "capture directory on the stick"
else
  not_ok "no \\ptboot\\cap001 on the stick"
fi
d=$cap/ptboot/cap001
if [ "$(cat "$cap/ptboot/last.txt" 2>/dev/null)" = cap001 ]; then ok "last.txt names cap001"; else not_ok "last.txt"; fi
if build/ptboot flow --capture "$d" --libipt-args > "$BOOT_DIR/images-args.txt" 2> "$BOOT_DIR/images-args.err"; then
  ok "host reads the capture: $(cut -c1-100 "$BOOT_DIR/images-args.txt")"
else
  not_ok "host cannot read the capture: $(cat "$BOOT_DIR/images-args.err")"
fi
# the page holding this app's entry point equals the file's bytes there
# (code is not relocated: the .reloc entries of a gnu-efi image are data)
pages=$(( $(stat -c %s "$d/code.addr" 2>/dev/null || echo 0) / 8 ))
epage=$(( (base + 16#$entry) & ~4095 ))
idx=-1
for ((i = 0; i < pages; i++)); do
  a=$(od -An -t u8 -j $((i * 8)) -N 8 "$d/code.addr" | tr -d ' ')
  if [ "$a" = "$epage" ]; then idx=$i; break; fi
done
rva=$(( epage - base ))
read -r vma foff < <(objdump -h build/ptboot.efi | awk '$2 == ".text" { print $4, $6 }')
if [ "$idx" -ge 0 ] && [ -n "$vma" ] && cmp -s <(dd if="$d/code.dump" bs=4096 skip=$idx count=1 2>/dev/null) \
     <(tail -c +$(( 16#$foff + rva - 16#$vma + 1 )) build/ptboot.efi | head -c 4096); then
  ok "snapshot page $idx (0x$(printf %x $epage)) equals ptboot.efi's code at the entry"
else
  not_ok "snapshot page at the entry (index $idx of $pages) differs from ptboot.efi"
fi
if grep -q "^image base=$base size=0x[0-9a-f]* entry=0x[0-9a-f]* flags=before,snapshot,target name=BOOTX64$" "$d/sideband.txt" \
   && grep -q '^unit none$' "$d/sideband.txt"; then
  ok "sideband.txt records this app as the snapshotted target"
else
  not_ok "sideband.txt lacks this app's row"
fi
boot_done
