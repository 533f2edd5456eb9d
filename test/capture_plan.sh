#!/usr/bin/env bash
# `build/ptboot plan --cpuid FILE --capture trace|resident [words]`: the
# capture plan's text (arch/x86/capture_plan.h) for recorded CPUs. The
# expected MSR values were worked out from the SDM's field layout by hand:
# CTL 0x10000e705 = TraceEn|OS|ToPA|MTCEn|TSCEn|BranchEn|MTCFreq=3|ADDR0_CFG=1,
# ToPA entry 0x40000100 = 64 KiB region (Size code 4 in bits 9:6).
set -u
P=build/ptboot
F=test/fixtures/cpuid
fail=0
run() { # expected-exit args...
	local want=$1; shift
	out=$("$P" plan "$@" 2>&1); rc=$?
	if [ $rc -ne "$want" ]; then
		echo "FAIL: plan $* exited $rc, want $want"; echo "$out" | sed 's/^/  /'; fail=1
		return 1
	fi
	return 0
}
has() { # line-regex
	if ! grep -qE -- "$1" <<<"$out"; then
		echo "FAIL: no line /$1/ in:"; echo "$out" | sed 's/^/  /'; fail=1
	fi
}

# Skylake, trace of an image: the image is the filter, MTC on, 64K ring
if run 0 --cpuid $F/skylake-client.txt --capture trace --image 0x7e000000:0x20000 buffer=64K; then
	has '^capture mode=trace unit=hw cpus=1 output=topa when-full=ring buffer=65536 regions=1 region=65536 memory=boot '
	has '^note: filter: range 0 = image 0x7e000000\.\.0x7e01ffff$'
	has '^topa 0 0 0x40000100$'
	has '^topa 0 1 0x3ff00001$'
	has '^wrmsr 0x580 0x7e000000$'
	has '^wrmsr 0x581 0x7e01ffff$'
	[ "$(tail -n1 <<<"$out")" = "wrmsr 0x570 0x10000e705" ] || { echo "FAIL: last write: $(tail -n1 <<<"$out")"; fail=1; }
	echo "ok: skylake trace plan"
fi
# Broadwell: no address ranges -> everything traced, said so; no MTC
if run 0 --cpuid $F/broadwell-client.txt --capture trace --image 0x7e000000:0x20000; then
	has '^note: filter: off: 0 free address range'
	has '^note: no MTC on this CPU'
	has '^note: single-entry ToPA|regions=1 '
	echo "ok: broadwell trace plan"
fi
# AMD: hardware refused by rule, the soft unit accepted (BSP only)
if run 1 --cpuid $F/amd.txt --capture trace --image 0x7e000000:0x20000; then
	has '^refused pt-absent kind=#GP$'
	echo "ok: amd hw refused"
fi
if run 0 --cpuid $F/amd.txt --capture trace --unit soft --cpus --image 0x7e000000:0x20000; then
	has '^capture mode=trace unit=soft cpus=1 '
	has 'BSP only'
	has '^soft range 0 cfg=1 0x7e000000 0x7e01ffff$'
	echo "ok: amd soft plan"
fi
# resident: reserved memory, no filter; an MTCFreq Skylake lacks is refused
if run 0 --cpuid $F/icelake-client.txt --capture resident --image 0x7e000000:0x20000; then
	has 'memory=reserved .*filter=off$'
	has '^note: memory: EfiReservedMemoryType'
	echo "ok: icelake resident plan"
fi
if run 1 --cpuid $F/skylake-client.txt --capture resident mtc=5; then
	has '^refused mtc-freq-encoding kind=#GP$'
	echo "ok: skylake mtc=5 refused"
fi
# Issue #18: refused the way `ptboot plan` refuses, never adjusted silently
if run 1 --cpuid $F/skylake-client.txt --capture trace output=single mode=stop; then
	has '^refused single-range-stop kind=unhonoured$'
	if grep -q 'mode=stop ignored' <<<"$out"; then echo "FAIL: mode=stop ignored"; fail=1; fi
	echo "ok: single range + mode=stop refused"
fi
if run 1 --cpuid $F/skylake-client.txt --capture trace filter=0:0x2000:0x1000; then
	has '^refused range-empty kind=unhonoured range=0$'
	echo "ok: filter A > B refused"
fi
if run 1 --cpuid $F/skylake-client.txt --capture trace table-base=0x40000000; then
	has '^refused topa-table-overlap kind=unhonoured$'
	echo "ok: table in the output refused"
fi
if run 2 --cpuid $F/skylake-client.txt --capture trace filter=0:0x1000:0x2000 trace-stop=0:0x3000:0x4000; then
	has 'range 0 given twice \(range-duplicate\): already filter=0:0x1000:0x2000'
	echo "ok: range 0 twice refused"
fi
# the default tables move out of a large output, with a note
if run 0 --cpuid $F/skylake-client.txt --capture resident region-size=4K buffer=2G; then
	has '^note: table-base 0x3fbfd000: 1027 ToPA table\(s\) at the default 0x3ff00000 would overlap the output; placed below the buffer$'
	has '^wrmsr 0x560 0x3fbfd000$'
	echo "ok: default tables moved, noted"
fi
# 57-bit filters: only with 5-level paging on (--la57)
if run 1 --cpuid $F/sapphirerapids.txt --capture trace filter=0:0x00ff000000000000:0x00ff00000000ffff; then
	has '^refused range-beyond-paging kind=unhonoured range=0$'
	echo "ok: 57-bit filter refused with 4-level paging"
fi
if run 0 --cpuid $F/sapphirerapids.txt --capture trace --la57 filter=0:0x00ff000000000000:0x00ff00000000ffff; then
	has '^wrmsr 0x580 0xff000000000000$'
	echo "ok: 57-bit filter with --la57"
fi
if run 2 --cpuid $F/skylake-client.txt --capture trace frobnicate; then
	has 'frobnicate: unknown option word'
	echo "ok: unknown word"
fi
exit $fail
