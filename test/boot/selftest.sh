#!/usr/bin/env bash
# The #GP-safe MSR path on a real fault (WRMSR IA32_PKRS with a reserved bit,
# which QEMU's TCG faults on), a good MSR read through the same path, and the
# closed heap (malloc fails, the sbrk counter sees it).
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

boot selftest "--shutdown selftest"
expect_rc selftest 0 "no firmware exception dump, clean shutdown"
expect selftest '^ptboot: selftest msr-read 0x1b result=ok value=0x[0-9a-f]*fee00[0-9a-f]{3} expected=ok$' "valid MSR reads"
expect selftest '^ptboot: selftest msr-write 0x6e1 result=gp faults_caught=1 expected=gp$' "#GP caught and reported"
expect selftest '^ptboot: selftest alloc malloc=null sbrk_calls_before=0 after=[1-9][0-9]* expected=null$' "heap closed, counted"
expect selftest '^ptboot: selftest result=pass$' "self-test passes"
expect selftest '^ptboot: exit status=0 sbrk_calls=[1-9][0-9]* msr_faults=1$' "exit line counts the fault"
expect_not selftest 'X64 Exception' "no exception dump"

# The readable-memory check that guards on-target decoding, on OVMF's real
# memory map: the app's own image is RAM, the local APIC page is not.
boot memmap "--shutdown memmap --ranges"
expect_rc memmap 0 "clean shutdown"
expect memmap '^  ram 0x0000000000100000-0x[0-9a-f]{16}$' "RAM above 1 MiB listed"
expect memmap '^ptboot: memmap descriptors=[1-9][0-9]* ram_ranges=[1-9][0-9]* ram_mib=2[0-9][0-9] image=0x[0-9a-f]+\+0x[0-9a-f]+ image_readable=1 apic_mmio_readable=0$' "image readable, MMIO not"
expect memmap '^ptboot: exit status=0 sbrk_calls=0 ' "no allocation"
boot_done
