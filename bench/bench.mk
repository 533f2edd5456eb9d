# Benchmarks: `make bench` runs each step; results are ratios against libipt.
bench: all $(BENCH_STEPS)

# Synthetic trace generator (our encoder), used by `make bench` and tests.
$(B)/bench/gen_trace: bench/gen_trace.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) $< -o $@ $(B)/host/libptboot.a
