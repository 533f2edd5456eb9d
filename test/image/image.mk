# test/image/: ptbtest.efi, the small UEFI application `trace` runs in the
# boot tests and in `make run` (its control flow is known from its source and
# symbols). Same toolchain as ptboot.efi (gnu-efi's crt0 and self-relocator,
# our linker script), but no newlib and no libefi: nothing outside the image
# runs while it is traced. -O1 with noinline keeps every call in the source
# a call in the code; the symbols (build/test/image/ptbtest.so) give the tests
# its function offsets.

# The same flags and steps build every such bare image: BARE_EFI_APP
# below, also for test/resident's osloader.efi.
BARE_EFI_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
  -fno-stack-check -fpic -mno-red-zone -fshort-wchar -fno-optimize-sibling-calls \
  -DGNU_EFI_USE_MS_ABI -I$(GNUEFI_INC) -I$(GNUEFI_INC)/x86_64 $(EXTRA_CFLAGS)

# $(eval $(call BARE_EFI_APP,DIR/NAME.c)): $(B)/NAME.efi, a UEFI application
# from one C file with gnu-efi's crt0 and self-relocator and our linker
# script, no libc and no libefi; its symbols and DWARF stay in
# $(B)/DIR/NAME.so (its debug file), which the .efi names in a CodeView
# RSDS record as EDK2's GenFw does (path of the .so, GUID from its GNU
# build ID: test/image/pe_codeview.c), so `--symbols` finds it.
define BARE_EFI_APP
$(B)/$(basename $(1)).o: $(1) | $(B)/.setup-done
	@mkdir -p $$(@D)
	$$(HOST_CC) $$(BARE_EFI_CFLAGS) -c $$< -o $$@

$(B)/$(basename $(1)).so: $(B)/$(basename $(1)).o $(B)/test/image/codeview_area.o linker/ptboot.lds
	ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic --no-undefined --build-id=sha1 \
	  $$(GNUEFI_LIB)/crt0-efi-x86_64.o $$< $(B)/test/image/codeview_area.o -L$$(GNUEFI_LIB) -lgnuefi -o $$@
	bash scripts/check-efi-sections.sh $$@

$(B)/$(basename $(notdir $(1))).efi: $(B)/$(basename $(1)).so $(B)/test/image/pe_codeview
	objcopy $$(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $$< $$@
	$(B)/test/image/pe_codeview $$@ $$< || { rm -f $$@; exit 1; }
endef

$(B)/test/image/codeview_area.o: test/image/codeview_area.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(BARE_EFI_CFLAGS) -c $< -o $@
$(B)/test/image/pe_codeview: test/image/pe_codeview.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lelf

$(eval $(call BARE_EFI_APP,test/image/ptbtest.c))
TEST_STEPS += $(B)/ptbtest.efi

# ptbspin.efi: the longer-running image of test/boot/trace_buffer.sh (a
# trace over twice the smallest buffer), built the same way.
$(eval $(call BARE_EFI_APP,test/image/ptbspin.c))
TEST_STEPS += $(B)/ptbspin.efi

# ptbtimer.efi: a longer program with a timer event of its own whose notify
# function runs from the firmware's timer interrupt while it is traced, and
# a #UD with its own handler (test/boot/trace_irq.sh), built the same way.
$(eval $(call BARE_EFI_APP,test/image/ptbtimer.c))
TEST_STEPS += $(B)/ptbtimer.efi
