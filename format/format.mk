# format/: the capture's file formats (sideband, code dump, PE info, load
# options, memory ranges), one reader and writer each, used by efi/ and
# host/ alike: compiled for the host library and for the UEFI app.
FORMAT_SRCS := $(wildcard format/*.c)
LIB_SRCS += $(FORMAT_SRCS)
EFI_SRCS += $(FORMAT_SRCS)
