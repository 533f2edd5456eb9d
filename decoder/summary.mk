# decoder/ptd_sum*: decode summaries (call tree, hot blocks and edges, time
# per image and function, last transitions, errors) for the serial console;
# sources are picked up by decoder.mk's wildcard, `ptboot summary` by
# host.mk's. docs/summary.md.

# real traces: instruction totals against libipt, calls per function against
# the flow (skips without ../shared/traces/real)
TEST_SCRIPTS += test/summary/real_summary.sh

# generated programs with ground truth: calls, tree, blocks, last
# transitions, images, time; small arenas; corrupted traces
UNIT_TESTS += test_ptd_sum test_ptd_sum_events

# make bench: speed, text size, serial time, bytes per call event
.PHONY: bench-summary
bench-summary: $(B)/ptboot
	@bash test/summary/bench_summary.sh
BENCH_STEPS += bench-summary

# --capture DIR (sideband images, timing) equals the explicit options;
# ticks add up to the span (flowgen's timing programs via mkcapture)
TEST_SCRIPTS += test/summary/capture_summary.sh
