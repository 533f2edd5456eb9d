# Host build: the library (decoder + arch compiled for Linux) and the CLI
# (which does not link libipt: the benchmarks against it are bench/).
HOST_SRCS += $(wildcard host/*.c host/sym/*.c host/export/*.c)
# libdw/libelf (elfutils): ELF symbol tables and DWARF lines (host/sym),
# linked statically with the zlib they use (all three from libdw-dev and
# its dependencies): as shared objects they were five more libraries
# loaded by every ptboot process, 0.3 ms of a `ptboot --help` (0.91 ->
# 0.61 ms CPU) and of every decode (docs/performance.md). Zydis is loaded
# when a flow disassembles (host/disasm.c).
HOST_LDLIBS += -Wl,-Bstatic -ldw -lelf -lz -Wl,-Bdynamic

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

# host/flow_image.c's page dumps (mapped in place or copied) in a unit test
UNIT_TESTS += test_flow_image
TEST_LIBS_test_flow_image := $(B)/host/host/flow_image.o $(B)/host/libptboot.a
$(B)/test/test_flow_image: $(B)/host/host/flow_image.o
