#!/usr/bin/env bash
# Every configuration README's "On real hardware" lists runs as written, on
# the stick `make image` builds (issue #17 "Usability on the stick"). The
# configurations are read from README itself (the block after "Typical
# configurations:"), so the test follows the manual:
#   - the driver under test: `make image PTBOOT_FILES='build/ptbtest.efi=
#     \EFI\test\mydriver.efi'` puts it where the line names it; the trace,
#     its summaries, its files and its serial dump (recovered on the host)
#   - `trace buffer=64M --boot-next`: with the OS-loader stand-in as the
#     next boot option (as test/boot/trace_bootnext.sh prepares it), traced
#     through ExitBootServices with the 64 MiB buffer asked for
#   - `install`: the stick has \EFI\ptboot\ptbootdrv.efi, the Driver####
#     option is written, and on the next boot the driver loads from it
# plus `make image` itself: the driver on the stick, PTBOOT_FILES, and
# `ptboot.efi --version` (the host's text).
cd "$(dirname "$0")/../.." && . test/boot/lib.sh
export BOOT_TIMEOUT=${BOOT_TIMEOUT:-60}
for f in build/ptboot.efi build/ptbootdrv.efi build/ptbtest.efi build/osloader.efi build/test/efivars build/ptboot; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make all test)"; exit 1; }
done
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

# README's configurations: the lines of the block after "Typical configurations:"
mapfile -t configs < <(awk '/^Typical configurations:/ { on = 1; next }
  on && /^```/ { n++; if (n == 2) exit; next }
  on && n == 1 && NF && $1 !~ /^#/' README.md)
[ ${#configs[@]} -ge 3 ] || { not_ok "README: fewer than 3 typical configurations found"; boot_done; exit; }
cfg_of() { local c; for c in "${configs[@]}"; do [[ $c == *$1* ]] && { printf '%s' "$c"; return; }; done; }
driver_cfg=$(cfg_of mydriver.efi) next_cfg=$(cfg_of --boot-next) install_cfg=$(cfg_of install)
check "README: a configuration each for a driver under test, --boot-next and install" \
  "[ -n '$driver_cfg' ] && [ -n '$next_cfg' ] && [ -n '$install_cfg' ]"

# make_image NAME CONFIG [PTBOOT_FILES]: `make image` as a user runs it; the
# stick is copied to $BOOT_DIR/NAME.img
make_image() {
  make -s image PTBOOT_CFG="$2" PTBOOT_FILES="${3:-}" > "$BOOT_DIR/$1.make" 2>&1 ||
    { not_ok "$1: make image failed"; sed 's/^/    | /' "$BOOT_DIR/$1.make" | tail -5; return 1; }
  cp build/ptboot.img "$BOOT_DIR/$1.img"
}

# ---- the driver under test ----
name=readme-driver
make_image $name "$driver_cfg" 'build/ptbtest.efi=\EFI\test\mydriver.efi' || { boot_done; exit; }
check "$name: make image put \\EFI\\ptboot\\ptbootdrv.efi and \\EFI\\test\\mydriver.efi (PTBOOT_FILES) on the stick" \
  "mdir -i '$BOOT_DIR/$name.img' ::/EFI/ptboot/ptbootdrv.efi >/dev/null 2>&1 && mdir -i '$BOOT_DIR/$name.img' ::/EFI/test/mydriver.efi >/dev/null 2>&1 &&
   mtype -i '$BOOT_DIR/$name.img' ::/ptboot.cfg | grep -qxF -- '$driver_cfg'"
boot_run $name
expect_rc $name 0 "clean shutdown"
expect $name '^ptboot: trace: target \\EFI\\test\\mydriver.efi loaded at ' "the driver under test loaded from its path"
expect $name '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=0 insns=[1-9][0-9]* errors=0 images=[1-9]' "traced (unit auto: soft here)"
expect $name '^ptboot: trace summary end lines=[1-9]' "summaries on serial"
expect $name '^ptboot: trace: files \\ptboot\\cap001 ' "files on the stick"
expect $name '^ptboot: exit status=0 ' "exit status 0"
rm -rf "$BOOT_DIR/$name-serial"
build/ptboot serial "$BOOT_DIR/$name.txt" --out "$BOOT_DIR/$name-serial" > "$BOOT_DIR/$name-serial.txt" 2>&1
check "$name: the raw capture over serial recovered whole (ptboot serial)" \
  "grep -q '^serial: 4 file(s) in the log, 4 complete' '$BOOT_DIR/$name-serial.txt'"

# ---- trace buffer=64M --boot-next ----
name=readme-next
export OVMF_VARS_FILE=$BOOT_DIR/$name-vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
boot_image $name-prep '--shutdown info'
boot_run $name-prep   # OVMF makes its boot options, the stick's first
build/test/efivars "$OVMF_VARS_FILE" --boot > "$BOOT_DIR/$name-vars.txt"
order=$(sed -n 's/^BootOrder //p' "$BOOT_DIR/$name-vars.txt")
stick=$(sed -n 's/^Boot\([0-9A-F]\{4\}\) attr=0x00000001 desc="[^"]*USB[^"]*" .*/\1/p' "$BOOT_DIR/$name-vars.txt" | head -1)
if [ -n "$stick" ] && [ "${order%%,*}" = "$stick" ]; then
  build/test/efivars "$OVMF_VARS_FILE" --add-boot 100 "osloader stand-in" '\osloader.efi' "$stick,0100${order#"$stick"}" > /dev/null || exit 1
  make_image $name "$next_cfg" 'build/osloader.efi=osloader.efi' || { boot_done; exit; }
  boot_run $name
  expect_rc $name 0 "QEMU ended by the stand-in's shutdown after ExitBootServices"
  expect $name '^ptboot: trace: --boot-next: Boot0100 "osloader stand-in" ' "the next boot option chosen"
  expect $name '^ptboot: trace: buffer=67108864 mode=' "the 64 MiB buffer asked for"
  expect_not $name '^ptboot: trace: note: volume has ' "the stick has room for it (no shrinking)"
  expect $name '^ptboot: trace unit=soft cpu=0 bytes=[1-9][0-9]* wrapped=0 stopped=1 ' "traced through ExitBootServices"
else
  not_ok "$name: no stick option first in BootOrder ($order)"
fi
unset OVMF_VARS_FILE

# ---- install ----
name=readme-install
export OVMF_VARS_FILE=$BOOT_DIR/$name-vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
make_image $name "$install_cfg" || { boot_done; exit; }
EXIT_STATUS=app boot_run $name   # no --shutdown: the runner stops QEMU at the app's exit line
expect_rc $name 0 "the app's exit status 0"
expect $name '^ptboot: install option=Driver[0-9A-F]{4} bytes=[0-9]+ file=\\EFI\\ptboot\\ptbootdrv\.efi ' "install wrote its Driver#### option"
expect_not $name 'not found' "the driver was on the stick"
boot_image $name-next '--shutdown resident status ; uninstall' build/ptbootdrv.efi=EFI/ptboot/ptbootdrv.efi
boot_run $name-next
expect_rc $name-next 0 "clean shutdown"
expect $name-next '^ptboot: resident driver start ' "on the next boot the driver loaded from \\EFI\\ptboot\\ptbootdrv.efi"
expect $name-next '^ptboot: resident status state=' "ptboot.efi found the resident tracer"
unset OVMF_VARS_FILE

# ---- --version ----
name=readme-version
boot_image $name '--shutdown --version info'
boot_run $name
want=$(build/ptboot --version)
expect $name "^ptboot: version ${want//./\\.}\$" "ptboot.efi --version says the build ($want, as the host's)"
expect_not $name '^ptboot: info ' "and runs no command"
boot_done
