#!/usr/bin/env bash
# The virtual-PT checks: one line per scenario,
#   vpt: <scenario> insns=<n> events=<n> ptboot=<match|differ|n/a> libipt=<match|differ>
# and a non-zero exit on any difference.
#
# usage: test/vpt/vpt-check.sh [--ci] [--fixtures] [--live [SCENARIO...]]
#   --fixtures  decode the committed fixtures (test/vpt/fixtures; no QEMU)
#   --live      boot OVMF under the plugin for each scenario (all by default;
#               about 10 s each), encode, decode, compare
#   --ci        (make test) a ptboot difference listed in
#               test/vpt/ptboot-known.txt ("SCENARIO reason") is reported
#               with its reason but does not fail; libipt must always match
# With neither --fixtures nor --live: both. Recordings and decoder outputs go
# to a fresh build/vpt/run.XXXXXX (several `make test` may run at once),
# removed when everything matched and kept otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.."
. test/vpt/scenarios.sh

fixtures=0 live=0 ci=0 names=()
while [ $# -gt 0 ]; do
  case $1 in
    --ci) ci=1 ;;
    --fixtures) fixtures=1 ;;
    --live) live=1 ;;
    -*) echo "usage: $0 [--fixtures] [--live [SCENARIO...]]" >&2; exit 2 ;;
    *) names+=("$1") ;;
  esac
  shift
done
[ $fixtures = 0 ] && [ $live = 0 ] && { fixtures=1; live=1; }
[ ${#names[@]} -eq 0 ] && read -ra names <<< "$VPT_SCENARIOS"

# check NAME PREFIX SCENARIO: test/vpt/check.sh, with the known ptboot
# differences tolerated under --ci
check() {
  local out rc reason
  out=$(test/vpt/check.sh "$1" "$2"); rc=$?
  echo "$out"
  [ $rc -eq 0 ] && return 0
  reason=$(awk -v s="$3" '$1 == s { $1 = ""; sub(/^ /, ""); print }' test/vpt/ptboot-known.txt 2>/dev/null)
  if [ $ci = 1 ] && [ -n "$reason" ] && grep -q ' libipt=match$' <<< "$out"; then
    echo "  known ptboot difference, not failing make test: $reason"
    return 0
  fi
  return 1
}

for t in build/vpt/vpt.so build/vpt/vpt_encode build/test/libipt_flow build/ptboot.efi; do
  [ -f "$t" ] || { echo "vpt-check: $t missing (make vpt)" >&2; exit 2; }
done

mkdir -p build/vpt
run=$(mktemp -d build/vpt/run.XXXXXX)
export VPT_WORK=$run/check
fail=0
if [ $fixtures = 1 ]; then
  for n in "${names[@]}"; do
    f=test/vpt/fixtures/$n
    if [ ! -f "$f.pt" ]; then echo "vpt: fixture $n: missing"; fail=1; continue; fi
    check "fixture-$n" "$f" "$n" || fail=1
  done
fi

if [ $live = 1 ]; then
  for n in "${names[@]}"; do
    test/vpt/record.sh "$run/$n" "${VPT_WINDOW[$n]}" "${VPT_CONFIG[$n]}" 120 >/dev/null 2>"$run/$n.record.err"
    rc=$?
    if [ $rc -ne 0 ]; then
      echo "vpt: $n: the QEMU run failed (rc $rc; $run/$n.serial, $run/$n.record.err)"; fail=1; continue
    fi
    # shellcheck disable=SC2086
    if ! build/vpt/vpt_encode ${VPT_ENCODE[$n]} "$run/$n" > "$run/$n.encode.txt"; then
      echo "vpt: $n: vpt_encode reports events it could not place:"; sed 's/^/  /' "$run/$n.encode.txt"; fail=1; continue
    fi
    check "$n" "$run/$n" "$n" || fail=1
    for v in ${VPT_VARIANTS[$n]:-}; do
      suffix=${v%%:*} opts=${v#*:}
      # shellcheck disable=SC2086
      if ! build/vpt/vpt_encode ${opts//_/ } "$run/$n" "$run/$n-$suffix" > "$run/$n-$suffix.encode.txt"; then
        echo "vpt: $n-$suffix: vpt_encode failed"; sed 's/^/  /' "$run/$n-$suffix.encode.txt"; fail=1; continue
      fi
      check "$n-$suffix" "$run/$n-$suffix" "$n-$suffix" || fail=1
    done
  done
fi
if [ $fail = 0 ]; then rm -rf "$run"; else echo "vpt-check: outputs kept in $run"; fi
exit $fail
