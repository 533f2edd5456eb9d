#!/usr/bin/env bash
# Decodes one virtual-PT trace with libipt (build/test/libipt_flow) and with
# ptboot's flow decoder (build/ptboot flow, when built) and compares both with
# the ground truth, instruction for instruction and event for event; where
# PREFIX.etruth(.gz) exists, the events' IPs too (--event:ip).
#
# usage: test/vpt/check.sh NAME PREFIX
#   PREFIX.pt, PREFIX.dump/.addr (code pages), PREFIX.truth[.gz],
#   PREFIX.etruth[.gz] (optional), PREFIX.filter (optional: LO-HI for
#   address filter 0)
# Prints "vpt: NAME insns=N events=N ptboot=<match|differ|n/a>
# libipt=<match|differ>"; exit 1 on any difference. The decoders' outputs
# and diffs stay in $VPT_WORK (default build/vpt/check/).
set -uo pipefail
cd "$(dirname "$0")/../.."
name=$1 p=$2
work=${VPT_WORK:-build/vpt/check}
mkdir -p "$work"
# get SUFFIX: PREFIX.SUFFIX(.gz) into $work/NAME.SUFFIX; false if neither
get() {
  if [ -f "$p.$1.gz" ]; then gzip -dc "$p.$1.gz" > "$work/$name.$1"
  elif [ -f "$p.$1" ]; then [ "$p.$1" -ef "$work/$name.$1" ] || cp "$p.$1" "$work/$name.$1"
  else return 1; fi
}
get truth || { echo "vpt: $name: no $p.truth"; exit 1; }
etruth=0
get etruth && etruth=1
filter=()
if [ -s "$p.filter" ]; then filter=(--filter "$(cat "$p.filter")"); fi

insns=$(grep -c '^[0-9a-f]' "$work/$name.truth")
events=$(grep -c '^\[' "$work/$name.truth")
if [ "$insns" -eq 0 ]; then
  echo "vpt: $name: the truth has no instruction (did the window open? see $p.meta)"
  exit 1
fi
rc=0

# decode TOOL OUT-SUFFIX TRUTH-SUFFIX [options]: true when equal
decode() {
  local tool=$1 out=$2 want=$3
  shift 3
  local cmd
  if [ "$tool" = libipt ]; then cmd=(build/test/libipt_flow); else cmd=(build/ptboot flow --no-inst); fi
  "${cmd[@]}" "$@" --pt "$p.pt" --pages "$p" "${filter[@]}" > "$work/$name.$out" 2>"$work/$name.$out.err" &&
    cmp -s "$work/$name.$want" "$work/$name.$out"
}

verdict() {  # TOOL: match when the plain and the --event:ip decodes agree
  local tool=$1 r=match
  decode "$tool" "$tool" truth || r=differ
  if [ $etruth = 1 ]; then decode "$tool" "$tool-ip" etruth --event:ip || r=differ; fi
  echo $r
}

libipt=$(verdict libipt)
ptboot=n/a
if build/ptboot flow --help >/dev/null 2>&1; then ptboot=$(verdict ptboot); fi
[ "$libipt" = match ] || rc=1
[ "$ptboot" = differ ] && rc=1
echo "vpt: $name insns=$insns events=$events ptboot=$ptboot libipt=$libipt"
if [ $rc -ne 0 ]; then
  for t in libipt libipt-ip ptboot ptboot-ip; do
    w=truth; [[ $t == *-ip ]] && w=etruth
    [ -f "$work/$name.$t" ] || continue
    cmp -s "$work/$name.$w" "$work/$name.$t" && continue
    echo "  $t differs from the $w (first lines of the diff; files in $work):"
    diff "$work/$name.$w" "$work/$name.$t" | head -8 | sed 's/^/    | /'
    head -3 "$work/$name.$t.err" | sed 's/^/    ! /'
  done
fi
exit $rc
