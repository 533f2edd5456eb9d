# Resident boot tracing (docs/resident.md): `install` writes a Driver####
# load option for build/ptbootdrv.efi, which on the next boot stays resident
# and traces until ExitBootServices; test/resident/resident.sh proves it in
# two QEMU runs that share one variable store, reading the variables back
# from the OVMF variable store file with build/test/efivars. The OS-loader
# stand-in, build/osloader.efi, is built by test/image/image.mk.
$(B)/test/efivars: test/resident/efivars.c $(B)/host/libptboot.a | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CCLD,$@)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP $< -o $@ $(B)/host/libptboot.a
-include $(B)/test/efivars.d
