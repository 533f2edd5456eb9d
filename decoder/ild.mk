# decoder/ptd_ild*: x86 instruction-length decoder (sources are picked up by
# decoder.mk's wildcard); its tests and oracle comparisons live here.

# The ILD alone, for the programs that link it without the rest of libptd
# (the step-table generator, the sanitizer build, the QEMU plugin): every
# decoder/ptd_ild*.c but the generated step table.
ILD_SRCS := $(filter-out decoder/ptd_ild_step_table.c,$(wildcard decoder/ptd_ild*.c))

# cmocka unit tests: hand-picked encodings per class, mode and prefix.
UNIT_TESTS += test_ptd_ild test_ptd_ild_apx

# Differential test against Zydis (test/ild/ild_vs_zydis.c): `make test` runs
# a CI-sized pass (structured + random + real code pages, a few seconds);
# `make ild-fuzz` (also part of `make fuzz`) runs millions per mode with a
# fresh seed: `make ild-fuzz ILD_FUZZ_N=50000000 ILD_FUZZ_SEED=123`.
ILD_REAL_DIR ?= ../shared/traces/real

$(B)/test/ild_vs_zydis: test/ild/ild_vs_zydis.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lZydis
-include $(B)/test/ild_vs_zydis.d

TEST_STEPS += $(B)/test/ild_vs_zydis
TEST_SCRIPTS += test/ild/ild_vs_zydis.sh

# Bounds: the decoder sources compiled with AddressSanitizer/UBSan into
# test/ild/ild_bounds.c; inputs in heap blocks of exactly the given size.
ILD_SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(B)/test/ild_bounds: test/ild/ild_bounds.c $(wildcard decoder/ptd_ild*.c decoder/ptd_ild*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(ILD_SAN_FLAGS) -o $@ test/ild/ild_bounds.c $(wildcard decoder/ptd_ild*.c)

TEST_STEPS += $(B)/test/ild_bounds
TEST_SCRIPTS += test/ild/ild_bounds.sh

ILD_FUZZ_N ?= 20000000
ILD_FUZZ_SEED ?= $(shell date +%s)
.PHONY: ild-fuzz
ild-fuzz: $(B)/test/ild_vs_zydis $(B)/test/ild_bounds
	$(B)/test/ild_vs_zydis --seed $(ILD_FUZZ_SEED) --random $(ILD_FUZZ_N) --structured \
	    --real $(ILD_REAL_DIR) --real-random 2000000
	$(B)/test/ild_bounds $(ILD_FUZZ_N) $(ILD_FUZZ_SEED)
fuzz: ild-fuzz

# Benchmark: ptd_ild_decode against Zydis over the real code pages.
$(B)/bench/ild_bench: test/ild/ild_bench.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lZydis
-include $(B)/bench/ild_bench.d

.PHONY: ild-bench
ild-bench: $(B)/bench/ild_bench
	$(B)/bench/ild_bench $(ILD_REAL_DIR)
BENCH_STEPS += ild-bench
TEST_STEPS += $(B)/bench/ild_bench

# The step table of ptd_ild_step (decoder/ptd_ild_step_table.c) is generated
# ahead of time from ptd_ild_decode() by test/ild/gen_step_table.c and
# committed (the decoder builds without a host tool): `make ild-step-table`
# regenerates it, test/ild/step_table.sh fails when it is not current.
$(B)/test/gen_step_table: test/ild/gen_step_table.c $(ILD_SRCS) $(wildcard decoder/ptd_ild*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ test/ild/gen_step_table.c $(ILD_SRCS)
TEST_STEPS += $(B)/test/gen_step_table
TEST_SCRIPTS += test/ild/step_table.sh
.PHONY: ild-step-table
ild-step-table: $(B)/test/gen_step_table
	$(B)/test/gen_step_table > decoder/ptd_ild_step_table.c
