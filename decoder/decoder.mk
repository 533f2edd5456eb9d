# decoder/ (libptd): freestanding C11, compiled for the host library, for the
# UEFI app, and once more under -ffreestanding -nostdlib to prove it needs no
# external symbol.
DECODER_SRCS := $(wildcard decoder/*.c)
LIB_SRCS += $(DECODER_SRCS)
EFI_SRCS += $(DECODER_SRCS)

# Freestanding check: all of decoder/*.c linked into one relocatable object
# with no libc; any undefined symbol (memcpy/memset emitted for struct
# copies, a stray libc call) fails the build.
DECODER_FS_CFLAGS := -std=c11 -O2 -Wall -Wextra -Werror -I. -ffreestanding \
                     -nostdlib -fno-builtin -fno-stack-protector -fno-pic -no-pie
# Built at -O2 and at -O0 (what gcc emits for struct copies differs).
$(B)/decoder-fs/libptd.o: $(DECODER_SRCS) $(wildcard decoder/*.h) | $(B)/.setup-done
	@mkdir -p $(@D)
	$(HOST_CC) $(DECODER_FS_CFLAGS) -Wl,-r -o $@ $(DECODER_SRCS)
	$(HOST_CC) $(DECODER_FS_CFLAGS) -O0 -Wl,-r -o $(@:.o=-O0.o) $(DECODER_SRCS)

.PHONY: decoder-freestanding-check
decoder-freestanding-check: $(B)/decoder-fs/libptd.o
	@undef=$$(nm -u $< $(<:.o=-O0.o) | awk 'NF == 2 {print $$2}' | sort -u); \
	if [ -n "$$undef" ]; then \
	  echo "decoder-freestanding-check: FAILED, decoder/ needs external symbols: $$undef"; exit 1; \
	fi; \
	if grep -n '#include <' decoder/*.[ch] | grep -v -E '<(stdint|stddef|stdbool)\.h>'; then \
	  echo "decoder-freestanding-check: FAILED, decoder/ includes a header other than stdint/stddef/stdbool"; exit 1; \
	fi; \
	writable=$$(nm $< | awk '$$2 ~ /^[bBdDcCgGsS]$$/ {print $$3}' | sort -u); \
	if [ -n "$$writable" ]; then \
	  echo "decoder-freestanding-check: FAILED, decoder/ has mutable global state: $$writable"; exit 1; \
	fi; \
	echo "decoder-freestanding-check: ok (no undefined symbols, freestanding headers only, no writable globals)"
TEST_STEPS += decoder-freestanding-check

include decoder/tests.mk
