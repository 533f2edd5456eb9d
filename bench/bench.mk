# Benchmarks: `make bench` runs each step; results are ratios against libipt.
# (The `bench` rule is at the end: make expands prerequisites when it reads a
# rule, so every BENCH_STEPS += must come before it.)

# build/ptboot-bench: the benchmarks against libipt (`ptboot bench` runs
# it), apart from build/ptboot so that the CLI does not link libipt. It
# takes the host CLI's option and image code from an archive of its objects
# (the linker pulls only what it uses).
BENCH_SRCS := bench/ptboot_bench.c bench/bench_flow.c bench/libipt_image.c
BENCH_OBJS := $(BENCH_SRCS:%.c=$(B)/host/%.o)
$(B)/bench/libhostcli.a: $(filter-out %/host/main.o,$(HOST_OBJS))
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(B)/ptboot-bench: $(BENCH_OBJS) $(B)/bench/libhostcli.a $(B)/host/libptboot.a
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(BENCH_OBJS) $(B)/bench/libhostcli.a $(B)/host/libptboot.a -lipt
-include $(BENCH_OBJS:.o=.d)
# the tests run `ptboot bench` too (test.mk is read before this file, so
# the prerequisite goes on the target itself)
test: $(B)/ptboot-bench

# The plain libipt program `make bench-flow` times `ptboot flow` against
# (bench/libipt_count.c: libc and libipt only).
$(B)/bench/libipt_count: bench/libipt_count.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lipt

# Whole-process times, commands in turn (bench/proc_time.c).
$(B)/bench/proc_time: bench/proc_time.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@

# The instruction flow against libipt on the real traces (bench/flow.sh,
# docs/performance.md): in one process, and whole processes (`ptboot flow
# --quiet --stat` against libipt_count). PTBOOT_LIBIPT_LIB=DIR adds the
# libipt.so.2 in DIR (e.g. one built from current sources), PTXED=FILE a
# ptxed to time; neither is needed.
.PHONY: bench-flow
bench-flow: $(B)/ptboot $(B)/ptboot-bench $(B)/bench/libipt_count $(B)/bench/proc_time
	@bash bench/flow.sh
BENCH_STEPS += bench-flow

# Synthetic trace generator (our encoder), used by `make bench` and tests.
$(B)/bench/gen_trace: bench/gen_trace.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ $(B)/host/libptboot.a

# Packet layer against libipt's packet decoder: the real traces (when
# ../shared/traces/real exists) and 64 MiB synthetic traces from our encoder:
# synthetic.pt is a simulated program's trace (the goal: ratio >= 5);
# synthetic-uniform.pt draws every packet independently, a worst case for
# branch prediction, shown for information.
PTBOOT_REAL_TRACES ?= ../shared/traces/real
$(B)/bench/synthetic.pt: $(B)/bench/gen_trace
	$(B)/bench/gen_trace --size 67108864 --seed 1 $@
$(B)/bench/synthetic-uniform.pt: $(B)/bench/gen_trace
	$(B)/bench/gen_trace --size 67108864 --seed 1 --uniform $@

.PHONY: bench-packets
bench-packets: $(B)/ptboot $(B)/ptboot-bench $(B)/bench/synthetic.pt $(B)/bench/synthetic-uniform.pt
	@if [ -d "$(PTBOOT_REAL_TRACES)" ]; then \
	  for t in $(PTBOOT_REAL_TRACES)/*/trace.pt; do $(B)/ptboot bench --pt $$t || exit 1; done; \
	else echo "bench-packets: $(PTBOOT_REAL_TRACES) not found, real traces skipped"; fi
	@$(B)/ptboot bench --pt $(B)/bench/synthetic.pt --rounds 3 --min-bytes 0
	@$(B)/ptboot bench --pt $(B)/bench/synthetic-uniform.pt --rounds 3 --min-bytes 0
BENCH_STEPS += bench-packets

# On-target decode rate in QEMU (instructions/s, TSC-timed on the target)
# against the host's on the same real trace; skipped without the traces.
.PHONY: bench-target-flow
bench-target-flow: $(B)/ptboot $(B)/ptboot.efi
	@PTBOOT_REAL_TRACES=$(PTBOOT_REAL_TRACES) bash bench/target_flow.sh
BENCH_STEPS += bench-target-flow

bench: all $(BENCH_STEPS)
