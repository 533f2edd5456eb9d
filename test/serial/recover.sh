#!/usr/bin/env bash
# `ptboot serial` on logs made by the target's encoder (build/test/serial_enc,
# the code the app runs): clean logs with other output interleaved come back
# byte for byte; damaged logs (lines dropped, corrupted, split by firmware
# output, head and tail cut) give exactly the damaged lines, computed here
# from the undamaged log, and PSB-aligned segments that decode as the same
# range of the original does.
cd "$(dirname "$0")/../.." || exit 1
. test/lib/check.sh
. test/flow/real_traces.env
P=${PTBOOT:-build/ptboot}

# expect_report FILE LINE: the report has exactly that line.
expect_report() {
  if grep -Fxq -- "$2" "$1"; then ok "report: $2"; else
    not_ok "report lacks: $2"; sed 's/^/    | /' "$1" | head -20; fi
}

# Facts of a clean log's data lines: "seq logline offset len flag" per line
# of file id 1.
facts() {
  awk 'function hexval(h,   i, v) { v = 0; for (i = 1; i <= length(h); i++) v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1; return v }
       { sub(/\r$/, "") }
       $1 == "@PTF1" && $2 == "D" && $3 == 1 {
         b = $7; n = length(b) / 4 * 3; if (b ~ /==$/) n -= 2; else if (b ~ /=$/) n -= 1;
         printf "%d %d %d %d %s\n", $4, NR, hexval($5), n, $6 }' "$1"
}
off_of() { awk -v s="$2" '$1 == s { print $3 }' "$1"; }
end_of() { awk -v s="$2" '$1 == s { print $3 + $4 }' "$1"; }
logline_of() { awk -v s="$2" '$1 == s { print $2 }' "$1"; }
# first PSB-flagged line at or after seq: its offset
psb_from() { awk -v s="$2" '$1 >= s && $5 == "P" { print $3; exit }' "$1"; }
hex() { printf '0x%x' "$1"; }

# ---- 1. clean round trips, with noise between and around the lines -----------
files=()
if [ -d "$REAL_DIR" ]; then
  for t in $REAL_TRACES; do
    name=${t%%:*}
    cp "$REAL_DIR/$name/trace.pt" "$tmp/$name.pt"
    files+=("$tmp/$name.pt")
  done
else
  echo "recover: $REAL_DIR not present, real traces skipped"
  skipped=1
fi
build/bench/gen_trace --size 300000 --seed 5 "$tmp/gen.pt" >/dev/null || exit 1
build/bench/gen_trace --size 3000 --seed 6 --uniform --all-kinds "$tmp/small.pt" >/dev/null || exit 1
head -c 20000 /dev/urandom > "$tmp/side.bin"
: > "$tmp/empty.bin"
files+=("$tmp/gen.pt" "$tmp/small.pt" "$tmp/side.bin" "$tmp/empty.bin")
build/test/serial_enc "${files[@]}" > "$tmp/clean.log" || exit 1
# the noise a serial console adds: firmware messages between lines, CR LF,
# escape sequences and text before a frame line, lone CRs, blank lines
awk 'BEGIN { srand(1) }
     { r = rand()
       if (NR % 7 == 0) printf "BdsDxe: loading Boot0001 \"UEFI QEMU HARDDISK\"\r\n"
       if (NR % 11 == 0) printf "\r\r\n"
       if (r < 0.1) printf "\033[=3h\033[0mptboot: %s\r\n", $0
       else printf "%s\r\n", $0 }' "$tmp/clean.log" > "$tmp/noisy.log"
mkdir -p "$tmp/out1"
$P serial --out "$tmp/out1" "$tmp/noisy.log" > "$tmp/r1.txt"; rc=$?
[ $rc -eq 0 ] && ok "noisy log: exit 0" || not_ok "noisy log: exit $rc"
for f in "${files[@]}"; do
  b=$(basename "$f")
  if cmp -s "$f" "$tmp/out1/$b"; then ok "noisy log: $b byte-identical ($(stat -c %s "$f") bytes)"
  else not_ok "noisy log: $b not recovered identically"; fi
  case $b in *.pt)
    [ -s "$f" ] && expect_report "$tmp/r1.txt" "$(printf 'serial: decode %s: packets=%s errors=%s skipped=%s psbs=%s' \
      "$tmp/out1/$b" $($P dump --stats "$f" 2>&1 >/dev/null | awk '{for(i=1;i<=NF;i++) if ($i ~ /^[0-9]+$/) printf "%s ", $i}') \
      "$(build/test/serial_enc "$f" | awk '$6 == "P"' | wc -l)")" ;;
  esac
done
if grep -q 'missing\|mismatch\|damaged\|incomplete' "$tmp/r1.txt"; then not_ok "noisy log: damage reported"; sed 's/^/    | /' "$tmp/r1.txt"; fi

# ---- 2. dropped and corrupted lines in a trace --------------------------------
build/test/serial_enc "$tmp/gen.pt" > "$tmp/one.log"
facts "$tmp/one.log" > "$tmp/facts"
nlines=$(wc -l < "$tmp/facts")
L() { logline_of "$tmp/facts" "$1"; }
# drop seq 5-6 and 200; corrupt a payload character of seq 20 and split seq
# 300 with a firmware message; drop seq 900's line and corrupt 901
awk -v d1="$(L 5)" -v d2="$(L 6)" -v d3="$(L 200)" -v c1="$(L 20)" -v c2="$(L 300)" \
    -v d4="$(L 900)" -v c3="$(L 901)" '
  NR == d1 || NR == d2 || NR == d3 || NR == d4 { next }
  NR == c1 || NR == c3 { $0 = substr($0, 1, 40) (substr($0, 41, 1) == "A" ? "B" : "A") substr($0, 42) }
  NR == c2 { $0 = substr($0, 1, 60) "\r\nFSOpen: Open '\''\\EFI'\'' Success\r\n" substr($0, 61) }
  { print }' "$tmp/one.log" > "$tmp/dmg.log"
mkdir -p "$tmp/out2"
$P serial --out "$tmp/out2" "$tmp/dmg.log" > "$tmp/r2.txt"; rc=$?
[ $rc -eq 0 ] && ok "damaged log: exit 0 (something recovered)" || not_ok "damaged log: exit $rc"
F=$tmp/facts
expect_report "$tmp/r2.txt" "serial: gen.pt: lines 5-6 (offset $(hex "$(off_of $F 5)")-$(hex $(( $(off_of $F 7) - 1 )))) missing"
expect_report "$tmp/r2.txt" "serial: gen.pt: line 20 (offset $(hex "$(off_of $F 20)")) crc mismatch (log line $(( $(L 20) - 2 )))"
expect_report "$tmp/r2.txt" "serial: gen.pt: line 200 (offset $(hex "$(off_of $F 200)")-$(hex $(( $(off_of $F 201) - 1 )))) missing"
# the split line: joined again (its CRC proves it), said with its log lines
# (3 lines dropped before it), never reported as damaged
expect_report "$tmp/r2.txt" "serial: log line $(( $(L 300) - 3 )): a frame line cut by other text (log lines $(( $(L 300) - 3 ))-$(( $(L 300) - 1 ))) joined again (its CRC is right)"
# line 900's end: from the offset field of the damaged line 901 after it
expect_report "$tmp/r2.txt" "serial: gen.pt: line 900 (offset $(hex "$(off_of $F 900)")-$(hex $(( $(off_of $F 901) - 1 )))) missing"
expect_report "$tmp/r2.txt" "serial: gen.pt: line 901 (offset $(hex "$(off_of $F 901)")) crc mismatch (log line $(( $(L 901) - 4 + 2 )))"
expect_report "$tmp/r2.txt" "serial: gen.pt: incomplete: $(( nlines - 6 )) of $nlines lines (2 damaged), $(( $(stat -c %s "$tmp/gen.pt") - ( $(end_of $F 6) - $(off_of $F 5) ) - ( $(end_of $F 20) - $(off_of $F 20) ) - ( $(end_of $F 200) - $(off_of $F 200) ) - ( $(end_of $F 901) - $(off_of $F 900) ) )) of $(stat -c %s "$tmp/gen.pt") bytes"
n=$(grep -c 'missing\|mismatch\|malformed' "$tmp/r2.txt")
[ "$n" -eq 5 ] && ok "damaged log: 5 damage lines, no more" || not_ok "damaged log: $n damage lines, expected 5"

# the segments: [0, off 5), then from the first PSB after each gap to the next
size=$(stat -c %s "$tmp/gen.pt")
want="0-$(printf %x "$(off_of $F 5)")"
for gap in "7 20" "21 200" "201 900" "902 $nlines"; do
  set -- $gap
  from=$(psb_from $F "$1")
  to=$([ "$2" = "$nlines" ] && echo "$size" || off_of $F "$2")
  [ -n "$from" ] && [ "$from" -lt "$to" ] && want="$want $(printf '%x-%x' "$from" "$to")"
done
got=$(cd "$tmp/out2" && ls gen.pt.seg-* | sed 's/gen.pt.seg-//' | sort -t- -k1,1 | tr '\n' ' ' | sed 's/ $//')
want=$(echo $want | tr ' ' '\n' | sort -t- -k1,1 | tr '\n' ' ' | sed 's/ $//')
[ "$got" = "$want" ] && ok "damaged log: segments $got" || not_ok "damaged log: segments '$got', expected '$want'"
for s in "$tmp"/out2/gen.pt.seg-*; do
  r=${s##*.seg-}; from=${r%-*}; to=${r#*-}
  if [ "$from" != 0 ] && ! cmp -s <(head -c 16 "$s" | od -An -tx1) <(printf '02 82 02 82 02 82 02 82 02 82 02 82 02 82 02 82\n' | sed 's/^/ /'); then
    not_ok "segment $r does not start with a PSB"
  fi
  if cmp -s <($P dump "$s") <($P dump "$tmp/gen.pt:0x$from-0x$to"); then
    ok "segment $r: ptboot dump identical to the original's 0x$from-0x$to ($($P dump "$s" | wc -l) lines)"
  else
    not_ok "segment $r: ptboot dump differs from the original's 0x$from-0x$to"
  fi
done

# ---- 3. head lost (begin line and the first 40 data lines) ---------------------
awk -v cut="$(L 40)" 'NR >= cut' "$tmp/one.log" > "$tmp/head.log"
mkdir -p "$tmp/out3"
$P serial --out "$tmp/out3" "$tmp/head.log" > "$tmp/r3.txt"
expect_report "$tmp/r3.txt" "serial: gen.pt: begin line missing"
expect_report "$tmp/r3.txt" "serial: gen.pt: lines 0-39 (offset 0x0-$(hex $(( $(off_of $F 40) - 1 )))) missing"
from=$(psb_from $F 40)
seg=$tmp/out3/gen.pt.seg-$(printf '%x-%x' "$from" "$size")
if [ -f "$seg" ] && cmp -s <($P dump "$seg") <($P dump "$tmp/gen.pt:$(hex $from)"); then
  ok "head lost: the tail from the PSB at $(hex $from) decodes as the original's"
else not_ok "head lost: no segment $seg identical to the original from $(hex $from)"; ls "$tmp/out3"; fi

# ---- 4. tail lost (end line and everything after data line 1000) --------------
awk -v cut="$(L 1000)" 'NR <= cut' "$tmp/one.log" > "$tmp/tail.log"
mkdir -p "$tmp/out4"
$P serial --out "$tmp/out4" "$tmp/tail.log" > "$tmp/r4.txt"
expect_report "$tmp/r4.txt" "serial: gen.pt: end line missing"
expect_report "$tmp/r4.txt" "serial: gen.pt: lines 1001 and on (offset $(hex "$(end_of $F 1000)")-$(hex $(( size - 1 )))) missing (their count went with the end line)"
seg=$tmp/out4/gen.pt.seg-0-$(printf %x "$(end_of $F 1000)")
if [ -f "$seg" ] && cmp -s "$seg" <(head -c "$(end_of $F 1000)" "$tmp/gen.pt"); then
  ok "tail lost: the head up to $(hex "$(end_of $F 1000)") recovered byte for byte"
else not_ok "tail lost: no head segment $seg"; ls "$tmp/out4"; fi

# ---- 5. a damaged raw file: lost bytes as zeros --------------------------------
build/test/serial_enc "$tmp/side.bin" > "$tmp/side.log"
facts "$tmp/side.log" > "$tmp/sfacts"
awk -v d="$(logline_of "$tmp/sfacts" 3)" 'NR != d' "$tmp/side.log" > "$tmp/side-dmg.log"
mkdir -p "$tmp/out5"
$P serial --out "$tmp/out5" "$tmp/side-dmg.log" > "$tmp/r5.txt"
o=$(off_of "$tmp/sfacts" 3) e=$(end_of "$tmp/sfacts" 3)
expect_report "$tmp/r5.txt" "serial: side.bin: line 3 (offset $(hex $o)-$(hex $((e - 1)))) missing"
cp "$tmp/side.bin" "$tmp/side-zeroed.bin"
dd if=/dev/zero of="$tmp/side-zeroed.bin" bs=1 seek="$o" count=$((e - o)) conv=notrunc status=none
cmp -s "$tmp/out5/side.bin.partial" "$tmp/side-zeroed.bin" && ok "raw file: .partial has the lost line as zeros" \
  || not_ok "raw file: .partial differs"

# ---- 6. a damaged sequence number; two dumps of the same file in one log ---
# "@PTF1 D 1 50 " -> "@PTF1 D 1 59 ": reads as line 59, which is there
awk -v c="$(L 50)" 'NR == c { sub(/^@PTF1 D 1 50 /, "@PTF1 D 1 59 ") } { print }' "$tmp/one.log" > "$tmp/seq.log"
mkdir -p "$tmp/out6"
$P serial --out "$tmp/out6" "$tmp/seq.log" > "$tmp/r6.txt"
expect_report "$tmp/r6.txt" "serial: gen.pt: line 50 (offset $(hex "$(off_of $F 50)")) crc mismatch (log line $(L 50))"
n=$(grep -c 'missing\|mismatch\|malformed\|damaged frame' "$tmp/r6.txt")
[ "$n" -eq 1 ] && ok "damaged seq field: one damage line" || not_ok "damaged seq field: $n damage lines"
cat "$tmp/one.log" "$tmp/noisy.log" > "$tmp/twice.log"
mkdir -p "$tmp/out7"
$P serial --out "$tmp/out7" "$tmp/twice.log" > "$tmp/r7.txt"
# the second dump (ids from 1 again) goes into out7/dump2
cmp -s "$tmp/out7/gen.pt" "$tmp/gen.pt" && cmp -s "$tmp/out7/dump2/gen.pt" "$tmp/gen.pt" && cmp -s "$tmp/out7/dump2/side.bin" "$tmp/side.bin" \
  && [ ! -e "$tmp/out7/side.bin" ] && [ ! -e "$tmp/out7/gen.pt.2" ] \
  && grep -Fxq "serial: dump 2 of 2: ${#files[@]} file(s) in $tmp/out7/dump2" "$tmp/r7.txt" \
  && grep -Fxq "serial: dump 1 of 2: 1 file(s) in $tmp/out7" "$tmp/r7.txt" \
  && ok "two dumps in one log: gen.pt and dump2/gen.pt both byte-identical, dump2/side.bin" || not_ok "two dumps in one log"

# ---- 7. a whole capture (trace, sideband, code snapshot) comes with its flow --
if [ -x build/test/flowgen ] && [ -x build/test/capture/mkcapture ]; then
  build/test/flowgen --seeds 1 --insns 3000 --write "$tmp/fg" > /dev/null || exit 1
  g=$tmp/fg/seed1
  build/test/capture/mkcapture "$tmp/cap" --pt "$g.pt" --raw "$g.a.bin:0x400000" --raw "$g.32.bin:0x600000" \
    --raw "$g.out.bin:0x900000" --filter 400000-7fffff || exit 1
  c=$tmp/cap
  build/test/serial_enc "$c/trace.pt" "$c/sideband.txt" "$c/code.dump" "$c/code.addr" > "$tmp/cap.log"
  mkdir -p "$tmp/out8"
  $P serial --out "$tmp/out8" "$tmp/cap.log" > "$tmp/r8.txt"
  want=$($P flow --capture "$c" --quiet --stat)
  if grep -Fxq "serial: capture in $tmp/out8: ptboot flow --capture $tmp/out8 --quiet --stat" "$tmp/r8.txt" &&
     grep -A1 '^serial: capture in' "$tmp/r8.txt" | tail -1 | grep -Fxq "$want" && [ -n "$want" ]; then
    ok "capture: recovered and decoded with its sideband and code ($want)"
  else not_ok "capture: no flow of the recovered capture ('$want' expected)"; sed 's/^/    | /' "$tmp/r8.txt"; fi
  # the trace damaged: each segment's flow with the capture's code; together
  # fewer instructions than the whole trace's, each segment some
  awk '$2 == "D" && $3 == 1 && $4 == 3 { next } { print }' "$tmp/cap.log" > "$tmp/cap-dmg.log"
  mkdir -p "$tmp/out9"
  $P serial --out "$tmp/out9" "$tmp/cap-dmg.log" > "$tmp/r9.txt"
  segs=$(ls "$tmp/out9" | grep -c '^trace.pt.seg-')
  flows=$(grep -c "^serial: capture flow of $tmp/out9/trace.pt.seg-" "$tmp/r9.txt")
  total=$(sed -n 's/^insn: \([0-9]*\)\.$/\1/p' <<< "$want")
  counts=$(sed -n 's/^insn: \([1-9][0-9]*\)\.$/\1/p' "$tmp/r9.txt" | tr '\n' ' ')
  sum=$(awk '{ for (i = 1; i <= NF; i++) s += $i } END { print s + 0 }' <<< "$counts")
  if [ "$segs" -ge 2 ] && [ "$flows" -eq "$segs" ] && [ "$(wc -w <<< "$counts")" -eq "$segs" ] && [ "$sum" -lt "$total" ]; then
    ok "capture with a damaged trace: flow of each of its $segs segments (insns $counts< $total)"
  else not_ok "capture with a damaged trace: $segs segments, $flows flows, insns '$counts' (whole: $total)"
    sed 's/^/    | /' "$tmp/r9.txt"; fi
  # the code snapshot damaged: rebuilt from the whole pages, decoded, said
  awk '$2 == "D" && $3 == 3 && $4 == 7 { next } { print }' "$tmp/cap.log" > "$tmp/cap-dmg2.log"
  mkdir -p "$tmp/out10"
  $P serial --out "$tmp/out10" "$tmp/cap-dmg2.log" > "$tmp/r10.txt"
  grep -q '^serial: code.dump, code.addr: rebuilt with the [0-9]* of [0-9]* page(s) whose bytes and address came whole' "$tmp/r10.txt" &&
    grep -q "^serial: capture in $tmp/out10 (rebuilt parts): " "$tmp/r10.txt" && grep -q '^insn:' "$tmp/r10.txt" \
    && ok "capture with a damaged code snapshot: code rebuilt from the whole pages, decoded, said so" \
    || { not_ok "capture with a damaged code snapshot"; sed 's/^/    | /' "$tmp/r10.txt" | tail; }
  # two different captures in one log (a trace run twice), the app's
  # "serial-dump begin" line before each: the first in out11, the second in
  # out11/dump2, each byte-identical and each decoded as its own capture
  build/test/flowgen --seeds 2 --insns 2000 --write "$tmp/fg2" > /dev/null || exit 1
  g=$tmp/fg2/seed2
  build/test/capture/mkcapture "$tmp/cap2" --pt "$g.pt" --raw "$g.a.bin:0x400000" --raw "$g.32.bin:0x600000" \
    --raw "$g.out.bin:0x900000" --filter 400000-7fffff || exit 1
  { echo 'ptboot: serial-dump begin files=4'; cat "$tmp/cap.log"; echo 'ptboot: serial-dump end files=4'
    echo 'ptboot: serial-dump begin files=4'
    build/test/serial_enc "$tmp/cap2/trace.pt" "$tmp/cap2/sideband.txt" "$tmp/cap2/code.dump" "$tmp/cap2/code.addr"
    echo 'ptboot: serial-dump end files=4'; } > "$tmp/caps.log"
  mkdir -p "$tmp/out11"
  $P serial --out "$tmp/out11" "$tmp/caps.log" > "$tmp/r11.txt"
  want2=$($P flow --capture "$tmp/cap2" --quiet --stat)
  same=1
  for f in trace.pt sideband.txt code.dump code.addr; do
    cmp -s "$tmp/out11/$f" "$c/$f" && cmp -s "$tmp/out11/dump2/$f" "$tmp/cap2/$f" || same=0
  done
  [ $same -eq 1 ] && ! cmp -s "$c/trace.pt" "$tmp/cap2/trace.pt" \
    && ok "two captures in one log: out11 and out11/dump2 byte-identical to each" || not_ok "two captures in one log: files differ"
  grep -Fxq "serial: dump 2 of 2: 4 file(s) in $tmp/out11/dump2" "$tmp/r11.txt" \
    && ok "two captures in one log: the second dump's directory reported" || not_ok "two captures: no dump directory line"
  if grep -A1 -Fx "serial: capture in $tmp/out11: ptboot flow --capture $tmp/out11 --quiet --stat" "$tmp/r11.txt" | tail -1 | grep -Fxq "$want" &&
     grep -A1 -Fx "serial: capture in $tmp/out11/dump2: ptboot flow --capture $tmp/out11/dump2 --quiet --stat" "$tmp/r11.txt" | tail -1 | grep -Fxq "$want2" &&
     [ -n "$want2" ] && [ "$want" != "$want2" ]; then
    ok "two captures in one log: both decoded ($want / $want2)"
  else not_ok "two captures in one log: flows ('$want' and '$want2' expected)"; sed 's/^/    | /' "$tmp/r11.txt"; fi
  $P flow --capture "$tmp/out11/dump2" --quiet --stat > "$tmp/f11.txt" 2>&1
  [ "$(cat "$tmp/f11.txt")" = "$want2" ] && ok "two captures: ptboot flow --capture DIR/dump2 reads the second" \
    || not_ok "two captures: flow --capture DIR/dump2"
  # the same log without the begin lines: a begin line for id 1 again starts dump 2
  grep -v '^ptboot: serial-dump' "$tmp/caps.log" > "$tmp/caps-bare.log"
  mkdir -p "$tmp/out12"
  $P serial --out "$tmp/out12" "$tmp/caps-bare.log" > /dev/null
  same=1
  for f in trace.pt sideband.txt code.dump code.addr; do
    cmp -s "$tmp/out12/$f" "$c/$f" && cmp -s "$tmp/out12/dump2/$f" "$tmp/cap2/$f" || same=0
  done
  [ $same -eq 1 ] && ok "two captures without the app's begin lines: split at the repeated id" || not_ok "two captures without begin lines"
else
  echo "recover: build/test/flowgen or mkcapture not built, capture case skipped"
  skipped=1
fi

# ---- 8. nothing to recover, bad usage ------------------------------------------
printf 'BdsDxe: no dump here\r\n' > "$tmp/none.log"
$P serial --out "$tmp" "$tmp/none.log" > /dev/null 2> "$tmp/e6.txt"; rc=$?
[ $rc -eq 1 ] && grep -q 'no serial dump found' "$tmp/e6.txt" && ok "no dump: exit 1 with a message" || not_ok "no dump: exit $rc"
$P serial --bogus "$tmp/none.log" > /dev/null 2> "$tmp/e7.txt"; rc=$?
[ $rc -eq 2 ] && grep -q 'unknown option: --bogus' "$tmp/e7.txt" && ok "bad option: exit 2" || not_ok "bad option: exit $rc"
$P serial > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && ok "no log: exit 2" || not_ok "no log: exit $rc"
$P serial --out "$tmp/nosuchdir/deeper" "$tmp/one.log" > /dev/null 2> "$tmp/e8.txt"; rc=$?
[ $rc -eq 1 ] && grep -q 'cannot create' "$tmp/e8.txt" && ok "--out DIR whose parent is missing: exit 1 (one level is made)" \
  || not_ok "--out DIR whose parent is missing: exit $rc"
$P serial --strict --force --out "$tmp/out2" "$tmp/dmg.log" > /dev/null; rc=$?
[ $rc -eq 3 ] && ok "--strict on a damaged log: exit 3" || not_ok "--strict: exit $rc"

[ $fail -eq 0 ] && echo "recover: all passed" || echo "recover: FAILED"
# what ran passed, but a part had no input: skipped (test/run.sh)
[ $fail -eq 0 ] && [ -n "${skipped:-}" ] && exit 77
exit $fail
