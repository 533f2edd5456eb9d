# host/: build/host/libptboot.a (the layers, LIB_SRCS, compiled for Linux; the
# unit tests and test programs link it too) and the CLI build/ptboot, which
# does not link libipt (the benchmarks against it are bench/: bench/bench.mk).
# libdw/libelf (elfutils): ELF symbol tables and DWARF lines (host/sym)
HOST_LDLIBS := -lZydis -ldw -lelf
# liblzma: the LZMA sections of firmware volumes (ptboot fv, host/fv_lzma.c)
HOST_LDLIBS += -llzma

LIB_OBJS  := $(LIB_SRCS:%.c=$(B)/host/%.o)
HOST_OBJS := $(HOST_SRCS:%.c=$(B)/host/%.o)

$(B)/host/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,CC,$<)$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(B)/host/libptboot.a: $(LIB_OBJS)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(B)/ptboot: $(HOST_OBJS) $(B)/host/libptboot.a
	$(call say,LD,$@)$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_OBJS) $(B)/host/libptboot.a $(HOST_LDLIBS)

-include $(LIB_OBJS:.o=.d) $(HOST_OBJS:.o=.d)
