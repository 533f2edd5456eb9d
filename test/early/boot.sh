#!/bin/bash
# ptboot's driver inside the firmware volume, booted (docs/early-boot.md).
# Seven QEMU runs of a copy of OVMF_CODE_4M.fd with build/ptbootdrv.efi
# injected by `ptboot fv inject`, a stick whose BOOTX64.EFI is the OS-loader
# stand-in (test/resident/osloader.c: it calls ExitBootServices, then shuts
# the machine down):
#
# 1. default placement (right after the DXE core, depex after the CPU
#    architectural protocol), words '--unit soft --image SmbiosPlatformDxe
#    --image PciBusDxe --follow': the driver says it was dispatched from the
#    volume with the RAW section's words, traces SmbiosPlatformDxe's entry
#    point and everything it calls (the DXE core, SmbiosDxe, ...) until it
#    returns, then PciBusDxe's (loaded later: a second session, in the same
#    buffer);
#    the report at ExitBootServices decodes it without error, as many
#    instructions as the unit counted, names the driver's functions as
#    SmbiosPlatformDxe+0x<offset> (the call tree's root is its entry point:
#    entry - base from the armed and image lines), and is, line for line,
#    the host's `ptboot summary` of the files `ptboot serial` recovers from
#    the log; the images include drivers dispatched after ptboot.
# 2. --apriori, words '--unit soft --image PciBusDxe': ptboot is dispatched
#    first, before the CPU driver, waits for the CPU Architectural Protocol
#    to take #DB, and then traces PciBusDxe's entry (filter on its image);
#    the variable service is not up yet, and it says so.
# 3. `install --early --unit soft --image PciBusDxe` from the app on the
#    stick (stock OVMF) writes the variable PtbootEarly; the injected image
#    (RAW words naming SmbiosPlatformDxe) booted with the same variable
#    store takes the variable's words and traces PciBusDxe; `uninstall
#    --early` removes the variable.
# 4. the hang recorder in the early driver (docs/hang.md): words '--unit
#    soft --image PciHostBridgeDxe --follow --hang-timeout 1' (its entry
#    runs millions of instructions: the timeout comes first); the
#    recorder's variable waits for the Variable Write Architectural
#    Protocol and is written when it comes; the hang report (the session
#    ends, reason hang) decodes without error, names PciHostBridgeDxe's
#    functions, and its serial dump gives the host the same summary; the
#    boot goes on to ExitBootServices, which reports the same capture.
# 5. DXE scale: words '--unit soft --image PciHostBridgeDxe --follow
#    --max-insns 2200000 --buffer 2M no-mtc': over two million
#    instructions of the driver's entry point and what it calls, ended by
#    the bound (not a full buffer), decoded on the target without error,
#    the report's summary over the whole trace (no window) rooted at the
#    entry point, naming the driver's functions as PciHostBridgeDxe+0x<off>,
#    and byte for byte the host's summary of the files recovered from the
#    serial dump (call counts and all). About 35-50 s of the total.
# About 2 minutes under TCG (109 s measured, load average 3-4).
set -u
cd "$(dirname "$0")/../.."
P=build/ptboot
W=build/test/early
mkdir -p "$W"
CODE=${OVMF_CODE_TEMPLATE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
fails=0
ok() { echo "ok: $*"; }
not_ok() { echo "FAIL: $*"; fails=$((fails + 1)); }
# has NAME PATTERN DESC: the cleaned log NAME has a line matching PATTERN
has() { if grep -qE -- "$2" "$W/$1.txt"; then ok "$1: $3"; else not_ok "$1: $3 (no line /$2/)"; fi; }
hex() { printf '%d' "$1"; }
for f in "$P" build/ptbootdrv.efi build/osloader.efi "$CODE"; do
    [ -f "$f" ] || { echo "early boot: missing $f"; exit 1; }
done
scripts/mkimage.sh "$W/osl.img" build/osloader.efi "" || exit 1

# boot NAME [STICK]: boots $W/NAME.fd (stock OVMF if there is none) with the
# stick (the loader's by default); cleaned log $W/NAME.txt
boot() {
    local code=$W/$1.fd
    [ -f "$code" ] || code=$CODE
    OVMF_CODE="$code" QUIET=1 scripts/qemu-run.sh "${2:-$W/osl.img}" "$W/$1.log" "${BOOT_TIMEOUT:-400}"
    local rc=$?
    tr -d '\r' < "$W/$1.log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' > "$W/$1.txt"
    if [ $rc = 0 ]; then ok "$1: booted, the loader shut the machine down"; else not_ok "$1: qemu-run exit $rc"; fi
}

# ---- 1. default placement, --follow ----
words='--unit soft --image SmbiosPlatformDxe --image PciBusDxe --follow'
"$P" fv inject "$CODE" -o "$W/follow.fd" --config "$words" > /dev/null || { echo "inject failed"; exit 1; }
boot follow
has follow "^ptboot: resident dispatched from a firmware volume file=92517505-2f67-4548-93dd-1e1d648d7531 words=firmware-volume$" \
    "dispatched from the firmware volume, words from its RAW section"
has follow "^ptboot: resident driver start base=0x[0-9a-f]+ options='$words'$" "the words as injected"
has follow "^ptboot: resident exit-boot-services state=stopped reason=returned$" "the traced entry point returned"
has follow "^ptboot: resident started from a firmware volume file=92517505" "the report says where the driver came from"
armed=$(grep -m1 '^ptboot: resident armed image=SmbiosPlatformDxe' "$W/follow.txt")
entry=$(sed -nE 's/.* entry=(0x[0-9a-f]+) follow=all .*/\1/p' <<< "$armed")
row=$(grep -m1 -E '^ptboot: resident image [0-9]+ .* name=SmbiosPlatformDxe traced$' "$W/follow.txt")
base=$(sed -nE 's/.* base=(0x[0-9a-f]+) .*/\1/p' <<< "$row")
status=$(grep -m1 '^ptboot: resident status ' "$W/follow.txt")
insns=$(sed -nE 's/.* insns=([0-9]+) .*/\1/p' <<< "$status")
has follow "^ptboot: resident armed image=PciBusDxe entry=0x[0-9a-f]+ session=2$" "the second --image: a second session"
has follow "^ptboot: resident image [0-9]+ .* name=PciBusDxe traced$" "both images marked traced"
if [ -n "$entry" ] && [ -n "$base" ] && [ -n "$insns" ] && [ "$insns" -gt 10000 ] && [ "$insns" -lt 2000000 ]; then
    ok "follow: armed at the entry $entry, image at $base, $insns instructions traced"
else
    not_ok "follow: armed='$armed' row='$row' status='$status'"
fi
has follow "^ptboot: flow end insns=$insns errors=0$" "decoded on the target: as many instructions as the unit traced, no error"
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end/p' "$W/follow.txt" | sed '1d;$d' > "$W/follow.sum"
if [ -n "$entry" ] && [ -n "$base" ] &&
    grep -qE "\(caller of SmbiosPlatformDxe\+0x$(printf '%x' $(( $(hex "$entry") - $(hex "$base") )))\)" "$W/follow.sum"; then
    ok "follow: the call tree starts at the driver's entry point, SmbiosPlatformDxe+$(printf '0x%x' $(( $(hex "$entry") - $(hex "$base") )))"
else
    not_ok "follow: no call-tree root at the entry point"
fi
nfun=$(sed -n '/^== call tree/,/^== hot blocks/p' "$W/follow.sum" | grep -oE ' SmbiosPlatformDxe\+0x[0-9a-f]+$' | sort -u | wc -l)
if [ "$nfun" -ge 3 ]; then ok "follow: $nfun of the driver's functions in the call tree, named SmbiosPlatformDxe+0x<offset>"; else not_ok "follow: $nfun driver functions"; fi
for m in DxeCore SmbiosDxe PciBusDxe; do
    grep -qE "^ +[0-9]+ +[0-9.]+% .* $m$" "$W/follow.sum" && ok "follow: the trace follows it into $m" ||
        not_ok "follow: no $m in the images table"
done
# the host, from the serial log alone
rm -rf "$W/follow.cap"
"$P" serial "$W/follow.log" --out "$W/follow.cap" --quiet > "$W/follow.serial" 2>&1
# (the host's own 'note:' lines, e.g. that tracing stopped before the run
# ended, are the host's: the target has no such line)
if "$P" summary --capture "$W/follow.cap" 2> "$W/follow.host.err" | grep -v '^note: ' > "$W/follow.host" &&
    [ -s "$W/follow.sum" ] && cmp -s "$W/follow.sum" "$W/follow.host"; then
    ok "follow: the host's summary of the recovered files is the target's, line for line ($(wc -l < "$W/follow.sum") lines)"
else
    not_ok "follow: host summary differs from the target's"
    diff "$W/follow.sum" "$W/follow.host" | head -10
fi
grep -q '^unit soft' "$W/follow.cap/sideband.txt" 2>/dev/null && ok "follow: the sideband names the soft unit" ||
    not_ok "follow: sideband"
# the images: every one the driver saw, drivers dispatched after it among them
nimg=$(grep -cE '^ptboot: resident image [0-9]+ ' "$W/follow.txt")
has follow "^ptboot: trace unit=soft cpu=0 bytes=[0-9]+ wrapped=0 stopped=1 insns=$insns errors=0 images=$nimg$" \
    "the trace line: $nimg images"
after=$(sed -n '/^ptboot: resident image [0-9]* .* name=ptboot$/,$p' "$W/follow.txt" | grep -E '^ptboot: resident image ' | sed -E 's/.* name=//')
for d in SmbiosPlatformDxe PciBusDxe BdsDxe BOOTX64.EFI; do
    grep -qE "^$d( traced)?$" <<< "$after" && ok "follow: $d was dispatched after ptboot and recorded" ||
        not_ok "follow: $d not recorded after ptboot"
done

# ---- 2. --apriori: before the CPU driver ----
words='--unit soft --image PciBusDxe'
"$P" fv inject "$CODE" -o "$W/apriori.fd" --apriori --config "$words" > /dev/null || { echo "inject failed"; exit 1; }
boot apriori
has apriori "^ptboot: resident waiting for the CPU Architectural Protocol \(#DB\)$" "started before the CPU driver: waits for it"
has apriori "^ptboot: resident #DB handler registered \(CPU Architectural Protocol\)$" "took #DB when the CPU driver came"
first=$(grep -E '^ptboot: resident image [0-9]+ ' "$W/apriori.txt" | sed -E 's/.* name=//' | head -3 | tr '\n' ' ')
if [[ $first == "DxeCore ptboot "* ]]; then ok "apriori: ptboot is the first driver the DXE core started"; else not_ok "apriori: first images: $first"; fi
after=$(sed -n '/^ptboot: resident image [0-9]* .* name=ptboot$/,$p' "$W/apriori.txt" | grep -E '^ptboot: resident image ' | sed -E 's/.* name=//')
grep -qx CpuDxe <<< "$after" && ok "apriori: CpuDxe was dispatched after ptboot" || not_ok "apriori: CpuDxe before ptboot"
has apriori "^ptboot: resident exit-boot-services state=stopped reason=returned$" "PciBusDxe's entry point traced until it returned"
ainsns=$(sed -nE 's/^ptboot: resident status .* insns=([0-9]+) .*/\1/p' "$W/apriori.txt" | head -1)
has apriori "^ptboot: flow end insns=${ainsns:-x} errors=0$" "decoded: ${ainsns:-?} instructions, no error"
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end/p' "$W/apriori.txt" | sed '1d;$d' > "$W/apriori.sum"
grep -qE ' PciBusDxe\+0x[0-9a-f]+$' "$W/apriori.sum" && ok "apriori: PciBusDxe's functions named" || not_ok "apriori: no PciBusDxe functions"
has apriori "^ptboot: resident note: the variable service is not up yet \(status 0x[0-9a-f]+\): PtbootEarly" \
    "before the variable service: says the variable cannot be read"

# ---- 3. install --early: the words from the variable ----
export OVMF_VARS_FILE=$W/early-vars.fd
cp "${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}" "$OVMF_VARS_FILE" || exit 1
scripts/mkimage.sh "$W/app.img" build/ptboot.efi \
    "--shutdown install --early --bogus ; install --early --unit soft --image PciBusDxe" || exit 1
rm -f "$W/install-early.fd"
boot install-early "$W/app.img"
has install-early "^ptboot: error: install: unknown option '--bogus'" "install --early checks the words"
has install-early "^ptboot: install early variable=PtbootEarly bytes=29 options='--unit soft --image PciBusDxe'$" \
    "install --early wrote PtbootEarly"
"$P" fv inject "$CODE" -o "$W/variable.fd" --config '--unit soft --image SmbiosPlatformDxe' > /dev/null || exit 1
boot variable
has variable "^ptboot: resident dispatched from a firmware volume file=92517505-2f67-4548-93dd-1e1d648d7531 words=variable$" \
    "the driver in the volume took the variable's words"
has variable "^ptboot: resident driver start base=0x[0-9a-f]+ options='--unit soft --image PciBusDxe'$" "the variable's words"
has variable "^ptboot: resident armed image=PciBusDxe " "traced what the variable says, not the volume's SmbiosPlatformDxe"
has variable "^ptboot: resident exit-boot-services state=stopped reason=returned$" "PciBusDxe traced until it returned"
scripts/mkimage.sh "$W/app.img" build/ptboot.efi "--shutdown uninstall --early ; uninstall --early" || exit 1
boot uninstall-early "$W/app.img"
has uninstall-early "^ptboot: uninstall early removed=1$" "uninstall --early removed PtbootEarly"
has uninstall-early "^ptboot: uninstall early removed=0$" "a second one finds nothing"
unset OVMF_VARS_FILE

# ---- 4. the hang timeout and the recorder in the early driver ----
words='--unit soft --image PciHostBridgeDxe --follow --hang-timeout 1'
"$P" fv inject "$CODE" -o "$W/hang.fd" --config "$words" > /dev/null || { echo "inject failed"; exit 1; }
boot hang
has hang "^ptboot: resident dispatched from a firmware volume file=92517505-2f67-4548-93dd-1e1d648d7531 words=firmware-volume$" \
    "dispatched from the firmware volume"
has hang "^ptboot: resident recorder at=0x[0-9a-f]+ bytes=[0-9]+ generation=[0-9]+ place=lowest-free .* hang_timeout=1 repeat=0 ring=1$" \
    "the recorder placed, hang timeout 1 s, a ring"
has hang "^ptboot: resident recorder variable waits for the Variable Write Architectural Protocol$" \
    "before the variable service: the recorder's variable waits"
has hang "^ptboot: resident recorder variable written generation=[0-9]+ \(Variable Write Architectural Protocol\)$" \
    "and is written when the service comes"
has hang "^ptboot: resident armed image=PciHostBridgeDxe entry=0x[0-9a-f]+ follow=all max-insns=2000000$" "armed with --follow"
has hang "^ptboot: hang report begin n=1 after=1s unit=soft image=PciHostBridgeDxe tpl=(callback|notify) " \
    "a hang report 1 s (firmware time) after tracing began"
has hang "^ptboot: hang report end n=1 repeat=0$" "the report ended, no repeat"
sed -n '/^ptboot: hang report begin/,/^ptboot: hang report end/p' "$W/hang.txt" > "$W/hang.report"
grep -qE '^ptboot: resident status state=stopped reason=hang .* insns=[1-9][0-9]* ' "$W/hang.report" &&
    ok "hang: the report's capture stopped with reason hang" || not_ok "hang: no status line with reason hang in the report"
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end/p' "$W/hang.report" > "$W/hang.sum.all"
grep -qE '^ptboot: trace summary end lines=[0-9]+ insns=[1-9][0-9]* errors=0$' "$W/hang.sum.all" &&
    ok "hang: the report's summary decodes without error" || not_ok "hang: the report's summary has errors or none"
sed '1d;$d' "$W/hang.sum.all" > "$W/hang.sum"
grep -qE ' PciHostBridgeDxe\+0x[0-9a-f]+$' "$W/hang.sum" && ok "hang: PciHostBridgeDxe's functions named" ||
    not_ok "hang: no PciHostBridgeDxe functions in the report"
has hang "^ptboot: resident exit-boot-services state=stopped reason=hang$" "the boot went on to ExitBootServices"
rm -rf "$W/hang.cap"
"$P" serial "$W/hang.log" --out "$W/hang.cap" --quiet > "$W/hang.serial" 2>&1
if "$P" summary --capture "$W/hang.cap" 2> "$W/hang.host.err" | grep -v '^note: ' > "$W/hang.host" &&
    [ -s "$W/hang.sum" ] && cmp -s "$W/hang.sum" "$W/hang.host"; then
    ok "hang: the host's summary of the hang report's dump is the target's ($(wc -l < "$W/hang.sum") lines)"
else
    not_ok "hang: host summary differs from the hang report's"
    diff "$W/hang.sum" "$W/hang.host" | head -10
fi

# ---- 5. DXE scale: a few million instructions of one named driver ----
# PciHostBridgeDxe's entry point runs millions of instructions (CpuDxe's
# memory-attribute updates through PcdDxe): the session ends at the bound
# (reason bound), not at a full buffer. no-mtc: the soft unit's MTCs (one
# every 2^18 TSC ticks of host time) would more than double the trace,
# past the MiB the report's summary decodes; the 2 MiB buffer leaves room.
words='--unit soft --image PciHostBridgeDxe --follow --max-insns 2200000 --buffer 2M no-mtc'
"$P" fv inject "$CODE" -o "$W/scale.fd" --config "$words" > /dev/null || { echo "inject failed"; exit 1; }
t0=$(date +%s)
boot scale
echo "scale: the boot took $(( $(date +%s) - t0 )) s"
has scale "^ptboot: resident dispatched from a firmware volume file=92517505-2f67-4548-93dd-1e1d648d7531 words=firmware-volume$" \
    "dispatched from the firmware volume"
has scale "^ptboot: resident armed image=PciHostBridgeDxe entry=0x[0-9a-f]+ follow=all max-insns=2200000$" "armed with --follow, bound 2,200,000 steps"
has scale "^ptboot: resident exit-boot-services state=stopped reason=bound$" "the session ended at the bound (not a full buffer)"
armed=$(grep -m1 '^ptboot: resident armed image=PciHostBridgeDxe' "$W/scale.txt")
entry=$(sed -nE 's/.* entry=(0x[0-9a-f]+) follow=all .*/\1/p' <<< "$armed")
row=$(grep -m1 -E '^ptboot: resident image [0-9]+ .* name=PciHostBridgeDxe traced$' "$W/scale.txt")
base=$(sed -nE 's/.* base=(0x[0-9a-f]+) .*/\1/p' <<< "$row")
sinsns=$(sed -nE 's/^ptboot: resident status .* insns=([0-9]+) .*/\1/p' "$W/scale.txt" | head -1)
if [ -n "$sinsns" ] && [ "$sinsns" -ge 2000000 ] && [ "$sinsns" -le 2200000 ]; then
    ok "scale: $sinsns instructions traced (at least 2,000,000)"
else
    not_ok "scale: ${sinsns:-no} instructions traced"
fi
has scale "^ptboot: flow end insns=${sinsns:-x} errors=0$" "decoded on the target: as many instructions as the unit traced, no error"
has scale "^ptboot: trace unit=soft cpu=0 bytes=[0-9]+ wrapped=0 stopped=1 insns=${sinsns:-x} errors=0 images=[0-9]+$" \
    "the trace line: not wrapped, no error"
# the report's summary decodes at most the last MiB (efi/capture/ebs_report.h):
# without MTCs the trace is about 0.25 bytes an instruction, so all of it
if grep -q '^ptboot: trace summary window ' "$W/scale.txt"; then
    not_ok "scale: the report summarised only a window: $(grep -m1 '^ptboot: trace summary window ' "$W/scale.txt")"
else
    ok "scale: the report's summary covers the whole trace"
fi
has scale "^ptboot: trace summary end lines=[0-9]+ insns=${sinsns:-x} errors=0$" "the summary: every instruction, no error"
sed -n '/^ptboot: trace summary begin$/,/^ptboot: trace summary end/p' "$W/scale.txt" | sed '1d;$d' > "$W/scale.sum"
if [ -n "$entry" ] && [ -n "$base" ] &&
    grep -qE "\(caller of PciHostBridgeDxe\+0x$(printf '%x' $(( $(hex "$entry") - $(hex "$base") )))\)" "$W/scale.sum"; then
    ok "scale: the call tree starts at the driver's entry point"
else
    not_ok "scale: no call-tree root at PciHostBridgeDxe's entry point"
fi
nfun=$(sed -n '/^== call tree/,/^== hot blocks/p' "$W/scale.sum" | grep -oE ' PciHostBridgeDxe\+0x[0-9a-f]+$' | sort -u | wc -l)
if [ "$nfun" -ge 3 ]; then ok "scale: $nfun of the driver's functions in the call tree, named PciHostBridgeDxe+0x<offset>"; else not_ok "scale: $nfun driver functions"; fi
rm -rf "$W/scale.cap"
"$P" serial "$W/scale.log" --out "$W/scale.cap" --quiet > "$W/scale.serial" 2>&1
if "$P" summary --capture "$W/scale.cap" 2> "$W/scale.host.err" | grep -v '^note: ' > "$W/scale.host" &&
    [ -s "$W/scale.sum" ] && cmp -s "$W/scale.sum" "$W/scale.host"; then
    ok "scale: the host's summary of the recovered files is the target's, call counts and all ($(wc -l < "$W/scale.sum") lines)"
else
    not_ok "scale: host summary differs from the target's"
    diff "$W/scale.sum" "$W/scale.host" | head -10
fi

echo "early boot: $fails failed"
[ $fails = 0 ]
