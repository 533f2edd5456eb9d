# decoder/ptd_qry*, ptd_flow*: query/event and instruction-flow layers
# (sources picked up by decoder.mk's wildcard); their tests, the libipt
# reference flow and the flow benchmark live here.

# ---- reference: libipt's instruction decoder in ptxed's --no-inst format ----
FLOW_IMAGE_SRCS := host/flow_image.c
$(B)/test/libipt_flow: test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) host/flow_image.h | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -o $@ test/ref/libipt_flow.c $(FLOW_IMAGE_SRCS) -lipt
TEST_STEPS += $(B)/test/libipt_flow
TEST_SCRIPTS += test/flow/ref_real.sh
TEST_SCRIPTS += test/flow/real_flow.sh

# ---- benchmark: ptboot's flow against libipt's insn and block decoders ----
.PHONY: bench-flow
bench-flow: $(B)/ptboot
	@bash test/flow/bench_real.sh
BENCH_STEPS += bench-flow
