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
