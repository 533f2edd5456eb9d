# Benchmarks: `make bench` runs every step of BENCH_STEPS (the one list);
# results are ratios against libipt on the same input, in one run.
BENCH_STEPS += bench-packets bench-flow bench-summary bench-serial ild-bench bench-target-flow bench-export \
               vpt-big
.PHONY: bench-packets bench-flow bench-summary bench-serial ild-bench bench-target-flow bench-export

# build/ptboot-bench: the benchmarks against libipt (`ptboot bench` runs
# it, and so do tests: test/tests.mk), apart from build/ptboot so that the
# CLI does not link libipt. It takes the host CLI's option and image code
# from an archive of its objects (the linker pulls only what it uses).
BENCH_SRCS := bench/ptboot_bench.c bench/bench_flow.c bench/libipt_image.c
BENCH_OBJS := $(BENCH_SRCS:%.c=$(B)/host/%.o)
$(B)/bench/libhostcli.a: $(filter-out %/host/main.o,$(HOST_SRCS:%.c=$(B)/host/%.o))
	@mkdir -p $(@D)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^
$(B)/ptboot-bench: $(BENCH_OBJS) $(B)/bench/libhostcli.a $(B)/host/libptboot.a
	$(call say,LD,$@)$(HOST_CC) $(HOST_CFLAGS) $(HOST_LTO_LINK) -o $@ $(BENCH_OBJS) $(B)/bench/libhostcli.a \
	  $(B)/host/libptboot.a -lipt $(HOST_LDLIBS) && $(call rewrite_whole,$@)
-include $(BENCH_OBJS:.o=.d)

# The plain libipt program `make bench-flow` times `ptboot flow` against
# (bench/libipt_count.c: libc and libipt only).
$(B)/bench/libipt_count: bench/libipt_count.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lipt && $(call rewrite_whole,$@)

# Whole-process times, commands in turn (bench/proc_time.c).
$(B)/bench/proc_time: bench/proc_time.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $< -o $@

# A benchmark script's exit 77 (its input is missing, it says so) is no
# failure of `make bench`.
bench_script = bash $(1); rc=$$?; [ $$rc -eq 0 ] || [ $$rc -eq 77 ]

# Synthetic trace generator (our encoder), also used by tests.
$(B)/bench/gen_trace: bench/gen_trace.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a
-include $(B)/bench/gen_trace.d

# Packet layer against libipt's packet decoder: the real traces (when
# $(PTBOOT_REAL_TRACES) exists) and 64 MiB synthetic traces from our encoder:
# synthetic.pt is a simulated program's trace (the goal: ratio >= 5);
# synthetic-uniform.pt draws every packet independently, a worst case for
# branch prediction, shown for information.
$(B)/bench/synthetic.pt: $(B)/bench/gen_trace
	$(call say,GEN,$@)$(B)/bench/gen_trace --size 67108864 --seed 1 $@
$(B)/bench/synthetic-uniform.pt: $(B)/bench/gen_trace
	$(call say,GEN,$@)$(B)/bench/gen_trace --size 67108864 --seed 1 --uniform $@
bench-packets: $(B)/ptboot $(B)/ptboot-bench $(B)/bench/synthetic.pt $(B)/bench/synthetic-uniform.pt
	@if [ -d "$(PTBOOT_REAL_TRACES)" ]; then \
	  for t in $(PTBOOT_REAL_TRACES)/*/trace.pt; do $(B)/ptboot bench --pt $$t || exit 1; done; \
	else echo "bench-packets: $(PTBOOT_REAL_TRACES) not found, real traces skipped"; fi
	@$(B)/ptboot bench --pt $(B)/bench/synthetic.pt --rounds 3 --min-bytes 0
	@$(B)/ptboot bench --pt $(B)/bench/synthetic-uniform.pt --rounds 3 --min-bytes 0

# The instruction flow against libipt on the real traces (bench/flow.sh,
# docs/performance.md): in one process, and whole processes (`ptboot flow
# --quiet --stat` against libipt_count). PTBOOT_LIBIPT_LIB=DIR adds the
# libipt.so.2 in DIR (e.g. one built from current sources), PTXED=FILE a
# ptxed to time; neither is needed.
bench-flow: $(B)/ptboot $(B)/ptboot-bench $(B)/bench/libipt_count $(B)/bench/proc_time
	@$(call bench_script,bench/flow.sh)

# summaries: speed, text size, serial time, bytes per call event
bench-summary: $(B)/ptboot
	@$(call bench_script,test/summary/bench_summary.sh)

# serial framing: overhead, encoder throughput, fraction of line rate
bench-serial: $(B)/test/serial_enc $(B)/bench/gen_trace $(B)/ptboot
	@$(call bench_script,test/serial/bench.sh)

# ptd_ild_decode against Zydis over the real code pages
$(B)/bench/ild_bench: test/ild/ild_bench.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lZydis
-include $(B)/bench/ild_bench.d
ild-bench: $(B)/bench/ild_bench
	$(B)/bench/ild_bench $(PTBOOT_REAL_TRACES)

# On-target decode rate in QEMU (instructions/s, TSC-timed on the target)
# against the host's on the same real trace; skipped without the traces.
bench-target-flow: $(B)/ptboot $(B)/ptboot.efi
	@$(call bench_script,bench/target_flow.sh)

# `ptboot export` on a 234 M-instruction trace (the real mruby trace 37
# times over): time and peak memory per format (bench/export.sh).
bench-export: $(B)/ptboot
	@$(call bench_script,bench/export.sh)

# vpt-big (test/vpt/vpt.mk): the whole-boot trace of the virtual trace unit,
# built once.

# Large inputs (bench/big_inputs.sh, docs/performance.md "Large inputs"):
# a page dump and a trace of BENCH_BIG_BYTES each (256 MiB by default;
# `make bench-big BENCH_BIG_BYTES=2G` for the issue's 2 GiB), generated
# under TMPDIR and deleted afterwards; peak memory and time, mapped
# against read (PTBOOT_INPUT=read), with the same output.
BENCH_BIG_BYTES ?= 256M
BENCH_STEPS += bench-big
.PHONY: bench-big
$(B)/bench/gen_pages: bench/gen_pages.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a
-include $(B)/bench/gen_pages.d
bench-big: $(B)/ptboot $(B)/bench/gen_pages
	@BENCH_BIG_BYTES=$(BENCH_BIG_BYTES) $(call bench_script,bench/big_inputs.sh)
