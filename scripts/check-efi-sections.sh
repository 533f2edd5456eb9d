#!/usr/bin/env bash
# Fails if the linked ELF has an allocated section that objcopy would not copy
# into the PE image (see efi/efi.mk EFI_KEEP_SECTIONS): such data would vanish
# silently from build/ptboot.efi. Also fails on undefined symbols.
set -euo pipefail
so=$1
keep=' .text .sdata .data .dynamic .dynsym .dynstr .rel .rela .reloc .hash .gnu.hash .note.gnu.build-id '
bad=$(objdump -h "$so" | awk -v keep="$keep" '
  /^ *[0-9]+ / { name = $2; next }
  /ALLOC/ && index(keep, " " name " ") == 0 { print name }')
if [ -n "$bad" ]; then
  echo "check-efi-sections: allocated sections outside the PE image: $bad" >&2
  exit 1
fi
undef=$(nm -u "$so" | grep -v ' w ' || true)
if [ -n "$undef" ]; then
  echo "check-efi-sections: undefined symbols: $undef" >&2
  exit 1
fi
