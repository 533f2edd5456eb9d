/* The symbols of one debug file: its functions by address (an ELF's symbol
 * table, a PE/COFF image's COFF symbol table) and, for an ELF with DWARF,
 * the source line of any address (DWARF line tables through elfutils'
 * libdw). Addresses are the file's own: an ELF's virtual addresses, a PE's
 * RVAs (host/sym/names.h maps trace addresses to them). Also what the file
 * says about itself to be matched to an image: its GNU build ID (ELF) or
 * CodeView record (PE). */
#ifndef HOST_SYM_TABLE_H
#define HOST_SYM_TABLE_H

#include <stddef.h>
#include <stdint.h>

enum sym_kind {
    SYM_FILE_ELF = 1,
    SYM_FILE_PE
};

struct sym_func {
    uint64_t addr, size; /* size 0: up to the next function */
    const char *name;    /* into the table's string store */
};

struct sym_table {
    enum sym_kind kind;
    char path[4096];
    struct sym_func *funcs; /* sorted by addr, one per address */
    size_t nfuncs;
    char *strings; /* the names, owned */
    /* identity */
    uint8_t build_id[20];
    size_t build_id_len; /* 0: none */
    uint32_t cv;         /* PE: 'RSDS'/'NB10' signature of its own CodeView record, else 0 */
    uint8_t cv_guid[16];
    uint32_t cv_age;
    int has_dwarf;      /* line tables present and opened (sym_table_load) */
    int dwarf_sections; /* .debug_info and .debug_line are there */
    int linked;         /* an executable or shared object (not a .o), or a PE image */
    /* libdw's handle and the ELF under it (NULL without DWARF) */
    void *dwarf, *elf;
    int fd;
    /* the last line answer (lookups come in runs at one address) */
    uint64_t line_addr;
    const char *line_file;
    unsigned line_no;
    int line_valid;
};

/* Reads a file's symbols; NULL with err set when it is neither an ELF nor a
 * PE/COFF image, or cannot be read. A file with no symbols at all still
 * loads (nfuncs 0). Identity only (no symbols, no DWARF): sym_table_ident. */
struct sym_table *sym_table_load(const char *path, char *err, size_t errlen);
struct sym_table *sym_table_ident(const char *path, char *err, size_t errlen);
void sym_table_free(struct sym_table *t);

/* The function holding addr: its entry in *f; NULL if none does. */
const struct sym_func *sym_table_func(const struct sym_table *t, uint64_t addr);
/* The source line of addr ("dir/file.c" as DWARF names it, line); 0, or
 * -1 when the file has no line for it. */
int sym_table_line(struct sym_table *t, uint64_t addr, const char **file, unsigned *line);

/* internal, by file kind (sym_elf.c, sym_pe.c) */
struct sym_builder {
    struct sym_func *v;
    size_t n, cap;
    char *str;
    size_t slen, scap;
    int *rank; /* per entry: lower wins at one address */
};
int sym_builder_add(struct sym_builder *b, uint64_t addr, uint64_t size, const char *name,
                    int rank);
/* Sorts, keeps the best symbol per address, moves the result into t. */
int sym_builder_finish(struct sym_builder *b, struct sym_table *t);
int sym_elf_load(struct sym_table *t, const uint8_t *buf, size_t len, int symbols, char *err,
                 size_t errlen);
int sym_pe_load(struct sym_table *t, const uint8_t *buf, size_t len, int symbols, char *err,
                size_t errlen);
void sym_elf_close(struct sym_table *t);
int sym_elf_line(struct sym_table *t, uint64_t addr, const char **file, unsigned *line);

#endif
