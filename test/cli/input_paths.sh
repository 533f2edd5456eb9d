#!/usr/bin/env bash
# Large inputs are mapped, not read (issue #17 "Memory and size";
# host/input_file.c): the mapped path, the read path (PTBOOT_INPUT=read,
# what pipes and FIFOs take) and a pipe (/dev/stdin, or - for ptboot
# serial) give the same output, byte for byte, for every command that
# reads a trace, a page dump, a --raw file or a serial log:
#   - flow, summary, dump and export on the real traces;
#   - a page dump in shuffled file order (bench/gen_pages: every page
#     indexed in place, none copied) and in address order with filler
#     images around the real pages: the instruction count of the original;
#   - --raw sections from the dump's file, and --elf (an ELF file's segments
#     used in place: a file much larger than them costs no more memory);
#   - ptboot serial on a log from the target's encoder: the same files.
# (Memory and time: make bench-big, docs/performance.md.)
cd "$(dirname "$0")/../.." || exit 1
. test/lib/check.sh
. test/flow/real_traces.env
P=${PTBOOT:-build/ptboot}
if [ ! -d "$REAL_DIR" ]; then echo "input_paths: $REAL_DIR not found: SKIPPED"; exit 77; fi

# same NAME CMD...: mapped, read and (when the command has a --pt or a
# trace argument given as @PIPE@) piped runs, stdout and stderr alike
same() {
  local name=$1; shift
  local args=("$@") piped=() pipe_from=
  for a in "${args[@]}"; do
    if [[ $a == @PIPE@* ]]; then pipe_from=${a#@PIPE@}; piped+=(/dev/stdin); else piped+=("$a"); fi
  done
  local plain=("${piped[@]}")
  [ -n "$pipe_from" ] && for i in "${!plain[@]}"; do [ "${plain[$i]}" = /dev/stdin ] && plain[$i]=$pipe_from; done
  PTBOOT_INPUT=map "${plain[@]}" > "$tmp/map.out" 2> "$tmp/map.err"; local rm=$?
  PTBOOT_INPUT=read "${plain[@]}" > "$tmp/read.out" 2> "$tmp/read.err"; local rr=$?
  local rp=$rm
  cp "$tmp/map.out" "$tmp/pipe.out"; cp "$tmp/map.err" "$tmp/pipe.err"
  if [ -n "$pipe_from" ]; then
    cat "$pipe_from" | "${piped[@]}" > "$tmp/pipe.out" 2> "$tmp/pipe.err"; rp=$?
    sed -i "s|/dev/stdin|$pipe_from|g" "$tmp/pipe.out" "$tmp/pipe.err"
  fi
  if [ $rm = $rr ] && [ $rm = $rp ] && [ -s "$tmp/map.out" -o -s "$tmp/map.err" ] &&
     cmp -s "$tmp/map.out" "$tmp/read.out" && cmp -s "$tmp/map.err" "$tmp/read.err" &&
     cmp -s "$tmp/map.out" "$tmp/pipe.out" && cmp -s "$tmp/map.err" "$tmp/pipe.err"; then
    ok "$name: mapped, read${pipe_from:+ and piped} alike (exit $rm, $(wc -l < "$tmp/map.out") lines)"
  else
    not_ok "$name: exit $rm/$rr/$rp; $(diff "$tmp/map.out" "$tmp/read.out" | head -3 | tr '\n' '|') $(diff "$tmp/map.out" "$tmp/pipe.out" | head -3 | tr '\n' '|')"
  fi
}

for spec in $REAL_TRACES; do
  IFS=: read -r name filter count <<< "$spec"
  d=$REAL_DIR/$name
  same "$name flow" $P flow --pt "@PIPE@$d/trace.pt" --pages "$d/pages" --filter "$filter"
  same "$name summary" $P summary --pt "@PIPE@$d/trace.pt" --pages "$d/pages"
  same "$name dump" $P dump "@PIPE@$d/trace.pt"
done
d=$REAL_DIR/mruby
same "mruby export folded" $P export --pt "@PIPE@$d/trace.pt" --pages "$d/pages" --format folded -o -
same "mruby dump --stats of a range" $P dump --stats "$d/trace.pt:0x1000-0x20000"

# page dumps generated around mruby's pages: in address order with filler
# images, and shuffled (no page after its neighbour in the file)
want=$($P flow --pt "$d/trace.pt" --pages "$d/pages" --quiet --stat)
for order in ordered shuffled; do
  opt=; [ $order = shuffled ] && opt="--shuffle 3"
  build/bench/gen_pages "$d/pages" 8M "$tmp/p-$order" $opt > /dev/null || not_ok "gen_pages $order"
  same "8 MiB page dump, $order" $P flow --pt "$d/trace.pt" --pages "$tmp/p-$order" --quiet --stat
  [ "$(cat "$tmp/map.out")" = "$want" ] && ok "8 MiB page dump, $order: '$want' as with mruby's own pages" ||
    not_ok "8 MiB page dump, $order: '$(cat "$tmp/map.out")', want '$want'"
done
# one page twice in a shuffled dump: still refused
cp "$tmp/p-shuffled.dump" "$tmp/dup.dump"
a=$tmp/p-shuffled.addr
{ head -c 8 "$a"; head -c 8 "$a"; tail -c +17 "$a"; } > "$tmp/dup.addr"   # page 1's address := page 0's
same "shuffled dump with a repeated page" $P flow --pt "$d/trace.pt" --pages "$tmp/dup" --quiet --stat
grep -q "more than once\|twice\|repeated\|dup" "$tmp/map.err" && ok "the repeated page refused: $(head -1 "$tmp/map.err")" ||
  not_ok "repeated page: $(head -2 "$tmp/map.err" | tr '\n' '|')"

# --raw: runs of mruby's dump as ptxed's FILE:FROM-TO:BASE, from the file
args=()
i=0
while read -r a; do
  args+=(--raw "$d/pages.dump:$((i * 4096))-$(((i + 1) * 4096)):$a"); i=$((i + 1))
done < <(od -An -v -tx8 -w8 "$d/pages.addr" | awk '{ print "0x" $1 }')
same "mruby --raw per page ($i sections)" $P flow --pt "$d/trace.pt" "${args[@]}" --quiet --stat
[ "$(cat "$tmp/map.out")" = "$want" ] && ok "--raw per page: '$want'" || not_ok "--raw per page: '$(cat "$tmp/map.out")'"

# --elf: mruby's pages (one run from 0x400000) as an ELF executable's one
# PT_LOAD segment; its bytes are taken from the file in place, and a file
# with 64 MiB after the segment (debug sections, say) is not read: the
# process's peak memory stays far below them (it was 68 MB when --elf read
# the whole file)
python3 - "$d/pages.dump" "$tmp/mruby.elf" <<'PY' || not_ok "writing mruby.elf"
import struct, sys
code = open(sys.argv[1], 'rb').read()
ehdr = b'\x7fELF' + bytes([2, 1, 1]) + bytes(9) + struct.pack(
    '<HHIQQQIHHHHHH', 2, 62, 1, 0x400000, 64, 0, 0, 64, 56, 1, 64, 0, 0)
phdr = struct.pack('<IIQQQQQQ', 1, 5, 0x1000, 0x400000, 0x400000, len(code), len(code), 0x1000)
with open(sys.argv[2], 'wb') as f:
    f.write(ehdr + phdr + bytes(0x1000 - len(ehdr) - len(phdr)) + code)
PY
same "mruby --elf (the ELF piped)" $P flow --pt "$d/trace.pt" --elf "@PIPE@$tmp/mruby.elf" --quiet --stat
[ "$(cat "$tmp/map.out")" = "$want" ] && ok "--elf: '$want' as with the pages" || not_ok "--elf: '$(cat "$tmp/map.out")'"
cp "$tmp/mruby.elf" "$tmp/big.elf" && truncate -s +64M "$tmp/big.elf"
peak=$(/usr/bin/time -f %M $P flow --pt "$d/trace.pt" --elf "$tmp/big.elf" --quiet --stat 2>&1 > "$tmp/big.out" | tail -1)
if [ "$(cat "$tmp/big.out")" = "$want" ] && [ "$peak" -lt 32768 ] 2>/dev/null; then
  ok "--elf with 64 MiB after its segment: '$want', peak memory $peak KiB"
else
  not_ok "--elf with 64 MiB after its segment: '$(cat "$tmp/big.out")', peak memory '$peak' KiB (want < 32768)"
fi

# ptboot serial: a log file mapped, read, and from a pipe (-)
build/test/serial_enc "$REAL_DIR/foo/trace.pt" > "$tmp/foo.log" || not_ok "serial_enc"
for how in map read pipe; do
  if [ $how = pipe ]; then
    cat "$tmp/foo.log" | $P serial - --out "$tmp/s-$how" > "$tmp/s-$how.txt" 2>&1
  else
    PTBOOT_INPUT=$how $P serial "$tmp/foo.log" --out "$tmp/s-$how" > "$tmp/s-$how.txt" 2>&1
  fi
  echo "rc=$?" >> "$tmp/s-$how.txt"
  sed -i "s|$tmp/s-$how|OUT|g; s|$tmp/foo.log|LOG|g; s|standard input|LOG|g; s|(-)|LOG|g" "$tmp/s-$how.txt"
done
if diff -r "$tmp/s-map" "$tmp/s-read" > /dev/null && diff -r "$tmp/s-map" "$tmp/s-pipe" > /dev/null &&
   cmp -s "$tmp/s-map.txt" "$tmp/s-read.txt" && [ -n "$(ls "$tmp/s-map")" ]; then
  ok "serial: the same files from a mapped, a read and a piped log ($(ls "$tmp/s-map" | tr '\n' ' '))"
else
  not_ok "serial: $(diff -r "$tmp/s-map" "$tmp/s-pipe" | head -2 | tr '\n' '|') $(diff "$tmp/s-map.txt" "$tmp/s-read.txt" | head -3 | tr '\n' '|')"
fi
[ $fail = 0 ] && echo "input_paths: all passed" || echo "input_paths: FAILED"
exit $fail
