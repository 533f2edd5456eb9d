# Host build: the library (decoder + arch compiled for Linux) and the CLI
# (which does not link libipt: the benchmarks against it are bench/).
HOST_SRCS += $(wildcard host/*.c host/sym/*.c host/export/*.c)
# libdw/libelf (elfutils): ELF symbol tables and DWARF lines (host/sym)
HOST_LDLIBS += -lZydis -ldw -lelf
# liblzma: the LZMA sections of firmware volumes (ptboot fv, host/fv_lzma.c)
HOST_LDLIBS += -llzma

LIB_OBJS  = $(LIB_SRCS:%.c=$(B)/host/%.o)
HOST_OBJS = $(HOST_SRCS:%.c=$(B)/host/%.o)

$(B)/host/%.o: %.c | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@

$(B)/host/libptboot.a: $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(B)/ptboot: $(HOST_OBJS) $(B)/host/libptboot.a
	$(HOST_CC) $(HOST_CFLAGS) -o $@ $(HOST_OBJS) $(B)/host/libptboot.a $(HOST_LDLIBS)

-include $(LIB_OBJS:.o=.d) $(HOST_OBJS:.o=.d)
TEST_SCRIPTS += test/cli/errors.sh
