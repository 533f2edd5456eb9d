# The instruction-length decoder (decoder/ptd_ild*) against Zydis and under
# the sanitizers (test/tests.mk group `ild`).

# structured + random + real code pages; `make ild-fuzz` (part of `make
# fuzz`) runs millions per mode with a fresh seed:
#   make ild-fuzz ILD_FUZZ_N=50000000 ILD_FUZZ_SEED=123
$(B)/test/ild_vs_zydis: test/ild/ild_vs_zydis.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lZydis
-include $(B)/test/ild_vs_zydis.d

# bounds: every ILD source (the step table too) with the sanitizers in
# test/ild/ild_bounds.c, inputs in heap blocks of exactly the given size
ILD_BOUNDS_SRCS := $(wildcard decoder/ptd_ild*.c)
$(B)/test/ild_bounds: test/ild/ild_bounds.c $(ILD_BOUNDS_SRCS) $(wildcard decoder/ptd_ild*.h) \
                      | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $(SAN_CFLAGS) -o $@ test/ild/ild_bounds.c \
	  $(ILD_BOUNDS_SRCS)

ILD_FUZZ_N ?= 20000000
ILD_FUZZ_SEED ?= $(shell date +%s)
.PHONY: ild-fuzz
ild-fuzz: $(B)/test/ild_vs_zydis $(B)/test/ild_bounds
	$(B)/test/ild_vs_zydis --seed $(ILD_FUZZ_SEED) --random $(ILD_FUZZ_N) --structured \
	    --real $(PTBOOT_REAL_TRACES) --real-random 2000000
	$(B)/test/ild_bounds $(ILD_FUZZ_N) $(ILD_FUZZ_SEED)

# The step table of ptd_ild_step (decoder/ptd_ild_step_table.c) is generated
# ahead of time from ptd_ild_decode() by test/ild/gen_step_table.c and
# committed (the decoder builds without a host tool): `make ild-step-table`
# regenerates it, test/ild/step_table.sh fails when it is not current.
$(B)/test/gen_step_table: test/ild/gen_step_table.c $(ILD_SRCS) $(wildcard decoder/ptd_ild*.h) \
                          | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -o $@ test/ild/gen_step_table.c $(ILD_SRCS)
.PHONY: ild-step-table
ild-step-table: $(B)/test/gen_step_table
	$(call say,GEN,decoder/ptd_ild_step_table.c)$(B)/test/gen_step_table > decoder/ptd_ild_step_table.c
