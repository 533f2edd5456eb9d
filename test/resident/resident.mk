# Resident boot tracing (docs/resident.md): `install` writes a Driver####
# load option for build/ptbootdrv.efi, which on the next boot stays resident
# and traces until ExitBootServices; test/resident/resident.sh proves it in
# two QEMU runs that share one variable store.

# The EFI_LOAD_OPTION codec is UEFI-free: the host library carries it so the
# unit test runs exactly the app's code.
LIB_SRCS += efi/load_option.c
UNIT_TESTS += test_efi_load_option
