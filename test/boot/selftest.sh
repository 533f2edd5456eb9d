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
boot_done
