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
boot_done
