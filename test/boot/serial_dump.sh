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

boot_image serial-dump "--shutdown serial-dump serial-trace.pt \\serial-side.bin" "$trace" "$side"
boot_run serial-dump
expect_rc serial-dump 0 "clean shutdown"
expect serial-dump '^ptboot: serial-dump begin files=2$' "dump started"
expect serial-dump "^ptboot: serial-dump end files=2 lines=[0-9]+ bytes=$(( $(stat -c %s "$trace") + 5000 )) wire=[0-9]+\$" "both files dumped"
expect serial-dump '^ptboot: exit status=0 sbrk_calls=0 ' "no heap allocation"

out=$BOOT_DIR/serial-out
rm -rf "$out" && mkdir -p "$out"
if build/ptboot serial --out "$out" "$BOOT_DIR/serial-dump.log" > "$out/report.txt"; then
  ok "serial-dump: ptboot serial recovered the log"
else
  not_ok "serial-dump: ptboot serial failed"
fi
sed 's/^/    | /' "$out/report.txt"
for pair in "serial-trace.pt:$trace" "serial-side.bin:$side"; do
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
boot_done
