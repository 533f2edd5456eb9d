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
  local name=$1 trace=$2 pages=$3 opts=$4 bytes=${5:-} end='$'
  # --tail: the end line also says how many instructions the tail gave
  case " $opts " in *" --tail "*) end=' tail=[0-9]+ tail_end=[a-z ]+$' ;; esac
  if [ -n "$bytes" ]; then head -c "$bytes" "$trace"; else cat "$trace"; fi > "$BOOT_DIR/$name.pt"
  cp "$pages.dump" "$BOOT_DIR/$name-code.dump"
  cp "$pages.addr" "$BOOT_DIR/$name-code.addr"
  local args="--pt $name.pt --pages $name-code $opts"
  (cd "$BOOT_DIR" && ../../ptboot flow --no-inst $args) > "$BOOT_DIR/$name.expected" 2>&1
  boot_image "$name" "--shutdown flow $args" "$BOOT_DIR/$name.pt" "$BOOT_DIR/$name-code.dump" \
    "$BOOT_DIR/$name-code.addr"
  boot_run "$name"
  expect_rc "$name" 0 "clean shutdown"
  expect "$name" "^ptboot: flow end insns=[1-9][0-9]* errors=[0-9]+$end" "flow finished"
  expect "$name" '^ptboot: exit status=0 sbrk_calls=0 msr_faults=0$' "no heap allocation"
  expect_same_as_host "$name" flow "ptboot flow --no-inst $args"
}

# (Traces of OVMF from the virtual trace unit are decoded on the target by
# test/vpt/on_target.sh, against the ground truth as well.)

real=${PTBOOT_REAL_TRACES:-../shared/traces/real}
if [ -d "$real" ]; then
  flow_case flow-foo "$real/foo/trace.pt" "$real/foo/pages" "--filter 7ffff7819000-7ffff79ca000 --event:ip" 3072
  # 32-bit code, and a trace whose start needs a resync (an error line)
  flow_case flow-avscript "$real/avscript_32/trace.pt" "$real/avscript_32/pages" "--filter 1000-7ffffffff000 --offset" 3072
  expect flow-avscript '^\[[0-9a-f]+, [0-9a-f]+: error: ' "error line reported, decoding went on"
  # a trace cut off: the static tail after its last packet (--tail)
  flow_case flow-tail "$real/Unzip/trace.pt" "$real/Unzip/pages" "--filter 400000-427000 --tail" 3000
  expect flow-tail '^\[tail\]$' "the tail after the trace's end"
  expect flow-tail '^ptboot: flow end .* tail=59 tail_end=trace$' "59 instructions inferred, up to a jcc"
else
  echo "skip: $real not found, real-trace flow cases not run"
  boot_skip "real-trace flow cases ($real not found)"
fi

# Time on the target: a generated program with timing packets (TSC/TMA in
# PSB+, MTC and CYC; test/flow/flowgen.c), its raw code files turned into a
# page dump, decoded with ptxed's --time --event:time on both sides.
# raw_to_pages RAW BASE PREFIX: appends RAW, loaded at BASE, to PREFIX.dump
# and PREFIX.addr (4 KiB pages, zero padded; one LE u64 address per page).
raw_to_pages() {
  local raw=$1 base=$(($2)) prefix=$3 size pages i a
  size=$(stat -c %s "$raw")
  pages=$(( (size + 4095) / 4096 ))
  { cat "$raw"; head -c $(( pages * 4096 - size )) /dev/zero; } >> "$prefix.dump"
  for ((i = 0; i < pages; i++)); do
    a=$(( base + i * 4096 ))
    printf "$(printf '\\x%02x' $((a & 255)) $((a >> 8 & 255)) $((a >> 16 & 255)) $((a >> 24 & 255)) \
      $((a >> 32 & 255)) $((a >> 40 & 255)) $((a >> 48 & 255)) $((a >> 56 & 255)))" >> "$prefix.addr"
  done
}
gen=$BOOT_DIR/flowgen
rm -rf "$gen" && mkdir -p "$gen"
build/test/flowgen --seeds 10 --insns 3000 --write "$gen" > /dev/null || exit 1
: > "$gen/code.dump"; : > "$gen/code.addr"
raw_to_pages "$gen/seed7.a.bin" 0x400000 "$gen/code"
raw_to_pages "$gen/seed7.32.bin" 0x600000 "$gen/code"
raw_to_pages "$gen/seed7.out.bin" 0x900000 "$gen/code"
flow_case flow-time "$gen/seed7.pt" "$gen/code" \
  "--mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 --time --event:time"
# the page dump must hold the same code as the raw files
build/ptboot flow --no-inst --pt "$gen/seed7.pt" --raw "$gen/seed7.a.bin:0x400000" \
  --raw "$gen/seed7.32.bin:0x600000" --raw "$gen/seed7.out.bin:0x900000" \
  --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 --time --event:time > "$gen/raw.txt" 2>&1
if cmp -s "$gen/raw.txt" "$BOOT_DIR/flow-time.expected"; then ok "flow-time: page dump decodes as the raw files"
else not_ok "flow-time: page dump and raw files decode differently"; fi
expect flow-time '^0000000000000000  [0-9a-f]{16}$|^[0-9a-f]{16}  [0-9a-f]{16}$' "instruction lines carry a time"
expect flow-time '^[1-9a-f][0-9a-f]{15}  [0-9a-f]{16}$|^0[0-9a-f]*[1-9a-f][0-9a-f]*  [0-9a-f]{16}$' "a non-zero time reached the target's output"

# Event Trace and TRIG on the target: flowgen's seed 2 has CFE.INTR (with
# EVD CR2), CFE.IRET and TRIG packets, and timing; the block decoder's own
# lines too (block boundaries from the block cache, ticks, the counts).
: > "$gen/code2.dump"; : > "$gen/code2.addr"
raw_to_pages "$gen/seed2.a.bin" 0x400000 "$gen/code2"
raw_to_pages "$gen/seed2.32.bin" 0x600000 "$gen/code2"
raw_to_pages "$gen/seed2.out.bin" 0x900000 "$gen/code2"
flow_case flow-trig-et "$gen/seed2.pt" "$gen/code2" \
  "--event:ip --stat --block:show-blocks --mtc-freq 3 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 168 --event:tick"
expect flow-trig-et '^\[trig [0-9a-f]{2}, ip: [0-9a-f]{16}\]$' "TRIG events"
expect flow-trig-et '^\[interrupt [0-9]+(, cr2: [0-9a-f]{16})?, ip: [0-9a-f]{16}\]$' "Event Trace interrupts"
expect flow-trig-et '^\[iret\]$' "Event Trace IRETs"
expect flow-trig-et '^blocks:.[0-9]+\.$' "the block count"

# APX on the target: flowgen's seed 9 runs REX2 instructions, JMPABS and
# ERETU/ERETS (test/flow/flowgen.c, "APX, FRED, UIRET") in its traced code.
: > "$gen/code9.dump"; : > "$gen/code9.addr"
raw_to_pages "$gen/seed9.a.bin" 0x400000 "$gen/code9"
raw_to_pages "$gen/seed9.32.bin" 0x600000 "$gen/code9"
raw_to_pages "$gen/seed9.out.bin" 0x900000 "$gen/code9"
flow_case flow-apx "$gen/seed9.pt" "$gen/code9" "--event:ip --stat --block:show-blocks"
expect flow-apx '^insn: [0-9]{3,}\.$' "the APX program decoded"

# A trace that enables tracing at the local APIC's MMIO page, then at an
# unmapped address: with --live the decoder may read only RAM from the
# memory map, so both give error lines and the machine goes on.
psb='\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82\x02\x82'
mode64='\x99\x01' psbend='\x02\x23' tnt='\x06'
pge_apic='\xd1\x00\x00\xe0\xfe\x00\x00\x00\x00'
pge_far='\xd1\x00\x00\x00\x00\xff\x7f\x00\x00'
# (an MTC between: the first error stands at it, and the decoder, as
# libipt's, syncs at the next PSB after where it stands)
mtc='\x59\x00'
printf "$psb$mode64$psbend$pge_apic$tnt$mtc$psb$mode64$psbend$pge_far$tnt" > "$BOOT_DIR/live.pt"
boot_image flow-live "--shutdown flow --live --pt live.pt" "$BOOT_DIR/live.pt"
boot_run flow-live
expect_rc flow-live 0 "clean shutdown, no exception"
expect flow-live '^\[enabled\]$' "tracing enabled at the MMIO address"
expect flow-live '^\[[0-9a-f]+, fee00000: error: ' "MMIO page refused"
expect flow-live '^\[[0-9a-f]+, 7fff00000000: error: ' "unmapped address refused"
expect flow-live '^ptboot: flow end insns=0 errors=[2-9]$' "no instruction decoded from outside RAM"
boot_done
