#!/usr/bin/env bash
# Multi-processor paths on QEMU (-smp 2, no Intel PT): `info --cpus` runs
# CPUID on every processor through EFI_MP_SERVICES_PROTOCOL and reports each
# one (and does not hang); `plan --unit soft --cpus` says the soft unit
# traces the BSP only; `plan` from a CPUID dump on the stick prints the
# host's `ptboot plan --capture` text line for line.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

boot mp-info "--shutdown info --cpus" -smp 2
expect_rc mp-info 0 "app shut the machine down (no AP hang)"
expect mp-info '^ptboot: cpu n=0 bsp=1 pt=no reason=no-pt-bit ' "BSP reports its own CPUID"
expect mp-info '^ptboot: cpu n=1 bsp=0 pt=no reason=no-pt-bit ' "the AP reports its own CPUID"
expect mp-info '^ptboot: cpus count=2 enabled=2 reported=2 same=1 mp=ok$' "both processors counted and reported"
expect mp-info '^ptboot: exit status=0 sbrk_calls=0 ' "no heap"

boot mp-soft "--shutdown plan trace --unit soft --cpus --image 0x7e000000:64K" -smp 2
expect_rc mp-soft 0 "clean shutdown"
expect mp-soft '^capture mode=trace unit=soft cpus=1 ' "soft plan for one CPU"
expect mp-soft '^note: cpus: the soft unit traces the BSP only' "says the soft unit traces the BSP only"
expect mp-soft '^ptboot: plan end status=ok$' "plan accepted"

name=mp-plan-dump
cpu=skylake-client
cp test/fixtures/cpuid/$cpu.txt "$BOOT_DIR/$cpu.txt"
args="trace --image 0x7e000000:0x20000 buffer=256K mode=stop trace-stop=1:0x7e010000:0x7e0100ff cpus=all"
boot_image $name "--shutdown plan --cpuid $cpu.txt --check-cpus $args" "$BOOT_DIR/$cpu.txt"
boot_run $name -smp 2
expect_rc $name 0 "clean shutdown"
# the Skylake plan checked against each QEMU CPU's own CPUID: no PT on
# either, so neither gets a buffer (and no MSR is ever written by plan)
expect $name '^ptboot: plan cpu n=0 bsp=1 fits=no rule=pt-absent pages=0$' "BSP: plan refused by its own CPUID"
expect $name '^ptboot: plan cpu n=1 bsp=0 fits=no rule=pt-absent pages=0$' "AP: plan refused by its own CPUID"
expect $name '^ptboot: plan cpus wanted=2 fit=0 count=2$' "both CPUs wanted, none fits"
build/ptboot plan --cpuid test/fixtures/cpuid/$cpu.txt --capture $args > "$BOOT_DIR/$name.expected"
sed -n '/^ptboot: plan begin /,/^ptboot: plan end /p' "$BOOT_DIR/$name.txt" | sed '1d;$d' |
  grep -av '^ptboot: ' > "$BOOT_DIR/$name.got"
if [ -s "$BOOT_DIR/$name.expected" ] && grep -q '^wrmsr 0x570 ' "$BOOT_DIR/$name.expected" &&
   cmp -s "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got"; then
  ok "$name: target plan identical to 'ptboot plan --capture' ($(wc -l < "$BOOT_DIR/$name.got") lines)"
else
  not_ok "$name: target plan differs from the host's"
  diff "$BOOT_DIR/$name.expected" "$BOOT_DIR/$name.got" | head | sed 's/^/    | /'
fi
boot_done
