/* What an ELF file says about the code it loads: its header and program
 * headers (the System V ABI's "generic ABI", chapters 4 "ELF Header" and
 * 5 "Program Header"), for `--elf FILE` (host/code_load.c), which lays
 * each PT_LOAD segment's file bytes at its address as ptxed does.
 *
 * Only the header and the program header table are read, in place, so a
 * file of any size (a kernel with its debug sections) costs what those
 * take: the caller maps the file and touches only the segments' pages.
 * ELFCLASS32 and ELFCLASS64, either byte order; every offset is checked
 * against the buffer, so a truncated or hostile file gives an error and
 * never an out-of-bounds read. Freestanding like the rest of format/. */
#ifndef PTBOOT_FORMAT_ELF_INFO_H
#define PTBOOT_FORMAT_ELF_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_PT_LOAD 1u /* p_type of a loadable segment */

struct elf_info {
    uint8_t elf_class;  /* 32 or 64 */
    bool big_endian;    /* EI_DATA is ELFDATA2MSB */
    uint16_t type;      /* e_type: 2 executable, 3 shared object (PIE) */
    uint16_t machine;   /* e_machine: 62 x86-64, 3 i386 */
    uint64_t entry;     /* e_entry */
    uint64_t phoff;     /* e_phoff: the program header table, checked */
    uint32_t phnum;     /* entries (PN_XNUM resolved through section 0) */
    uint16_t phentsize; /* e_phentsize: at least the class's entry size */
};

/* One program header, widened to 64 bits for ELFCLASS32. */
struct elf_segment {
    uint32_t type, flags;
    uint64_t offset, vaddr, filesz, memsz;
};

enum elf_info_error {
    ELF_INFO_OK = 0,
    ELF_INFO_E_MAGIC = -1,  /* no ELF magic, or a class, byte order or version not known */
    ELF_INFO_E_HEADER = -2, /* the ELF header is cut short */
    ELF_INFO_E_PHDRS = -3,  /* the program header table is outside the file, or its
                             * entries are smaller than the class's */
    ELF_INFO_E_XNUM = -4,   /* PN_XNUM, but section header 0 (the count) is outside the file */
};

/* Parses the ELF header and checks that the whole program header table is
 * inside buf; ELF_INFO_OK or an elf_info_error. */
int elf_info_parse(const uint8_t *buf, size_t len, struct elf_info *info);

/* The program header i (< info->phnum) of the buffer info was parsed from
 * (elf_info_parse checked the table's bounds). */
void elf_info_segment(const struct elf_info *info, const uint8_t *buf, uint32_t i,
                      struct elf_segment *seg);

/* "not an ELF file", ...: what an elf_info_error means. */
const char *elf_info_strerror(int err);

#endif
