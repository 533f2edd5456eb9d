/* ELF header and program headers, bounds checked: see elf_info.h. The
 * offsets are the generic ABI's (Elf32_Ehdr/Elf64_Ehdr, Elf32_Phdr/
 * Elf64_Phdr, Elf32_Shdr/Elf64_Shdr). */
#include "format/elf_info.h"

#define EI_CLASS    4
#define EI_DATA     5
#define EI_VERSION  6
#define ELFCLASS32  1
#define ELFCLASS64  2
#define ELFDATA2LSB 1
#define ELFDATA2MSB 2
#define EV_CURRENT  1
#define PN_XNUM     0xffff /* e_phnum: the count is section 0's sh_info */
#define E_TYPE      16     /* both classes: e_type, then e_machine */
#define E_MACHINE   18

/* Where the fields are, per class: the header's, a program header's and
 * section header 0's sh_info (the ELFCLASS64 layout first). */
struct layout {
    unsigned ehdr_bytes, phdr_bytes, shdr_bytes;
    unsigned e_entry, e_phoff, e_shoff, e_phentsize, e_phnum, e_shentsize, addr;
    unsigned p_flags, p_offset, p_vaddr, p_filesz, p_memsz;
    unsigned sh_info;
};
static const struct layout LAYOUT64 = {
    .ehdr_bytes = 64,
    .phdr_bytes = 56,
    .shdr_bytes = 64,
    .e_entry = 24,
    .e_phoff = 32,
    .e_shoff = 40,
    .e_phentsize = 54,
    .e_phnum = 56,
    .e_shentsize = 58,
    .addr = 8,
    .p_flags = 4,
    .p_offset = 8,
    .p_vaddr = 16,
    .p_filesz = 32,
    .p_memsz = 40,
    .sh_info = 44,
};
static const struct layout LAYOUT32 = {
    .ehdr_bytes = 52,
    .phdr_bytes = 32,
    .shdr_bytes = 40,
    .e_entry = 24,
    .e_phoff = 28,
    .e_shoff = 32,
    .e_phentsize = 42,
    .e_phnum = 44,
    .e_shentsize = 46,
    .addr = 4,
    .p_flags = 24,
    .p_offset = 4,
    .p_vaddr = 8,
    .p_filesz = 16,
    .p_memsz = 20,
    .sh_info = 28,
};

static const struct layout *layout_of(const struct elf_info *info)
{
    return info->elf_class == 64 ? &LAYOUT64 : &LAYOUT32;
}

/* An unsigned field of n bytes (2, 4 or 8) at p, in the file's byte order
 * (the caller checked the bounds). */
static uint64_t field(const struct elf_info *info, const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned k = 0; k < n; k++)
        v |= (uint64_t)p[info->big_endian ? n - 1 - k : k] << (8 * k);
    return v;
}

int elf_info_parse(const uint8_t *buf, size_t len, struct elf_info *info)
{
    *info = (struct elf_info){ 0 };
    if (len < EI_VERSION + 1 || buf[0] != 0x7f || buf[1] != 'E' || buf[2] != 'L' || buf[3] != 'F')
        return ELF_INFO_E_MAGIC;
    if ((buf[EI_CLASS] != ELFCLASS32 && buf[EI_CLASS] != ELFCLASS64) ||
        (buf[EI_DATA] != ELFDATA2LSB && buf[EI_DATA] != ELFDATA2MSB) ||
        buf[EI_VERSION] != EV_CURRENT)
        return ELF_INFO_E_MAGIC;
    info->elf_class = buf[EI_CLASS] == ELFCLASS64 ? 64 : 32;
    info->big_endian = buf[EI_DATA] == ELFDATA2MSB;
    const struct layout *l = layout_of(info);
    if (len < l->ehdr_bytes)
        return ELF_INFO_E_HEADER;
    info->type = (uint16_t)field(info, buf + E_TYPE, 2);
    info->machine = (uint16_t)field(info, buf + E_MACHINE, 2);
    info->entry = field(info, buf + l->e_entry, l->addr);
    info->phoff = field(info, buf + l->e_phoff, l->addr);
    info->phentsize = (uint16_t)field(info, buf + l->e_phentsize, 2);
    uint32_t phnum = (uint32_t)field(info, buf + l->e_phnum, 2);
    if (phnum == PN_XNUM) {
        /* more entries than e_phnum holds: the count is in section
         * header 0 (gABI, "Sections", Figure 4-11) */
        uint64_t shoff = field(info, buf + l->e_shoff, l->addr);
        uint64_t shentsize = field(info, buf + l->e_shentsize, 2);
        if (shentsize < l->shdr_bytes || shoff > len || len - shoff < l->shdr_bytes)
            return ELF_INFO_E_XNUM;
        phnum = (uint32_t)field(info, buf + shoff + l->sh_info, 4);
    }
    info->phnum = phnum;
    if (!phnum)
        return ELF_INFO_OK;
    /* phnum < 2^32, phentsize < 2^16: the product does not overflow */
    if (info->phentsize < l->phdr_bytes || info->phoff > len ||
        (uint64_t)phnum * info->phentsize > len - info->phoff)
        return ELF_INFO_E_PHDRS;
    return ELF_INFO_OK;
}

void elf_info_segment(const struct elf_info *info, const uint8_t *buf, uint32_t i,
                      struct elf_segment *seg)
{
    const struct layout *l = layout_of(info);
    const uint8_t *p = buf + info->phoff + (uint64_t)i * info->phentsize;
    seg->type = (uint32_t)field(info, p, 4);
    seg->flags = (uint32_t)field(info, p + l->p_flags, 4);
    seg->offset = field(info, p + l->p_offset, l->addr);
    seg->vaddr = field(info, p + l->p_vaddr, l->addr);
    seg->filesz = field(info, p + l->p_filesz, l->addr);
    seg->memsz = field(info, p + l->p_memsz, l->addr);
}

const char *elf_info_strerror(int err)
{
    switch (err) {
    case ELF_INFO_OK: return "ok";
    case ELF_INFO_E_MAGIC: return "not an ELF file";
    case ELF_INFO_E_HEADER: return "the ELF header is cut short";
    case ELF_INFO_E_PHDRS: return "the program headers are beyond the end of the file";
    case ELF_INFO_E_XNUM:
        return "the program header count (section header 0) is beyond the end of the file";
    default: return "unknown error";
    }
}
