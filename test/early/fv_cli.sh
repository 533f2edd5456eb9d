#!/bin/bash
# `ptboot fv list` and `ptboot fv inject` on Debian's OVMF images
# (/usr/share/OVMF): every image lists without error; the LZMA section of
# OVMF_CODE_4M.fd unpacked by xz (another LZMA decoder) holds the same
# volumes and files `list` shows; an injected image is the original but
# for ptboot's file, byte for byte where the layout says so (PEI volume,
# the DXE volume up to its old free space, SEC volume, outer header), and
# reads back whole; --apriori, --after and a second inject (replace) put
# the file where they say; a volume without room, a corrupt volume, a
# corrupt LZMA stream, a damaged file header, a file that is no firmware
# image and a driver that is an application are refused with the reason
# (and how many bytes are missing), and no output is written.
# About 30 s of CPU (each inject compresses 13 MB again).
set -u
cd "$(dirname "$0")/../.."
P=${PTBOOT:-build/ptboot}
D=build/ptbootdrv.efi
OVMF=${OVMF_DIR:-/usr/share/OVMF}
CODE=$OVMF/OVMF_CODE_4M.fd
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
ok() { echo "ok: $*"; }
not_ok() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect DESC COMMAND...: the command must succeed
expect() { local d=$1; shift; if "$@"; then ok "$d"; else not_ok "$d"; fi; }
hex() { printf '%d' "$1"; }

for f in "$P" "$D" "$CODE"; do
    [ -f "$f" ] || { echo "fv_cli: missing $f"; exit 1; }
done
command -v xz > /dev/null || { echo "fv_cli: xz missing (xz-utils)"; exit 1; }

# ---- list: every image Debian ships ----
for f in "$OVMF"/*.fd; do
    n=$(basename "$f")
    "$P" fv list "$f" > "$t/l" 2> "$t/e"
    rc=$?
    last=$(tail -1 "$t/l")
    if [ $rc != 0 ] || ! [[ $last == "ptboot: fv list image=$f bytes=$(stat -L -c %s "$f") volumes="*" errors=0" ]]; then
        not_ok "list $n: rc=$rc last='$last' $(head -2 "$t/e")"
        continue
    fi
    case $n in
    OVMF_CODE*)
        # four volumes (FVMAIN_COMPACT, PEIFV and DXEFV inside its LZMA
        # section, SECFV), the cores, the APRIORI lists, the reset vector
        if [[ $last == *volumes=4* ]] && grep -q ' DXE_CORE .* DxeCore$' "$t/l" &&
            grep -q ' PEI_CORE .* PeiCore$' "$t/l" && grep -q ' SECURITY_CORE .* SecMain$' "$t/l" &&
            grep -q 'guid=lzma unpacked=' "$t/l" && grep -q '(apriori-dxe) list=.*PcdDxe' "$t/l" &&
            grep -q 'RAW .* (volume-top-file)$' "$t/l" && [ "$(grep -c ' DRIVER ' "$t/l")" -gt 80 ]; then
            ok "list $n: $last"
        else
            not_ok "list $n: the expected volumes and files are not all there"
        fi ;;
    OVMF_VARS*)
        if [[ $last == *"volumes=1 files=0 errors=0" ]] && grep -q '^volume 0 at=0x0 .*fs=nvram' "$t/l"; then
            ok "list $n: a variable store"
        else
            not_ok "list $n: $last"
        fi ;;
    esac
done

# ---- the LZMA section, unpacked by xz instead ----
# FILE-OFFSET LENGTH: the LZMA data of volume 0's first file (file at=,
# 24-byte file header, section at=, 24-byte GUID-defined header)
"$P" fv list "$CODE" > "$t/code.l"
file_at=$(awk '/^  file /{for(i=1;i<=NF;i++) if($i ~ /^at=/){sub("at=","",$i); print $i; exit}}' "$t/code.l")
sec=$(grep -m1 'guid=lzma' "$t/code.l")
sec_at=$(sed -E 's/.* at=(0x[0-9a-f]+).*/\1/' <<< "$sec")
sec_size=$(sed -E 's/.* size=(0x[0-9a-f]+).*/\1/' <<< "$sec")
unpacked=$(sed -E 's/.*unpacked=(0x[0-9a-f]+).*/\1/' <<< "$sec")
lz_off=$(( $(hex "$file_at") + 24 + $(hex "$sec_at") + 24 ))
lz_len=$(( $(hex "$sec_size") - 24 ))
# unpack IMAGE OUT: the LZMA section of IMAGE (same place) through xz
unpack() {
    local off len
    "$P" fv list "$1" > "$t/u.l"
    len=$(( $(hex "$(grep -m1 'guid=lzma' "$t/u.l" | sed -E 's/.* size=(0x[0-9a-f]+).*/\1/')") - 24 ))
    tail -c +$((lz_off + 1)) "$1" | head -c "$len" | xz --format=lzma -dc > "$2" 2> "$t/xz.err"
}
unpack "$CODE" "$t/orig.unpacked"
if [ "$(stat -c %s "$t/orig.unpacked")" = "$(hex "$unpacked")" ]; then
    ok "xz unpacks the LZMA section to unpacked=$unpacked bytes"
else
    not_ok "xz unpacked $(stat -c %s "$t/orig.unpacked") bytes, list says $unpacked: $(cat "$t/xz.err")"
fi
# the nested volumes cut out of xz's output list as they do nested
for v in 1 2; do
    line=$(grep -E "^      volume $v " "$t/code.l")
    vat=$(sed -E 's/.* at=(0x[0-9a-f]+).*/\1/' <<< "$line")
    vsize=$(sed -E 's/.* size=(0x[0-9a-f]+).*/\1/' <<< "$line")
    tail -c +$(( $(hex "$vat") + 1 )) "$t/orig.unpacked" | head -c "$(hex "$vsize")" > "$t/vol$v"
    "$P" fv list "$t/vol$v" | grep '^  file ' | sed 's/^  //' > "$t/vol$v.flat"
    awk -v v="$v" '/^      volume /{inv = ($2 == v)} inv && /^        file /{sub(/^        /, ""); print}' \
        "$t/code.l" > "$t/vol$v.nested"
    if [ -s "$t/vol$v.flat" ] && cmp -s "$t/vol$v.flat" "$t/vol$v.nested"; then
        ok "volume $v as xz unpacks it: the same $(wc -l < "$t/vol$v.flat") files"
    else
        not_ok "volume $v: files differ between xz's bytes and the nested listing"
        diff "$t/vol$v.flat" "$t/vol$v.nested" | head -5
    fi
done

# ---- inject ----
words='--unit soft --image PciBusDxe'
cp "$CODE" "$t/code.fd"
if "$P" fv inject "$t/code.fd" -o "$t/out.fd" --config "$words" > "$t/inj" 2> "$t/e"; then
    ok "inject: $(head -1 "$t/inj" | cut -c1-120)..."
else
    not_ok "inject failed: $(cat "$t/e")"
fi
cmp -s "$CODE" "$t/code.fd" || not_ok "inject changed its input"
"$P" fv list --depex "$t/out.fd" > "$t/out.l"
expect "the injected image lists without error" grep -q 'errors=0$' "$t/out.l"
ptline=$(grep ' ptboot ' "$t/out.l")
dsize=$(stat -c %s "$D")
# the file's size from its sections: depex (4+18), PE32 (4+driver), UI
# "ptboot" (4+14), RAW (4+words), each at a 4-byte boundary, 24-byte header
a4() { echo $(( ($1 + 3) / 4 * 4 )); }
want_size=$(( 24 + $(a4 $(( $(a4 $(( 24 + 4 + dsize ))) + 18 ))) + 4 + ${#words} ))
old_free=$(grep -E '^      volume 2 ' "$t/code.l" | sed -E 's/.*files=([0-9]+) pads=[0-9]+ free=(0x[0-9a-f]+).*/\2/')
old_files=$(grep -E '^      volume 2 ' "$t/code.l" | sed -E 's/.*files=([0-9]+).*/\1/')
# right after the DXE core, at the next 8-byte boundary
core=$(grep ' DXE_CORE ' "$t/code.l")
core_at=$(sed -E 's/.* at=(0x[0-9a-f]+).*/\1/' <<< "$core")
core_size=$(sed -E 's/.* size=(0x[0-9a-f]+).*/\1/' <<< "$core")
ins=$(( ($(hex "$core_at") + $(hex "$core_size") + 7) / 8 * 8 ))
want_at=$(printf '0x%x' $ins)
if [[ $ptline == *"file 92517505-2f67-4548-93dd-1e1d648d7531 DRIVER size=$(printf '0x%x' $want_size) at=$want_at ptboot depex='push cpu-arch-protocol end' config='$words'" ]]; then
    ok "ptboot's file: DRIVER, $want_size bytes, right after the DXE core at $want_at, after the CPU protocol, its words"
else
    not_ok "ptboot's file: '$ptline' (want size $(printf '0x%x' $want_size) at $want_at)"
fi
expect "the file after the DXE core in the listing" \
    sh -c "grep -A1 ' DXE_CORE ' '$t/out.l' | tail -1 | grep -q ' ptboot '"
new_v2=$(grep -E '^      volume 2 ' "$t/out.l")
expect "volume 2 has one file more" grep -q "files=$((old_files + 1)) " <<< "$new_v2"
shift_by=$(( (want_size + 7) / 8 * 8 ))
expect "volume 2 has that much less free space" \
    grep -q "free=$(printf '0x%x' $(( $(hex "$old_free") - shift_by )))\$" <<< "$new_v2"
# what must not have changed, byte for byte
unpack "$t/out.fd" "$t/out.unpacked"
expect "the new LZMA section unpacks (xz) to the same size" \
    test "$(stat -c %s "$t/out.unpacked")" = "$(stat -c %s "$t/orig.unpacked")"
v2at=$(( $(hex "$(grep -E '^      volume 2 ' "$t/code.l" | sed -E 's/.* at=(0x[0-9a-f]+).*/\1/')") ))
used=$(( 0xc00000 - $(hex "$old_free") ))
expect "the PEI volume and the DXE volume up to the DXE core's end unchanged" \
    cmp -s -n $((v2at + ins)) "$t/orig.unpacked" "$t/out.unpacked"
expect "every file after it moved by the new file's size, byte for byte" \
    cmp -s -n $((used - ins)) -i $((v2at + ins)):$((v2at + ins + shift_by)) "$t/orig.unpacked" "$t/out.unpacked"
expect "the outer volume's header and the SEC volume unchanged" \
    sh -c "cmp -s -n $((lz_off - 24 - 24)) '$CODE' '$t/out.fd' && cmp -s -i 0x348000 '$CODE' '$t/out.fd'"
tail -c +$((v2at + ins + 1)) "$t/out.unpacked" | head -c "$want_size" > "$t/ptfile"
expect "the driver's PE image is in the file as it is on disk" \
    cmp -s -i 52:0 -n "$dsize" "$t/ptfile" "$D"
expect "inject reports the free space and the LZMA section before and after" \
    grep -qE "^ptboot: fv volume 2 free=$(hex "$old_free")->[0-9]+ lzma-section=$(hex "$sec_size")->[0-9]+$" "$t/inj"

# again into the result: replaced, not added
"$P" fv inject "$t/out.fd" -o "$t/out2.fd" --config '--unit soft --image AcpiTableDxe' > "$t/inj2" 2> "$t/e"
"$P" fv list "$t/out2.fd" > "$t/out2.l"
if grep -q ' replaced ' "$t/inj2" && [ "$(grep -c ' ptboot ' "$t/out2.l")" = 1 ] &&
    grep -q "config='--unit soft --image AcpiTableDxe'" "$t/out2.l" && grep -q "files=$((old_files + 1)) " "$t/out2.l"; then
    ok "a second inject replaces the file (one ptboot file, new words)"
else
    not_ok "second inject: $(cat "$t/inj2" "$t/e" | head -3)"
fi
# --apriori: first in the APRIORI list, a TRUE depex
"$P" fv inject "$CODE" -o "$t/apr.fd" --apriori > /dev/null 2> "$t/e"
"$P" fv list --depex "$t/apr.fd" > "$t/apr.l"
expect "--apriori: ptboot first in the DXE APRIORI list" \
    grep -q '(apriori-dxe) list=ptboot,DevicePathDxe,PcdDxe,AmdSevDxe,FvbServicesRuntimeDxe' "$t/apr.l"
expect "--apriori: depex TRUE" grep -q " ptboot depex='true end'" "$t/apr.l"
expect "--apriori: the image reads back whole" grep -q 'errors=0$' "$t/apr.l"
# --after NAME: an AFTER dependency on that file
"$P" fv inject "$CODE" -o "$t/aft.fd" --after CpuDxe > /dev/null 2> "$t/e"
expect "--after CpuDxe: depex 'after CpuDxe'" \
    grep -q " ptboot depex='after CpuDxe end'" <("$P" fv list --depex "$t/aft.fd")
# the 2 MiB build: less room in its outer volume, still enough
if "$P" fv inject "$OVMF/OVMF_CODE.fd" -o "$t/small.fd" > /dev/null 2> "$t/e" &&
    "$P" fv list "$t/small.fd" | grep -q 'errors=0$'; then
    ok "inject into OVMF_CODE.fd (2 MiB)"
else
    not_ok "inject into OVMF_CODE.fd: $(cat "$t/e")"
fi

# ---- refusals ----
# refuse DESC STATUS PATTERN ARGS...: exit STATUS, stderr matching, no output file
refuse() {
    local d=$1 want=$2 pat=$3
    shift 3
    rm -f "$t/r.fd"
    "$P" "$@" > "$t/r.out" 2> "$t/r.err"
    local rc=$?
    if [ $rc = "$want" ] && grep -qE -- "$pat" "$t/r.err" && [ ! -e "$t/r.fd" ]; then
        ok "$d: $(head -1 "$t/r.err" | cut -c1-150)"
    else
        not_ok "$d: exit $rc (want $want), stderr: $(head -2 "$t/r.err")"
    fi
}
# no room in the DXE volume: the driver and 8 MiB more; exactly how much is missing
head -c $((8 << 20)) /dev/urandom > "$t/pad8"
cat "$D" "$t/pad8" > "$t/big8.efi"
big=$(stat -c %s "$t/big8.efi")
fsize=$(( 24 + $(a4 $(( $(a4 $(( 24 + 4 + big ))) + 18 ))) + 4 ))
# (the files after the DXE core move up by the new file's size; the last
# one then ends that much later)
last=$(awk '/^      volume /{inv = ($2 == 2)} inv && /^        file /{l = $0} END {print l}' "$t/code.l")
last_end=$(( $(hex "$(sed -E 's/.* at=(0x[0-9a-f]+).*/\1/' <<< "$last")") + $(hex "$(sed -E 's/.* size=(0x[0-9a-f]+).*/\1/' <<< "$last")") ))
missing=$(( last_end + (fsize + 7) / 8 * 8 - 0xc00000 ))
refuse "no room in the DXE volume" 1 "volume 2 has no room: .*missing: $missing bytes" \
    fv inject "$CODE" -o "$t/r.fd" --driver "$t/big8.efi"
# no room in the outer volume: 2.5 MiB that do not compress
head -c $((5 << 19)) /dev/urandom > "$t/pad2"
cat "$D" "$t/pad2" > "$t/big2.efi"
refuse "no room in the outer volume" 1 "volume 0 has no room: .*missing: [1-9][0-9]* bytes" \
    fv inject "$CODE" -o "$t/r.fd" --driver "$t/big2.efi"
# a corrupt volume header (a block-map byte: the header checksum is off)
cp "$CODE" "$t/bad-header.fd"
printf '\x77' | dd of="$t/bad-header.fd" bs=1 seek=60 conv=notrunc status=none
refuse "a corrupt volume header" 1 "is corrupt: volume at 0x0: volume header: volume header checksum is wrong" \
    fv inject "$t/bad-header.fd" -o "$t/r.fd"
"$P" fv list "$t/bad-header.fd" > "$t/l" 2>&1
expect "list shows the corrupt volume and exits 1" \
    sh -c "! '$P' fv list '$t/bad-header.fd' > /dev/null && grep -q '^volume at=0x0 corrupt' '$t/l' && grep -q 'errors=1$' '$t/l'"
# a damaged LZMA stream
cp "$CODE" "$t/bad-lzma.fd"
printf '\x00\x00\x00\x00' | dd of="$t/bad-lzma.fd" bs=1 seek=$((lz_off + 4000)) conv=notrunc status=none
refuse "a corrupt LZMA section" 1 "is corrupt: .*(LZMA|checksum|size|free space)" \
    fv inject "$t/bad-lzma.fd" -o "$t/r.fd"
# a damaged file header in the SEC volume (SecMain's type byte)
secmain=$(grep -n ' SECURITY_CORE ' "$t/code.l" | sed -E 's/.* at=(0x[0-9a-f]+).*/\1/')
cp "$CODE" "$t/bad-file.fd"
printf '\x07' | dd of="$t/bad-file.fd" bs=1 seek=$(( 0x348000 + $(hex "$secmain") + 18 )) conv=notrunc status=none
refuse "a damaged file header" 1 "is corrupt: volume 3: file at $secmain: file header checksum is wrong" \
    fv inject "$t/bad-file.fd" -o "$t/r.fd"
# not a firmware image
refuse "not a firmware image (list)" 1 "not a firmware image: no firmware volume header" \
    fv list build/ptboot.efi
refuse "not a firmware image (inject)" 1 "not a firmware image" fv inject build/ptboot.efi -o "$t/r.fd"
: > "$t/empty"
refuse "an empty file" 1 "not a firmware image" fv list "$t/empty"
refuse "a driver that is an application" 1 "an EFI application \(subsystem 10\)" \
    fv inject "$CODE" -o "$t/r.fd" --driver build/ptboot.efi
refuse "a driver that is no PE image" 1 "not a PE/COFF image" fv inject "$CODE" -o "$t/r.fd" --driver "$t/empty"
refuse "--after a file that is not there" 1 "no such file in volume 2" \
    fv inject "$CODE" -o "$t/r.fd" --after NoSuchDxe
refuse "--after with --apriori" 2 "exclude each other" fv inject "$CODE" -o "$t/r.fd" --after CpuDxe --apriori
refuse "no -o" 2 "no output given" fv inject "$CODE"
refuse "words too long" 2 "at most 159" fv inject "$CODE" -o "$t/r.fd" --config "$(printf 'x%.0s' $(seq 200))"
refuse "unknown action" 2 "unknown action" fv frobnicate "$CODE"
refuse "--volume that is not there" 1 "--volume 9: no such volume" fv inject "$CODE" -o "$t/r.fd" --volume 9
refuse "--volume of the PEI volume: too small for the driver" 1 "volume 1 has no room: .*missing: [1-9][0-9]* bytes" \
    fv inject "$CODE" -o "$t/r.fd" --volume 1

echo "fv_cli: $fails failed"
[ $fails = 0 ]
