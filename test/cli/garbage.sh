#!/usr/bin/env bash
# Nothing silent (issue #17 "Silent garbage"): the host CLI on input that
# decodes to nothing or to garbage says so.
#   - dump of random, zero-filled, empty and 1-byte files: "no PSB found in
#     N bytes" on stderr, exit 0 (README: decode problems are not fatal),
#     every byte counted as skipped; summary likewise, and bytes before the
#     first PSB counted and said;
#   - flow/summary with no code: a hint naming the code options; a capture
#     without its code snapshot: a warning;
#   - a --raw base read as decimal (as ptxed reads it) where hex was meant:
#     no IP in any section, said with the sections and the trace's first IPs;
#   - overlapping --raw sections: a warning; a page dump whose addresses are
#     all zero: refused as such;
#   - summary --top/--depth/--arena 0 refused, --last/--tree-depth 0 mean
#     none, --depth too deep for the arena refused; the host's arena sized
#     from the trace; K/M/G taken by every number (one parser).
cd "$(dirname "$0")/../.." || exit 1
. test/lib/check.sh
. test/flow/real_traces.env
P=${PTBOOT:-build/ptboot}

# ---- dump and summary of garbage ----
head -c 1048576 /dev/urandom > "$tmp/random.bin"
head -c 65536 /dev/zero > "$tmp/zero.bin"
: > "$tmp/empty.bin"
printf 'x' > "$tmp/one.bin"
for f in random:1048576:bytes zero:65536:bytes empty:0:bytes one:1:byte; do
  IFS=: read -r name n unit <<< "$f"
  $P dump --stats "$tmp/$name.bin" > "$tmp/out" 2> "$tmp/err"; rc=$?
  if [ $rc = 0 ] && [ ! -s "$tmp/out" ] && grep -qx "ptboot dump: no PSB found in $n $unit: nothing decoded (--no-sync decodes from the first byte)" "$tmp/err" &&
     grep -qx "ptboot dump: 0 packets, 0 errors, $n $unit skipped" "$tmp/err"; then
    ok "dump of $name ($n $unit): 'no PSB found', $n bytes skipped, exit 0"
  else not_ok "dump of $name: rc $rc, $(tr '\n' '|' < "$tmp/err")"; fi
done
$P summary --pt "$tmp/random.bin" --stat > "$tmp/out" 2>&1
if grep -qx 'no PSB found in 1048576 bytes: nothing decoded' "$tmp/out" && grep -q '^0 errors, 1048576 bytes skipped' "$tmp/out" &&
   grep -q ' skipped 1048576 ' "$tmp/out"; then
  ok "summary of 1 MiB of random bytes: 'no PSB found', 1048576 bytes skipped"
else not_ok "summary of random bytes"; grep -i 'skipped\|PSB' "$tmp/out" | sed 's/^/    | /'; fi

build/test/flowgen --seeds 1 --insns 3000 --write "$tmp/fg" > /dev/null || exit 1
g=$tmp/fg/seed1
{ printf 'leading garbage!'; cat "$g.pt"; } > "$tmp/prefixed.pt"
raw=(--raw "$g.a.bin:0x400000" --raw "$g.32.bin:0x600000" --raw "$g.out.bin:0x900000")
$P summary --pt "$tmp/prefixed.pt" "${raw[@]}" --stat > "$tmp/out" 2>&1
psb=$(( $(od -An -tx1 -v "$tmp/prefixed.pt" | tr -s ' \n' ' ' | sed 's/^ //' | grep -bo '02 82 02 82 02 82 02 82' | head -1 | cut -d: -f1) / 3 ))
if grep -qx "bytes 0x0-0x$(printf %x $((psb - 1))) before the first PSB: skipped" "$tmp/out" && grep -q " skipped $psb " "$tmp/out"; then
  ok "summary: the $psb bytes before the first PSB counted as skipped and said"
else not_ok "summary of a prefixed trace (first PSB at $psb)"; grep -i 'skipped\|PSB' "$tmp/out" | sed 's/^/    | /'; fi

# ---- no code, or code where the trace does not go ----
$P flow --pt "$g.pt" --quiet --stat > /dev/null 2> "$tmp/err"
grep -q '^ptboot flow: no code given: --pages PREFIX, --raw FILE:BASE, --elf FILE, --pe FILE or --capture DIR' "$tmp/err" \
  && ok "flow --pt with no code: a hint naming the code options" || not_ok "flow with no code: $(head -2 "$tmp/err")"
$P summary --pt "$g.pt" > /dev/null 2> "$tmp/err"
grep -q '^ptboot summary: no code given' "$tmp/err" && ok "summary --pt with no code: the same hint" || not_ok "summary with no code"
build/test/capture/mkcapture "$tmp/cap" --pt "$g.pt" "${raw[@]}" --filter 400000-7fffff || exit 1
rm "$tmp/cap/code.dump" "$tmp/cap/code.addr"
$P flow --capture "$tmp/cap" --quiet --stat > /dev/null 2> "$tmp/err"
grep -q "warning: $tmp/cap has no code snapshot (code.dump, code.addr): instructions cannot be decoded" "$tmp/err" \
  && ok "a capture without code.dump: a warning" || not_ok "capture without code: $(head -3 "$tmp/err")"
# --raw FILE:400000 is decimal (as ptxed): nothing decodes, and it is said
$P flow --pt "$g.pt" --raw "$g.a.bin:400000" --quiet --stat > "$tmp/out" 2> "$tmp/err"
first=$($P dump "$g.pt" | awk '$2 ~ /^(tip|tip.pge|fup)$/ && $NF ~ /^[0-9a-f]+$/ { print $NF; exit }' | sed 's/^0*//')
if grep -q "^ptboot flow: no decoded IP falls in a loaded section: sections 0x61a80-0x[0-9a-f]*; the trace's first IPs 0x$first .*(--raw FILE:BASE reads BASE as ptxed does: 0x hex, else decimal; --filter and --module take hex)" "$tmp/err" &&
   grep -qx 'insn: 0.' "$tmp/out"; then
  ok "--raw FILE:400000 (decimal): 'no decoded IP falls in a loaded section', the section and the first IPs named"
else not_ok "decimal --raw base: $(cat "$tmp/err" | tail -2) (first IP $first)"; fi
$P flow --pt "$g.pt" "${raw[@]}" --quiet --stat > /dev/null 2> "$tmp/err"
[ ! -s "$tmp/err" ] && ok "the same with the right bases: no hint, no warning" || not_ok "right bases: $(head -2 "$tmp/err")"
# a PSB+ whose FUP carries IP 0 (tracing never enabled): nothing decodes,
# and no section is blamed
printf '\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x7d\0\0\0\0\0\0\x02\x23' > "$tmp/fup0.pt"
$P flow --pt "$tmp/fup0.pt" "${raw[@]}" > /dev/null 2> "$tmp/err"
[ ! -s "$tmp/err" ] && ok "a trace whose only IP is 0 (FUP in PSB+): no 'loaded section' hint" || not_ok "FUP 0: $(head -2 "$tmp/err")"
# overlapping --raw sections: the later bytes win (as ptxed) and it is said
$P flow --pt "$g.pt" "${raw[@]}" --raw "$g.32.bin:0x400800" --quiet --stat > /dev/null 2> "$tmp/err"
grep -q "^ptboot flow: warning: --raw $g.32.bin:0x400800: 0x400800-0x[0-9a-f]* overlaps code loaded before (0x400000-0x[0-9a-f]*): the later bytes are used there, as ptxed does" "$tmp/err" \
  && ok "overlapping --raw sections: a warning" || not_ok "overlapping --raw: $(head -2 "$tmp/err")"
# a page dump whose addresses are all zero
head -c 8192 /dev/zero > "$tmp/zp.dump"; head -c 16 /dev/zero > "$tmp/zp.addr"
$P flow --pt "$g.pt" --pages "$tmp/zp" --quiet > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 1 ] && grep -q 'every page address is 0' "$tmp/err" && ok "a page dump of zero addresses: refused as such" \
  || not_ok "zero page addresses: rc $rc, $(head -2 "$tmp/err")"

# ---- summary's limits: 0 means what it says, or is refused ----
for o in --top --depth --arena; do
  $P summary --pt "$g.pt" "${raw[@]}" $o 0 > /dev/null 2> "$tmp/err"; rc=$?
  [ $rc = 2 ] && grep -q "^ptboot summary: $o 0 " "$tmp/err" && ok "summary $o 0: refused ($(cat "$tmp/err"))" \
    || not_ok "summary $o 0: rc $rc, $(cat "$tmp/err")"
done
$P summary --pt "$g.pt" "${raw[@]}" > "$tmp/default.txt"
$P summary --pt "$g.pt" "${raw[@]}" --last 0 --tree-depth 0 > "$tmp/none.txt"
if grep -q '^== last ' "$tmp/default.txt" && grep -q '^== call tree' "$tmp/default.txt" &&
   ! grep -q '^== last ' "$tmp/none.txt" && ! grep -q '^== call tree' "$tmp/none.txt"; then
  ok "summary --last 0 --tree-depth 0: no last transitions, no call tree"
else not_ok "summary --last 0 --tree-depth 0"; grep '^==' "$tmp/none.txt" | sed 's/^/    | /'; fi
$P summary --pt "$g.pt" "${raw[@]}" --depth 100000000 > /dev/null 2> "$tmp/err"; rc=$?
[ $rc = 2 ] && grep -q 'more than a quarter of the .*-byte arena: at most --depth [0-9]*, or a larger --arena' "$tmp/err" \
  && ok "summary --depth 100000000: refused, the largest depth named" || not_ok "--depth 100000000: rc $rc, $(cat "$tmp/err")"
$P summary --pt "$g.pt" "${raw[@]}" --arena 64M --stat > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc = 0 ] && grep -q '^summary: bytes ' "$tmp/out" && ok "summary --arena 64M (K/M/G taken as by plan's words)" \
  || not_ok "--arena 64M: rc $rc, $(cat "$tmp/err")"
$P summary --pt "$g.pt" "${raw[@]}" --module 0x400000:2K:prog --stat > "$tmp/out" 2> "$tmp/err"
grep -q ' prog+0x' "$tmp/out" && ok "summary --module 0x400000:2K:NAME (one parser: 0x and K in a hex field)" \
  || not_ok "--module with 0x and K: $(head -2 "$tmp/err")"
# the host sizes the arena from the trace: mruby's tree fits by default
if [ -d "$REAL_DIR/mruby" ]; then
  $P summary --pt "$REAL_DIR/mruby/trace.pt" --pages "$REAL_DIR/mruby/pages" --filter 400000-4b6000 --stat > "$tmp/out"
  if grep -q ' untracked 0 ' "$tmp/out" && ! grep -q '^not tracked' "$tmp/out"; then
    ok "summary of mruby: every tree node tracked by default (arena from the trace)"
  else not_ok "summary of mruby: $(grep 'not tracked' "$tmp/out")"; fi
  $P summary --pt "$REAL_DIR/mruby/trace.pt" --pages "$REAL_DIR/mruby/pages" --filter 400000-4b6000 --arena 1M --stat > "$tmp/out"
  grep -q '^not tracked (arena 1048576 bytes)' "$tmp/out" && ok "summary of mruby --arena 1M (the target's): said not tracked" \
    || not_ok "mruby --arena 1M"
else
  echo "garbage: $REAL_DIR not present, mruby arena case skipped"
fi

[ $fail -eq 0 ] && echo "garbage: all passed" || echo "garbage: FAILED"
exit $fail
