#!/usr/bin/env bash
# Builds a USB-stick image: one FAT32 file system (no partition table, which
# UEFI firmware and OVMF boot as removable media), made with mtools only (no
# loop mounts, no root), holding
#   EFI/BOOT/BOOTX64.EFI   the app (the removable-media default boot path)
#   ptboot.cfg             the words the app runs with at boot
#   any extra files given, at the root (FILE) or at a path (FILE=DIR/NAME
#   or FILE=\DIR\NAME as the app names it; directories made as needed).
# The same layout copied onto any FAT stick boots the same way.
#
# usage: scripts/mkimage.sh OUT.img APP.efi CONFIG-TEXT [FILE...]
#   CONFIG-TEXT is the content of ptboot.cfg ("" for no config file).
# Environment: MKIMAGE_SIZE, the image's size (truncate's form: 64M by
# default; below 64M the file system is FAT12/16 as mformat picks, e.g. a
# small, nearly full stick for a test).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OUT.img APP.efi CONFIG-TEXT [FILE...]" >&2; exit 2; }
out=$1 app=$2 cfg=$3
shift 3
[ -f "$app" ] || { echo "mkimage: $app not found" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -f "$out"
size=${MKIMAGE_SIZE:-64M}
truncate -s "$size" "$out"
if [ "$(stat -c %s "$out")" -ge $((64 << 20)) ]; then
  mformat -i "$out" -F -v PTBOOT ::
else
  mformat -i "$out" -v PTBOOT ::
fi
mmd -i "$out" ::/EFI ::/EFI/BOOT
mcopy -i "$out" "$app" ::/EFI/BOOT/BOOTX64.EFI
if [ -n "$cfg" ]; then
  printf '%s\n' "$cfg" > "$tmp/ptboot.cfg"
  mcopy -i "$out" "$tmp/ptboot.cfg" ::/ptboot.cfg
fi
for f in "$@"; do
  src=${f%%=*} dest=$(basename "$f")
  if [[ $f == *=* ]]; then
    dest=${f#*=}
    dest=${dest//\\//}        # \EFI\test\x.efi as the app writes paths
    dest=${dest#/}
  fi
  [ -f "$src" ] || { echo "mkimage: $src not found (for ::/$dest)" >&2; exit 1; }
  # each directory of the destination, outermost first
  d=
  IFS=/ read -ra parts <<< "$(dirname "$dest")"
  for p in "${parts[@]}"; do
    [ -n "$p" ] && [ "$p" != . ] || continue
    d=$d/$p
    mmd -D s -i "$out" "::$d" 2>/dev/null || true
  done
  mcopy -o -i "$out" "$src" "::/$dest"
done
