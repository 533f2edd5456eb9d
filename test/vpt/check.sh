#!/usr/bin/env bash
# Decodes one virtual-PT trace with libipt (build/test/libipt_flow) and with
# ptboot's flow decoder (build/ptboot flow, when built) and compares both with
# the ground truth, instruction for instruction and event for event.
#
# usage: test/vpt/check.sh NAME PREFIX
#   PREFIX.pt, PREFIX.dump/.addr (code pages), PREFIX.truth or
#   PREFIX.truth.gz, PREFIX.filter (optional: LO-HI for address filter 0)
# Prints "vpt: NAME insns=N events=N ptboot=<match|differ|n/a>
# libipt=<match|differ>"; exit 1 on any difference. The decoders' outputs
# and diffs stay in $VPT_WORK (default build/vpt/check/).
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$1 p=$2
work=${VPT_WORK:-build/vpt/check}
mkdir -p "$work"
if [ -f "$p.truth.gz" ]; then gzip -dc "$p.truth.gz" > "$work/$name.truth"
else cp "$p.truth" "$work/$name.truth"; fi
filter=()
if [ -s "$p.filter" ]; then filter=(--filter "$(cat "$p.filter")"); fi

insns=$(grep -c '^[0-9a-f]' "$work/$name.truth")
events=$(grep -c '^\[' "$work/$name.truth")
rc=0
if [ "$insns" -eq 0 ]; then
  echo "vpt: $name: the truth has no instruction (did the window open? see $p.meta)"
  exit 1
fi

libipt=differ
if build/test/libipt_flow --pt "$p.pt" --pages "$p" "${filter[@]}" > "$work/$name.libipt" 2>"$work/$name.libipt.err" &&
   cmp -s "$work/$name.truth" "$work/$name.libipt"; then
  libipt=match
else
  rc=1
fi

ptboot=n/a
if build/ptboot flow --help >/dev/null 2>&1; then
  ptboot=differ
  if build/ptboot flow --no-inst --pt "$p.pt" --pages "$p" "${filter[@]}" > "$work/$name.ptboot" 2>"$work/$name.ptboot.err" &&
     cmp -s "$work/$name.truth" "$work/$name.ptboot"; then
    ptboot=match
  else
    rc=1
  fi
fi
echo "vpt: $name insns=$insns events=$events ptboot=$ptboot libipt=$libipt"
if [ $rc -ne 0 ]; then
  for d in libipt ptboot; do
    [ -f "$work/$name.$d" ] || continue
    cmp -s "$work/$name.truth" "$work/$name.$d" && continue
    echo "  $d differs from the truth (first lines of the diff; files in $work):"
    diff "$work/$name.truth" "$work/$name.$d" | head -8 | sed 's/^/    | /'
    head -3 "$work/$name.$d.err" | sed 's/^/    ! /'
  done
fi
exit $rc
