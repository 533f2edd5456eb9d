# efi/: the UEFI application build/ptboot.efi, built with gnu-efi (crt0,
# libefi, libgnuefi from Debian) and newlib as its C library (built from
# Debian's newlib-source into build/newlib by scripts/build-newlib.sh, once).
#
# Facts behind these lines: ../shared/reference/efi-build-and-qemu.md.

EFI_SRCS   += $(wildcard efi/*.c)
EFI_ASRCS  := $(wildcard efi/*.S)
GNUEFI_LIB := /usr/lib
GNUEFI_INC := /usr/include/efi
NEWLIB     := $(B)/newlib/install/x86_64-elf
NEWLIB_LIBC := $(NEWLIB)/lib/libc.a

# The app's code model: position independent (UEFI loads the image anywhere),
# no red zone (firmware interrupts run on our stack), 2-byte wchar_t so L""
# strings are CHAR16, no stack protector (no TLS canary in UEFI). newlib is
# built with the same flags. GNU_EFI_USE_MS_ABI makes protocol calls direct
# ms_abi calls; efi_main itself stays a SysV function (gnu-efi's crt0 calls
# it that way). -ffunction/-fdata-sections are on so the linker script is
# proven to collect per-function sections.
EFI_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror \
  -ffreestanding -fno-stack-protector -fno-stack-check -fpic -mno-red-zone \
  -fshort-wchar -fno-strict-aliasing -maccumulate-outgoing-args \
  -ffunction-sections -fdata-sections \
  -DGNU_EFI_USE_MS_ABI -DPTBOOT_EFI \
  -nostdinc -isystem $(NEWLIB)/include -isystem $(shell $(HOST_CC) -print-file-name=include) \
  -I$(GNUEFI_INC) -I$(GNUEFI_INC)/x86_64 -I. $(EXTRA_CFLAGS)

EFI_OBJS := $(EFI_SRCS:%.c=$(B)/efi/%.o) $(EFI_ASRCS:%.S=$(B)/efi/%.o)

$(NEWLIB_LIBC): | $(B)/.setup-done
	bash scripts/build-newlib.sh $(B)/newlib

$(B)/efi/%.o: %.c | $(NEWLIB_LIBC)
	@mkdir -p $(@D)
	$(HOST_CC) $(EFI_CFLAGS) -MMD -MP -c $< -o $@

$(B)/efi/%.o: %.S | $(NEWLIB_LIBC)
	@mkdir -p $(@D)
	$(HOST_CC) $(EFI_CFLAGS) -c $< -o $@

# libefi.a defines memcpy, memset, setjmp and longjmp too. Linked after libc
# with plain symbols that is a multiple definition; linked first it would
# hand newlib's callers gnu-efi's setjmp (a 248-byte jmp_buf against
# newlib's 64). A copy with those four weakened lets newlib's win, always.
$(B)/efi/libefi-weak.a: $(GNUEFI_LIB)/libefi.a | $(B)/.setup-done
	@mkdir -p $(@D)
	objcopy --weaken-symbol=memcpy --weaken-symbol=memset \
	  --weaken-symbol=setjmp --weaken-symbol=longjmp $< $@

# --no-undefined: gnu-efi's usual -shared link accepts undefined symbols and
# yields an image that jumps into garbage.
$(B)/efi/ptboot.so: $(EFI_OBJS) linker/ptboot.lds $(B)/efi/libefi-weak.a $(NEWLIB_LIBC)
	ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic \
	  --no-undefined --warn-common \
	  $(GNUEFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) \
	  -L$(NEWLIB)/lib -L$(B)/efi -L$(GNUEFI_LIB) \
	  -lc -lefi-weak -lgnuefi $(shell $(HOST_CC) -print-libgcc-file-name) \
	  -Map $(B)/efi/ptboot.map -o $@
	bash scripts/check-efi-sections.sh $@

EFI_KEEP_SECTIONS := .text .sdata .data .dynamic .dynsym .rel .rela .reloc

$(B)/ptboot.efi: $(B)/efi/ptboot.so
	objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $< $@
	@objdump -p $@ | grep -q 'Subsystem.*(EFI application)' \
	  || { echo "$@ is not an EFI application" >&2; rm -f $@; exit 1; }

-include $(EFI_OBJS:.o=.d)

# ---- the stick and QEMU ------------------------------------------------------
# `make image` writes build/ptboot.img; PTBOOT_CFG is its ptboot.cfg. The
# default shows the main job: the CPU report, then a trace of the test image
# (test/image/, shipped on the stick) with the software trace unit, decoded
# on the target with its summaries (docs/trace.md).
PTBOOT_CFG ?= --shutdown info ; trace --unit soft \ptbtest.efi
QEMU_TIMEOUT ?= 120

$(B)/ptboot.img: $(B)/ptboot.efi $(B)/ptbtest.efi scripts/mkimage.sh FORCE
	bash scripts/mkimage.sh $@ $(B)/ptboot.efi "$(PTBOOT_CFG)" $(B)/ptbtest.efi

image: $(B)/ptboot.img
run: $(B)/ptboot.img
	bash scripts/qemu-run.sh $(B)/ptboot.img $(B)/serial.log $(QEMU_TIMEOUT)

TEST_SCRIPTS += test/boot/info.sh test/boot/errors.sh test/boot/selftest.sh test/boot/shell.sh \
  test/boot/dump.sh test/boot/flow.sh test/scripts/qemu_run.sh
TEST_SCRIPTS += test/boot/trace.sh test/boot/trace_ebs.sh test/boot/trace_bootnext.sh test/boot/trace_mp.sh test/boot/trace_buffer.sh
TEST_STEPS += $(B)/ptbtest.efi
# dump.sh makes its sample trace with the encoder's generator.
TEST_STEPS += $(B)/bench/gen_trace
UNIT_TESTS += test_ptd_opts

# The UEFI-free parts of efi/ are compiled into their unit tests, so the
# tests run exactly the code the app runs (the host library takes none).
UNIT_TESTS += test_efi_args test_efi_memrange test_efi_code_image
TEST_OBJS_test_efi_args := $(B)/test/obj/efi/args.o
$(B)/test/test_efi_args: $(TEST_OBJS_test_efi_args)
