#!/usr/bin/env bash
# Builds newlib (the UEFI app's C library) from Debian's newlib-source with the
# host gcc, once, into OUT (default build/newlib). The result is reused until
# OUT is removed: OUT/install/x86_64-elf/{include,lib/libc.a}.
#
# Flags are the app's own (see efi/efi.mk): position-independent, no red zone
# (UEFI interrupts run on the same stack), 2-byte wchar_t so L"" matches
# CHAR16, no stack protector (there is no TLS canary in UEFI).
set -euo pipefail
OUT=${1:-build/newlib}
TARBALL=/usr/src/newlib/newlib-3.3.0.tar.xz
[ -f "$OUT/install/x86_64-elf/lib/libc.a" ] && exit 0
[ -f "$TARBALL" ] || { echo "build-newlib: $TARBALL missing (scripts/setup.sh installs newlib-source)" >&2; exit 1; }

OUT=$(mkdir -p "$OUT" && cd "$OUT" && pwd)
STAMP=$OUT/install/x86_64-elf/lib/libc.a
rm -rf "$OUT/src" "$OUT/obj" "$OUT/install"
mkdir -p "$OUT/src" "$OUT/obj"
echo "build-newlib: unpacking $TARBALL"
tar -xJf "$TARBALL" -C "$OUT/src"
SRC=$(find "$OUT/src" -mindepth 1 -maxdepth 1 -type d | head -n 1)

TARGET_CFLAGS="-O2 -ffreestanding -fno-stack-protector -fno-stack-check -fpic \
 -mno-red-zone -fshort-wchar -fno-strict-aliasing -maccumulate-outgoing-args \
 -Wa,--noexecstack"
tools=()
for t in AR AS LD NM RANLIB OBJCOPY OBJDUMP READELF STRIP; do
  tools+=("${t}_FOR_TARGET=$(echo "$t" | tr 'A-Z' 'a-z')")
done

echo "build-newlib: configuring and building (1-2 minutes)"
cd "$OUT/obj"
"$SRC/configure" --target=x86_64-elf --prefix="$OUT/install" \
  --disable-multilib --disable-newlib-supplied-syscalls \
  --disable-newlib-io-float --enable-newlib-nano-malloc \
  CC_FOR_TARGET=gcc GCC_FOR_TARGET=gcc "${tools[@]}" \
  CFLAGS_FOR_TARGET="$TARGET_CFLAGS" >"$OUT/configure.log" 2>&1 \
  || { tail -30 "$OUT/configure.log" >&2; exit 1; }
make -j"$(nproc)" all-target-newlib >"$OUT/build.log" 2>&1 \
  || { tail -40 "$OUT/build.log" >&2; exit 1; }
make install-target-newlib >"$OUT/install.log" 2>&1 \
  || { tail -30 "$OUT/install.log" >&2; exit 1; }
[ -f "$STAMP" ] || { echo "build-newlib: $STAMP was not produced" >&2; exit 1; }
echo "build-newlib: done"
