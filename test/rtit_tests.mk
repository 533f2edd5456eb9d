# The RTIT model (test/rtit_model.c, independent of arch/) is linked into
# the arch/x86 tests that drive start/stop through it. Included from
# arch/x86/arch.mk.
$(B)/test/rtit_model.o: test/rtit_model.c test/rtit_model.h | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -c $< -o $@

RTIT_MODEL_TESTS := test_rtit_seq test_rtit_props test_rtit_model
$(RTIT_MODEL_TESTS:%=$(B)/test/%): $(B)/test/rtit_model.o
$(foreach t,$(RTIT_MODEL_TESTS),$(eval TEST_LIBS_$(t) := $(B)/test/rtit_model.o))
