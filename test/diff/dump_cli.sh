#!/usr/bin/env bash
# The `ptboot dump` and `ptboot bench` command lines: help, errors, exit codes.
set -u
B=${B:-build}
P=$B/ptboot
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

check() {   # description expected-rc expected-stderr-regex command...
  local what=$1 want=$2 re=$3; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" != "$want" ] || ! grep -qE -- "$re" "$tmp/err" "$tmp/out"; then
    echo "FAIL: $what: exit $rc (want $want), output:"; cat "$tmp/out" "$tmp/err" | head -5
    fail=$((fail + 1))
  else
    echo "ok: $what"
  fi
}

"$B/bench/gen_trace" --size 5000 --seed 3 "$tmp/t.pt"
check "dump --help" 0 "usage: ptboot dump" "$P" dump --help
check "bench --help" 0 "usage: ptboot bench" "$P" bench --help
check "dump without a file" 2 "no trace file given" "$P" dump
check "dump of a missing file" 1 "cannot open $tmp/missing.pt" "$P" dump "$tmp/missing.pt"
check "dump of a directory" 1 "is a directory" "$P" dump "$tmp"
check "dump with an unknown option" 2 "unknown option: --frobnicate" "$P" dump --frobnicate "$tmp/t.pt"
check "dump --time and --tcal together" 2 "specify either --time or --tcal" "$P" dump --time --tcal "$tmp/t.pt"
check "dump --time" 0 "tsc  [0-9a-f]{16}$" "$P" dump --time "$tmp/t.pt"
check "dump --tcal --nom-freq" 0 "^[0-9a-f]{16}  cbr +21 +fcr  [0-9]+\.[0-9]{3}$" "$P" dump --tcal --nom-freq 24 "$tmp/t.pt"
check "dump --mtc-freq too big" 2 "--mtc-freq: value too big: 16" "$P" dump --mtc-freq 16 "$tmp/t.pt"
check "dump --cpuid-0x15.eax bad" 2 "--cpuid-0x15.eax: bad argument: x" "$P" dump --cpuid-0x15.eax x "$tmp/t.pt"
check "dump --mtc-freq without value" 2 "missing argument" "$P" dump "$tmp/t.pt" --mtc-freq
check "dump of a trace" 0 "^0000000000000000  psb" "$P" dump "$tmp/t.pt"
check "dump of a range" 0 "^0000000000000000  psb" "$P" dump --no-sync "$tmp/t.pt:0-0x40"
check "dump of a bad range" 1 "bad range" "$P" dump "$tmp/t.pt:0x40-0x10"
check "dump --stats" 0 "packets, 0 errors, 0 bytes skipped" "$P" dump --quiet --stats "$tmp/t.pt"
check "bench without --pt" 2 "--pt FILE is required" "$P" bench
check "bench of a trace" 0 "^bench: packets file=.* ptboot_mbps=[0-9.]+ libipt_mbps=[0-9.]+ ratio=[0-9.]+$" \
      "$P" bench --pt "$tmp/t.pt" --rounds 1 --min-bytes 100000
# a corrupted trace: error lines, resync, exit 0 (as ptdump)
cp "$tmp/t.pt" "$tmp/bad.pt"
printf '\xc9' | dd of="$tmp/bad.pt" bs=1 seek=206 conv=notrunc status=none
check "dump of a corrupted trace" 0 "^\[ce: error decoding packet: unknown opcode\]" "$P" dump "$tmp/bad.pt"
echo "dump_cli: $fail failed"
[ "$fail" -eq 0 ]
