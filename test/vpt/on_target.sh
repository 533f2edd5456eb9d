#!/usr/bin/env bash
# Phase two of the virtual PT: traces and code snapshots made by the plugin
# (the committed fixtures), copied to the stick and decoded by
# `ptboot.efi flow` in QEMU; the serial lines equal the host's
# `ptboot flow --no-inst` and the ground truth, line for line.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

# vpt_case FIXTURE: one boot decoding test/vpt/fixtures/FIXTURE on the target.
vpt_case() {
  local fx=$1 name=vpt-$1 f=test/vpt/fixtures/$1 filter=
  cp "$f.pt" "$BOOT_DIR/$name.pt"
  cp "$f.dump" "$BOOT_DIR/$name-code.dump"
  cp "$f.addr" "$BOOT_DIR/$name-code.addr"
  [ -s "$f.filter" ] && filter="--filter $(cat "$f.filter")"
  local args="--pt $name.pt --pages $name-code $filter"
  (cd "$BOOT_DIR" && ../../ptboot flow --no-inst $args) > "$BOOT_DIR/$name.expected" 2>&1
  if gzip -dc "$f.truth.gz" | cmp -s - "$BOOT_DIR/$name.expected"; then
    ok "$name: the host's decode equals the ground truth"
  else
    not_ok "$name: the host's 'ptboot flow --no-inst $args' differs from $f.truth.gz"
  fi
  boot_image "$name" "--shutdown flow $args" "$BOOT_DIR/$name.pt" "$BOOT_DIR/$name-code.dump" \
    "$BOOT_DIR/$name-code.addr"
  BOOT_TIMEOUT=120 boot_run "$name"
  expect_rc "$name" 0 "clean shutdown"
  expect "$name" '^ptboot: flow end insns=[1-9][0-9]* errors=0$' "flow finished without errors"
  expect "$name" '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "no heap allocation"
  expect_same_as_host "$name" flow "ptboot flow --no-inst $args"
}

# 64-bit code with a filter, boot-service calls and a #GP; then 16-bit and
# 32-bit code from the reset vector.
vpt_case app
vpt_case reset16
boot_done
