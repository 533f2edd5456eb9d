# ptboot: one entry point (docs/architecture.md has the whole story).
#
#   make           the products, from the layers (decoder/ format/ arch/x86/):
#                    build/ptboot.efi     the UEFI app: + efi/, gnu-efi, newlib (efi/efi.mk)
#                    build/ptbootdrv.efi  the same program as a boot-service driver (efi/efi.mk)
#                    build/ptboot         the host CLI: host/ over build/host/libptboot.a
#                                         (the layers compiled for Linux) (host/host.mk)
#   make test      every test group, then a table of the groups' times and the line
#                  "tests: N passed, N failed, N skipped"; make test T=boot runs one
#                  group (T="cli flow" several; make test-groups lists them). The
#                  groups and their scripts are test/tests.mk, unit tests are every
#                  test/unit/test_*.c, fuzzers test/fuzz/fuzz.mk.
#   make bench     the benchmarks against libipt (bench/bench.mk lists them)
#   make fuzz      long libFuzzer and generator runs (FUZZ_SECONDS, default 600 each)
#   make run       build/ptboot.img booted in QEMU + OVMF; make image: the image only
#   make format    clang-format over the tree (.clang-format); make format-check lists
#                  the files that differ
#   V=1            full command lines instead of "  CC      decoder/ptd_pkt.c"
#
# Each fragment (*/*.mk) adds the rules of its part and appends to the lists
# at the end of this file; every list is used only by the targets defined
# after all fragments are read, so the order they are read in does not matter.

.DEFAULT_GOAL := all
SHELL := /bin/bash
B := build

# ---- tools: one setting each -------------------------------------------------
HOST_CC     ?= cc
CLANG       ?= clang
FUZZ_CC     ?= $(CLANG)
GNUEFI_LIB  := /usr/lib
GNUEFI_INC  := /usr/include/efi
HOST_CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -I. $(EXTRA_CFLAGS)
# AddressSanitizer + UBSan for the tests that feed hostile input to our code
SAN_CFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 -O2 -g -I. -D_DEFAULT_SOURCE -fsanitize=fuzzer,address,undefined \
               -fno-sanitize-recover=undefined
# Real Intel PT traces (outside the tree): tests that need them are skipped without.
PTBOOT_REAL_TRACES ?= ../shared/traces/real
export PTBOOT_REAL_TRACES

# ---- the layers' sources (docs/architecture.md) --------------------------------
DECODER_SRCS := $(wildcard decoder/*.c)
FORMAT_SRCS  := $(wildcard format/*.c)
ARCH_SRCS    := $(wildcard arch/x86/*.c)
LIB_SRCS     := $(DECODER_SRCS) $(FORMAT_SRCS) $(ARCH_SRCS)
# the ILD alone (every decoder/ptd_ild*.c but the generated step table), for
# the programs that link it without the rest of libptd
ILD_SRCS     := $(filter-out decoder/ptd_ild_step_table.c,$(wildcard decoder/ptd_ild*.c))
HOST_SRCS    := $(wildcard host/*.c host/*/*.c)
EFI_SRCS     := $(wildcard efi/*.c efi/*/*.c) $(LIB_SRCS)
EFI_ASRCS    := $(wildcard efi/*.S efi/*/*.S)

# ---- short output lines: $(call say,TAG,WHAT) before a recipe line; $(Q) -----
ifeq ($(V),1)
  Q :=
  say :=
else
  Q := @
  say = @printf '  %-7s %s\n' '$(1)' '$(2)';
endif

# ---- lists the fragments append to ------------------------------------------
# test/tests.mk: the group names (and TESTS_<group>, TEST_NEEDS_<group>);
# bench/bench.mk: the benchmark steps; test/fuzz/fuzz.mk: the long runs.
TEST_GROUPS :=
BENCH_STEPS :=
FUZZ_RUNS   :=

include $(sort $(wildcard decoder/*.mk format/*.mk arch/*/*.mk efi/*.mk host/*.mk \
                          bench/*.mk test/*.mk test/*/*.mk))

# The packages every target needs (scripts/setup.sh: quiet and fast when all
# are there, so it runs on every make: a package removed since the last build
# is put back rather than failing obscurely). The stamp is only made once.
$(B)/.setup-done: FORCE
	@mkdir -p $(B)
	@bash scripts/setup.sh
	@[ -f $@ ] || touch $@
.PHONY: FORCE
FORCE:

# Who may include whom (docs/architecture.md): any #include that crosses
# the layering fails the build.
LAYER_FILES := $(wildcard decoder/*.[ch] format/*.[ch] arch/*/*.[ch] efi/*.[chS] efi/*/*.[chS] \
                          host/*.[ch] host/*/*.[ch])
$(B)/.layers-ok: scripts/check-layers.sh $(LAYER_FILES)
	$(call say,CHECK,layers)mkdir -p $(B) && bash scripts/check-layers.sh && touch $@

.PHONY: all setup test test-groups bench fuzz format format-check clean distclean
all: $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/.layers-ok
setup: $(B)/.setup-done

T ?= $(TEST_GROUPS)
ifneq ($(filter test,$(MAKECMDGOALS)),)
  ifneq ($(filter-out $(TEST_GROUPS),$(T)),)
    $(error T=$(filter-out $(TEST_GROUPS),$(T)): no such test group (groups: $(TEST_GROUPS)))
  endif
endif
test: all $(foreach g,$(T),$(TEST_NEEDS_$(g)))
	@bash test/run.sh $(foreach g,$(T),$(addprefix $(g):,$(TESTS_$(g))))
test-groups:
	@$(foreach g,$(TEST_GROUPS),printf '%-9s %s\n' $(g) '$(notdir $(TESTS_$(g)))' \
	  | fold -s -w 96 | sed '2,$$s/^/          /';)
bench: all $(BENCH_STEPS)
fuzz: $(FUZZ_RUNS)

# clang-format over our C (not over generated or hand-aligned tables).
FORMAT_EXCLUDE := decoder/ptd_ild_step_table.c decoder/ptd_ild_tables.c test/unit/ptd_events_expected.h
FORMAT_FILES := $(filter-out $(FORMAT_EXCLUDE),$(wildcard \
  decoder/*.[ch] format/*.[ch] arch/*/*.[ch] efi/*.[ch] efi/*/*.[ch] host/*.[ch] host/*/*.[ch] \
  bench/*.[ch] \
  test/*.[ch] test/*/*.[ch]))
format: | $(B)/.setup-done
	$(call say,FORMAT,$(words $(FORMAT_FILES)) files)clang-format -i --style=file $(FORMAT_FILES)
format-check: | $(B)/.setup-done
	@n=0; for f in $(FORMAT_FILES); do \
	  clang-format --style=file "$$f" | cmp -s - "$$f" || { echo "$$f"; n=$$((n + 1)); }; \
	done; [ $$n -eq 0 ] || { echo "format-check: $$n file(s) differ from .clang-format (make format)"; exit 1; }

# `clean` keeps the newlib build (minutes to redo); `distclean` removes all.
clean:
	find $(B) -mindepth 1 -maxdepth 1 ! -name newlib ! -name .setup-done -exec rm -rf {} +
distclean:
	rm -rf $(B)
