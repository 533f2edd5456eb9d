# The capture's files on the host: fixtures for pe_info's unit test and the
# fuzzers, and mkcapture for `ptboot flow --capture` (test/tests.mk groups
# `capture`, `summary`, `serial`; docs/capture-files.md).

# Real PE/COFF images for pe_info's tests: our own app (no debug directory,
# as gnu-efi's objcopy writes it) and a driver linked by LLVM's lld-link with
# a CodeView RSDS record whose PDB path looks like an EDK2 build's. What
# binutils' `objdump -p` says about each is the expectation.
CAPTURE_FIX := $(B)/test/capture
PE_FIXTURE_PDB := /build/edk2/Build/OvmfX64/DEBUG_GCC5/X64/PcRtcFixture/DEBUG/PcRtcFixture.dll
$(CAPTURE_FIX)/PcRtcFixture.efi: test/capture/pe_fixture.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CC,$<)$(CLANG) --target=x86_64-unknown-windows -ffreestanding -fno-stack-protector \
	  -mno-red-zone -O1 -c $< -o $(CAPTURE_FIX)/pe_fixture.obj
	$(call say,LD,$@)lld-link /nologo /subsystem:efi_boot_service_driver /entry:efi_main /nodefaultlib \
	  /debug /pdb:$(CAPTURE_FIX)/PcRtcFixture.pdb /pdbaltpath:$(PE_FIXTURE_PDB) \
	  /out:$@ $(CAPTURE_FIX)/pe_fixture.obj
$(CAPTURE_FIX)/%.objdump: $(CAPTURE_FIX)/%.efi
	$(call say,OBJDUMP,$@)objdump -p $< > $@
$(CAPTURE_FIX)/ptboot.efi: $(B)/ptboot.efi
	@mkdir -p $(@D)
	$(call say,CP,$@)cp $< $@
$(CAPTURE_FIX)/ptboot.objdump: $(CAPTURE_FIX)/ptboot.efi
# OVMF's DXE firmware volume, decompressed (its one LZMA stream, found by
# the LZMA header: properties 0x5d, a dictionary of at most 64 MiB): the
# PE32 sections in it are the real drivers test_efi_pe_info reads.
OVMF_CODE_FD ?= /usr/share/OVMF/OVMF_CODE_4M.fd
$(CAPTURE_FIX)/ovmf-dxe.fv: | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,GEN,$@)off=$$(grep -obUaP '\x5d\x00\x00[\x00-\x80][\x00-\x04]' $(OVMF_CODE_FD) \
	  | head -1 | cut -d: -f1); \
	  tail -c +$$((off + 1)) $(OVMF_CODE_FD) | xz --format=lzma -dc > $@.tmp 2>/dev/null; \
	  [ $$(stat -c %s $@.tmp) -gt 1000000 ] && mv $@.tmp $@
capture-fixtures: $(CAPTURE_FIX)/PcRtcFixture.objdump $(CAPTURE_FIX)/ptboot.objdump $(CAPTURE_FIX)/ovmf-dxe.fv
.PHONY: capture-fixtures

# capture directories written with the app's own sideband writer from
# flowgen's programs (test/capture/capture_dir.sh and others)
$(B)/test/capture/mkcapture: test/capture/mkcapture.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -o $@ $< $(B)/host/libptboot.a
-include $(B)/test/capture/mkcapture.d
