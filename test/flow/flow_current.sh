#!/bin/bash
# `ptboot flow --no-inst` on test/flow/flowgen's programs prints what
# current libipt's ptxed prints (test/flow/flow_current.txt: facts recorded
# from running it, as a sha256 of the whole output and its error, insn and
# blocks lines): where libipt 2.0.5 cannot be the reference, because it
# does not know the packets (Event Trace's CFE/EVD, TRIG) or decodes
# differently (tick events, block boundaries, --resync-on-error,
# --event:iflags), on clean traces and on copies with bytes overwritten
# at fixed places.
set -u
facts=test/flow/flow_current.txt
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
build/test/flowgen --first 1 --seeds 40 --insns 3000 --write "$t" > /dev/null || exit 1
# the same bytes as the facts' copies
corrupt() {   # seed in out
    cp "$2" "$3"
    local size k off
    size=$(stat -c %s "$2")
    for k in 1 2 3; do
        off=$((size * k * 2 / 7 + $1))
        printf "\\x$(printf %02x $((($1 * 37 + k * 91) & 255)))" | dd of="$3" bs=1 seek=$off conv=notrunc 2>/dev/null
    done
}
fail=0
checked=0
while IFS= read -r head; do
    case $head in "== "*) ;; *) continue ;; esac
    read -r s rest <<< "${head#== }"
    pt=$t/seed$s.pt
    opts=$rest
    if [ "${rest%% *}" = corrupt ]; then
        opts=${rest#corrupt }
        [ -f "$t/c$s.pt" ] || corrupt "$s" "$pt" "$t/c$s.pt"
        pt=$t/c$s.pt
    fi
    awk -v h="$head" '$0 == h { on = 1; next } /^== / { on = 0 } on' "$facts" > "$t/want"
    # shellcheck disable=SC2086
    build/ptboot flow --no-inst $opts --raw "$t/seed$s.a.bin:0x400000" --raw "$t/seed$s.32.bin:0x600000" \
        --raw "$t/seed$s.out.bin:0x900000" --pt "$pt" > "$t/out" 2>&1
    { echo "sha256 $(sha256sum < "$t/out" | cut -d' ' -f1) lines $(wc -l < "$t/out")"
      grep -E 'error|^insn|^blocks' "$t/out"; } > "$t/got"
    checked=$((checked + 1))
    if cmp -s "$t/want" "$t/got"; then
        echo "flow_current: ok seed $s $rest: $(sed -n 's/^sha256 [0-9a-f]* //p' "$t/got"), as current libipt"
    else
        echo "flow_current: FAIL seed $s $rest differs from current libipt's output:"
        diff "$t/want" "$t/got" | head -8
        fail=1
    fi
done < "$facts"
[ "$checked" -gt 0 ] || { echo "flow_current: FAIL no facts read from $facts"; fail=1; }
exit $fail
