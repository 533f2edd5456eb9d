# ptboot: one entry point. `make` builds the UEFI app (build/ptboot.efi), the
# same program as a boot-service driver (build/ptbootdrv.efi) and the host CLI
# (build/ptboot); `make test` and `make run` are README's two commands
# and install what they need through scripts/setup.sh on a fresh machine.
#
# Each directory contributes a fragment (*.mk) that appends to the variables
# below; this file holds only the shared flags and the top-level targets.

.DEFAULT_GOAL := all
SHELL := /bin/bash
B := build

# ---- host side (the CLI, tests, benchmarks) --------------------------------
HOST_CC      ?= cc
HOST_CFLAGS  := -std=c11 -O2 -g -Wall -Wextra -Werror -D_DEFAULT_SOURCE -I. $(EXTRA_CFLAGS)
HOST_LDLIBS  :=

# Sources compiled into build/host/libptboot.a (decoder + format + arch, for the host).
LIB_SRCS     :=
# Sources of the host CLI build/ptboot (host/ only; they link the library).
HOST_SRCS    :=
# Unit-test programs (build/test/NAME from test/unit/NAME.c): run by `make test`.
UNIT_TESTS   :=
# Extra libraries a test links, per test: TEST_LIBS_<name> := -lipt
# Extra test steps (phony targets) run by `make test` after the unit tests.
TEST_STEPS   :=
# Benchmark steps run by `make bench`.
BENCH_STEPS  :=

# ---- UEFI side ---------------------------------------------------------------
# Sources compiled for the UEFI app (efi/ plus the decoder/arch it uses).
EFI_SRCS     :=

# Fragments that add sources and tests come first; host.mk, test.mk and
# bench.mk expand those lists in rule prerequisites, so they come last.
include decoder/decoder.mk
include format/format.mk
include decoder/ild.mk
include decoder/flow.mk
include arch/x86/arch.mk
include efi/efi.mk
include test/vpt/vpt.mk
include decoder/tracer.mk
include decoder/frame.mk
include decoder/summary.mk
include test/image/image.mk
include test/capture/capture.mk
include test/resident/resident.mk
include test/names/names.mk
include test/early/early.mk
include host/host.mk
include test/test.mk
include bench/bench.mk

# The packages every target needs. setup.sh is idempotent, quiet and fast
# when all are there, so it runs on every make: a package removed since the
# last build is put back rather than failing the build obscurely. The stamp
# is only touched when it did not exist, so nothing rebuilds because of it.
$(B)/.setup-done: FORCE
	@mkdir -p $(B)
	@bash scripts/setup.sh
	@[ -f $@ ] || touch $@
.PHONY: FORCE
FORCE:

.PHONY: all setup clean distclean test run image bench fuzz
all: $(B)/ptboot $(B)/ptboot.efi $(B)/ptbootdrv.efi $(B)/.layers-ok

# Who may include whom (docs/architecture.md): any #include crossing the
# layering fails the build.
LAYER_FILES = $(wildcard decoder/*.[ch] format/*.[ch] arch/*/*.[ch] efi/*.[chS] efi/*/*.[chS] host/*.[ch])
$(B)/.layers-ok: scripts/check-layers.sh $(LAYER_FILES)
	@mkdir -p $(B)
	@bash scripts/check-layers.sh
	@touch $@
setup: $(B)/.setup-done

# `clean` keeps the newlib build (minutes to redo); `distclean` removes all.
clean:
	find $(B) -mindepth 1 -maxdepth 1 ! -name newlib ! -name .setup-done -exec rm -rf {} +
distclean:
	rm -rf $(B)
