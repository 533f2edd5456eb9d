# Tests of the decoder's packet layer (included by decoder/decoder.mk).

# cmocka unit tests (test/unit/NAME.c, built by test/test.mk)
UNIT_TESTS += test_ptd_pkt

# Differential test against libipt: build/test/diff_pkt, run by
# test/diff/diff_pkt.sh (thousands of random and corrupted streams).
$(B)/test/diff_pkt: test/diff/diff_pkt.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lipt
-include $(B)/test/diff_pkt.d

.PHONY: decoder-test-progs
decoder-test-progs: $(B)/test/diff_pkt
TEST_STEPS += decoder-test-progs
TEST_SCRIPTS += test/diff/diff_pkt.sh
