# test/image/: ptbtest.efi, the small UEFI application `trace` runs in the
# boot tests and in `make run` (its control flow is known from its source and
# symbols). Same toolchain as ptboot.efi (gnu-efi's crt0 and self-relocator,
# our linker script), but no newlib and no libefi: nothing outside the image
# runs while it is traced. -O1 with noinline keeps every call in the source
# a call in the code; the symbols (build/test/image/ptbtest.so) give the tests
# its function offsets.
PTBTEST_CFLAGS := -std=c11 -O1 -g -Wall -Wextra -Werror -ffreestanding -fno-stack-protector \
  -fno-stack-check -fpic -mno-red-zone -fshort-wchar -fno-optimize-sibling-calls \
  -DGNU_EFI_USE_MS_ABI -I$(GNUEFI_INC) -I$(GNUEFI_INC)/x86_64 $(EXTRA_CFLAGS)

$(B)/test/image/ptbtest.o: test/image/ptbtest.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(PTBTEST_CFLAGS) -c $< -o $@

$(B)/test/image/ptbtest.so: $(B)/test/image/ptbtest.o linker/ptboot.lds
	ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic --no-undefined \
	  $(GNUEFI_LIB)/crt0-efi-x86_64.o $< -L$(GNUEFI_LIB) -lgnuefi -o $@
	bash scripts/check-efi-sections.sh $@

$(B)/ptbtest.efi: $(B)/test/image/ptbtest.so
	objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $< $@

all: $(B)/ptbtest.efi

# ptbspin.efi: the longer-running image of test/boot/trace_buffer.sh (a
# trace over twice the smallest buffer), built the same way.
$(B)/test/image/ptbspin.o: test/image/ptbspin.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(PTBTEST_CFLAGS) -c $< -o $@

$(B)/test/image/ptbspin.so: $(B)/test/image/ptbspin.o linker/ptboot.lds
	ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic --no-undefined \
	  $(GNUEFI_LIB)/crt0-efi-x86_64.o $< -L$(GNUEFI_LIB) -lgnuefi -o $@
	bash scripts/check-efi-sections.sh $@

$(B)/ptbspin.efi: $(B)/test/image/ptbspin.so
	objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $< $@

all: $(B)/ptbspin.efi
TEST_STEPS += $(B)/ptbspin.efi
