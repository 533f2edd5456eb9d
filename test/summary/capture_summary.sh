#!/bin/bash
# `ptboot summary --capture DIR`: on capture directories written by the
# app's sideband writer (build/test/capture/mkcapture) from flowgen's random
# programs, the summary equals the one from the explicit options (trace,
# code, filter, timing) with the capture's images as --module; its
# instruction count equals `ptboot flow`'s; with timing packets (seeds 2
# and 7) the ticks per image and per function add up to the span, also
# with the trace cut short; trace.wrapped 1 and trace.stopped 1 in the
# sideband are said before the summary.
set -u
cd "$(dirname "$0")/../.."
P=${PTBOOT:-build/ptboot}
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
build/test/flowgen --seeds 8 --insns 3000 --write "$t/gen" > /dev/null || exit 1
for s in 1 2 4 7; do
    g=$t/gen/seed$s
    raws="--raw $g.a.bin:0x400000 --raw $g.32.bin:0x600000 --raw $g.out.bin:0x900000"
    mods="--module 400000:40000:seed$s.a --module 600000:10000:seed$s.32 --module 900000:10000:seed$s.out"
    opts="" mk=""
    case $s in
    2|7) opts="--mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168"
         mk="--mtc-freq 3 --cpuid-0x15 2/168" ;;
    esac
    build/test/capture/mkcapture "$t/c$s" --pt "$g.pt" $raws --filter 400000-7fffff $mk ||
        { echo "capture_summary: FAIL mkcapture seed $s"; fail=1; continue; }
    "$P" summary --capture "$t/c$s" --stat > "$t/a" 2>&1
    "$P" summary --pt "$g.pt" $raws --filter 400000-7fffff $opts $mods --stat > "$t/b" 2>&1
    want=$("$P" flow --no-inst --pt "$g.pt" $raws --filter 400000-7fffff --stat | sed -n 's/^insn: \([0-9]*\)\.$/\1/p')
    got=$(tail -1 "$t/a" | awk '{ for (i = 2; i < NF; i++) if ($i == "insns") print $(i + 1) }')
    if ! cmp -s "$t/a" "$t/b"; then
        echo "capture_summary: FAIL seed $s: --capture differs from the explicit options:"
        diff "$t/a" "$t/b" | head -6
        fail=1
    elif [ -z "$got" ] || [ "$got" != "$want" ]; then
        echo "capture_summary: FAIL seed $s: $got instructions, ptboot flow says $want"
        fail=1
    elif ! grep -q "seed$s.a+0x" "$t/a"; then
        echo "capture_summary: FAIL seed $s: no names from the capture's images"
        fail=1
    else
        echo "capture_summary: ok seed $s: $got instructions, same summary as with the explicit options"
    fi
    case $s in 2|7)
        # ticks: "== summary: ... N tsc ticks"; images and functions sections
        span=$(sed -n 's/^== summary: .*, \([0-9]*\) tsc ticks$/\1/p' "$t/a")
        img=$(awk '/^== images/ {on = 1; next} /^== / {on = 0} on {s += $3} END {print s + 0}' "$t/a")
        fn=$(awk '/^== functions/ {on = 1; next} /^== / {on = 0} on {s += $4} END {print s + 0}' "$t/a")
        nfn=$(sed -n 's/^== functions (top \([0-9]*\) of \([0-9]*\) .*/\1 \2/p' "$t/a")
        if [ -z "$span" ] || [ "$span" = 0 ]; then
            echo "capture_summary: FAIL seed $s: no time in the summary"; fail=1
        elif [ "$img" != "$span" ]; then
            echo "capture_summary: FAIL seed $s: image ticks add up to $img, span $span"; fail=1
        elif [ "${nfn% *}" = "${nfn#* }" ] && [ "$fn" != "$span" ]; then
            echo "capture_summary: FAIL seed $s: function ticks add up to $fn, span $span"; fail=1
        else
            echo "capture_summary: ok seed $s: $span ticks, all in images and functions"
        fi
        # the same on every cut of the trace's first 160 bytes (a capture
        # whose trace.pt came back short): some hold a single time value,
        # whose span is 0 ticks, never more than the images got
        bad=""
        for n in $(seq 16 160); do
            rm -rf "$t/cut"; cp -r "$t/c$s" "$t/cut"; head -c "$n" "$g.pt" > "$t/cut/trace.pt"
            "$P" summary --capture "$t/cut" > "$t/a" 2>&1
            span=$(sed -n 's/^== summary: .*, \([0-9]*\) tsc ticks$/\1/p' "$t/a")
            img=$(awk '/^== images/ {on = 1; next} /^== / {on = 0} on {s += $3} END {print s + 0}' "$t/a")
            [ -z "$span" ] || [ "$img" = "$span" ] || bad="$bad $n:$span/$img"
        done
        if [ -n "$bad" ]; then
            echo "capture_summary: FAIL seed $s: cut traces, span/image ticks:$bad" | cut -c1-300; fail=1
        else
            echo "capture_summary: ok seed $s: traces cut at 16..160 bytes: span = image ticks"
        fi ;;
    esac
done
# the sideband's trace.wrapped / trace.stopped are said before the summary
# (the packets cannot tell), and nothing when both are 0
c=$t/c1
if [ -d "$c" ] && ! "$P" summary --capture "$c" | grep -q '^note: trace\.'; then
    for k in wrapped stopped; do
        rm -rf "$t/k"; cp -r "$c" "$t/k"
        sed -i "s/^trace\.$k 0$/trace.$k 1/" "$t/k/sideband.txt"
        if "$P" summary --capture "$t/k" | head -1 | grep -q "^note: trace\.$k 1: "; then
            echo "capture_summary: ok trace.$k 1 is said before the summary"
        else
            echo "capture_summary: FAIL trace.$k 1 is not said"; fail=1
        fi
    done
else
    echo "capture_summary: FAIL a capture with trace.wrapped/stopped 0 gets a note"; fail=1
fi
exit $fail
