# The instruction flow against libipt and against ground truth (test/tests.mk
# groups `flow` and `tracer`).

# host/flow_image (code images) with format/'s code dump reader, for the
# test programs built from sources
FLOW_IMAGE_SRCS := host/flow_image.c host/input_file.c format/code_image.c format/memrange.c

# libipt's instruction decoder in ptxed's --no-inst format: the reference
# (flow_image.c reads numbers with decoder/ptd_num.c, the one parser; the
# other users of FLOW_IMAGE_SRCS link all of the decoder)
$(B)/test/libipt_flow: test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) decoder/ptd_num.c host/flow_image.h | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -o $@ test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) decoder/ptd_num.c -lipt

# random programs with ground truth (test/flow/flowgen.c), built with the
# sanitizers over the decoder: corrupted traces must not make the flow
# layer read or write out of bounds
$(B)/test/flowgen: test/flow/flowgen.c $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) $(wildcard decoder/*.h) \
                   | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $(SAN_CFLAGS) -o $@ test/flow/flowgen.c \
	  $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) -lipt

# the software trace unit (arch/x86/soft_unit) against flowgen's ground
# truth: flowgen.c compiled in, the sanitizers over the unit, the decoder
# and the arch sources it needs
SOFT_FLOWGEN_ARCH := arch/x86/soft_unit.c arch/x86/rtit_linear.c arch/x86/rtit_config.c \
                     arch/x86/rtit_topa.c arch/x86/x86_paging.c
$(B)/test/soft_flowgen: test/tracer/soft_flowgen.c test/flow/flowgen.c $(FLOW_IMAGE_SRCS) \
                        $(DECODER_SRCS) $(SOFT_FLOWGEN_ARCH) $(wildcard decoder/*.h arch/x86/*.h) \
                        | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $(SAN_CFLAGS) -o $@ test/tracer/soft_flowgen.c \
	  $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) $(SOFT_FLOWGEN_ARCH) -lipt

# `make flow-fuzz` (part of `make fuzz`): FLOWGEN_SEEDS programs of
# FLOWGEN_INSNS instructions each, corrupted
FLOWGEN_SEEDS ?= 20000
FLOWGEN_INSNS ?= 20000
.PHONY: flow-fuzz
flow-fuzz: $(B)/test/flowgen
	$(B)/test/flowgen --seeds $(FLOWGEN_SEEDS) --insns $(FLOWGEN_INSNS) --first $$RANDOM --corrupt

# the static tail after a trace's end (decoder/ptd_tail.c, --tail):
# flowgen's programs, their traces cut at every packet boundary, decoded
# with --tail against the ground truth (test/flow/tailgen.c)
$(B)/test/tailgen: test/flow/tailgen.c test/flow/flowgen.c $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) \
                   $(wildcard decoder/*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $(SAN_CFLAGS) -o $@ test/flow/tailgen.c \
	  $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) -lipt
