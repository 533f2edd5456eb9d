#!/usr/bin/env bash
# `ptboot.efi flow` on the target prints exactly the lines of the host's
# `ptboot flow --no-inst` for the same trace, code pages and options; and
# with --live, a trace that points into MMIO or unmapped space gives error
# lines instead of touching that memory.
cd "$(dirname "$0")/../.." && . test/boot/lib.sh

# flow_case NAME TRACE PAGES-PREFIX "OPTIONS" [BYTES]: TRACE (its first
# BYTES only, if given) with its code pages on a stick, decoded on the target
# and on the host.
flow_case() {
  local name=$1 trace=$2 pages=$3 opts=$4 bytes=${5:-}
  if [ -n "$bytes" ]; then head -c "$bytes" "$trace"; else cat "$trace"; fi > "$BOOT_DIR/$name.pt"
  cp "$pages.dump" "$BOOT_DIR/$name-code.dump"
  cp "$pages.addr" "$BOOT_DIR/$name-code.addr"
  local args="--pt $name.pt --pages $name-code $opts"
  (cd "$BOOT_DIR" && ../../ptboot flow --no-inst $args) > "$BOOT_DIR/$name.expected" 2>&1
  boot_image "$name" "--shutdown flow $args" "$BOOT_DIR/$name.pt" "$BOOT_DIR/$name-code.dump" \
    "$BOOT_DIR/$name-code.addr"
  boot_run "$name"
  expect_rc "$name" 0 "clean shutdown"
  expect "$name" '^ptboot: flow end insns=[1-9][0-9]* errors=[0-9]+$' "flow finished"
  expect "$name" '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "no heap allocation"
  expect_same_as_host "$name" flow "ptboot flow --no-inst $args"
}

# (Traces of OVMF from the virtual trace unit are decoded on the target by
# test/vpt/on_target.sh, against the ground truth as well.)

real=../shared/traces/real
if [ -d "$real" ]; then
  flow_case flow-foo "$real/foo/trace.pt" "$real/foo/pages" "--filter 7ffff7819000-7ffff79ca000 --event:ip" 3072
  # 32-bit code, and a trace whose start needs a resync (an error line)
  flow_case flow-avscript "$real/avscript_32/trace.pt" "$real/avscript_32/pages" "--filter 1000-7ffffffff000 --offset" 3072
  expect flow-avscript '^\[[0-9a-f]+, [0-9a-f]+: error: ' "error line reported, decoding went on"
else
  echo "skip: $real not found, real-trace flow cases not run"
fi

# A trace that enables tracing at the local APIC's MMIO page, then at an
# unmapped address: with --live the decoder may read only RAM from the
# memory map, so both give error lines and the machine goes on.
psb='\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
mode64='\x99\x01' psbend='\x02\x23' tnt='\x06'
pge_apic='\xd1\x00\x00\xe0\xfe\x00\x00\x00\x00'
pge_far='\xd1\x00\x00\x00\x00\xff\x7f\x00\x00'
printf "$psb$mode64$psbend$pge_apic$tnt$psb$mode64$psbend$pge_far$tnt" > "$BOOT_DIR/live.pt"
boot_image flow-live "--shutdown flow --live --pt live.pt" "$BOOT_DIR/live.pt"
boot_run flow-live
expect_rc flow-live 0 "clean shutdown, no exception"
expect flow-live '^\[enabled\]$' "tracing enabled at the MMIO address"
expect flow-live '^\[[0-9a-f]+, fee00000: error: ' "MMIO page refused"
expect flow-live '^\[[0-9a-f]+, 7fff00000000: error: ' "unmapped address refused"
expect flow-live '^ptboot: flow end insns=0 errors=[2-9]$' "no instruction decoded from outside RAM"
boot_done
