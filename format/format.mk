# format/: the capture's file formats (sideband, code dump, PE info, load
# options, memory ranges), one reader and writer each, used by efi/ and
# host/ alike: compiled for the host library and for the UEFI app.
FORMAT_SRCS := $(wildcard format/*.c)
LIB_SRCS += $(FORMAT_SRCS)
EFI_SRCS += $(FORMAT_SRCS)

# Freestanding check, as decoder/'s: format/*.c linked into one relocatable
# object with no libc, at -O2 and -O0; the only symbols it may need are the
# decoder's (format/ may use decoder/, nothing else of ours), no header
# beyond stdint/stddef/stdbool, no writable globals.
$(B)/format-fs/format.o: $(FORMAT_SRCS) $(wildcard format/*.h decoder/*.h) format | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(DECODER_FS_CFLAGS) -Wl,-r -o $@ $(FORMAT_SRCS)
	$(HOST_CC) $(DECODER_FS_CFLAGS) -O0 -Wl,-r -o $(@:.o=-O0.o) $(FORMAT_SRCS)

.PHONY: format-freestanding-check
format-freestanding-check: $(B)/format-fs/format.o $(B)/decoder-fs/libptd.o
	@have=$$(nm --defined-only $(B)/decoder-fs/libptd.o | awk '{print $$3}' | sort -u); \
	undef=$$(nm -u $< $(<:.o=-O0.o) | awk 'NF == 2 {print $$2}' | sort -u | comm -23 - <(echo "$$have")); \
	if [ -n "$$undef" ]; then \
	  echo "format-freestanding-check: FAILED, format/ needs external symbols: $$undef"; exit 1; \
	fi; \
	if grep -n '#include <' format/*.[ch] | grep -v -E '<(stdint|stddef|stdbool)\.h>'; then \
	  echo "format-freestanding-check: FAILED, format/ includes a header other than stdint/stddef/stdbool"; exit 1; \
	fi; \
	writable=$$(nm $< | awk '$$2 ~ /^[bBdDcCgGsS]$$/ {print $$3}' | sort -u); \
	if [ -n "$$writable" ]; then \
	  echo "format-freestanding-check: FAILED, format/ has mutable global state: $$writable"; exit 1; \
	fi; \
	echo "format-freestanding-check: ok (no symbols beyond decoder/, freestanding headers only, no writable globals)"
TEST_STEPS += format-freestanding-check

# the code dump writer read back by its reader
UNIT_TESTS += test_format_code_dump
