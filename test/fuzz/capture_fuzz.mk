# libFuzzer targets over the capture path's parsers of untrusted input
# (included from test/capture/capture.mk): the serial framing and the
# host's recovery of a whole log, the sideband text, PE/COFF headers and
# EFI load options, and the decode summary over arbitrary trace + code.
# Each runs briefly in `make test` (test/fuzz/fuzz_*.sh, a few seconds) and
# for FUZZ_SECONDS (default 600) under `make fuzz`, keeping its corpus in
# build/fuzz/NAME-corpus.
CAPTURE_FUZZ_CC := $(or $(FUZZ_CC),clang)
CAPTURE_FUZZ_FLAGS := -std=c11 -O2 -g -I. -D_DEFAULT_SOURCE -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=undefined
CAPTURE_FUZZ_HDRS := $(wildcard decoder/*.h format/*.h efi/*.h arch/x86/*.h host/serial_recover.h test/fuzz/fuzz_code.h)

FUZZ_FRAME_SRCS := test/fuzz/fuzz_frame.c host/serial_recover.c $(DECODER_SRCS)
FUZZ_SIDEBAND_SRCS := test/fuzz/fuzz_sideband.c format/sideband.c format/text.c decoder/ptd_num.c
FUZZ_PE_SRCS := test/fuzz/fuzz_pe.c format/pe_info.c format/load_option.c format/text.c
FUZZ_SUM_SRCS := test/fuzz/fuzz_sum.c $(DECODER_SRCS)
CAPTURE_FUZZERS := fuzz_frame fuzz_sideband fuzz_pe fuzz_sum

$(B)/test/fuzz_frame: $(FUZZ_FRAME_SRCS) $(CAPTURE_FUZZ_HDRS) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(CAPTURE_FUZZ_CC) $(CAPTURE_FUZZ_FLAGS) $(FUZZ_FRAME_SRCS) -o $@
$(B)/test/fuzz_sideband: $(FUZZ_SIDEBAND_SRCS) $(CAPTURE_FUZZ_HDRS) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(CAPTURE_FUZZ_CC) $(CAPTURE_FUZZ_FLAGS) $(FUZZ_SIDEBAND_SRCS) -o $@
$(B)/test/fuzz_pe: $(FUZZ_PE_SRCS) $(CAPTURE_FUZZ_HDRS) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(CAPTURE_FUZZ_CC) $(CAPTURE_FUZZ_FLAGS) $(FUZZ_PE_SRCS) -o $@
$(B)/test/fuzz_sum: $(FUZZ_SUM_SRCS) $(CAPTURE_FUZZ_HDRS) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(CAPTURE_FUZZ_CC) $(CAPTURE_FUZZ_FLAGS) $(FUZZ_SUM_SRCS) -o $@

.PHONY: capture-fuzz-progs capture-fuzz
capture-fuzz-progs: $(CAPTURE_FUZZERS:%=$(B)/test/%)
TEST_STEPS += capture-fuzz-progs
TEST_SCRIPTS += $(CAPTURE_FUZZERS:%=test/fuzz/%.sh)
capture-fuzz: capture-fuzz-progs
	for t in $(CAPTURE_FUZZERS); do \
	  FUZZ_SECONDS=$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/$${t#fuzz_}-corpus bash test/fuzz/$$t.sh || exit 1; \
	done
fuzz: capture-fuzz
