#!/usr/bin/env bash
# Regenerates the committed virtual-PT fixtures (test/vpt/fixtures/): for
# each scenario of test/vpt/scenarios.sh, boots OVMF with build/ptboot.efi
# under the plugin, encodes, checks the result with libipt, and keeps
#   NAME.pt      the trace
#   NAME.dump    code pages (4 KiB each) and NAME.addr (u64 LE per page)
#   NAME.filter  address filter 0 for the decoder (LO-HI, HI inclusive) or empty
#   NAME.truth.gz  the executed instructions and events (ptxed --no-inst lines)
#   NAME.etruth.gz the same with the events' IPs (ptxed --no-inst --event:ip)
#   NAME.txt     what vpt_encode reported, and the plugin's counts
# A new app build or OVMF gives other (equally valid) fixtures.
#
# usage: test/vpt/mkfixtures.sh [SCENARIO...]     (after `make vpt`)
set -euo pipefail
cd "$(dirname "$0")/../.."
. test/vpt/scenarios.sh
names=("$@")
[ ${#names[@]} -eq 0 ] && read -ra names <<< "$VPT_SCENARIOS"
run=build/vpt/run dir=test/vpt/fixtures
mkdir -p "$run" "$dir"
for n in "${names[@]}"; do
  test/vpt/record.sh "$run/fx-$n" "${VPT_WINDOW[$n]}" "${VPT_CONFIG[$n]}" 120 >/dev/null
  # shellcheck disable=SC2086
  build/vpt/vpt_encode ${VPT_ENCODE[$n]} "$run/fx-$n" "$dir/$n" > "$dir/$n.txt"
  sed 's/^/plugin: /' "$run/fx-$n.meta" >> "$dir/$n.txt"
  for t in truth etruth; do
    gzip -9n < "$dir/$n.$t" > "$dir/$n.$t.gz"
    rm "$dir/$n.$t"
  done
  # libipt must agree; a ptboot difference is shown, not fatal here
  out=$(test/vpt/check.sh "$n" "$dir/$n") || true
  echo "$out"
  grep -q "^vpt: $n .* libipt=match\$" <<< "$out" || { echo "mkfixtures: libipt differs on $n" >&2; exit 1; }
done
du -ch "$dir"/* | tail -1
