#!/usr/bin/env bash
# `info` on QEMU's CPUs: no Intel PT, the reason named, the machine goes on
# to a clean shutdown, and nothing allocated from the heap.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

boot info-qemu64 "--shutdown info"
expect_rc info-qemu64 0 "app shut the machine down"
expect info-qemu64 '^ptboot: start config=\\ptboot.cfg serial=conout-has-uart msr=ready$' "config read, serial via ConOut"
expect info-qemu64 '^ptboot: info pt=no reason=no-pt-bit vendor=AuthenticAMD family=0xf model=0x6b stepping=0x1 hypervisor=1 maxleaf=0xd ranges=0 topa=0 mentry=0 single=0$' "machine line for qemu64"
expect info-qemu64 '^Firmware: +EDK II' "firmware named"
expect info-qemu64 '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "no allocation, no fault"

# An Intel model: QEMU's Skylake has max basic leaf 0xd, so its leaf 14h
# would return leaf 0xd's data; PT must still be reported absent.
boot info-skylake "--shutdown info" -cpu Skylake-Client
expect_rc info-skylake 0 "app shut the machine down"
expect info-skylake '^ptboot: info pt=no reason=no-pt-bit vendor=GenuineIntel family=0x6 model=0x5e stepping=0x3 hypervisor=1 maxleaf=0xd ' "machine line for Skylake-Client"
expect info-skylake '^ptboot: exit status=0 sbrk_calls=0 ' "no allocation"

# The PT=yes path of the same code on the target, from recorded CPUID dumps
# on the stick (QEMU cannot offer Intel PT): the report says yes, no MSR is
# read for a dump, and the start plan printed on serial is line for line the
# host's `ptboot plan --cpuid` for the same CPU (Broadwell: the one-entry
# plus END ToPA layout of parts without multiple entries).
for cpu in skylake-client broadwell-client; do
  name=info-dump-$cpu
  cp test/fixtures/cpuid/$cpu.txt "$BOOT_DIR/$cpu.txt"
  boot_image $name "--shutdown info --cpuid $cpu.txt" "$BOOT_DIR/$cpu.txt"
  boot_run $name
  expect_rc $name 0 "clean shutdown"
  expect $name "^CPUID source: +$cpu.txt \(a recorded dump, not this CPU\)$" "dump named as the source"
  expect $name "^ptboot: info pt=yes reason=ok vendor=GenuineIntel " "PT reported present"
  expect_not $name '^IA32_RTIT_CTL' "no MSR read for a dump"
  build/ptboot plan --cpuid test/fixtures/cpuid/$cpu.txt > "$BOOT_DIR/$name.plan-expected"
  sed -n '/^Start plan /,/^ptboot: exit /p' "$BOOT_DIR/$name.txt" | sed '1d;$d;s/^  //' > "$BOOT_DIR/$name.plan-got"
  if [ -s "$BOOT_DIR/$name.plan-expected" ] && cmp -s "$BOOT_DIR/$name.plan-expected" "$BOOT_DIR/$name.plan-got"; then
    ok "$name: start plan identical to 'ptboot plan' ($(wc -l < "$BOOT_DIR/$name.plan-got") lines)"
  else
    not_ok "$name: start plan differs from 'ptboot plan'"
    diff "$BOOT_DIR/$name.plan-expected" "$BOOT_DIR/$name.plan-got" | head | sed 's/^/    | /'
  fi
done
expect info-dump-broadwell-client '^  topa 0 1 0x[0-9a-f]*1$' "Broadwell: entry 1 is END"
boot_done
