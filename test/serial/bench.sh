#!/usr/bin/env bash
# `make bench` step for the serial dump: per trace, the framing overhead
# (payload / wire bytes), the encoder's throughput (the target's encoder,
# decoder/ptd_frame.c, built for the host: build/test/serial_enc), the
# dump's fraction of a 115200-baud 8N1 line, and, for the real traces, the
# dump's serial bytes per call the decoder finds (calls from
# `ptboot summary --stat` over the same trace). docs/serial.md.
cd "$(dirname "$0")/../.." || exit 1
set -u
. test/flow/real_traces.env
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ -d "$REAL_DIR" ]; then
  for t in $REAL_TRACES; do
    IFS=: read -r name filter _ <<< "$t"
    cp "$REAL_DIR/$name/trace.pt" "$tmp/$name.pt"
    build/test/serial_enc --bench "$tmp/$name.pt" || exit 1
    wire=$(build/test/serial_enc "$tmp/$name.pt" | wc -lc | awk '{ print $1 + $2 }') # + CR per line
    calls=$(build/ptboot summary --pt "$tmp/$name.pt" --pages "$REAL_DIR/$name/pages" --filter "$filter" --stat 2>/dev/null |
            sed -n 's/^summary: .* calls \([0-9]*\) .*/\1/p')
    if [ -n "$calls" ] && [ "$calls" -gt 0 ]; then
      awk -v n="$name" -v w="$wire" -v c="$calls" 'BEGIN {
        printf "bench: serial %s.pt: %d wire bytes for %d decoded calls: %.1f serial bytes per call event (raw dump)\n", n, w, c, w / c }'
    fi
  done
else
  echo "bench: serial: $REAL_DIR not found, real traces skipped"
fi
build/bench/gen_trace --size 1048576 --seed 1 "$tmp/synthetic-1MiB.pt" > /dev/null || exit 1
build/test/serial_enc --bench "$tmp/synthetic-1MiB.pt"
head -c 1048576 /dev/urandom > "$tmp/random-1MiB.bin"
build/test/serial_enc --bench "$tmp/random-1MiB.bin"
