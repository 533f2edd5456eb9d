# Issue #20, the firmware's own boot traced from early DXE: `ptboot fv`
# (format/fv.c, format/ffs.c, format/pi_guid.c, host/fv_image.c,
# host/fv_lzma.c) and the driver dispatched from the firmware volume
# (efi/resident/early.c, docs/early-boot.md).

# Test group `early`: the CLI on Debian's OVMF images, and the injected
# firmware booted (seven QEMU runs, one of them 2.2 million single steps:
# about 110 s at load average 3-4, under 3 minutes loaded).
TEST_GROUPS += early
TESTS_early      := test/early/fv_cli.sh test/early/boot.sh
TEST_NEEDS_early := $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/osloader.efi

# The --follow session's page set (efi/resident/touched.c, UEFI-free): its
# unit test (test/unit/test_efi_touched.c) runs the app's file.
TEST_OBJS_test_efi_touched := $(B)/test/obj/efi/resident/touched.o

# Its libFuzzer target, fuzz_fv, is in test/fuzz/fuzz.mk's table.

# `make run-early`: inject, boot, show the report (test/early/run_early.sh).
.PHONY: run-early
run-early: $(B)/ptboot $(B)/ptbootdrv.efi $(B)/osloader.efi | $(B)/.setup-done
	@bash test/early/run_early.sh
