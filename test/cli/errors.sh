#!/bin/bash
# The host CLI on bad input: every command, given files that are missing,
# empty, a directory or binary garbage, ends with an exit status (no signal;
# with PTBOOT= an -fsanitize=address,undefined build, no sanitizer report)
# and says what was wrong on stderr; bad option values give exit 2 and a
# message naming the option. PTBOOT= runs another build of the CLI.
set -u
cd "$(dirname "$0")/../.."
P=${PTBOOT:-build/ptboot}
fail=0
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1}
cpu=test/fixtures/cpuid/skylake-client.txt

: > "$t/empty"
mkdir "$t/dir"
head -c 65536 "$P" > "$t/garbage"            # an ELF file: binary, no PSB, no CPUID lines

# run EXPECTED-STATUS PATTERN ARGS...: the exit status must be EXPECTED
# (or, for "nz", any of 1..125), stderr must match PATTERN (grep -E), and
# no sanitizer may have spoken.
run() {
    local want=$1 pat=$2; shift 2
    "$P" "$@" > "$t/out" 2> "$t/err"
    local rc=$?
    local ok=1
    if [ "$want" = nz ]; then
        [ $rc -ge 1 ] && [ $rc -le 125 ] || ok=0
    else
        [ $rc = "$want" ] || ok=0
    fi
    if grep -qE 'ERROR: AddressSanitizer|runtime error:' "$t/err"; then ok=0; fi
    if [ -n "$pat" ] && ! grep -qE -- "$pat" "$t/err"; then ok=0; fi
    if [ $ok = 0 ]; then
        echo "cli_errors: FAIL ptboot $*: exit $rc (want $want), stderr:"
        head -3 "$t/err"
        fail=1
    fi
}

# files that cannot be a trace / a CPUID dump / a serial log
for f in /nonexistent/file "$t/dir" "$t/empty" "$t/garbage"; do
    run nz "" info --cpuid "$f"
    run nz "" plan --cpuid "$f"
    run nz "" plan --cpuid "$f" --capture trace
    run nz "" serial "$f" --out "$t/dir"
    run nz "" flow --capture "$f"
    run nz "" summary --capture "$f"
    case $f in "$t/garbage"|"$t/empty") ;; *)
        run nz "" bench --pt "$f"
        run nz "" dump "$f"
        run nz "" flow --pt "$f" --raw "$t/garbage:0x1000"
        run nz "" summary --pt "$f" --raw "$t/garbage:0x1000" ;;
    esac
done
# an empty trace or binary garbage as a trace decodes to nothing, which is
# not an error (bench refuses an empty file: there is nothing to time)
for f in "$t/empty" "$t/garbage"; do
    run 0 "" dump "$f"
    run 0 "" flow --pt "$f" --raw "$t/garbage:0x1000"
    run 0 "" summary --pt "$f" --raw "$t/garbage:0x1000"
done
run 1 "empty" bench --pt "$t/empty"
run 0 "" bench --pt "$t/garbage" --rounds 1 --min-bytes 1
# a capture directory whose sideband is garbage names the file and line
cp "$t/garbage" "$t/dir/sideband.txt"; cp "$t/garbage" "$t/dir/trace.pt"
run 1 "sideband.txt:1:" flow --capture "$t/dir"
run 1 "sideband.txt:1:" summary --capture "$t/dir"

# unknown options: exit 2, named
for c in info dump flow summary serial bench; do
    run 2 "'?--no-such-option'?" $c --no-such-option
done
run 2 "'--no-such-option'" plan --cpuid $cpu --no-such-option
run 2 "plan: --no-such-option: unknown option word" plan --cpuid $cpu --capture trace --no-such-option

# options without their value or with a bad one: exit 2, named
run 2 "--cpuid needs" info --cpuid
run 2 "--cpuid needs" plan --cpuid
run 2 "--cpuid needs" plan --capture trace --cpuid
run 2 "--unit" plan --cpuid $cpu --capture trace --unit xx
run 2 "--pt FILE.*--capture DIR" flow --no-inst
run 2 "--pt FILE.*--capture DIR" summary --top 3
run 2 "--top" summary --pt "$t/garbage" --top x
run 2 "--out" serial "$t/garbage" --out
run 2 "not a directory" serial "$t/garbage" --out "$t/empty"
# --out DIR is made when missing: a log with one small dump recovers into it
build/test/serial_enc "$t/garbage" > "$t/one.log"
run 0 "" serial "$t/one.log" --out "$t/made" --quiet
cmp -s "$t/made/garbage" "$t/garbage" || { echo "cli_errors: FAIL serial --out did not make $t/made with the file"; fail=1; }
for v in x 0 -3 2x ""; do
    run 2 "--rounds.*'$v'" bench --pt "$t/garbage" --rounds "$v"
done
for v in x -1 64Q 1MM; do
    run 2 "--min-bytes.*'$v'" bench --pt "$t/garbage" --min-bytes "$v"
done
# --min-bytes takes the suffixes its help gives for the default (64M)
run 0 "" bench --pt "$t/garbage" --rounds 1 --min-bytes 1K
grep -q '^bench: packets ' "$t/out" || { echo "cli_errors: FAIL bench --min-bytes 1K: no result line"; fail=1; }

# --help: exit 0, and bench's describes both of its benchmarks
for c in info plan dump flow summary serial bench; do
    run 0 "" $c --help
    [ -s "$t/out" ] || { echo "cli_errors: FAIL ptboot $c --help printed nothing"; fail=1; }
done
"$P" bench --help > "$t/out"
for w in --pages --raw --filter --verify 'bench: flow '; do
    grep -q -- "$w" "$t/out" || { echo "cli_errors: FAIL bench --help does not mention $w"; fail=1; }
done

[ $fail = 0 ] && echo "cli_errors: ok (bad files, unknown options, bad values, --help)"
exit $fail
