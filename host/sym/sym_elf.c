/* ELF debug files: functions from the symbol table (libelf), source lines
 * from the DWARF line tables (libdw), the GNU build ID from the notes. */
#define _POSIX_C_SOURCE 200809L
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/sym/sym_table.h"

/* Linker-script markers that sit on code without being code of their own. */
static int is_marker(const char *n)
{
    static const char *const m[] = { "_text",     "_etext",      "_data",
                                     "_edata",    "_end",        "__bss_start",
                                     "ImageBase", "__ImageBase", "__executable_start" };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        if (!strcmp(n, m[i]))
            return 1;
    return 0;
}

/* Which name wins at one address (lower rank): a global function over a
 * weak or local one, a plain name over a compiler's clone (".localalias",
 * ".cold", ".part.0"), a function over an untyped label. */
static int rank_of(const GElf_Sym *s, const char *n)
{
    int r;
    switch (GELF_ST_BIND(s->st_info)) {
    case STB_GLOBAL: r = 0; break;
    case STB_WEAK: r = 1; break;
    default: r = 2; break;
    }
    if (strchr(n, '.'))
        r += 4;
    if (GELF_ST_TYPE(s->st_info) != STT_FUNC)
        r += is_marker(n) ? 16 : 8;
    return r;
}

static int read_symbols(Elf *e, struct sym_builder *b)
{
    size_t shnum = 0;
    Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
    if (elf_getshdrnum(e, &shnum) != 0)
        return 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB)
            symtab = scn;
        else if (sh.sh_type == SHT_DYNSYM)
            dynsym = scn;
    }
    scn = symtab ? symtab : dynsym;
    if (!scn)
        return 0;
    GElf_Shdr sh;
    Elf_Data *d = elf_getdata(scn, NULL);
    if (!gelf_getshdr(scn, &sh) || !d || !sh.sh_entsize)
        return 0;
    for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
        GElf_Sym s;
        const char *n;
        if (!gelf_getsym(d, (int)i, &s) || !(n = elf_strptr(e, sh.sh_link, s.st_name)) || !*n)
            continue;
        int type = GELF_ST_TYPE(s.st_info);
        if ((type != STT_FUNC && type != STT_NOTYPE) || s.st_shndx == SHN_UNDEF ||
            s.st_shndx >= SHN_LORESERVE || s.st_shndx >= shnum)
            continue;
        /* code only: a symbol in an executable section, strictly inside it
         * (an end marker such as _etext is not) */
        GElf_Shdr in;
        Elf_Scn *is = elf_getscn(e, s.st_shndx);
        if (!is || !gelf_getshdr(is, &in) || !(in.sh_flags & SHF_EXECINSTR) ||
            s.st_value < in.sh_addr || s.st_value >= in.sh_addr + in.sh_size)
            continue;
        if (type == STT_NOTYPE && n[0] == '.')
            continue; /* an assembler's local label */
        if (sym_builder_add(b, s.st_value, type == STT_FUNC ? s.st_size : 0, n, rank_of(&s, n)) < 0)
            return -1;
    }
    return 0;
}

static void read_build_id(Elf *e, struct sym_table *t)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
            continue;
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((const char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz) {
                size_t n = nh.n_descsz < sizeof t->build_id ? nh.n_descsz : sizeof t->build_id;
                memcpy(t->build_id, (const uint8_t *)d->d_buf + desc_off, n);
                t->build_id_len = n;
                return;
            }
        }
    }
}

static int has_section(Elf *e, const char *name)
{
    size_t shstr;
    Elf_Scn *scn = NULL;
    if (elf_getshdrstrndx(e, &shstr) != 0)
        return 0;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        const char *n;
        if (gelf_getshdr(scn, &sh) && (n = elf_strptr(e, shstr, sh.sh_name)) && !strcmp(n, name) &&
            sh.sh_type != SHT_NOBITS)
            return 1;
    }
    return 0;
}

int sym_elf_load(struct sym_table *t, const uint8_t *buf, size_t len, int symbols, char *err,
                 size_t errlen)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
        return -1;
    }
    Elf *e = elf_memory((char *)buf, len);
    if (!e || elf_kind(e) != ELF_K_ELF) {
        if (e)
            elf_end(e);
        snprintf(err, errlen, "%s: not a readable ELF file", t->path);
        return -1;
    }
    read_build_id(e, t);
    int dwarf = has_section(e, ".debug_line") && has_section(e, ".debug_info");
    GElf_Ehdr eh;
    t->linked = gelf_getehdr(e, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
    t->dwarf_sections = dwarf;
    struct sym_builder b;
    memset(&b, 0, sizeof b);
    int r = symbols ? read_symbols(e, &b) : 0;
    elf_end(e);
    if (r < 0 || sym_builder_finish(&b, t) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!symbols || !dwarf)
        return 0;
    /* libdw reads the file itself, from its own descriptor (kept open
     * while the table is used) */
    t->fd = open(t->path, O_RDONLY);
    Elf *de = t->fd >= 0 ? elf_begin(t->fd, ELF_C_READ_MMAP, NULL) : NULL;
    Dwarf *dw = de ? dwarf_begin_elf(de, DWARF_C_READ, NULL) : NULL;
    if (!dw) {
        if (de)
            elf_end(de);
        if (t->fd >= 0)
            close(t->fd);
        t->fd = -1;
        return 0; /* symbols without lines */
    }
    t->elf = de;
    t->dwarf = dw;
    t->has_dwarf = 1;
    return 0;
}

void sym_elf_close(struct sym_table *t)
{
    if (t->dwarf)
        dwarf_end(t->dwarf);
    if (t->elf)
        elf_end(t->elf);
    if (t->fd >= 0)
        close(t->fd);
    t->dwarf = t->elf = NULL;
    t->fd = -1;
}

/* The compilation unit holding addr: through .debug_aranges when there is
 * one, else by asking each unit (a file without aranges). */
static int cu_of(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
    if (dwarf_addrdie(dw, addr, cu))
        return 0;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) > 0)
            return 0;
        off = next;
    }
    return -1;
}

int sym_elf_line(struct sym_table *t, uint64_t addr, const char **file, unsigned *line)
{
    Dwarf_Die cu;
    int ln = 0;
    if (!t->dwarf || cu_of(t->dwarf, addr, &cu) < 0)
        return -1;
    Dwarf_Line *l = dwarf_getsrc_die(&cu, addr);
    const char *f = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
    if (!f || dwarf_lineno(l, &ln) != 0 || ln <= 0)
        return -1;
    *file = f;
    *line = (unsigned)ln;
    return 0;
}
