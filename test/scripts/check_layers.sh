#!/usr/bin/env bash
# scripts/check-layers.sh: the tree as it is passes; in a scratch tree each
# kind of crossing include is reported with its file and line (quoted and
# angled, our headers and system ones), and a tree without any passes.
cd "$(dirname "$0")/../.." || exit 1
fail=0
pass() { echo "check_layers: ok $*"; }
bad() { echo "check_layers: FAIL $*"; fail=1; }

if out=$(bash scripts/check-layers.sh 2>&1); then pass "this tree keeps the layering"
else bad "this tree crosses the layering:"; echo "$out"; fi

t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t"/{decoder,format,arch/x86,efi/cmd,host}
# allowed: every layer what it may use
echo '#include <stdint.h>'                     > "$t/decoder/ok.h"
echo '#include "decoder/ok.h"'                 > "$t/format/ok.c"
printf '#include <string.h>\n#include "decoder/ok.h"\n' > "$t/arch/x86/ok.c"
printf '#include <efi.h>\n#include "format/ok.h"\n#include "arch/x86/ok.h"\n' > "$t/efi/cmd/ok.c"
printf '#include <stdlib.h>\n#include "format/ok.h"\n#include "arch/x86/ok.h"\n' > "$t/host/ok.c"
if out=$(bash scripts/check-layers.sh "$t" 2>&1); then pass "a tree of allowed includes passes"
else bad "allowed includes refused:"; echo "$out"; fi

# expect FILE LINE-TEXT MESSAGE-REGEX: that one line added to FILE fails the check
expect() {
    local f=$t/$1
    cp "$f" "$f.orig" 2>/dev/null || : > "$f.orig"
    echo "$2" >> "$f"
    local n; n=$(wc -l < "$f")
    out=$(bash scripts/check-layers.sh "$t" 2>&1); local rc=$?
    if [ $rc -ne 0 ] && grep -Eq -- "$1:$n: $3" <<< "$out"; then pass "$1: $2"
    else bad "$1: '$2' not reported as '$3' (exit $rc):"; echo "$out"; fi
    mv "$f.orig" "$f"
}
expect host/ok.c     '#include "efi/app.h"'       'host/ may not include efi/'
expect efi/cmd/ok.c  '#include "host/capture.h"'  'efi/ may not include host/'
expect format/ok.c   '#include "arch/x86/ok.h"'   'format/ may not include arch/'
expect format/ok.c   '#include <string.h>'        'format/ may not include <string.h>'
expect decoder/ok.h  '#include "format/ok.h"'     'decoder/ may not include format/'
expect decoder/ok.h  '#include "ptd_pkt.h"'       'include "ptd_pkt.h": name our headers from the top'
expect arch/x86/ok.c '#include "efi/app.h"'       'arch/ may not include efi/'
expect arch/x86/ok.c '#include <efi.h>'           'arch/ may not include <efi.h>'
expect host/ok.c     '#include <efilib.h>'        'host/ may not include <efilib.h>'
touch "$t/efi/app.h"
expect host/ok.c     '  #  include <efi/app.h>'   'host/ may not include efi/'
exit $fail
