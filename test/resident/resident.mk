# Resident boot tracing (docs/resident.md): `install` writes a Driver####
# load option for build/ptbootdrv.efi (built by efi/efi.mk), which on the
# next boot stays resident and traces until ExitBootServices;
# test/resident/resident.sh proves it in two QEMU runs that share one
# variable store.

# The EFI_LOAD_OPTION codec (format/load_option.c) is in the host library:
# the unit test runs exactly the app's code.
UNIT_TESTS += test_efi_load_option

# build/osloader.efi: the OS-loader stand-in (test/resident/osloader.c),
# built like test/image's ptbtest.efi (no libc, no libefi: test/image/image.mk's
# BARE_EFI_APP); its symbols (build/test/resident/osloader.so) give the test
# its function offsets.
$(eval $(call BARE_EFI_APP,test/resident/osloader.c))

# The boot test reads variables back from the OVMF variable store file.
$(B)/test/efivars: test/resident/efivars.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ $(B)/host/libptboot.a

TEST_STEPS += $(B)/osloader.efi $(B)/test/efivars
TEST_SCRIPTS += test/resident/resident.sh
