#!/usr/bin/env bash
# `ptboot.efi dump` on the target prints exactly the lines of the host's
# `ptboot dump` for the same file and options: a synthetic trace with every
# packet kind (drawn independently) and some corrupted bytes (so error and
# resync lines are compared too), with default options, and with options,
# a CPU's errata and a byte range.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

sample=$BOOT_DIR/sample.pt
build/bench/gen_trace --size 24576 --seed 7 --uniform --all-kinds --corrupt 20 "$sample" >/dev/null || exit 1

# dump_case NAME "DUMP ARGS" ERRORS-REGEX: boots a stick with sample.pt and
# compares its serial lines with the host's.
dump_case() {
  local name=$1 args=$2 errors=$3
  (cd "$BOOT_DIR" && ../../ptboot dump $args) > "$BOOT_DIR/$name.expected" 2>/dev/null
  boot_image "$name" "--shutdown dump $args" "$sample"
  boot_run "$name"
  expect_rc "$name" 0 "clean shutdown"
  expect "$name" '^ptboot: dump begin file=' "dump started"
  expect "$name" '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "no heap allocation while decoding"
  expect "$name" "^ptboot: dump end packets=[1-9][0-9]* errors=$errors skipped=[0-9]+\$" "dump finished, errors=$errors"
  expect_same_as_host "$name" dump "ptboot dump $args"
}

dump_case dump-default "sample.pt" "[1-9][0-9]*"
dump_case dump-options "--raw --lastip --no-pad --exec-mode --cpu 6/85 sample.pt:0x100-0x5000" "[0-9]+"
# the sample has TRIG, CFE, EVD and PWRE packets; PWRE's HW flag as libipt
# reads it (bit 3), and a CPU libipt does not know (its diagnostic line)
dump_case dump-libipt "--libipt-pwre --cpu 6/1 sample.pt" "[0-9]+"
expect dump-libipt '^\[0: failed to determine errata: unknown cpu\]$' "unknown CPU reported"
expect dump-libipt ' trig +[0-9a-f]{2}' "TRIG decoded"
expect dump-libipt ' cfe +[0-9]+' "CFE decoded"
# ptdump's time tracking on the target: the time column, calibration
# from MTC/TSC with the CPUID 15h ratio, and a CPU's timing errata.
dump_case dump-time "--time --time-delta --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 100 --nom-freq 20 --cpu 6/94 sample.pt" "[0-9]+"
expect dump-time '  tsc +\+[0-9a-f]+$' "time column printed"

boot dump-missing "--shutdown dump nosuch.pt"
expect_rc dump-missing 0 "clean shutdown"
expect dump-missing '^ptboot: error: dump: nosuch.pt: not found$' "missing file named"
expect dump-missing '^ptboot: exit status=1 sbrk_calls=0 ' "failure status, no allocation"
boot_done
