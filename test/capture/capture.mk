# test/capture/capture.mk: the capture's sideband, PE names, files on the
# stick and `ptboot flow --capture` (docs/capture-files.md).

# The formats are in the host library (format/); the sideband's CPU facts
# from arch/x86 (efi/sideband_cpu.c, UEFI-free) are compiled into the test:
# the unit tests and the host CLI run exactly the code the app runs.
UNIT_TESTS += test_efi_sideband test_efi_pe_info
TEST_OBJS_test_efi_sideband := $(B)/test/obj/efi/sideband_cpu.o
$(B)/test/test_efi_sideband: $(TEST_OBJS_test_efi_sideband)

# Real PE/COFF images for pe_info's tests: our own app (no debug directory,
# as gnu-efi's objcopy writes it) and a driver linked by LLVM's lld-link with
# a CodeView RSDS record whose PDB path looks like an EDK2 build's. What
# binutils' `objdump -p` says about each is the expectation.
CAPTURE_FIX := $(B)/test/capture
PE_FIXTURE_PDB := /build/edk2/Build/OvmfX64/DEBUG_GCC5/X64/PcRtcFixture/DEBUG/PcRtcFixture.dll
$(CAPTURE_FIX)/PcRtcFixture.efi: test/capture/pe_fixture.c | $(B)/.setup-done
	@mkdir -p $(@D)
	clang --target=x86_64-unknown-windows -ffreestanding -fno-stack-protector -mno-red-zone -O1 \
	  -c $< -o $(CAPTURE_FIX)/pe_fixture.obj
	lld-link /nologo /subsystem:efi_boot_service_driver /entry:efi_main /nodefaultlib /debug \
	  /pdb:$(CAPTURE_FIX)/PcRtcFixture.pdb /pdbaltpath:$(PE_FIXTURE_PDB) \
	  /out:$@ $(CAPTURE_FIX)/pe_fixture.obj
$(CAPTURE_FIX)/%.objdump: $(CAPTURE_FIX)/%.efi
	objdump -p $< > $@
$(CAPTURE_FIX)/ptboot.efi: $(B)/ptboot.efi
	@mkdir -p $(@D)
	cp $< $@
$(CAPTURE_FIX)/ptboot.objdump: $(CAPTURE_FIX)/ptboot.efi
# OVMF's DXE firmware volume, decompressed (its one LZMA stream, found by
# the LZMA header: properties 0x5d, a dictionary of at most 64 MiB): the
# PE32 sections in it are the real drivers test_efi_pe_info reads.
OVMF_CODE_FD ?= /usr/share/OVMF/OVMF_CODE_4M.fd
$(CAPTURE_FIX)/ovmf-dxe.fv: | $(B)/.setup-done
	@mkdir -p $(@D)
	off=$$(grep -obUaP '\x5d\x00\x00[\x00-\x80][\x00-\x04]' $(OVMF_CODE_FD) | head -1 | cut -d: -f1); \
	  tail -c +$$((off + 1)) $(OVMF_CODE_FD) | xz --format=lzma -dc > $@.tmp 2>/dev/null; \
	  [ $$(stat -c %s $@.tmp) -gt 1000000 ] && mv $@.tmp $@
capture-fixtures: $(CAPTURE_FIX)/PcRtcFixture.objdump $(CAPTURE_FIX)/ptboot.objdump $(CAPTURE_FIX)/ovmf-dxe.fv
.PHONY: capture-fixtures
TEST_STEPS += capture-fixtures
$(B)/test/test_efi_pe_info: | capture-fixtures
# The hostile-input cases run under ASan/UBSan: the test compiles
# format/pe_info.c into itself so the parser is instrumented too.
TEST_LIBS_test_efi_pe_info := -fsanitize=address,undefined -fno-sanitize-recover=all

# `ptboot flow --capture DIR` on capture directories written with the app's
# own sideband writer from flowgen's programs (test/capture/capture_dir.sh).
$(B)/test/capture/mkcapture: test/capture/mkcapture.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $< $(B)/host/libptboot.a
TEST_STEPS += $(B)/test/capture/mkcapture
TEST_SCRIPTS += test/capture/capture_dir.sh test/capture/code_dump.sh

# `images` on OVMF (names from firmware files, this app's size and entry,
# the watcher's notify path, the capture directory read back by the host).
TEST_SCRIPTS += test/boot/images.sh

# libFuzzer targets over these parsers (and the serial recovery, the PE and
# load-option decoders, the decode summary): test/fuzz/capture_fuzz.mk.
include test/fuzz/capture_fuzz.mk
