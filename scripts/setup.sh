#!/usr/bin/env bash
# Installs every Debian package that ptboot's build, tests and benchmarks
# need. Idempotent: when everything is present it prints nothing and makes no
# network access. Run as root (or through sudo) on Debian 12.
set -euo pipefail

packages=(
  # build of the UEFI app and of newlib (built from source by the Makefile)
  build-essential binutils make xz-utils gnu-efi newlib-source
  # boot tests and the USB image
  ovmf qemu-system-x86 mtools dosfstools
  # test oracles and the unit-test framework
  libipt-dev libcmocka-dev libzydis-dev
  # cross-check of the CPUID dump parser against the real `cpuid -r` output
  cpuid
  # fuzzing (libFuzzer, sanitizers)
  clang libclang-rt-14-dev
  # real PE/COFF images with a CodeView debug record for pe_info's tests
  lld
)

# One dpkg-query for all: fast enough to run before every build.
installed=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null |
  awk '$NF == "installed" && $(NF-1) == "ok" { print $1 }')
missing=()
for p in "${packages[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup: installing ${missing[*]}"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install packages" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
