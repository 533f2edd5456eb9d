# The serial framing: the target's encoder (decoder/ptd_frame.c, the code
# efi/capture/serial_dump.c runs) on the host, making frame lines for the
# tests (test/tests.mk groups `serial`, `cli`, `fuzz`) and `make bench`.
$(B)/test/serial_enc: test/serial/serial_enc.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a
-include $(B)/test/serial_enc.d
