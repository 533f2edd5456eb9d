#!/usr/bin/env bash
# `make run-early`: the firmware's own boot traced from early DXE, end to
# end (docs/early-boot.md). Puts build/ptbootdrv.efi into a copy of
# OVMF_CODE_4M.fd (`ptboot fv inject`, words EARLY_CONFIG, more inject
# options in EARLY_INJECT, e.g. --apriori or '--after CpuDxe'), boots it in
# QEMU with a stick whose BOOTX64.EFI is the OS-loader stand-in (it calls
# ExitBootServices, then shuts down), and shows the serial console: the
# driver dispatched from the volume, the traced driver, and its report at
# ExitBootServices, ending with the `ptboot: trace unit=... images=<n>` line.
# The files of the serial dump come back with
#   build/ptboot serial build/early/serial.log --out build/early/cap
#   build/ptboot summary --capture build/early/cap
set -euo pipefail
cd "$(dirname "$0")/../.."
W=build/early
mkdir -p "$W"
config=${EARLY_CONFIG:-"--unit soft --image SmbiosPlatformDxe --follow"}
code=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
# shellcheck disable=SC2086
build/ptboot fv inject "$code" -o "$W/OVMF_CODE_ptboot.fd" --config "$config" ${EARLY_INJECT:-}
scripts/mkimage.sh "$W/osloader.img" build/osloader.efi ""
echo "ptboot: run-early: firmware $W/OVMF_CODE_ptboot.fd, serial log $W/serial.log"
OVMF_CODE=$W/OVMF_CODE_ptboot.fd exec scripts/qemu-run.sh "$W/osloader.img" "$W/serial.log" "${QEMU_TIMEOUT:-300}"
