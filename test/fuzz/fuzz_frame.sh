#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_frame.c (ASan + UBSan): serial
# logs through the frame parser and `ptboot serial`'s recovery, and the
# encode/parse round trip. Seeds: logs of the target's encoder
# (build/test/serial_enc) over a generated trace and a text file, one
# clean, one with firmware noise, one with lines cut; and round-trip inputs.
# FUZZ_SECONDS (default 6) bounds the run; `make capture-fuzz` runs longer
# keeping its corpus in build/fuzz/frame-corpus.
. "$(dirname "$0")/lib.sh"
if fuzz_corpus; then
  tmp=$(mktemp -d)
  "$B/bench/gen_trace" --size 600 --seed 1 "$tmp/trace.pt"
  printf 'ptboot-sideband 1\nunit soft\n' > "$tmp/sideband.txt"
  "$B/test/serial_enc" --line-bytes 48 "$tmp/trace.pt" "$tmp/sideband.txt" > "$tmp/clean.log"
  { printf '\x00'; cat "$tmp/clean.log"; } > "$corpus/clean"
  { printf '\x00'; awk 'NR % 3 == 0 { print "BdsDxe: loading Boot0001"; printf "%s", substr($0, 1, 30) } { print }' \
      "$tmp/clean.log"; } > "$corpus/noise"
  { printf '\x00'; awk 'NR != 4 && NR != 7' "$tmp/clean.log" | tr '\n' '\r'; } > "$corpus/lost"
  # each kind of damage `ptboot serial` recovers from (docs/serial.md):
  # duplicated begin, end and data lines; a lost begin, a lost end; lost
  # sideband lines; wrapped at 80 columns (with CR LF); a line cut by a
  # firmware message; the log twice over
  { printf '\x00'; awk '{ print } /^@PTF1 [BE] / || NR == 5 { print }' "$tmp/clean.log"; } > "$corpus/dup"
  { printf '\x00'; grep -v '^@PTF1 B 1 ' "$tmp/clean.log"; } > "$corpus/no-begin"
  { printf '\x00'; grep -v '^@PTF1 E 2 ' "$tmp/clean.log"; } > "$corpus/no-end"
  "$B/test/serial_enc" --line-bytes 8 "$tmp/trace.pt" "$tmp/sideband.txt" |
    { printf '\x00'; awk '!($1 == "@PTF1" && $2 == "D" && $3 == 2 && $4 % 2)'; } > "$corpus/sideband-holes"
  { printf '\x00'; fold -w 80 "$tmp/clean.log" | sed 's/$/\r/'; } > "$corpus/wrapped"
  { printf '\x00'; awk 'NR % 4 == 2 { print substr($0, 1, 50); print "PciBus: resource"; print substr($0, 51); next } { print }' \
      "$tmp/clean.log"; } > "$corpus/split"
  { printf '\x00'; cat "$tmp/clean.log" "$tmp/clean.log"; } > "$corpus/twice"
  # forged: the CRCs are made right, the fields are the mutations' to change
  { printf '\x02'; cat "$tmp/clean.log"; } > "$corpus/forged"
  # round trip: payload 48, kind pt, id 1, name length 8, name, the trace
  { printf '\x01\x30\x01\x01\x07trace.pt'; cat "$tmp/trace.pt"; } > "$corpus/rt-pt"
  { printf '\x01\x00\x00\x02\x0bsideband.txt'; cat "$tmp/sideband.txt"; } > "$corpus/rt-raw"
  rm -rf "$tmp"
fi
fuzz_run fuzz_frame 6 8192
