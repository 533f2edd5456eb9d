# decoder/ (libptd): freestanding C11, compiled for the host library, for the
# UEFI app, and once more under -ffreestanding -nostdlib to prove it needs no
# external symbol.
DECODER_SRCS := $(wildcard decoder/*.c)
LIB_SRCS += $(DECODER_SRCS)
EFI_SRCS += $(DECODER_SRCS)
