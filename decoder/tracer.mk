# decoder/ptd_tracer.*: the trace-unit model (layer 5 with ptd_enc), and the
# software trace unit built on it (arch/x86/soft_unit.*).
#
# Sources: decoder/ptd_tracer.c is picked up by decoder.mk's wildcard
# (DECODER_SRCS: host library, EFI app, decoder-freestanding-check) and
# arch/x86/soft_unit.c by arch.mk's (ARCH_SRCS: host library, EFI app), so
# nothing is added to LIB_SRCS/EFI_SRCS here; the check below fails the
# build if either wildcard stops covering them.
ifeq ($(filter decoder/ptd_tracer.c,$(DECODER_SRCS)),)
$(error decoder/tracer.mk: decoder/ptd_tracer.c is not in DECODER_SRCS)
endif

UNIT_TESTS += test_ptd_tracer
UNIT_TESTS += test_soft_unit

# ---- the software unit against flowgen's ground truth (test/tracer/) ----
# flowgen.c is compiled into the test (its generator, executor and decoder
# drivers), with ASan+UBSan over the unit, the decoder and the arch sources.
SOFT_FLOWGEN_ARCH := arch/x86/soft_unit.c arch/x86/rtit_linear.c arch/x86/rtit_config.c arch/x86/rtit_topa.c arch/x86/x86_paging.c
$(B)/test/soft_flowgen: test/tracer/soft_flowgen.c test/flow/flowgen.c $(FLOW_IMAGE_SRCS) $(DECODER_SRCS) \
                        $(SOFT_FLOWGEN_ARCH) $(wildcard decoder/*.h arch/x86/*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $(FLOWGEN_SAN) -o $@ test/tracer/soft_flowgen.c $(FLOW_IMAGE_SRCS) \
	  $(DECODER_SRCS) $(SOFT_FLOWGEN_ARCH) -lipt
TEST_STEPS += $(B)/test/soft_flowgen
TEST_SCRIPTS += test/tracer/soft_unit.sh
