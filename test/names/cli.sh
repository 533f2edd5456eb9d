#!/usr/bin/env bash
# The host CLI's names and exports options: bad words give a clear message
# and exit 2, files that cannot be read exit 1; --help lists the options;
# and progress on stderr: shown for a command that runs longer than a second
# when stderr is a terminal (a pty from script(1)), and never in a log.
set -u
cd "$(dirname "$0")/../.."
P=build/ptboot
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
ok() { echo "ok: names_cli: $*"; }
not_ok() { echo "FAIL: names_cli: $*"; fails=$((fails + 1)); }

# expect_exit RC REGEX CMD...: exit status RC and a stderr line matching REGEX
expect_exit() {
  local want=$1 re=$2
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" = "$want" ] && grep -Eq -- "$re" "$tmp/err"; then
    ok "'${*:2}': exit $rc, $(head -1 "$tmp/err")"
  else
    not_ok "'$*': exit $rc (want $want), stderr: $(head -2 "$tmp/err")"
  fi
}
printf 'not a trace' > "$tmp/x.pt"
expect_exit 2 'export: --format chrome\|folded\|html is required' $P export --pt "$tmp/x.pt" -o "$tmp/o"
expect_exit 2 'export: -o FILE is required' $P export --pt "$tmp/x.pt" --format html
expect_exit 2 "export: --format svg: want chrome, folded or html" $P export --pt "$tmp/x.pt" --format svg -o "$tmp/o"
expect_exit 2 "export: --weight bytes: want insns or ticks" $P export --pt "$tmp/x.pt" --weight bytes
expect_exit 2 "export: --clock wall: want auto, tsc or insns" $P export --pt "$tmp/x.pt" --clock wall
# --module's numbers through the one parser: a sign or blank is no number (strtoull took them)
expect_exit 2 "export: --module wants BASE:SIZE:NAME" $P export --pt "$tmp/x.pt" --format folded -o "$tmp/o" --module -1000:10:a
expect_exit 2 "export: --module wants BASE:SIZE:NAME" $P export --pt "$tmp/x.pt" --format folded -o "$tmp/o" --module "1000: 10:a"
expect_exit 2 "export: --module wants BASE:SIZE:NAME" $P export --pt "$tmp/x.pt" --format folded -o "$tmp/o" --module 1000:0:a
expect_exit 2 "export: --tsc-hz 0: want a frequency" $P export --pt "$tmp/x.pt" --tsc-hz 0
expect_exit 2 "export: unknown option '--frobnicate'" $P export --frobnicate
expect_exit 2 "export: --symbols needs a file or directory" $P export --pt "$tmp/x.pt" --symbols
expect_exit 1 "export: --symbols /nonexistent: No such file or directory" $P export --pt "$tmp/x.pt" --symbols /nonexistent
expect_exit 1 "summary: --symbols .*x.pt: not a linked ELF file or PE/COFF image" $P summary --pt "$tmp/x.pt" --symbols "$tmp/x.pt"
expect_exit 1 "flow: --elf .*x.pt: not an ELF file" $P flow --pt "$tmp/x.pt" --elf "$tmp/x.pt"
expect_exit 1 "flow: --pe .*x.pt: no MZ header" $P flow --pt "$tmp/x.pt" --pe "$tmp/x.pt:0x1000"
expect_exit 1 "summary: .*missing.so: No such file" $P summary --pt "$tmp/x.pt" --elf "$tmp/missing.so"
expect_exit 1 "export: .*/nodir/o.html: No such file or directory" $P export --pt "$tmp/x.pt" --format html -o "$tmp/nodir/o.html"
for c in flow summary export; do
  if $P $c --help | grep -q -- '--symbols' && $P $c --help | grep -q -- '--elf'; then
    ok "$c --help lists --symbols and --elf"
  else
    not_ok "$c --help lacks --symbols or --elf"
  fi
done

# progress: a dump of a 64 MiB synthetic trace takes more than a second
gen=build/bench/gen_trace
if [ -x "$gen" ] && command -v script > /dev/null; then
  "$gen" --size 67108864 --seed 3 "$tmp/big.pt" > /dev/null
  script -qc "$P dump $tmp/big.pt > /dev/null" /dev/null > "$tmp/tty" 2>&1
  if grep -qa $'\rptboot dump: .*% of 67.1 MB' "$tmp/tty" && grep -qa $'\r\033\[K' "$tmp/tty"; then
    ok "progress on a terminal: '$(tr '\r' '\n' < "$tmp/tty" | grep -a 'ptboot dump' | tail -1)', erased at the end"
  else
    not_ok "no progress on a terminal for a long dump"
  fi
  $P dump "$tmp/big.pt" > /dev/null 2> "$tmp/log"
  if [ ! -s "$tmp/log" ]; then ok "no progress when stderr is not a terminal"; else not_ok "progress written to a log"; fi
else
  not_ok "build/bench/gen_trace or script(1) missing"
fi
echo "names_cli: $fails failed"
[ "$fails" -eq 0 ]
