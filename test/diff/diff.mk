# Differential tests of the packet layer and of time tracking against
# libipt (test/tests.mk group `diff`).

# thousands of random and corrupted streams through both packet decoders
$(B)/test/diff_pkt: test/diff/diff_pkt.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lipt

# a reference dumper over libipt's packet decoder, in ptdump's format
$(B)/test/ref_ptdump: test/diff/ref_ptdump.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) $< -o $@ -lipt

# time tracking against libipt's pt_qry_time
$(B)/test/diff_time: test/time/diff_time.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a -lipt

-include $(B)/test/diff_pkt.d $(B)/test/diff_time.d
