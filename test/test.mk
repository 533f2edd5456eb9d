# Tests. `make test` builds everything, then test/run.sh runs every unit-test
# program and every test script, prints their output, and closes with one
# "N passed, N failed" line.
UNIT_TEST_BINS = $(UNIT_TESTS:%=$(B)/test/%)
# Test scripts (run with bash, from the top of the tree, after the build).
TEST_SCRIPTS += test/setup/first_run.sh

$(B)/test/%: test/unit/%.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< $(TEST_OBJS_$*) -o $@ $(B)/host/libptboot.a -lcmocka $(TEST_LIBS_$*)

# Objects of efi/'s UEFI-free files for the unit tests that run them
# (TEST_OBJS_<name>; the host library takes no efi/ file).
$(B)/test/obj/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
-include $(wildcard $(B)/test/obj/efi/*.d)

-include $(UNIT_TEST_BINS:=.d)

test: all $(UNIT_TEST_BINS) $(TEST_STEPS)
	@bash test/run.sh $(UNIT_TEST_BINS) $(TEST_SCRIPTS)
TEST_SCRIPTS += test/scripts/check_layers.sh
