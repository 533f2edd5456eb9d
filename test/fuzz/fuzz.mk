# libFuzzer targets (ASan + UBSan), one table: build/test/fuzz_NAME from
# test/fuzz/fuzz_NAME.c and FUZZ_SRCS_NAME. `make test` runs each briefly
# (test/fuzz/fuzz_NAME.sh, a few seconds, group `fuzz`); `make fuzz-NAME`
# runs it for FUZZ_SECONDS (default 600) keeping its corpus in
# build/fuzz/NAME-corpus, and `make fuzz` runs them all (with the ILD's and
# the flow generator's long runs). FUZZ_NEEDS_NAME: what its seeds are made
# with; FUZZ_LIBS_NAME: libraries it links.
FUZZERS := pkt flow cpuid frame sideband pe sum fv

# packet layer, encoder and formatter
FUZZ_SRCS_pkt      := decoder/ptd_pkt.c decoder/ptd_enc.c decoder/ptd_fmt.c decoder/ptd_time.c \
                      decoder/ptd_errata.c decoder/ptd_err.c
FUZZ_NEEDS_pkt     := $(B)/bench/gen_trace
# trace + code through the query and flow layers
FUZZ_SRCS_flow     := $(DECODER_SRCS)
FUZZ_NEEDS_flow    := $(B)/test/flowgen
# the CPUID dump text: parser, caps, info report, default plan (arch/x86's
# software trace unit writes through decoder/, so it links in too)
FUZZ_SRCS_cpuid    := $(ARCH_SRCS) $(DECODER_SRCS)
FUZZ_NEEDS_cpuid   :=
# the serial framing and the host's recovery of a whole log
FUZZ_SRCS_frame    := host/serial_recover.c host/serial_join.c host/serial_repair.c format/sideband.c \
                      format/text.c $(DECODER_SRCS)
FUZZ_NEEDS_frame   := $(B)/bench/gen_trace $(B)/test/serial_enc
# the sideband text
FUZZ_SRCS_sideband := format/sideband.c format/text.c decoder/ptd_num.c
FUZZ_NEEDS_sideband := $(B)/test/flowgen $(B)/test/capture/mkcapture
# PE/COFF headers, ELF program headers and EFI load options
FUZZ_SRCS_pe       := format/pe_info.c format/elf_info.c format/load_option.c format/text.c
FUZZ_NEEDS_pe      := $(B)/ptboot.efi $(B)/ptboot capture-fixtures
# the decode summary over arbitrary trace + code
FUZZ_SRCS_sum      := $(DECODER_SRCS)
FUZZ_NEEDS_sum     := $(B)/test/flowgen
# firmware volumes, files and sections (format/) and the host's image tree
# with its LZMA sections and writer (ptboot fv, docs/early-boot.md)
FUZZ_SRCS_fv       := format/fv.c format/ffs.c format/pi_guid.c format/text.c host/fv_image.c \
                      host/fv_lzma.c
FUZZ_LIBS_fv       := -llzma
FUZZ_NEEDS_fv      :=

FUZZ_BINS := $(FUZZERS:%=$(B)/test/fuzz_%)
FUZZ_HDRS := $(wildcard decoder/*.h format/*.h arch/x86/*.h host/serial_*.h host/fv_*.h \
                         test/fuzz/*.h)

define FUZZER
$(B)/test/fuzz_$(1): test/fuzz/fuzz_$(1).c $(FUZZ_SRCS_$(1)) $(FUZZ_HDRS) | $(B)/.setup-done
	@mkdir -p $$(@D)
	$$(call say,FUZZ,$$@)$(FUZZ_CC) $(FUZZ_CFLAGS) $$< $(FUZZ_SRCS_$(1)) $(FUZZ_LIBS_$(1)) -o $$@

.PHONY: fuzz-$(1)
fuzz-$(1): $(B)/test/fuzz_$(1) $(FUZZ_NEEDS_$(1))
	FUZZ_SECONDS=$$$${FUZZ_SECONDS:-600} FUZZ_CORPUS=$(B)/fuzz/$(1)-corpus bash test/fuzz/fuzz_$(1).sh
endef
$(foreach f,$(FUZZERS),$(eval $(call FUZZER,$(f))))

FUZZ_RUNS += $(FUZZERS:%=fuzz-%) ild-fuzz flow-fuzz
# the names the docs have used
.PHONY: pkt-fuzz cpuid-fuzz flow-libfuzz capture-fuzz
pkt-fuzz: fuzz-pkt
cpuid-fuzz: fuzz-cpuid
flow-libfuzz: fuzz-flow
capture-fuzz: fuzz-frame fuzz-sideband fuzz-pe fuzz-sum
