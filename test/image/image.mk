# The small UEFI applications the boot tests trace, all built the same way
# (BARE_EFI_APP): test/image/ptbtest.c (`trace` runs it in the boot tests
# and in `make run`), test/image/ptbspin.c (the longer-running image of
# test/boot/trace_buffer.sh, a trace over twice the smallest buffer) and
# test/resident/osloader.c (the OS-loader stand-in of the resident and
# ExitBootServices tests). Their control flow is known from their source
# and symbols (build/test/<dir>/NAME.so give the tests the function offsets).
#
# Same toolchain as ptboot.efi (gnu-efi's crt0 and self-relocator, our
# linker script) but no newlib and no libefi: nothing outside the image runs
# while it is traced. -O1 with noinline keeps every call in the source a
# call in the code.
BARE_EFI_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
  -fno-stack-check -fpic -mno-red-zone -fshort-wchar -fno-optimize-sibling-calls \
  -DGNU_EFI_USE_MS_ABI -I$(GNUEFI_INC) -I$(GNUEFI_INC)/x86_64 $(EXTRA_CFLAGS)

# $(eval $(call BARE_EFI_APP,DIR/NAME.c)): $(B)/NAME.efi from one C file;
# its symbols and DWARF stay in $(B)/DIR/NAME.so (its debug file), which
# the .efi names in a CodeView RSDS record as EDK2's GenFw does (path of
# the .so, GUID from its GNU build ID: test/image/pe_codeview.c), so
# `--symbols` finds it.
define BARE_EFI_APP
$(B)/$(basename $(1)).o: $(1) | $(B)/.setup-done
	@mkdir -p $$(@D)
	$$(call say,CC,$$<)$$(HOST_CC) $$(BARE_EFI_CFLAGS) -c $$< -o $$@

$(B)/$(basename $(1)).so: $(B)/$(basename $(1)).o $(B)/test/image/codeview_area.o linker/ptboot.lds
	$$(call say,LD,$$@)ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic \
	  --no-undefined --build-id=sha1 $$(GNUEFI_LIB)/crt0-efi-x86_64.o $$< \
	  $(B)/test/image/codeview_area.o -L$$(GNUEFI_LIB) -lgnuefi -o $$@
	$$(call say,CHECK,$$@)bash scripts/check-efi-sections.sh $$@

$(B)/$(basename $(notdir $(1))).efi: $(B)/$(basename $(1)).so $(B)/test/image/pe_codeview
	$$(call say,OBJCOPY,$$@)objcopy $$(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $$< $$@
	$$(Q)$(B)/test/image/pe_codeview $$@ $$< || { rm -f $$@; exit 1; }
endef

$(B)/test/image/codeview_area.o: test/image/codeview_area.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CC,$<)$(HOST_CC) $(BARE_EFI_CFLAGS) -c $< -o $@
$(B)/test/image/pe_codeview: test/image/pe_codeview.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lelf

# ptbtimer.efi (test/boot/trace_irq.sh): a longer program with a timer
# event of its own whose notify function runs from the firmware's timer
# interrupt while it is traced, and a #UD with its own handler.
# ptbhang.efi (the stand-in that hangs: its symbols name the loop),
# ptbpoke.efi (damages the recorder copy the resident driver kept) and
# ptbwdog.efi (arms a short watchdog, then starts ptboot.efi): the hang
# recorder's tests (test/hang/). ptbpoke reads the recorder's layout from
# format/recorder.h and the table from efi/resident/previous.h, hence the
# include path.
TEST_IMAGES := test/image/ptbtest.c test/image/ptbspin.c test/image/ptbtimer.c test/resident/osloader.c \
               test/image/ptbhang.c test/image/ptbpoke.c test/image/ptbwdog.c
$(foreach f,$(TEST_IMAGES),$(eval $(call BARE_EFI_APP,$(f))))
$(B)/test/image/ptbpoke.o: BARE_EFI_CFLAGS += -I.
$(B)/test/image/ptbpoke.o: format/recorder.h efi/resident/previous.h
