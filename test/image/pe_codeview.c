/* pe_codeview IMAGE.efi IMAGE.so: gives a PE/COFF image made by objcopy
 * from an ELF (the bare test images, test/image/image.mk) the CodeView debug
 * record EDK2's GenFw gives its images, so the target's image watch records
 * which debug file goes with the image (format/pe_info.h) and the host's
 * --symbols finds it:
 *   - an IMAGE_DEBUG_DIRECTORY entry (type 2, CodeView) and an RSDS record
 *     ("RSDS", a GUID, an age, the path of IMAGE.so) written into the
 *     image's ptb_codeview_area (test/image/codeview_area.c, in .data), and
 *   - the optional header's debug data directory (entry 6) pointing at it.
 * The GUID is the first 16 bytes of the .so's GNU build ID (ld --build-id),
 * so the host can check that a debug file is the one the image was built
 * with. Offsets: Microsoft's "PE Format" (optional header data directories,
 * section table, "The .debug Section"). The ELF's addresses are the PE's
 * RVAs (linker/ptboot.lds links at 0 and objcopy keeps the addresses). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AREA                "ptb_codeview_area"
#define DEBUG_DIR_BYTES     28
#define DEBUG_TYPE_CODEVIEW 2
#define DIR_DEBUG           6

static int die(const char *what)
{
    fprintf(stderr, "pe_codeview: %s\n", what);
    return 1;
}

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The area's address and size and the build ID from the ELF. */
static int elf_facts(const char *so, uint64_t *addr, uint64_t *size, uint8_t id[16])
{
    int fd = open(so, O_RDONLY), found = 0, have_id = 0;
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
        return die("cannot open the ELF");
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    Elf_Scn *scn = NULL;
    while (e && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
            continue;
        if (sh.sh_type == SHT_SYMTAB) {
            for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
                GElf_Sym sym;
                const char *n;
                if (gelf_getsym(d, (int)i, &sym) && (n = elf_strptr(e, sh.sh_link, sym.st_name)) &&
                    !strcmp(n, AREA)) {
                    *addr = sym.st_value;
                    *size = sym.st_size;
                    found = 1;
                }
            }
        } else if (sh.sh_type == SHT_NOTE) {
            GElf_Nhdr nh;
            size_t off = 0, no, dof;
            while ((off = gelf_getnote(d, off, &nh, &no, &dof)) > 0)
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz >= 16) {
                    memcpy(id, (const uint8_t *)d->d_buf + dof, 16);
                    have_id = 1;
                }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    if (!found)
        return die("no " AREA " symbol in the ELF (link test/image/codeview_area.c)");
    if (!have_id)
        return die("no GNU build ID in the ELF (link with --build-id)");
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t addr = 0, size = 0;
    uint8_t id[16] = { 0 };
    char path[PATH_MAX];
    if (argc != 3)
        return die("usage: pe_codeview IMAGE.efi IMAGE.so");
    if (!realpath(argv[2], path))
        return die("cannot resolve the ELF's path");
    if (elf_facts(argv[2], &addr, &size, id))
        return 1;
    size_t need = DEBUG_DIR_BYTES + 24 + strlen(path) + 1;
    if (need > size)
        return die("the ELF's path does not fit " AREA);

    FILE *f = fopen(argv[1], "r+b");
    if (!f)
        return die("cannot open the PE image");
    static uint8_t b[16 << 20];
    size_t len = fread(b, 1, sizeof b, f);
    uint32_t pe = len > 0x40 ? rd32(b + 0x3c) : 0;
    if (len < 0x40 || rd16(b) != 0x5a4d || pe + 24 + 112 + 16 * 8 > len || rd32(b + pe) != 0x4550)
        return die("not a PE image");
    const uint8_t *coff = b + pe + 4;
    unsigned nsec = rd16(coff + 2), optsize = rd16(coff + 16);
    uint8_t *opt = b + pe + 24;
    if (rd16(opt) != 0x20b || optsize < 112 + 8 * (DIR_DEBUG + 1) || rd32(opt + 108) <= DIR_DEBUG)
        return die("not a PE32+ image with a debug data directory");
    /* the area's file offset, through the section holding its RVA */
    const uint8_t *sec = opt + optsize;
    uint32_t fileoff = 0;
    for (unsigned i = 0; i < nsec; i++, sec += 40) {
        uint32_t va = rd32(sec + 12), raw = rd32(sec + 16), ptr = rd32(sec + 20);
        if (addr >= va && addr + size <= (uint64_t)va + raw)
            fileoff = ptr + (uint32_t)(addr - va);
    }
    if (!fileoff || fileoff + size > len)
        return die("no section of the PE holds " AREA);
    uint8_t *d = b + fileoff;
    memset(d, 0, size);
    uint32_t cv_rva = (uint32_t)addr + DEBUG_DIR_BYTES,
             cv_size = (uint32_t)(need - DEBUG_DIR_BYTES);
    wr32(d + 12, DEBUG_TYPE_CODEVIEW);       /* Type */
    wr32(d + 16, cv_size);                   /* SizeOfData */
    wr32(d + 20, cv_rva);                    /* AddressOfRawData */
    wr32(d + 24, fileoff + DEBUG_DIR_BYTES); /* PointerToRawData */
    uint8_t *cv = d + DEBUG_DIR_BYTES;
    memcpy(cv, "RSDS", 4);
    memcpy(cv + 4, id, 16);
    wr32(cv + 20, 1); /* age */
    memcpy(cv + 24, path, strlen(path) + 1);
    wr32(opt + 112 + 8 * DIR_DEBUG, (uint32_t)addr);
    wr32(opt + 112 + 8 * DIR_DEBUG + 4, DEBUG_DIR_BYTES);
    if (fseek(f, 0, SEEK_SET) || fwrite(b, 1, len, f) != len || fclose(f))
        return die("cannot write the PE image");
    return 0;
}
