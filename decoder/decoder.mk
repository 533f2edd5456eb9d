# decoder/ (libptd): freestanding C11, compiled into the host library and the
# UEFI app (the Makefile's LIB_SRCS), and once more here with no libc to
# prove it needs no external symbol (scripts/check-freestanding.sh): all of
# decoder/*.c in one relocatable object, at -O2 and at -O0 (memcpy/memset
# emitted for struct copies, a stray libc call, a writable global fail it).
FS_CFLAGS := -std=c11 -O2 -Wall -Wextra -Werror -I. -ffreestanding -nostdlib -fno-builtin \
             -fno-stack-protector -fno-pic -no-pie

# $(B)/LAYER-fs/srcs holds the list of sources and changes only with it: a
# file added or removed rebuilds the object.
$(B)/%-fs/srcs: FORCE
	@mkdir -p $(@D)
	@echo '$($(call upper,$*)_SRCS)' | cmp -s - $@ || echo '$($(call upper,$*)_SRCS)' > $@
upper = $(if $(filter decoder,$(1)),DECODER,FORMAT)

$(B)/decoder-fs/libptd.o: $(DECODER_SRCS) $(wildcard decoder/*.h) $(B)/decoder-fs/srcs \
                          | $(B)/.setup-done
	@mkdir -p $(@D)
	$(call say,LD,$@)$(HOST_CC) $(FS_CFLAGS) -Wl,-r -o $@ $(DECODER_SRCS)
	$(call say,LD,$(@:.o=-O0.o))$(HOST_CC) $(FS_CFLAGS) -O0 -Wl,-r -o $(@:.o=-O0.o) $(DECODER_SRCS)

.PHONY: decoder-freestanding-check
decoder-freestanding-check: $(B)/decoder-fs/libptd.o
	$(call say,CHECK,decoder/ freestanding)bash scripts/check-freestanding.sh decoder $< $(<:.o=-O0.o)
