#!/usr/bin/env bash
# Started from the UEFI shell (LoadOptions) on a stick that also has a
# config: the shell line's command replaces the config's, the config's app
# options still apply (--shutdown), and the image path the shell puts first
# is not taken for a command.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

name=shell
img=$BOOT_DIR/$name.img
boot_image $name "--shutdown info"
# No BOOTX64.EFI: OVMF falls through to its internal shell, which runs
# startup.nsh from the stick after a 5 s countdown.
mdel -i "$img" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$img" build/ptboot.efi ::/ptboot.efi
printf 'fs0:\\ptboot.efi selftest\r\n' > "$BOOT_DIR/startup.nsh"
mcopy -i "$img" "$BOOT_DIR/startup.nsh" ::/startup.nsh
boot_run $name
expect_rc $name 0 "config's --shutdown applied"
expect $name '^Shell> fs0:\\ptboot.efi selftest$' "ran from the shell"
expect $name '^ptboot: selftest result=pass$' "shell's command replaced the config's"
expect_not $name '^ptboot: info ' "config's command did not run"
boot_done
