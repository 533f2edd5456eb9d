# Issue #20, the firmware's own boot traced from early DXE: `ptboot fv`
# (format/fv.c, format/ffs.c, host/fv_image.c, host/fv_lzma.c) and the
# driver dispatched from the firmware volume (docs/early-boot.md).
UNIT_TESTS += test_format_fv
TEST_SCRIPTS += test/early/fv_cli.sh

# libFuzzer target over the volume readers and writers (format/ and the
# host's tree with its LZMA sections): briefly in `make test`, for
# FUZZ_SECONDS (default 600) under `make fuzz`.
FUZZ_FV_SRCS := test/fuzz/fuzz_fv.c format/fv.c format/ffs.c format/pi_guid.c format/text.c \
  host/fv_image.c host/fv_lzma.c
$(B)/test/fuzz_fv: $(FUZZ_FV_SRCS) $(wildcard format/*.h host/fv_*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(or $(FUZZ_CC),clang) -std=c11 -O2 -g -I. -D_DEFAULT_SOURCE -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(FUZZ_FV_SRCS) -llzma -o $@
TEST_STEPS += $(B)/test/fuzz_fv
TEST_SCRIPTS += test/fuzz/fuzz_fv.sh
.PHONY: early-fuzz
early-fuzz: $(B)/test/fuzz_fv
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/fv-corpus bash test/fuzz/fuzz_fv.sh
fuzz: early-fuzz

# The --follow session's page set (efi/resident/touched.c, UEFI-free): the
# unit test compiles the app's file in, as efi.mk's efi tests do.
UNIT_TESTS += test_efi_touched
TEST_OBJS_test_efi_touched := $(B)/test/obj/efi/resident/touched.o
$(B)/test/test_efi_touched: $(TEST_OBJS_test_efi_touched)

# The boot test: the injected firmware booted twice (test/early/boot.sh).
TEST_SCRIPTS += test/early/boot.sh
TEST_STEPS += $(B)/osloader.efi

# `make run-early`: inject, boot, show the report (test/early/run_early.sh).
.PHONY: run-early
run-early: $(B)/ptboot $(B)/ptbootdrv.efi $(B)/osloader.efi | $(B)/.setup-done
	@bash test/early/run_early.sh
