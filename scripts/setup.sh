#!/usr/bin/env bash
# Installs every Debian package that ptboot's build, tests and benchmarks
# need. Idempotent: when everything is present it prints nothing and makes no
# network access. Run as root (or through sudo) on Debian 12.
#
# First-run trap this file must never fall into again: under `set -e` and
# `pipefail`, a command substitution whose pipeline exits non-zero kills the
# script. dpkg-query exits 1 whenever one of the packages it is asked about
# is not installed, which is exactly the case this script exists for, so its
# status is taken apart from its output (test/setup/first_run.sh proves it
# with stand-ins for dpkg-query and apt-get).
set -euo pipefail

packages=(
  # build of the UEFI app and of newlib (built from source by the Makefile)
  build-essential binutils make xz-utils gnu-efi newlib-source
  # boot tests and the USB image
  ovmf qemu-system-x86 mtools dosfstools
  # QEMU's monitor socket: system_reset in the hang recorder's tests
  socat
  # test oracles and the unit-test framework
  libipt-dev libcmocka-dev libzydis-dev
  # cross-check of the CPUID dump parser against the real `cpuid -r` output
  cpuid
  # fuzzing (libFuzzer, sanitizers)
  clang libclang-rt-14-dev
  # real PE/COFF images with a CodeView debug record for pe_info's tests
  lld
  # the host CLI's symbols: ELF symbol tables and DWARF line tables (--symbols)
  libdw-dev
  # `ptboot fv`: the LZMA sections of firmware volumes (OVMF's DXE volume)
  liblzma-dev
  # the HTML report rendered in a real browser, headless, and the exports'
  # JSON checked (test/names)
  chromium python3
  # make format / make format-check (.clang-format)
  clang-format
  # peak memory of the export benchmark (bench/export.sh)
  time
)

# One dpkg-query for all: fast enough to run before every build. Its exit
# status says only "something was not found"; the per-package status lines
# on stdout are what count, so the status is deliberately not fatal here.
query_installed() {
  local out
  out=$(dpkg-query -W -f='${Package} ${Status}\n' "$@" 2>/dev/null) || true
  awk '$NF == "installed" && $(NF-1) == "ok" { print $1 }' <<<"$out"
}

installed=$(query_installed "${packages[@]}")
missing=()
for p in "${packages[@]}"; do
  grep -qx -- "$p" <<<"$installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

manual="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
fail() {
  echo "setup: $1" >&2
  echo "setup: to install by hand, as root: $manual" >&2
  exit 1
}

echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
echo "setup: (a first install downloads about 300 MB and takes a few minutes)"
SUDO=
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 ||
    fail "not root and no sudo: cannot install ${missing[*]}"
  SUDO=sudo
fi
command -v apt-get >/dev/null 2>&1 ||
  fail "apt-get not found: this needs Debian 12 (bookworm) or a derivative"

export DEBIAN_FRONTEND=noninteractive
log=$(mktemp "${TMPDIR:-/tmp}/ptboot-setup.XXXXXX")
trap 'rm -f "$log"' EXIT
run_logged() {
  if ! "$@" >"$log" 2>&1; then
    echo "setup: '$*' failed; its last lines:" >&2
    tail -n 15 "$log" | sed 's/^/setup:   /' >&2
    fail "package installation failed"
  fi
}
run_logged $SUDO apt-get update -qq
run_logged $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

# Trust nothing: ask dpkg again, so a package apt-get skipped is named.
installed=$(query_installed "${missing[@]}")
still=()
for p in "${missing[@]}"; do
  grep -qx -- "$p" <<<"$installed" || still+=("$p")
done
[ ${#still[@]} -eq 0 ] || fail "still not installed after apt-get: ${still[*]}"
echo "setup: installed ${missing[*]}"
