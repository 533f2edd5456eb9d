# efi/: the UEFI application build/ptboot.efi and the same program as a
# boot-service driver, build/ptbootdrv.efi: EFI_SRCS (efi/ and the layers)
# built with gnu-efi (crt0, libefi, libgnuefi from Debian) and newlib as the
# C library (built from Debian's newlib-source into build/newlib by
# scripts/build-newlib.sh, once). Also the USB image and `make run`.
#
# Facts behind these lines: ../shared/reference/efi-build-and-qemu.md.

NEWLIB      := $(B)/newlib/install/x86_64-elf
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

# The sections objcopy keeps in a PE image (check-efi-sections.sh fails the
# link when any allocated section would be left out).
EFI_KEEP_SECTIONS := .text .sdata .data .dynamic .dynsym .rel .rela .reloc

# the text --version prints (rule in host/host.mk: scripts/version.sh)
EFI_SRCS += $(B)/gen/version.c
EFI_OBJS := $(EFI_SRCS:%.c=$(B)/efi/%.o) $(EFI_ASRCS:%.S=$(B)/efi/%.o)

$(NEWLIB_LIBC): | $(B)/.setup-done
	$(call say,NEWLIB,$(B)/newlib)bash scripts/build-newlib.sh $(B)/newlib

$(B)/efi/%.o: %.c | $(NEWLIB_LIBC)
	@mkdir -p $(@D)
	$(call say,EFI-CC,$<)$(HOST_CC) $(EFI_CFLAGS) -MMD -MP -c $< -o $@

$(B)/efi/%.o: %.S | $(NEWLIB_LIBC)
	@mkdir -p $(@D)
	$(call say,EFI-AS,$<)$(HOST_CC) $(EFI_CFLAGS) -c $< -o $@

# libefi.a defines memcpy, memset, setjmp and longjmp too. Linked after libc
# with plain symbols that is a multiple definition; linked first it would
# hand newlib's callers gnu-efi's setjmp (a 248-byte jmp_buf against
# newlib's 64). A copy with those four weakened lets newlib's win, always.
$(B)/efi/libefi-weak.a: $(GNUEFI_LIB)/libefi.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,OBJCOPY,$@)objcopy --weaken-symbol=memcpy --weaken-symbol=memset \
	  --weaken-symbol=setjmp --weaken-symbol=longjmp $< $@

# --no-undefined: gnu-efi's usual -shared link accepts undefined symbols and
# yields an image that jumps into garbage.
$(B)/efi/ptboot.so: $(EFI_OBJS) linker/ptboot.lds $(B)/efi/libefi-weak.a $(NEWLIB_LIBC)
	$(call say,LD,$@)ld -nostdlib -znocombreloc -T linker/ptboot.lds -shared -Bsymbolic \
	  --no-undefined --warn-common \
	  $(GNUEFI_LIB)/crt0-efi-x86_64.o $(EFI_OBJS) \
	  -L$(NEWLIB)/lib -L$(B)/efi -L$(GNUEFI_LIB) \
	  -lc -lefi-weak -lgnuefi $(shell $(HOST_CC) -print-libgcc-file-name) \
	  -Map $(B)/efi/ptboot.map -o $@
	$(call say,CHECK,$@)bash scripts/check-efi-sections.sh $@

$(B)/ptboot.efi: $(B)/efi/ptboot.so
	$(call say,OBJCOPY,$@)objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-app-x86_64 $< $@
	@objdump -p $@ | grep -q 'Subsystem.*(EFI application)' \
	  || { echo "$@ is not an EFI application" >&2; rm -f $@; exit 1; }

# build/ptbootdrv.efi: the same image as ptboot.efi with the PE subsystem of
# an EFI boot-service driver (11; UEFI 2.10 section 2.1.1): a Driver####
# option must load an image that stays resident, and an application is
# unloaded when its entry point returns. efi_main tells the two apart by
# the loaded image's ImageCodeType (efi/resident/driver.h).
$(B)/ptbootdrv.efi: $(B)/efi/ptboot.so
	$(call say,OBJCOPY,$@)objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-bsdrv-x86_64 $< $@
	@objdump -p $@ | grep -q 'Subsystem.*(EFI boot service driver)' \
	  || { echo "$@ is not an EFI boot service driver" >&2; rm -f $@; exit 1; }

-include $(EFI_OBJS:.o=.d)

# ---- the stick and QEMU ------------------------------------------------------
# `make image` writes build/ptboot.img; PTBOOT_CFG is its ptboot.cfg. The
# default shows the main job: the CPU report, then a trace of the test image
# (test/image/, shipped on the stick) with the software trace unit, decoded
# on the target with its summaries (docs/trace.md).
PTBOOT_CFG ?= --shutdown info ; trace --unit soft \ptbtest.efi
QEMU_TIMEOUT ?= 120

# The stick has the driver where `install` expects it (\EFI\ptboot\ptbootdrv.efi)
# and the test image; PTBOOT_FILES='SRC=DEST ...' adds files (DEST like
# EFI/test/mydriver.efi or \EFI\test\mydriver.efi; a bare SRC goes to the root).
# PTBOOT_IMG_SIZE: the FAT image's size (128M: room for README's 64 MiB
# buffer and its files).
PTBOOT_FILES ?=
PTBOOT_IMG_SIZE ?= 128M
$(B)/ptboot.img: $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbtest.efi scripts/mkimage.sh FORCE
	$(call say,IMAGE,$@)MKIMAGE_SIZE=$(PTBOOT_IMG_SIZE) bash scripts/mkimage.sh $@ $(B)/ptboot.efi \
	  "$(PTBOOT_CFG)" $(B)/ptbtest.efi $(B)/ptbootdrv.efi=EFI/ptboot/ptbootdrv.efi \
	  $(foreach f,$(PTBOOT_FILES),'$(f)')

.PHONY: image run
image: $(B)/ptboot.img
run: $(B)/ptboot.img
	$(call say,QEMU,$<)EXIT_STATUS=app bash scripts/qemu-run.sh $(B)/ptboot.img $(B)/serial.log $(QEMU_TIMEOUT)
