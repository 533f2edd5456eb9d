# decoder/ptd_qry*, ptd_flow*: query/event and instruction-flow layers
# (sources picked up by decoder.mk's wildcard); their tests and the libipt
# reference flow live here (the flow benchmark: bench/bench.mk).

# ---- reference: libipt's instruction decoder in ptxed's --no-inst format ----
FLOW_IMAGE_SRCS := host/flow_image.c format/code_image.c format/memrange.c
$(B)/test/libipt_flow: test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) host/flow_image.h | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) -lipt
TEST_STEPS += $(B)/test/libipt_flow
TEST_SCRIPTS += test/flow/ref_real.sh
TEST_SCRIPTS += test/flow/real_flow.sh test/flow/real_current.sh
TEST_SCRIPTS += test/flow/blocks_real.sh

# ---- random programs with ground truth (test/flow/flowgen.c) ----
# Built with ASan+UBSan over the decoder sources: corrupted traces must not
# make the flow layer read or write out of bounds.
FLOWGEN_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
$(B)/test/flowgen: test/flow/flowgen.c $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) $(wildcard decoder/*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(FLOWGEN_SAN) -o $@ test/flow/flowgen.c $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) -lipt
TEST_STEPS += $(B)/test/flowgen
TEST_SCRIPTS += test/flow/flowgen.sh test/flow/flow_current.sh

# Long run: FLOWGEN_SEEDS programs of FLOWGEN_INSNS instructions each.
FLOWGEN_SEEDS ?= 20000
FLOWGEN_INSNS ?= 20000
.PHONY: flow-fuzz
flow-fuzz: $(B)/test/flowgen
	$(B)/test/flowgen --seeds $(FLOWGEN_SEEDS) --insns $(FLOWGEN_INSNS) --first $$RANDOM --corrupt

# ---- unit tests: query/flow rules on hand-built traces, against libipt ----
UNIT_TESTS += test_ptd_qry
TEST_LIBS_test_ptd_qry := -lipt
# ---- the rules taken from current libipt, its ptxed's lines as recorded ----
UNIT_TESTS += test_ptd_events
TEST_SCRIPTS += test/flow/flow_cli.sh test/flow/events_205.sh

# ---- libFuzzer target over trace + code (query and flow layers) ----
FLOW_FUZZ_CC := $(or $(FUZZ_CC),clang)
$(B)/test/fuzz_flow: test/fuzz/fuzz_flow.c test/fuzz/fuzz_code.h $(DECODER_SRCS) $(wildcard decoder/ptd_*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(FLOW_FUZZ_CC) -std=c11 -O2 -g -I. -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	  test/fuzz/fuzz_flow.c $(DECODER_SRCS) -o $@
TEST_STEPS += $(B)/test/fuzz_flow
TEST_SCRIPTS += test/fuzz/fuzz_flow.sh
.PHONY: flow-libfuzz
flow-libfuzz: $(B)/test/fuzz_flow $(B)/test/flowgen
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/flow-corpus bash test/fuzz/fuzz_flow.sh
fuzz: flow-libfuzz flow-fuzz
