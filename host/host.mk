# host/: build/host/libptboot.a (the layers, LIB_SRCS, compiled for Linux; the
# unit tests and test programs link it too) and the CLI build/ptboot, which
# does not link libipt (the benchmarks against it are bench/: bench/bench.mk).
# libdw/libelf (elfutils): ELF symbol tables and DWARF lines (host/sym),
# linked statically with the zlib they use (all three from libdw-dev and its
# dependencies): as shared objects they were five more libraries loaded by
# every ptboot process, 0.3 ms of a `ptboot --help` (0.91 -> 0.61 ms CPU)
# and of every decode (docs/performance.md). Zydis is loaded when a flow
# disassembles (host/disasm.c).
HOST_LDLIBS := -Wl,-Bstatic -ldw -lelf -lz -Wl,-Bdynamic

# The text --version prints, here and in the app (efi/efi.mk): git describe
# of the tree (scripts/version.sh rewrites the file only when it changes).
VERSION_C := $(B)/gen/version.c
$(VERSION_C): FORCE
	@bash scripts/version.sh $@
HOST_SRCS += $(VERSION_C)
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

# host/flow_image.c's page dumps (indexed in place, mapped or read) in a unit test
TEST_OBJS_test_flow_image := $(B)/host/host/flow_image.o $(B)/host/host/input_file.o
