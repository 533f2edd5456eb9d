# The boot-hang flight recorder (docs/hang.md): arch/x86/rtit_recorder and
# format/recorder have their unit tests with their layers; here the boot
# tests (QEMU + OVMF, resets through the monitor, bounded: hang.sh about
# 3 minutes, watchdog.sh and survey.sh under a minute each) and
# `make run-hang`. The test images (ptbhang, ptbpoke, ptbwdog) are built by
# test/image/image.mk.
TEST_SCRIPTS += test/hang/hang.sh test/hang/watchdog.sh test/hang/survey.sh
TEST_STEPS += $(B)/ptbspin.efi

.PHONY: run-hang
run-hang: $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbhang.efi | $(B)/.setup-done
	@bash test/hang/run_hang.sh

# The resident driver's words (efi/resident/words.c, UEFI-free): the unit
# test compiles the app's file in, as efi.mk's efi tests do.
UNIT_TESTS += test_efi_resident_words
TEST_OBJS_test_efi_resident_words := $(B)/test/obj/efi/resident/words.o
$(B)/test/test_efi_resident_words: $(TEST_OBJS_test_efi_resident_words)
