#!/usr/bin/env bash
# `ptboot.efi serial-dump` in QEMU: a trace and a raw file on the stick go
# over the serial console as frame lines; `ptboot serial` recovers both from
# the raw serial log (CR LF, the firmware's escape sequences and messages
# around them) byte for byte, and decodes the trace.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh
. test/flow/real_traces.env

trace=$BOOT_DIR/serial-trace.pt
if [ -f "$REAL_DIR/avscript_32/trace.pt" ]; then
  cp "$REAL_DIR/avscript_32/trace.pt" "$trace"    # 96 KiB of a real CPU's trace
else
  build/bench/gen_trace --size 65536 --seed 11 "$trace" >/dev/null || exit 1
fi
side=$BOOT_DIR/serial-side.bin
head -c 5000 /dev/urandom > "$side"

boot_image serial-dump "--shutdown serial-dump serial-trace.pt \\serial-side.bin ; serial-dump nosuch.pt ; serial-dump --line-bytes 999 x ; serial-dump --line-bytes 57 serial-side.bin" "$trace" "$side"
boot_run serial-dump
expect_rc serial-dump 0 "clean shutdown"
expect serial-dump '^ptboot: command 1/4 serial-dump status=0$' "dump succeeded"
expect serial-dump '^ptboot: error: serial-dump: nosuch.pt: not found$' "missing file named"
expect serial-dump '^ptboot: command 2/4 serial-dump status=1$' "missing file: status 1"
expect serial-dump '^ptboot: error: serial-dump: --line-bytes needs 1\.\.192$' "bad line size refused"
expect serial-dump '^ptboot: command 3/4 serial-dump status=2$' "bad option: status 2"
expect serial-dump '^ptboot: serial-dump begin files=2$' "dump started"
expect serial-dump '^ptboot: serial-dump end files=1 lines=90 bytes=5000 ' "5000 bytes at 57 per line: 88 data lines"
expect serial-dump "^ptboot: serial-dump end files=2 lines=[0-9]+ bytes=$(( $(stat -c %s "$trace") + 5000 )) wire=[0-9]+\$" "both files dumped"
expect serial-dump '^ptboot: exit status=[0-9]+ sbrk_calls=0 ' "no heap allocation"

out=$BOOT_DIR/serial-out
rm -rf "$out" && mkdir -p "$out"
if build/ptboot serial --out "$out" "$BOOT_DIR/serial-dump.log" > "$out/report.txt"; then
  ok "serial-dump: ptboot serial recovered the log"
else
  not_ok "serial-dump: ptboot serial failed"
fi
sed 's/^/    | /' "$out/report.txt"
expect serial-dump '^ptboot: command 4/4 serial-dump status=0$' "second dump, 57 bytes per line"
for pair in "serial-trace.pt:$trace" "serial-side.bin:$side" "dump2/serial-side.bin:$side"; do
  name=${pair%%:*} orig=${pair#*:}
  if cmp -s "$out/$name" "$orig"; then
    ok "serial-dump: $name recovered byte-identical ($(stat -c %s "$orig") bytes)"
  else
    not_ok "serial-dump: $name differs from the file on the stick"
  fi
done
if grep -Eq "^serial: decode $out/serial-trace.pt: packets=[1-9][0-9]* errors=0 " "$out/report.txt"; then
  ok "serial-dump: recovered trace decodes without errors"
else
  not_ok "serial-dump: no clean decode line for the trace"
fi
if grep -q 'missing\|mismatch\|damaged' "$out/report.txt"; then
  not_ok "serial-dump: damage reported on a clean log"
fi

# The same log with the trace's data line 10 dropped and a character of
# line 11 changed: exactly those two are reported, by number and offset.
log=$BOOT_DIR/serial-dump.log
l10=$(grep -an -m1 '@PTF1 D 1 10 ' "$log" | cut -d: -f1)
l11=$(grep -an -m1 '@PTF1 D 1 11 ' "$log" | cut -d: -f1)
o10=$(grep -a -m1 '@PTF1 D 1 10 ' "$log" | awk '{ print $5 }')
o11=$(grep -a -m1 '@PTF1 D 1 11 ' "$log" | awk '{ print $5 }')
o12=$(grep -a -m1 '@PTF1 D 1 12 ' "$log" | awk '{ print $5 }')
awk -v d="$l10" -v c="$l11" 'NR == d { next } NR == c { sub(/ [A-Za-z0-9]/, " ~") } { print }' "$log" > "$BOOT_DIR/serial-dump-damaged.log"
rm -rf "$out" && mkdir -p "$out"
build/ptboot serial --out "$out" "$BOOT_DIR/serial-dump-damaged.log" > "$out/report.txt"
want="serial: serial-trace.pt: line 10 (offset 0x$o10-$(printf '0x%x' $((0x$o11 - 1)))) missing
serial: serial-trace.pt: line 11 (offset 0x$o11) crc mismatch (log line $((l11 - 1)))"
got=$(grep 'missing\|mismatch\|malformed' "$out/report.txt")
if [ "$got" = "$want" ]; then ok "serial-dump: damaged log: lines 10 and 11 reported, nothing else"
else not_ok "serial-dump: damaged log reports:"; echo "$got" | sed 's/^/    | /'; echo "    expected:"; echo "$want" | sed 's/^/    | /'; fi
seg=$(ls "$out" | grep '^serial-trace.pt.seg-' | tail -1)
from=${seg#serial-trace.pt.seg-}; from=${from%-*}
if [ -n "$seg" ] && [ $((0x$from)) -ge $((0x$o12)) ] && cmp -s <(build/ptboot dump "$out/$seg") <(build/ptboot dump "$trace:0x$from"); then
  ok "serial-dump: damaged log: the part from the PSB at 0x$from decodes as the original's"
else not_ok "serial-dump: damaged log: no segment from a PSB after line 11 ($seg)"; fi
boot_done
