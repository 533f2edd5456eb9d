#!/usr/bin/env bash
# Random damage, many rounds: lines of a trace's dump dropped and changed at
# random (a payload character, the CRC, a cut), sometimes the begin or end
# line too; `ptboot serial` must name exactly the damaged data lines (as
# missing, crc mismatch or malformed), no others, and every segment it
# writes must be the original's bytes at that offset. Lines cut in two by
# a firmware message are joined again (their CRC proves them): never named.
# PTBOOT=path runs another build (e.g. one with -fsanitize=address).
cd "$(dirname "$0")/../.." || exit 1
set -u
P=${PTBOOT:-build/ptboot}
ROUNDS=${ROUNDS:-25}
tmp=${KEEP_TMP:-$(mktemp -d)}; [ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT; mkdir -p "$tmp"
fail=0
build/bench/gen_trace --size 60000 --seed 21 "$tmp/t.pt" > /dev/null || exit 1
build/test/serial_enc --line-bytes 57 "$tmp/t.pt" > "$tmp/clean.log" || exit 1
n=$(grep -c '^@PTF1 D ' "$tmp/clean.log")
for round in ${ROUND_LIST:-$(seq 1 "$ROUNDS")}; do
  # damage: each data line dropped with p=3%, changed with p=3% (one of four ways)
  awk -v seed="$round" -v n="$n" 'BEGIN { srand(seed) }
    $1 == "@PTF1" && $2 == "D" {
      r = rand()
      if (r < 0.03) { print $4 > "/dev/stderr"; next }
      if (r < 0.06) {
        k = int(rand() * 4)
        if (k < 3) print $4 > "/dev/stderr"
        if (k == 0) { i = index($0, $7) + int(rand() * length($7)); c = substr($0, i, 1)
                      $0 = substr($0, 1, i - 1) (c == "Q" ? "R" : "Q") substr($0, i + 1) }
        else if (k == 1) $0 = substr($0, 1, length($0) - 1) (substr($0, length($0)) == "0" ? "1" : "0")
        else if (k == 2) $0 = substr($0, 1, 20 + int(rand() * (length($0) - 21)))
        else { i = 10 + int(rand() * (length($0) - 11))
               $0 = substr($0, 1, i) "\r\nPciBus: resource\r\n" substr($0, i + 1) }
      }
    }
    $2 == "B" && seed % 5 == 0 { next }
    $2 == "E" && seed % 7 == 0 { next }
    { print }' "$tmp/clean.log" > "$tmp/log" 2> "$tmp/want.raw"
  sort -n "$tmp/want.raw" | tr '\n' ' ' > "$tmp/want"
  rm -rf "$tmp/out" && mkdir "$tmp/out"
  "$P" serial --out "$tmp/out" "$tmp/log" > "$tmp/report" 2>&1
  rc=$?
  if [ $rc -ne 0 ]; then echo "FAIL round $round: exit $rc"; fail=1; continue; fi
  # the reported data lines, expanded; lost tail lines count from the last seen
  # (with the begin and end lines both lost the file's name is unknown: file1.bin)
  awk -v n="$n" '/^serial: (t.pt|file1.bin): lines? [0-9]/ && /missing|mismatch|malformed/ {
      split($4, a, "-"); from = a[1]; to = (a[2] == "" ? from : a[2])
      if ($0 ~ / and on /) to = n - 1
      for (s = from; s <= to; s++) print s }' "$tmp/report" | sort -n | tr '\n' ' ' > "$tmp/got"
  if ! cmp -s "$tmp/want" "$tmp/got"; then
    echo "FAIL round $round: damaged lines: $(cat "$tmp/want")"
    echo "                 reported:      $(cat "$tmp/got")"
    fail=1
  fi
  for s in "$tmp"/out/t.pt.seg-* "$tmp"/out/file1.bin.seg-*; do
    [ -e "$s" ] || continue
    r=${s##*.seg-}; from=$((0x${r%-*})); to=$((0x${r#*-}))
    if ! cmp -s "$s" <(tail -c +$((from + 1)) "$tmp/t.pt" | head -c $((to - from))); then
      echo "FAIL round $round: segment $r is not the original's bytes"; fail=1
    fi
  done
done
[ $fail -eq 0 ] && echo "random_damage: ok, $ROUNDS rounds of random damage to $n lines reported exactly" \
  || echo "random_damage: FAILED"
exit $fail
