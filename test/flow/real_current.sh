#!/bin/bash
# `ptboot flow --no-inst` on the real traces of ../shared/traces/real prints
# what current libipt's ptxed prints (test/flow/real_current.txt: facts
# recorded from running it, as a sha256 of the whole output and its error,
# insn and blocks lines), with the block decoder's boundaries (--stat's
# block count, --block:show-blocks) and the errors libipt 2.0.5 does not
# report (bad status update). Skips when the traces are absent.
set -u
. test/lib/real_traces.sh
real_traces_begin "real_current:"
facts=test/flow/real_current.txt
fail=0
checked=0
while IFS= read -r head; do
    case $head in "== "*) ;; *) continue ;; esac
    read -r which opts <<< "${head#== }"
    for t in $REAL_TRACES; do
        [ "$which" = "${t%%:*}" ] && break
    done
    real_trace_read "$t"
    # the recorded lines of this set: up to the next header
    awk -v h="$head" '$0 == h { on = 1; next } /^== / { on = 0 } on' "$facts" > "$tmp/want"
    # shellcheck disable=SC2086
    build/ptboot flow --no-inst $opts "${args[@]}" > "$tmp/out" 2>&1
    { echo "sha256 $(sha256sum < "$tmp/out" | cut -d' ' -f1) lines $(wc -l < "$tmp/out")"
      grep -E 'error|^insn|^blocks' "$tmp/out"; } > "$tmp/got"
    checked=$((checked + 1))
    if cmp -s "$tmp/want" "$tmp/got"; then
        echo "real_current: ok $name $opts: $(sed -n 's/^sha256 [0-9a-f]* //p' "$tmp/got"), as current libipt"
    else
        echo "real_current: FAIL $name $opts differs from current libipt's output:"
        diff "$tmp/want" "$tmp/got" | head -8
        fail=1
    fi
done < "$facts"
[ "$checked" -gt 0 ] || { echo "real_current: FAIL no facts read from $facts"; fail=1; }
exit $fail
