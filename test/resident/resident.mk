# Resident boot tracing (docs/resident.md): `install` writes a Driver####
# load option for build/ptbootdrv.efi, which on the next boot stays resident
# and traces until ExitBootServices; test/resident/resident.sh proves it in
# two QEMU runs that share one variable store.

# The EFI_LOAD_OPTION codec is UEFI-free: the host library carries it so the
# unit test runs exactly the app's code.
UNIT_TESTS += test_efi_load_option

# build/ptbootdrv.efi: the same image as ptboot.efi with the PE subsystem of
# an EFI boot-service driver (11; UEFI 2.10 section 2.1.1): a Driver####
# option must load an image that stays resident, and an application is
# unloaded when its entry point returns. efi_main tells the two apart by
# the loaded image's ImageCodeType (efi/resident_driver.h).
$(B)/ptbootdrv.efi: $(B)/efi/ptboot.so
	objcopy $(EFI_KEEP_SECTIONS:%=-j %) --target efi-bsdrv-x86_64 $< $@
	@objdump -p $@ | grep -q 'Subsystem.*(EFI boot service driver)' \
	  || { echo "$@ is not an EFI boot service driver" >&2; rm -f $@; exit 1; }

# build/osloader.efi: the OS-loader stand-in (test/resident/osloader.c),
# built like test/image's ptbtest.efi (no libc, no libefi: test/image/image.mk's
# BARE_EFI_APP); its symbols (build/test/resident/osloader.so) give the test
# its function offsets.
$(eval $(call BARE_EFI_APP,test/resident/osloader.c))

# The boot test reads variables back from the OVMF variable store file.
$(B)/test/efivars: test/resident/efivars.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ $(B)/host/libptboot.a

all: $(B)/ptbootdrv.efi $(B)/osloader.efi
TEST_STEPS += $(B)/test/efivars
TEST_SCRIPTS += test/resident/resident.sh
