#!/usr/bin/env bash
# Names and exports on `make run`'s capture (issue #15's "done when"): one
# boot traces build/ptbtest.efi with the software unit as `make run` does
# (plus --serial-dump), and on the host
#   - the capture copied off the stick (mcopy) and the one recovered from
#     the serial log are the same files;
#   - `summary --symbols build/test/image` names ptbtest's functions with
#     their source lines: ptbtest_fib with addr2line's line of its entry and
#     as many calls as fib(N) makes; efi_main and the table's ops too; the
#     debug file was found by the CodeView GUID the target recorded;
#   - `flow --sym` puts ptbtest_fib on the instruction at its entry;
#   - the Chrome JSON parses (python3 -m json.tool), its B/E slices nest
#     and their count per function equals the summary's calls
#     (test/names/check_chrome.py);
#   - the folded stacks' weights add up to the trace's instructions, and
#     the same export from --pt + --elf (no capture) gives the same lines;
#   - the HTML report renders in headless Chromium (screenshot and DOM): the
#     DOM has the function names, the image table and the marker the page's
#     script sets, and no script error; a copy with a broken script is
#     caught (the check can fail).
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

name=names
so=build/test/image/ptbtest.so src=test/image/ptbtest.c
for f in build/ptbtest.efi "$so" build/ptboot; do
  [ -f "$f" ] || { echo "FAIL: $f missing (make build/ptbtest.efi)"; exit 1; }
done
boot_image $name "--shutdown trace --unit soft --serial-dump \\ptbtest.efi" build/ptbtest.efi
BOOT_TIMEOUT=${BOOT_TIMEOUT:-100} boot_run $name
expect_rc $name 0 "clean shutdown"
expect $name '^ptboot: trace unit=soft cpu=0 bytes=[0-9]+ .* errors=0 ' "the soft trace ran"

work=$BOOT_DIR/$name.out
rm -rf "$work" && mkdir -p "$work"
cap=$work/stick/ptboot/cap001
mkdir -p "$work/stick"
if mcopy -i "$BOOT_DIR/$name.img" -s ::/ptboot "$work/stick/" 2>/dev/null && [ -f "$cap/trace.pt" ]; then
  ok "$name: capture copied off the stick (mcopy)"
else
  not_ok "$name: no \\ptboot\\cap001 on the stick"; exit 1
fi
if build/ptboot serial "$BOOT_DIR/$name.txt" --out "$work/serial" --quiet > "$work/serial.out" 2>&1 &&
   cmp -s "$work/serial/trace.pt" "$cap/trace.pt" && cmp -s "$work/serial/sideband.txt" "$cap/sideband.txt"; then
  ok "$name: the serial log gives the same trace.pt and sideband.txt"
else
  not_ok "$name: serial recovery differs from the stick's capture"
fi
if grep -q '^image.debug base=0x[0-9a-f]* cv=rsds guid=[0-9a-f-]* age=1 path=.*/ptbtest.so$' "$cap/sideband.txt"; then
  ok "$name: the sideband records ptbtest.efi's CodeView record (GUID, path of its .so)"
else
  not_ok "$name: no image.debug line for ptbtest in the sideband"
fi

# expectations from the source and binutils
def() { sed -n "s/^#define $1 \+\([0-9]*\)$/\1/p" "$src"; }
N=$(def PTBTEST_FIB_N) ROUNDS=$(def PTBTEST_ROUNDS)
fib_calls() { local n=$1; if [ "$n" -lt 2 ]; then echo 1; else echo $((1 + $(fib_calls $((n - 1))) + $(fib_calls $((n - 2))))); fi; }
FIBC=$(fib_calls "$N")
line_of() { local a; a=$(nm "$so" | awk -v s="$1" '$3 == s { print $1 }'); addr2line -e "$so" "0x$a" | sed 's/ .*//; s|.*/||'; }
fib_line=$(line_of ptbtest_fib) main_line=$(line_of efi_main)

sum=$work/summary.txt
build/ptboot summary --capture "$cap" --symbols build/test/image > "$sum" 2> "$work/summary.err"
fib_row=$(grep -E "^ +$FIBC +[0-9]+ .* ptbtest_fib \\($fib_line\\)\$" "$sum" | head -1)
if [ -n "$fib_row" ]; then
  ok "$name: summary: ptbtest_fib ($fib_line), called $FIBC times (fib($N))"
else
  not_ok "$name: summary has no '$FIBC ... ptbtest_fib ($fib_line)' line"
  sed -n '/^== functions/,/^== call tree/p' "$sum" | sed 's/^/    | /'
fi
if grep -qE " efi_main \\($main_line\\)\$" "$sum" && grep -qE "^ +$ROUNDS +[0-9]+ .* ptbtest_op_odd \\(ptbtest.c:[0-9]+\\)\$" "$sum" &&
   grep -qE '^ +1 +[0-9]+ +[0-9]+ +[0-9]+ +ptbtest_fib \(ptbtest.c' "$sum"; then
  ok "$name: summary: efi_main ($main_line), ptbtest_op_odd x$ROUNDS, and the call tree named"
else
  not_ok "$name: summary lacks named efi_main/op_odd/tree lines"
fi
if grep -q '^ptboot summary: symbols: ptbtest: .*ptbtest.so (by guid; ' "$work/summary.err"; then
  ok "$name: the debug file was found by the GUID the target recorded"
else
  not_ok "$name: ptbtest's debug file not matched by GUID"; sed 's/^/    | /' "$work/summary.err"
fi
plain=$work/summary.plain.txt
build/ptboot summary --capture "$cap" > "$plain" 2>/dev/null
if ! grep -q ptbtest_fib "$plain" && [ "$(wc -l < "$plain")" = "$(wc -l < "$sum")" ]; then
  ok "$name: without --symbols: module+offset, the same sections and lines"
else
  not_ok "$name: the summary without --symbols changed shape or has names"
fi
insns=$(sed -n 's/^== summary: [0-9]* bytes, \([0-9]*\) insns,.*/\1/p' "$sum")

fib_ip=$(printf '%016x' $(( $(sed -n 's/^image base=\(0x[0-9a-f]*\) .* name=ptbtest$/\1/p' "$cap/sideband.txt") + 0x$(nm "$so" | awk '$3 == "ptbtest_fib" { print $1 }') )))
if build/ptboot flow --capture "$cap" --sym --symbols build/test/image 2>/dev/null | grep -q "^$fib_ip  ptbtest_fib  "; then
  ok "$name: flow --sym: ptbtest_fib on the instruction at its entry"
else
  not_ok "$name: flow --sym has no '$fib_ip  ptbtest_fib' line"
fi

# Chrome JSON
json=$work/trace.json
if build/ptboot export --capture "$cap" --symbols build/test/image --format chrome -o "$json" 2> "$work/export.err" &&
   python3 -m json.tool "$json" > /dev/null; then
  ok "$name: chrome export parses (python3 -m json.tool)"
else
  not_ok "$name: chrome export missing or not JSON"; sed 's/^/    | /' "$work/export.err"
fi
if python3 test/names/check_chrome.py "$json" "$sum" > "$work/chrome.check"; then
  sed "s/^ok   /ok: $name: /" "$work/chrome.check"
else
  not_ok "$name: $(tail -1 "$work/chrome.check")"
fi

# folded stacks
folded=$work/stacks.folded
build/ptboot export --capture "$cap" --symbols build/test/image --format folded -o "$folded" 2>/dev/null
total=$(awk '{ s += $NF } END { print s + 0 }' "$folded")
if [ -n "$insns" ] && [ "$total" = "$insns" ] && grep -q '^(caller of _start);efi_main;ptbtest_fib;ptbtest_fib [0-9]*$' "$folded"; then
  ok "$name: folded weights add up to the trace's $insns instructions ($(wc -l < "$folded") stacks)"
else
  not_ok "$name: folded weights add up to $total, the summary says $insns insns"
fi
base=$(sed -n 's/^image base=\(0x[0-9a-f]*\) .* name=ptbtest$/\1/p' "$cap/sideband.txt")
filt=$(sed -n 's/^filter kind=filter a=0x\([0-9a-f]*\) b=0x\([0-9a-f]*\)$/\1-\2/p' "$cap/sideband.txt")
build/ptboot export --pt "$cap/trace.pt" --elf "$so:$base" --filter "$filt" --format folded -o "$work/elf.folded" 2>/dev/null
if [ -s "$work/elf.folded" ] && diff <(grep -v '^(caller' "$folded" | grep -v RuntimeDxe) \
     <(grep -v '^(caller' "$work/elf.folded" | grep -v '0x') > /dev/null; then
  ok "$name: --pt with --elf $so:$base (no capture, no --symbols) gives the same named stacks"
else
  not_ok "$name: the --elf export differs from the capture's"
  diff <(grep -v '^(caller' "$folded") <(grep -v '^(caller' "$work/elf.folded") | head -5 | sed 's/^/    | /'
fi

# a capture of two CPUs (the BSP's trace.pt and an AP's trace-cpu1.pt, as
# `trace --cpus` writes them: here the same bytes): one track each
mp=$work/mp
rm -rf "$mp" && cp -r "$cap" "$mp" && cp "$mp/trace.pt" "$mp/trace-cpu1.pt"
printf 'cpu n=0 bsp=1 traced=1 file=trace.pt bytes=1 wrapped=0 stopped=0\ncpu n=1 bsp=0 traced=1 file=trace-cpu1.pt bytes=1 wrapped=0 stopped=0\n' > "$mp/cpus.txt"
build/ptboot export --capture "$mp" --symbols build/test/image --format chrome -o "$work/mp.json" 2>/dev/null
build/ptboot export --capture "$mp" --symbols build/test/image --format folded -o "$work/mp.folded" 2>/dev/null
tracks=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["traceEvents"]; print(" ".join(str(t) for t in sorted({x["tid"] for x in e if x["ph"] == "B"})), sum(1 for x in e if x["ph"] == "B" and x["name"] == "ptbtest_fib"))' "$work/mp.json")
mptotal=$(awk '{ s += $NF } END { print s + 0 }' "$work/mp.folded")
if [ "$tracks" = "0 1 $((2 * FIBC))" ] && [ "$mptotal" = $((2 * insns)) ] &&
   [ "$(grep -c '^cpu 1;' "$work/mp.folded")" = "$(grep -c '^cpu 0;' "$work/mp.folded")" ]; then
  ok "$name: two CPUs: a track each in the JSON, 'cpu N;' stacks, twice the instructions"
else
  not_ok "$name: two-CPU capture: tracks/fib slices '$tracks', folded total $mptotal (want 0 1 $((2 * FIBC)), $((2 * insns)))"
fi

# HTML in a real browser
html=$work/report.html
build/ptboot export --capture "$cap" --symbols build/test/image --format html --title "make run" -o "$html" 2>/dev/null
if grep -qE '(src|href)="?(https?:)?//' "$html"; then
  not_ok "$name: the report refers to the network"
else
  ok "$name: the report is self-contained ($(wc -c < "$html") bytes, no external reference)"
fi
browser() { # browser OUT-PREFIX HTML: DOM to OUT.dom, screenshot to OUT.png
  local prof
  prof=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$prof" \
    --dump-dom "file://$PWD/$2" > "$1.dom" 2> "$1.log"
  prof2=$(mktemp -d)
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --user-data-dir="$prof2" \
    --window-size=1280,900 --screenshot="$PWD/$1.png" "file://$PWD/$2" >> "$1.log" 2>&1
  rm -rf "$prof" "$prof2"
}
if ! command -v chromium > /dev/null; then
  not_ok "$name: chromium not installed (scripts/setup.sh installs it)"
else
  browser "$work/report" "$html"
  dom=$work/report.dom
  if grep -q '<body data-ptboot-report="ok">' "$dom" && ! grep -q '<body[^>]*data-ptboot-errors' "$dom"; then
    ok "$name: chromium ran the report's script with no error"
  else
    not_ok "$name: the report's script did not finish in chromium"; grep -o '<body[^>]*>' "$dom" | sed 's/^/    | /'
  fi
  missing=
  for want in ptbtest_fib efi_main ptbtest_deep ptbtest_op_odd '<svg id="flame"' '<td>ptbtest</td>' "ptbtest_fib ($fib_line)"; do
    grep -qF -- "$want" "$dom" || missing="$missing '$want'"
  done
  if [ -z "$missing" ]; then
    ok "$name: the rendered DOM has the flame graph, the image table and the named functions"
  else
    not_ok "$name: the rendered DOM lacks$missing"
  fi
  if [ -s "$work/report.png" ] && [ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ]; then
    ok "$name: chromium rendered a screenshot ($(wc -c < "$work/report.png") bytes PNG)"
  else
    not_ok "$name: no screenshot"; tail -3 "$work/report.log" | sed 's/^/    | /'
  fi
  # the check can fail: a broken script is caught
  sed 's/zoom(0,1);/zoom0(0,1);/' "$html" > "$work/broken.html"
  browser "$work/broken" "$work/broken.html"
  if grep -q '<body[^>]*data-ptboot-errors="[^"]*zoom0' "$work/broken.dom" && ! grep -q '<body[^>]*data-ptboot-report="ok"' "$work/broken.dom"; then
    ok "$name: a report whose script fails is caught (data-ptboot-errors)"
  else
    not_ok "$name: a broken report went unnoticed"
  fi
fi

echo "$name: $boot_failures failure(s)"
[ "$boot_failures" -eq 0 ]
