# Benchmarks: `make bench` runs each step; results are ratios against libipt.
bench: all $(BENCH_STEPS)
