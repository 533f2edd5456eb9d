#!/usr/bin/env bash
# Bounded libFuzzer run of test/fuzz/fuzz_pe.c (ASan + UBSan): PE/COFF
# headers and CodeView names (format/pe_info.c, both layouts), ELF headers
# and program headers (format/elf_info.c) and EFI load options with their
# device paths (format/load_option.c). Seeds: the heads of build/ptboot.efi
# and build/ptboot (an ELF), the lld-linked driver with an RSDS record of
# test/capture/capture.mk, and a Boot#### option as `install` writes it.
# FUZZ_SECONDS (default 4) bounds the run; `make capture-fuzz` runs longer
# keeping its corpus in build/fuzz/pe-corpus.
. "$(dirname "$0")/lib.sh"
# ucs2 TEXT: TEXT as UCS-2LE with its NUL
ucs2() { printf '%s' "$1" | sed 's/./&\n/g' | while IFS= read -r ch; do [ -n "$ch" ] && printf '%s\0' "$ch"; done; printf '\0\0'; }
if fuzz_corpus; then
  [ -f "$B/ptboot.efi" ] && head -c 8192 "$B/ptboot.efi" > "$corpus/ptboot-head"
  [ -f "$B/ptboot" ] && head -c 4096 "$B/ptboot" > "$corpus/elf-head"
  [ -f "$B/test/capture/PcRtcFixture.efi" ] && cp "$B/test/capture/PcRtcFixture.efi" "$corpus/rsds"
  # Boot0001: ACTIVE, a Media File Path \EFI\ptboot.efi (4 + 16 * 2 bytes)
  # then End-Entire (FilePathListLength 40), description "ptboot", and
  # OptionalData "trace" as UCS-2
  { printf '\x01\x00\x00\x00\x28\x00'; ucs2 ptboot
    printf '\x04\x04\x24\x00'; ucs2 '\EFI\ptboot.efi'
    printf '\x7f\xff\x04\x00'; ucs2 trace; } > "$corpus/boot-option"
fi
fuzz_run fuzz_pe 4 16384
