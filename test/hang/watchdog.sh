#!/usr/bin/env bash
# The UEFI watchdog (docs/hang.md "The watchdog"): test/image/ptbwdog.c is
# the stick's BOOTX64.EFI. First boot, the control: it arms a 1-second
# watchdog and stalls 3 s: the firmware must reset the machine. Second
# boot: it arms the 1-second watchdog again and starts ptboot.efi, whose run
# (six soft-unit traces of ptbspin.efi, over 90,000 single steps each) lasts longer
# than that; ptboot switches the watchdog off while it works, arms the boot
# manager's 5 minutes around the traced image and at its end, so the run
# completes; back in ptbwdog a 3 s stall passes without a reset.
. test/boot/lib.sh

for f in build/ptboot.efi build/ptbwdog.efi build/ptbspin.efi; do
  [ -f "$f" ] || { echo "watchdog: $f missing (make all test)"; exit 1; }
done
# six traces of ptbspin: the run lasts some seconds on any machine (one
# took 1-4 s by the RTC, whose whole seconds must show more than the 1 s)
t='trace --unit soft --no-files \ptbspin.efi'
scripts/mkimage.sh "$BOOT_DIR/watchdog.img" build/ptbwdog.efi "$t ; $t ; $t ; $t ; $t ; $t" \
  build/ptboot.efi=EFI/ptboot/ptboot.efi build/ptbspin.efi > /dev/null || exit 1
BOOT_TIMEOUT=${BOOT_TIMEOUT:-120} boot_run watchdog
w=watchdog
expect_rc $w 0 "ptbwdog shut the machine down in the end"
expect $w '^ptbwdog: control armed=1$' "the control armed a 1 s watchdog"
expect_not $w '^ptbwdog: control not reset$' "and the watchdog reset the machine during its 3 s stall"
expect $w '^ptbwdog: armed=1 starting ptboot$' "the next boot armed it again and started ptboot"
expect $w '^ptboot: watchdog off ' "ptboot switched it off"
expect $w '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=0 insns=[1-9][0-9]{4,} errors=0 ' \
  "ptboot's trace ran to its end"
expect $w '^ptboot: exit status=0 ' "ptboot ended normally"
after=$(sed -n 's/^ptbwdog: ptboot returned after=0*\([0-9][0-9]*\)$/\1/p' "$BOOT_DIR/$w.txt")
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }
check "$w: ptboot's run took ${after:-?} s by the RTC, longer than the 1 s watchdog it was started under" \
  "[ -n '$after' ] && [ '$after' -ge 2 ]"
expect $w '^ptbwdog: no reset$' "back in ptbwdog, 3 s passed without a reset (ptboot left the boot manager's 5 minutes)"
echo "watchdog tests: $boot_failures failure(s)"
[ "$boot_failures" -eq 0 ]
