#!/usr/bin/env bash
# Boots the ptboot stick in QEMU with the virtual-PT plugin and records.
#
# usage: test/vpt/record.sh OUTPREFIX WINDOW CONFIG [TIMEOUT [FILE...]]
#   WINDOW  app         window = the app's image, from its entry point on
#           skip=N,count=M | enter=LO-HI[,count=M] | all[,count=M] |
#           trigger=mode64,pre=N,count=M | trigger=markers[,marker-start=HEX,...]
#                       (passed to the plugin as its arguments)
#   CONFIG  the words in ptboot.cfg, e.g. "--shutdown selftest"
#   FILE    extra files put on the stick
# Writes OUTPREFIX.itab/.stream/.meta (the plugin), OUTPREFIX.log (QEMU's
# -d plugin,int log: block marks and interrupts), OUTPREFIX.serial.
# Environment: QEMU (binary), APP (default build/ptboot.efi), VPT_QEMU_ARGS
# (more QEMU arguments, e.g. "-trace usb_xhci_doorbell_write": trace events
# land in the same log, between the plugin's marks).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -ge 3 ] || { echo "usage: $0 OUTPREFIX WINDOW CONFIG [TIMEOUT]" >&2; exit 2; }
out=$1 window=$2 cfg=$3 limit=${4:-120}
shift $(( $# >= 4 ? 4 : 3 ))
app=${APP:-build/ptboot.efi}
mkdir -p "$(dirname "$out")"
img=$out.img
scripts/mkimage.sh "$img" "$app" "$cfg" "$@" >/dev/null

args="out=$out"
case $window in
  app*)
    # The image's entry point: RVA and the first 24 bytes of code there
    # (RIP-relative code, untouched by relocation), and the image size.
    read -r entry size < <(objdump -p "$app" | awk '
      /AddressOfEntryPoint/ {e = $2} /SizeOfImage/ {s = $2}
      END {print "0x" e, "0x" s}')
    # file offset of the entry RVA: through the section that holds it
    off=
    while read -r idx name sz vma lma fo rest; do
      [[ $idx =~ ^[0-9]+$ ]] || continue
      if (( entry >= 0x$vma && entry < 0x$vma + 0x$sz )); then
        off=$(( 0x$fo + entry - 0x$vma )); break
      fi
    done < <(objdump -h "$app")
    [ -n "$off" ] || { echo "record: no section holds the entry point" >&2; exit 1; }
    sig=$(od -An -tx1 -v -j "$off" -N 24 "$app" | tr -d ' \n')
    args="$args,image=$sig:$entry:$size"
    rest=${window#app}; rest=${rest#,}
    [ -n "$rest" ] && args="$args,$rest"
    ;;
  all*)
    rest=${window#all}; rest=${rest#,}
    [ -n "$rest" ] && args="$args,$rest"
    ;;
  *) args="$args,$window" ;;
esac

rm -f "$out.log" "$out.itab" "$out.stream" "$out.meta"
QUIET=1 scripts/qemu-run.sh "$img" "$out.serial" "$limit" \
  -plugin "build/vpt/vpt.so,$args" \
  -d plugin,int -D "$out.log" ${VPT_QEMU_ARGS:-}
