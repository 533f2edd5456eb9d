# test/names: names for trace addresses (host/sym: --symbols, --elf/--pe)
# and the exports (host/export), docs/symbols.md and docs/export.md.

# host/sym and host/code_load on the project's own images, against
# binutils (nm, addr2line, objdump); the host CLI's objects are linked in
# (test/unit/test_host_sym.c, a unit test as every test/unit/test_*.c).
TEST_OBJS_test_host_sym := $(addprefix $(B)/host/host/,code_load.o flow_image.o input_file.o sym/names.o \
  sym/sym_elf.o sym/sym_pe.o sym/sym_search.o sym/sym_table.o)
TEST_LIBS_test_host_sym := -ldw -lelf
$(B)/test/test_host_sym: $(TEST_OBJS_test_host_sym) | $(B)/ptbtest.efi $(B)/ptbspin.efi $(B)/osloader.efi

# The scripts (group `names`, test/tests.mk): names and exports on `make
# run`'s capture with the HTML report in headless Chromium (one QEMU boot,
# ~15 s), and the options, messages and exit codes of --symbols/--elf/--pe/
# export (progress on a terminal only).
