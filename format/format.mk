# format/: the capture's file formats (sideband, code dump, PE info, load
# options, memory ranges), one reader and writer each, used by efi/ and
# host/ alike (the Makefile's LIB_SRCS). Freestanding like decoder/ and
# checked the same way; the only symbols it may need are decoder/'s.
$(B)/format-fs/format.o: $(FORMAT_SRCS) $(wildcard format/*.h decoder/*.h) $(B)/format-fs/srcs \
                         | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,LD,$@)$(HOST_CC) $(FS_CFLAGS) -Wl,-r -o $@ $(FORMAT_SRCS)
	$(call say,LD,$(@:.o=-O0.o))$(HOST_CC) $(FS_CFLAGS) -O0 -Wl,-r -o $(@:.o=-O0.o) $(FORMAT_SRCS)

.PHONY: format-freestanding-check
format-freestanding-check: $(B)/format-fs/format.o $(B)/decoder-fs/libptd.o
	$(call say,CHECK,format/ freestanding)bash scripts/check-freestanding.sh format $< $(<:.o=-O0.o) \
	  $(B)/decoder-fs/libptd.o
