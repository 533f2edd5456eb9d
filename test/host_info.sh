#!/usr/bin/env bash
# `build/ptboot info --cpuid FILE` prints the expected machine-readable line
# for recorded dumps, and fails cleanly on bad input.
set -u
P=build/ptboot
F=test/fixtures/cpuid
fail=0
check() { # file expected-last-line
	local got
	got=$("$P" info --cpuid "$F/$1" | tail -n 1)
	if [ "$got" != "$2" ]; then
		echo "FAIL: info --cpuid $1"; echo "  want: $2"; echo "  got:  $got"; fail=1
	else
		echo "ok: info --cpuid $1"
	fi
}
check broadwell-client.txt "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 model=0x3d stepping=0x4 hypervisor=0 maxleaf=0x14 ranges=0 topa=1 mentry=0 single=0"
check goldmont.txt "ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 model=0x5c stepping=0xa hypervisor=0 maxleaf=0x15 ranges=2 topa=1 mentry=1 single=1"
check amd.txt "ptboot: info pt=no reason=no-pt-bit vendor=AuthenticAMD family=0x19 model=0x61 stepping=0x2 hypervisor=0 maxleaf=0x10 ranges=0 topa=0 mentry=0 single=0"

# standard input
got=$("$P" info --cpuid - < "$F/skylake-client.txt" | tail -n 1)
case $got in
"ptboot: info pt=yes reason=ok vendor=GenuineIntel family=0x6 model=0x5e "*) echo "ok: info --cpuid -";;
*) echo "FAIL: info --cpuid - gave: $got"; fail=1;;
esac
# the machine running the test: whatever it is, one well-formed last line
got=$("$P" info | tail -n 1)
re='^ptboot: info pt=(yes|no) reason=[a-z0-9-]+ vendor=[^ ]+ family=0x[0-9a-f]+ model=0x[0-9a-f]+ stepping=0x[0-9a-f]+ hypervisor=[01] maxleaf=0x[0-9a-f]+ ranges=[0-7] topa=[01] mentry=[01] single=[01]$'
if [[ $got =~ $re ]]; then echo "ok: info on this CPU: $got"; else echo "FAIL: info on this CPU: $got"; fail=1; fi

# Debian's cpuid tool, when installed: its raw dump of this CPU (one CPU and
# all CPUs) must give the same verdict as executing CPUID directly. Only the
# fields up to maxleaf are compared: on hybrid parts leaf 14h differs
# between the P-core and E-core each process may run on.
if command -v cpuid >/dev/null; then
	for opt in "-r -1" "-r"; do
		# shellcheck disable=SC2086
		via=$(cpuid $opt | "$P" info --cpuid - | tail -n 1)
		if [ "${via%% ranges=*}" = "${got%% ranges=*}" ]; then echo "ok: cpuid $opt | info --cpuid - agrees";
		else echo "FAIL: cpuid $opt | info --cpuid -: $via"; fail=1; fi
	done
else
	echo "skip: Debian's cpuid tool not installed"
	skipped=1
fi

# --msr: on a CPU without PT nothing is read and the report says so; with PT
# it needs /dev/cpu/0/msr, and says so clearly when that is missing
out=$("$P" info --msr 2>&1); rc=$?
if grep -q '^ptboot: info pt=no' <<<"$out"; then
	if [ $rc -eq 0 ] && grep -q 'IA32_RTIT_CTL (0x570): not read' <<<"$out"; then
		echo "ok: info --msr without PT"
	else echo "FAIL: info --msr without PT (exit $rc)"; fail=1; fi
elif [ $rc -eq 0 ] || grep -q 'modprobe msr' <<<"$out"; then
	echo "ok: info --msr with PT (exit $rc)"
else
	echo "FAIL: info --msr: exit $rc: $out"; fail=1
fi

expect_fail() { # description expected-stderr-substring args...
	local what=$1 want=$2; shift 2
	local err rc
	err=$("$P" "$@" 2>&1 >/dev/null); rc=$?
	if [ $rc -eq 0 ] || [[ $err != *"$want"* ]]; then
		echo "FAIL: $what (exit $rc, stderr: $err)"; fail=1
	else
		echo "ok: $what -> exit $rc: $err"
	fi
}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'CPU:\n   0x00000000 0x00: eax=0x1 ebx=0x2\n' > "$tmp/bad.txt"
expect_fail "missing file" "No such file" info --cpuid "$tmp/nonexistent.txt"
expect_fail "malformed dump" "bad.txt:2:" info --cpuid "$tmp/bad.txt"
expect_fail "missing argument" "needs a FILE" info --cpuid
expect_fail "unknown option" "unknown option" info --bogus
expect_fail "--msr with --cpuid" "use one of --cpuid and --msr" info --msr --cpuid "$F/amd.txt"
"$P" info --help | grep -q -- '--cpuid FILE' || { echo "FAIL: info --help"; fail=1; }
# what ran passed, but the cross-check had no cpuid tool: skipped (test/run.sh)
[ $fail -eq 0 ] && [ -n "${skipped:-}" ] && exit 77
exit $fail
