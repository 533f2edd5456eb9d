#!/usr/bin/env bash
# `ptboot serial` on the damage a lab's serial log really gets (issue #17),
# with a capture (trace, sideband, code) sent by the target's encoder
# (build/test/serial_enc):
#   duplicated lines (a begin, an end, a data line after its end, the whole
#   log twice): one dump, every file whole; a lost begin or end line: the
#   file whole all the same (the other line's size and CRC prove it); lost
#   sideband and code lines: the sideband and code rebuilt from what came,
#   the capture still decoded, its manifest saying what is missing; a log
#   wrapped at 80 columns: everything back, "lines look wrapped at 80
#   columns"; the log from standard input and from a pipe; nothing written
#   without --out (or --next-to-log); files in --out never overwritten
#   without --force; an unwritable --out said; 2000 lost lines under --quiet:
#   a bounded number of files and lines of output.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/check.sh
P=${PTBOOT:-build/ptboot}
has() { grep -Fq -- "$2" "$1"; }

# ---- the capture and its clean log ----
build/test/flowgen --seeds 1 --insns 2000 --write "$tmp/fg" > /dev/null || exit 1
g=$tmp/fg/seed1
build/test/capture/mkcapture "$tmp/cap" --pt "$g.pt" --raw "$g.a.bin:0x400000" --raw "$g.32.bin:0x600000" \
  --raw "$g.out.bin:0x900000" --filter 400000-7fffff || exit 1
want=$($P flow --capture "$tmp/cap" --quiet --stat 2>/dev/null)
[ -n "$want" ] || { echo "damage: no flow of the capture"; exit 1; }
mklog() { # LINE-BYTES -> the capture as one dump with the app's lines around it
  echo 'ptboot: serial-dump begin files=4'
  build/test/serial_enc --line-bytes "$1" "$tmp/cap/trace.pt" "$tmp/cap/sideband.txt" "$tmp/cap/code.dump" \
    "$tmp/cap/code.addr"
  echo 'ptboot: serial-dump end files=4'
}
mklog 96 > "$tmp/clean.log"
mklog 24 > "$tmp/fine.log"   # short lines: many per sideband
same_files() { # DIR: the four files equal the capture's
  local f
  for f in trace.pt sideband.txt code.dump code.addr; do cmp -s "$1/$f" "$tmp/cap/$f" || return 1; done
}
run() { # NAME LOG [options]: recovers into $tmp/NAME, report in $tmp/NAME.txt
  local name=$1 log=$2
  shift 2
  rm -rf "${tmp:?}/$name"
  $P serial "$log" --out "$tmp/$name" "$@" > "$tmp/$name.txt" 2> "$tmp/$name.err"
  rc=$?
}
# the flow block after "serial: capture in ...", up to the next serial: line
flow_line() { awk '/^serial: capture in / { on = 1; next } /^serial: / { on = 0 } on' "$tmp/$1.txt"; }

# ---- duplicates ----
awk '{ print } /^@PTF1 B 1 / || /^@PTF1 E 2 / { print }' "$tmp/clean.log" > "$tmp/dup.log"
# a data line of trace.pt again after its end line
line=$(grep -m1 '^@PTF1 D 1 3 ' "$tmp/clean.log")
awk -v l="$line" '{ print } /^@PTF1 E 1 / { print l }' "$tmp/dup.log" > "$tmp/dup2.log"
run dup "$tmp/dup2.log"
if [ $rc = 0 ] && same_files "$tmp/dup" && [ ! -d "$tmp/dup/dump2" ] && has "$tmp/dup.txt" "serial: 3 duplicate frame line(s) dropped"; then
  ok "duplicated begin, end and data lines: one dump, every file whole, 3 duplicates said"
else not_ok "duplicates: rc $rc, $(ls "$tmp/dup" | tr '\n' ' ')"; sed 's/^/    | /' "$tmp/dup.txt" | head; fi
[ "$(flow_line dup)" = "$want" ] && ok "duplicates: the capture decoded ($want)" || not_ok "duplicates: flow '$(flow_line dup)'"
{ grep -v '^ptboot: serial-dump' "$tmp/clean.log"; grep -v '^ptboot: serial-dump' "$tmp/clean.log"; } > "$tmp/twice.log"
run twice "$tmp/twice.log"
if [ $rc = 0 ] && same_files "$tmp/twice" && [ ! -d "$tmp/twice/dump2" ]; then
  ok "a log captured twice over: one dump, every file whole"
else not_ok "log twice: $(ls -R "$tmp/twice" | tr '\n' ' ')"; fi

# ---- a lost begin line, a lost end line ----
grep -v '^@PTF1 B 1 ' "$tmp/clean.log" > "$tmp/nobegin.log"
run nobegin "$tmp/nobegin.log"
if [ $rc = 0 ] && same_files "$tmp/nobegin" && ! ls "$tmp/nobegin" | grep -q 'seg-' &&
   has "$tmp/nobegin.txt" "serial: trace.pt: begin line missing"; then
  ok "lost begin line: trace.pt whole all the same (the end line's size and CRC), said"
else not_ok "lost begin line: $(ls "$tmp/nobegin" | tr '\n' ' ')"; sed 's/^/    | /' "$tmp/nobegin.txt" | head; fi
[ "$(flow_line nobegin)" = "$want" ] && ok "lost begin line: the capture decoded" || not_ok "lost begin line: flow '$(flow_line nobegin)'"
grep -v '^@PTF1 E 2 ' "$tmp/clean.log" > "$tmp/noend.log"
run noend "$tmp/noend.log"
if [ $rc = 0 ] && same_files "$tmp/noend" && [ ! -e "$tmp/noend/sideband.txt.partial" ] &&
   has "$tmp/noend.txt" "serial: sideband.txt: end line missing"; then
  ok "lost end line: sideband.txt whole all the same (the begin line's size and CRC), said"
else not_ok "lost end line: $(ls "$tmp/noend" | tr '\n' ' ')"; fi
[ "$(flow_line noend)" = "$want" ] && ok "lost end line: the capture decoded" || not_ok "lost end line: flow '$(flow_line noend)'"

# ---- lost sideband lines (and code lines): rebuilt, decoded, said ----
nsb=$(grep -c '^@PTF1 D 2 ' "$tmp/fine.log")
awk -v n="$nsb" '$1 == "@PTF1" && $2 == "D" && $3 == 2 && ($4 == 3 || $4 == int(n / 2) || $4 == int(n / 2) + 1 || $4 == n - 3) { next }
     { print }' "$tmp/fine.log" > "$tmp/sbholes.log"
run sbholes "$tmp/sbholes.log"
if [ $rc = 0 ] && cmp -s "$tmp/sbholes/trace.pt" "$tmp/cap/trace.pt" && cmp -s "$tmp/sbholes/code.dump" "$tmp/cap/code.dump" &&
   grep -q '^serial: sideband.txt: rebuilt from the text lines that came whole -> .*: [0-9]* line(s) kept, [1-9][0-9]* cut by the loss' "$tmp/sbholes.txt" &&
   [ -e "$tmp/sbholes/sideband.txt" ] && [ -e "$tmp/sbholes/sideband.txt.partial" ]; then
  ok "4 lost sideband lines: trace and code whole, sideband.txt rebuilt from the whole text lines, said"
else not_ok "lost sideband lines: $(ls "$tmp/sbholes" | tr '\n' ' ')"; sed 's/^/    | /' "$tmp/sbholes.txt" | head -20; fi
if grep -q '^serial: capture in .* (rebuilt parts): ' "$tmp/sbholes.txt" && flow_line sbholes | grep -q '^insn: [1-9]'; then
  ok "lost sideband lines: the capture still decoded ($(flow_line sbholes | tail -1))"
else not_ok "lost sideband lines: not decoded"; sed 's/^/    | /' "$tmp/sbholes.txt" | tail -5; fi
if grep -qx 'complete 0' "$tmp/sbholes/manifest.txt" &&
   grep -q '^missing sideband.txt bytes=[0-9]* why=serial log: [0-9]* of [0-9]* lines, .*; rebuilt: [0-9]* whole text lines' "$tmp/sbholes/manifest.txt" &&
   grep -q '^file trace.pt ' "$tmp/sbholes/manifest.txt"; then
  ok "lost sideband lines: manifest.txt: sideband.txt missing (what came, rebuilt), trace.pt whole, complete 0"
else not_ok "lost sideband lines: manifest: $(tr '\n' '|' < "$tmp/sbholes/manifest.txt")"; fi
$P summary --capture "$tmp/sbholes" > /dev/null 2> "$tmp/sbholes.sum"
has "$tmp/sbholes.sum" "is incomplete: sideband.txt" && ok "lost sideband lines: summary --capture says the capture is incomplete" \
  || not_ok "lost sideband lines: summary stderr: $(head -2 "$tmp/sbholes.sum")"
# two code.dump lines lost: the other pages kept
awk '$1 == "@PTF1" && $2 == "D" && $3 == 3 && ($4 == 600 || $4 == 601) { next } { print }' "$tmp/fine.log" > "$tmp/codeholes.log"
run codeholes "$tmp/codeholes.log"
pages=$(( $(stat -c %s "$tmp/cap/code.addr") / 8 ))
if grep -q "^serial: code.dump, code.addr: rebuilt with the $((pages - 1)) of $pages page(s) whose bytes and address came whole" "$tmp/codeholes.txt" &&
   [ "$(stat -c %s "$tmp/codeholes/code.dump")" = $(( (pages - 1) * 4096 )) ] &&
   flow_line codeholes | grep -q '^insn: [1-9]'; then
  ok "2 lost code.dump lines (one page): code rebuilt with the other $((pages - 1)) pages, the capture decoded"
else not_ok "code holes"; sed 's/^/    | /' "$tmp/codeholes.txt" | grep -v '^    | serial: decode' | head -12; fi

# ---- wrapped at 80 columns ----
fold -w 80 "$tmp/clean.log" | sed 's/$/\r/' > "$tmp/wrap.log"
run wrap "$tmp/wrap.log"
if [ $rc = 0 ] && same_files "$tmp/wrap" && grep -q '^serial: lines look wrapped at 80 columns: [0-9]* frame line(s) joined' "$tmp/wrap.txt"; then
  ok "a log wrapped at 80 columns (CR LF): every file whole, 'lines look wrapped at 80 columns'"
else not_ok "wrapped log: rc $rc"; sed 's/^/    | /' "$tmp/wrap.txt" | head -5; cat "$tmp/wrap.err"; fi
[ "$(flow_line wrap)" = "$want" ] && ok "wrapped log: the capture decoded" || not_ok "wrapped log: flow '$(flow_line wrap)'"
# a piece damaged: that line reported, the wrap still said (also under --quiet)
awk 'NR == 40 { $0 = substr($0, 1, 30) "#" substr($0, 32) } { print }' "$tmp/wrap.log" > "$tmp/wrapdmg.log"
run wrapdmg "$tmp/wrapdmg.log" --quiet
if grep -q '^serial: lines look wrapped at 80 columns' "$tmp/wrapdmg.txt" && grep -q 'crc mismatch\|malformed\|missing' "$tmp/wrapdmg.txt"; then
  ok "wrapped log with a damaged piece: the wrap said under --quiet, the line reported"
else not_ok "wrapped+damaged"; sed 's/^/    | /' "$tmp/wrapdmg.txt" | head -5; fi

# ---- standard input and pipes ----
rm -rf "$tmp/stdin"
$P serial - --out "$tmp/stdin" < "$tmp/clean.log" > /dev/null 2>&1 && same_files "$tmp/stdin" \
  && ok "log from standard input (-)" || not_ok "log from standard input"
rm -rf "$tmp/pipe"
cat "$tmp/clean.log" | $P serial - --out "$tmp/pipe" > /dev/null 2>&1 && same_files "$tmp/pipe" \
  && ok "log from a pipe on standard input" || not_ok "log from a pipe"
rm -rf "$tmp/fifo"
$P serial <(cat "$tmp/clean.log") --out "$tmp/fifo" > /dev/null 2>&1 && same_files "$tmp/fifo" \
  && ok "log from a pipe given as a path (<(...))" || not_ok "log from a pipe path"

# ---- where files go, and never over others ----
mkdir -p "$tmp/beside" && cp "$tmp/clean.log" "$tmp/beside/console.log"
$P serial "$tmp/beside/console.log" > "$tmp/beside.txt" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(ls "$tmp/beside")" = console.log ] && has "$tmp/beside.txt" "reports only, nothing written"; then
  ok "no --out: reports only, nothing written next to the log"
else not_ok "no --out: rc $rc, $(ls "$tmp/beside" | tr '\n' ' ')"; fi
$P serial "$tmp/beside/console.log" --next-to-log > /dev/null 2>&1 && same_files "$tmp/beside" \
  && ok "--next-to-log: written next to the log" || not_ok "--next-to-log"
echo changed > "$tmp/dup/trace.pt"
$P serial "$tmp/clean.log" --out "$tmp/dup" > /dev/null 2> "$tmp/keep.err"; rc=$?
if [ $rc = 1 ] && [ "$(cat "$tmp/dup/trace.pt")" = changed ] && has "$tmp/keep.err" "trace.pt exists: not overwritten (--force overwrites)"; then
  ok "files in --out not overwritten without --force (exit 1, said)"
else not_ok "overwrite without --force: rc $rc, $(head -c 20 "$tmp/dup/trace.pt")"; cat "$tmp/keep.err"; fi
$P serial "$tmp/clean.log" --out "$tmp/dup" --force > /dev/null 2>&1 && same_files "$tmp/dup" \
  && ok "--force overwrites" || not_ok "--force"
if [ "$(id -u)" = 0 ]; then ro=/sys; else ro=$tmp/ro; mkdir -p "$ro"; chmod 555 "$ro"; fi
$P serial "$tmp/clean.log" --out "$ro" > /dev/null 2> "$tmp/ro.err"; rc=$?
[ $rc = 1 ] && grep -q "$ro: not writable" "$tmp/ro.err" && ok "an unwritable --out is said ($(cat "$tmp/ro.err"))" \
  || not_ok "unwritable --out: rc $rc, $(cat "$tmp/ro.err")"

# ---- 2000 lost lines under --quiet ----
build/bench/gen_trace --size 500000 --seed 9 "$tmp/big.pt" > /dev/null || exit 1
build/test/serial_enc --line-bytes 96 "$tmp/big.pt" > "$tmp/big.log"
awk '$1 == "@PTF1" && $2 == "D" && $4 % 2 == 1 && $4 < 4000 { next } { print }' "$tmp/big.log" > "$tmp/biglost.log"
lost=$(( $(grep -c '^@PTF1 D' "$tmp/big.log") - $(grep -c '^@PTF1 D' "$tmp/biglost.log") ))
run biglost "$tmp/biglost.log" --quiet
nfiles=$(ls "$tmp/biglost" | wc -l) nout=$(wc -l < "$tmp/biglost.txt")
if [ "$lost" -ge 2000 ] && [ "$nfiles" -le 65 ] && [ "$nout" -le 25 ] &&
   grep -q '^serial: big.pt: [0-9]* more report line(s) not shown' "$tmp/biglost.txt"; then
  ok "$lost lost lines under --quiet: $nfiles files, $nout lines of output, the rest counted"
else not_ok "$lost lost lines: $nfiles files, $nout lines"; head -30 "$tmp/biglost.txt" | sed 's/^/    | /'; fi
run bigcap "$tmp/biglost.log" --quiet --max-segments 5
nfiles=$(ls "$tmp/bigcap" | wc -l)
if [ "$nfiles" = 5 ] && grep -q '^serial: big.pt: [0-9]* more segment(s) ([0-9]* bytes) not written: at most 5 per file' "$tmp/bigcap.txt"; then
  ok "--max-segments 5: 5 segment files, the rest said ($(grep 'more segment' "$tmp/bigcap.txt"))"
else not_ok "--max-segments 5: $nfiles files"; fi

# plurals: a one-byte file is "1 byte in 1 line"
printf 'x' > "$tmp/one.bin"
build/test/serial_enc "$tmp/one.bin" > "$tmp/one.log"
run one "$tmp/one.log"
grep -q '^serial: one.bin: complete, 1 byte in 1 line, crc32 ' "$tmp/one.txt" && ok "a one-byte file: '1 byte in 1 line'" \
  || not_ok "one-byte file: $(grep complete "$tmp/one.txt")"

[ $fail -eq 0 ] && echo "damage: all passed" || echo "damage: FAILED"
exit $fail
