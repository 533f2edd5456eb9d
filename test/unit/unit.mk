# Unit tests (cmocka): every test/unit/test_NAME.c is one program,
# build/test/test_NAME, linked with build/host/libptboot.a; test/tests.mk
# runs them all as the group `unit`. What a test needs beyond the library:
#   TEST_OBJS_<test>  objects linked before the library (test/ or efi/ code)
#   TEST_LIBS_<test>  link options after it
UNIT_TESTS     := $(sort $(basename $(notdir $(wildcard test/unit/test_*.c))))
UNIT_TEST_BINS := $(UNIT_TESTS:%=$(B)/test/%)

$(B)/test/test_%: test/unit/test_%.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< $(TEST_OBJS_test_$*) -o $@ \
	  $(B)/host/libptboot.a -lcmocka $(TEST_LIBS_test_$*)
-include $(UNIT_TEST_BINS:=.d)

# Test-side objects: the RTIT model (test/rtit_model.c, independent of
# arch/: the CPU's MSR block as the SDM describes it) and the UEFI-free
# files of efi/ that unit tests run exactly as the app does (the host
# library takes no efi/ file).
$(B)/test/obj/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CC,$<)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
-include $(wildcard $(B)/test/obj/*/*.d $(B)/test/obj/*/*/*.d)

RTIT_MODEL := $(B)/test/obj/test/rtit_model.o
TEST_OBJS_test_rtit_seq       := $(RTIT_MODEL)
TEST_OBJS_test_rtit_props     := $(RTIT_MODEL)
TEST_OBJS_test_rtit_model     := $(RTIT_MODEL)
TEST_OBJS_test_capture_plan   := $(RTIT_MODEL)
TEST_OBJS_test_rtit_recorder  := $(RTIT_MODEL)
TEST_OBJS_test_efi_resident_words := $(B)/test/obj/efi/resident/words.o
TEST_OBJS_test_efi_args       := $(B)/test/obj/efi/args.o
TEST_OBJS_test_efi_sideband   := $(B)/test/obj/efi/capture/sideband_cpu.o
# query/flow rules on hand-built traces, and the errata table, compared
# with libipt's
TEST_LIBS_test_ptd_qry        := -lipt
TEST_LIBS_test_ptd_errata     := -lipt
# pe_info's hostile-input cases under the sanitizers: the test compiles
# format/pe_info.c into itself so the parser is instrumented too; its real
# PE images come from test/capture/capture.mk's fixtures.
TEST_LIBS_test_efi_pe_info    := $(SAN_CFLAGS)
# elf_info's the same way, against libelf on real ELF files (build/ptboot,
# the test image's shared object) and hand-built ones
TEST_LIBS_test_format_elf_info := $(SAN_CFLAGS) -lelf
$(B)/test/test_format_elf_info: | $(B)/ptboot $(B)/ptbtest.efi
$(foreach t,$(UNIT_TESTS),$(eval $(B)/test/$(t): $(TEST_OBJS_$(t))))
$(B)/test/test_efi_pe_info: | capture-fixtures
