# Tests of the decoder's packet layer (included by decoder/decoder.mk).

# cmocka unit tests (test/unit/NAME.c, built by test/test.mk)
UNIT_TESTS += test_ptd_pkt test_ptd_fmt test_ptd_time test_ptd_errata
TEST_LIBS_test_ptd_errata := -lipt

# Differential test against libipt: build/test/diff_pkt, run by
# test/diff/diff_pkt.sh (thousands of random and corrupted streams).
$(B)/test/diff_pkt: test/diff/diff_pkt.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lipt
-include $(B)/test/diff_pkt.d

# Reference dumper over libipt's packet decoder, in ptdump's format.
$(B)/test/ref_ptdump: test/diff/ref_ptdump.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lipt

# Differential test of time tracking against libipt's (pt_qry_time):
# build/test/diff_time, run by test/time/diff_time.sh.
$(B)/test/diff_time: test/time/diff_time.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lipt
-include $(B)/test/diff_time.d

.PHONY: decoder-test-progs
decoder-test-progs: $(B)/test/diff_pkt $(B)/test/ref_ptdump $(B)/bench/gen_trace $(B)/test/diff_time
TEST_STEPS += decoder-test-progs
TEST_SCRIPTS += test/diff/diff_pkt.sh test/diff/dump_cmp.sh test/diff/dump_cli.sh test/time/diff_time.sh

# libFuzzer target over the packet layer, encoder and formatter.
FUZZ_CC ?= clang
FUZZ_SRCS := decoder/ptd_pkt.c decoder/ptd_enc.c decoder/ptd_fmt.c decoder/ptd_time.c decoder/ptd_errata.c decoder/ptd_err.c
$(B)/test/fuzz_pkt: test/fuzz/fuzz_pkt.c $(FUZZ_SRCS) $(wildcard decoder/ptd_*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 -O2 -g -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  test/fuzz/fuzz_pkt.c $(FUZZ_SRCS) -o $@
decoder-test-progs: $(B)/test/fuzz_pkt
TEST_SCRIPTS += test/fuzz/fuzz_pkt.sh

# `make fuzz`: a long run (FUZZ_SECONDS, default 600) keeping its corpus.
.PHONY: pkt-fuzz
pkt-fuzz: $(B)/test/fuzz_pkt $(B)/bench/gen_trace
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/pkt-corpus bash test/fuzz/fuzz_pkt.sh
fuzz: pkt-fuzz
