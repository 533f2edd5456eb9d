#!/usr/bin/env bash
# `memmap --mark` / `--survived` (docs/hang.md "Where the recorder lives"),
# the measurement behind the recorder's placement, in one QEMU run with a
# reset through the monitor: the first boot tags every free page and the
# 16 MiB pc-dimm at 4 GiB (outside the firmware's map, --also), then hangs
# (ptbhang.efi, interrupts off); after system_reset the next boot checks
# the tags. The pc-dimm must keep every tag; what happened to free memory is
# reported (Debian's OVMF fills it all with 0xAF at DXE start, so none
# survives there: the line is printed, not asserted).
. test/boot/lib.sh

for f in build/ptboot.efi build/ptbhang.efi; do
  [ -f "$f" ] || { echo "survey: $f missing (make all test)"; exit 1; }
done
command -v socat > /dev/null || { echo "survey: socat missing (scripts/setup.sh installs it)"; exit 1; }
DIMM=(-m 256,slots=1,maxmem=1G -object memory-backend-ram,id=rec,size=16M -device pc-dimm,id=dimm0,memdev=rec)
boot_image survey '--shutdown memmap --survived ; memmap --mark --also 0x100000000:0x1000000 ; memmap --mark --also 0x1000 ; resident chain \ptbhang.efi --args cli' build/ptbhang.efi
QEMU_RESET_ON='^ptbhang: waiting mode=cli' QEMU_RESET_DELAY=1 BOOT_TIMEOUT=${BOOT_TIMEOUT:-90} boot_run survey "${DIMM[@]}"
s=survey
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
expect_rc $s 0 "the second boot shut down"
expect $s '^ptboot: error: memmap --survived: no marks ' "before any mark: said so"
expect $s '^ptboot: error: memmap: --mark \[--also BASE:SIZE\]$' "a bad --also is refused"
expect $s '^ptboot: memmap mark pages=[1-9][0-9]* ranges=[1-9][0-9]* nonce=0x' "the first boot marked the free pages and the pc-dimm"
expect $s '^ptboot: memmap run base=0x100000000 pages=4096 kept=1 now=unmapped$' \
  "after system_reset every page of the pc-dimm (outside the map) kept its tag"
marked=$(sed -n 's/^ptboot: memmap mark pages=\([0-9]*\) .*/\1/p' "$BOOT_DIR/$s.txt" | head -1)
expect $s "^ptboot: memmap survived pages=[0-9]+ of=$marked free_now=[0-9]+ " "every marked page was checked ($marked)"
grep -a '^ptboot: memmap survived ' "$BOOT_DIR/$s.txt" | sed 's/^/    measured: /'
echo "survey tests: $boot_failures failure(s)"
[ "$boot_failures" -eq 0 ]
