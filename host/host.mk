# host/: build/host/libptboot.a (the layers, LIB_SRCS, compiled for Linux; the
# unit tests and test programs link it too) and the CLI build/ptboot, which
# does not link libipt (the benchmarks against it are bench/: bench/bench.mk).
# build/ptboot is linked statically (static-pie: still placed at a random
# address): libdw/libelf (elfutils: ELF symbol tables and DWARF lines,
# host/sym) with the zlib they use, liblzma (host/fv_lzma.c) and the C
# library. Each shared object costs every process its loading: as shared
# objects, elfutils' were 0.3 ms of a `ptboot --help` (0.91 -> 0.61 ms
# CPU), and the C library and liblzma another 0.2 ms of every decode
# (Unzip's `flow --quiet --stat` 1.48 -> 1.28 ms; docs/performance.md).
# Zydis is loaded when a flow disassembles (host/disasm.c): glibc's dlopen
# in a static program needs the same glibc at run time as at link time,
# so the program is linked again whenever the C library changes (libc.a
# is a prerequisite), and the linker's warning that says so is not
# repeated at every link.
# (Programs that link these libraries with a shared one, build/ptboot-bench
# with libipt, take HOST_LDLIBS: the same libraries but the C library and
# liblzma shared.)
# The host objects carry GCC's intermediate code besides their machine code
# (fat LTO objects): build/ptboot and build/ptboot-bench are optimized
# whole at their link, across the decoder's files (small functions of one
# layer inlined into another's loops: 2-5% fewer instructions per decode,
# docs/performance.md); the unit tests link the machine code as before.
HOST_LTO_CFLAGS := -flto=auto -ffat-lto-objects
HOST_LTO_LINK := -flto=auto
HOST_LDLIBS := -Wl,-Bstatic -ldw -lelf -lz -Wl,-Bdynamic
PTBOOT_LDLIBS := -static-pie -ldw -lelf -lz -llzma
HOST_LIBC_A := $(shell $(HOST_CC) -print-file-name=libc.a)
# A program run once per command (ptboot, and the programs the benchmarks
# time it against), written again in one piece after its link: the linker
# writes its output in pieces, and the kernel then keeps the file in 4 KiB
# page-cache pages (593 of build/ptboot's 771 here); a copy is kept in
# large folios, so each run maps its code with fewer, cheaper page faults
# (about 40 us less per process here, docs/performance.md).
rewrite_whole = cp $(1) $(1).whole && mv -f $(1).whole $(1)
STATIC_DLOPEN_WARNING := Using 'dlopen' in statically linked|in function .host_disasm_open

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
	$(call say,CC,$<)$(HOST_CC) $(HOST_CFLAGS) $(HOST_LTO_CFLAGS) -MMD -MP -c $< -o $@

$(B)/host/libptboot.a: $(LIB_OBJS)
	$(call say,AR,$@)rm -f $@ && ar rcs $@ $^

$(B)/ptboot: $(HOST_OBJS) $(B)/host/libptboot.a $(wildcard $(HOST_LIBC_A))
	$(call say,LD,$@)$(HOST_CC) $(HOST_CFLAGS) $(HOST_LTO_LINK) -o $@ $(HOST_OBJS) \
	    $(B)/host/libptboot.a $(PTBOOT_LDLIBS) 2>&1 | { grep -Ev "$(STATIC_DLOPEN_WARNING)" >&2 || true; }; \
	    test "$${PIPESTATUS[0]}" = 0 && $(call rewrite_whole,$@)

-include $(LIB_OBJS:.o=.d) $(HOST_OBJS:.o=.d)

# host/flow_image.c's page dumps (indexed in place, mapped or read) in a unit test
TEST_OBJS_test_flow_image := $(B)/host/host/flow_image.o $(B)/host/host/input_file.o
