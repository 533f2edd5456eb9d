#!/usr/bin/env bash
# `make run-hang`: the hang recorder's reset case end to end, shown on the
# console (docs/hang.md): three QEMU runs sharing one variable store and one
# stick, with a 16 MiB pc-dimm at 4 GiB for the recorder (memory outside
# the firmware's map keeps its contents across a reset).
#   1  install --image ptbhang.efi --hang-timeout 5 --buffer 4096 --recorder-at 0x100000000
#   2  the installed boot: the driver traces the stand-in, which hangs with
#      interrupts off (no hang report can come); QEMU's monitor resets the
#      machine after 6 s; the next boot's driver reports the recorder over
#      COM1, `recover` prints the summary with the last branches before the
#      reset, writes \ptboot\capNNN (reset=1) and sends the framed dump;
#      `uninstall`
# Ends with the recover line:
#   ptboot: recover unit=<hw|soft> bytes=<n> insns=<n> errors=<n> reset=1 last=<module>+0x<off>
set -u
D=build/run-hang
mkdir -p "$D"
for f in build/ptboot.efi build/ptbootdrv.efi build/ptbhang.efi; do
  [ -f "$f" ] || { echo "run-hang: $f missing" >&2; exit 1; }
done
command -v socat > /dev/null || { echo "run-hang: socat missing (scripts/setup.sh installs it)" >&2; exit 1; }
export OVMF_VARS_FILE=$D/vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
DIMM=(-m 256,slots=1,maxmem=1G -object memory-backend-ram,id=rec,size=16M -device pc-dimm,id=dimm0,memdev=rec)
img=$D/hang.img
scripts/mkimage.sh "$img" build/ptboot.efi \
  '--shutdown install --image ptbhang.efi --hang-timeout 5 --buffer 4096 --recorder-at 0x100000000' \
  build/ptbootdrv.efi=EFI/ptboot/ptbootdrv.efi build/ptbhang.efi=ptbhang.efi > /dev/null || exit 1
echo "run-hang: 1/2 install"
scripts/qemu-run.sh "$img" "$D/install.log" "${QEMU_TIMEOUT:-120}" "${DIMM[@]}" || exit 1
printf '%s\n' '--shutdown resident chain \ptbhang.efi --args cli ; recover --serial-dump ; uninstall' > "$D/ptboot.cfg"
mcopy -o -i "$img" "$D/ptboot.cfg" ::/ptboot.cfg || exit 1
echo "run-hang: 2/2 the stand-in hangs with interrupts off; QEMU is reset 6 s later"
QEMU_RESET_ON='^ptbhang: waiting mode=cli' QEMU_RESET_DELAY=6 \
  scripts/qemu-run.sh "$img" "$D/hang.log" "${QEMU_TIMEOUT:-120}" "${DIMM[@]}" || exit 1
line=$(tr -d '\r' < "$D/hang.log" | grep -a '^ptboot: recover unit=' | tail -1)
[ -n "$line" ] || { echo "run-hang: no recover line in $D/hang.log" >&2; exit 1; }
echo "$line"
