# The RTIT model (test/rtit_model.c, independent of arch/) is linked into
# the arch/x86 tests that drive start/stop through it. Included from
# arch/x86/arch.mk.
$(B)/test/rtit_model.o: test/rtit_model.c test/rtit_model.h | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -c $< -o $@

RTIT_MODEL_TESTS := test_rtit_seq test_rtit_props test_rtit_model
$(RTIT_MODEL_TESTS:%=$(B)/test/%): $(B)/test/rtit_model.o
$(foreach t,$(RTIT_MODEL_TESTS),$(eval TEST_LIBS_$(t) := $(B)/test/rtit_model.o))

# libFuzzer target over the CPUID dump text (parser, caps, info report,
# default plan): a short run in `make test`, `make cpuid-fuzz` for longer.
FUZZ_CC ?= clang
# arch/x86's software trace unit writes through decoder/ (ptd_tracer, ILD,
# encoder), so the decoder sources link in too.
CPUID_FUZZ_SRCS := test/fuzz/fuzz_cpuid.c $(ARCH_SRCS) $(DECODER_SRCS)
$(B)/test/fuzz_cpuid: $(CPUID_FUZZ_SRCS) $(wildcard arch/x86/*.h) $(wildcard decoder/*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 -O2 -g -I. -fsanitize=fuzzer,address,undefined \
	  -fno-sanitize-recover=undefined $(CPUID_FUZZ_SRCS) -o $@
.PHONY: arch-test-progs cpuid-fuzz
arch-test-progs: $(B)/test/fuzz_cpuid
TEST_STEPS += arch-test-progs
TEST_SCRIPTS += test/fuzz/fuzz_cpuid.sh
cpuid-fuzz: $(B)/test/fuzz_cpuid
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/cpuid-corpus bash test/fuzz/fuzz_cpuid.sh
fuzz: cpuid-fuzz

# Capture plans (arch/x86/capture_plan, capture_seq) for every fixture CPU
# through the RTIT model.
UNIT_TESTS += test_capture_plan
$(B)/test/test_capture_plan: $(B)/test/rtit_model.o
TEST_LIBS_test_capture_plan := $(B)/test/rtit_model.o
TEST_SCRIPTS += test/capture_plan.sh
# Multi-processor paths in QEMU (-smp 2): info --cpus, plan --cpus (efi/capture/mp.c)
TEST_SCRIPTS += test/boot/mp.sh
