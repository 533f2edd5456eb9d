# The boot-hang flight recorder (docs/hang.md): `make run-hang` shows the
# reset case end to end. Its tests are the group `hang` of test/tests.mk
# (hang.sh, watchdog.sh, survey.sh); the test images (ptbhang, ptbpoke,
# ptbwdog) are test/image/image.mk's; the unit tests (test_format_recorder,
# test_rtit_recorder, test_efi_resident_words) test/unit/unit.mk's.
.PHONY: run-hang
run-hang: $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/ptbhang.efi | $(B)/.setup-done
	@bash test/hang/run_hang.sh
