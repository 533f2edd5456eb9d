/* Names for trace addresses, for every host command that prints one
 * (summary, flow --sym, export): the image (module) holding the address,
 * and, when its debug file is known, the function and source line:
 * "ptbtest_fib+0x12 (ptbtest.c:33)" instead of "ptbtest+0x105e".
 *
 * Modules come from the capture's sideband (each image with its CodeView
 * facts), from --module, and from --elf/--pe (a file loaded as code is its
 * own debug file when it has symbols). Debug files come from --symbols
 * (host/sym/sym_search.h says how an image finds its file). A module is
 * matched and its file read the first time an address in it is named, so
 * a firmware capture with a hundred images costs only the ones that ran.
 * Images without a debug file keep module+offset. */
#ifndef HOST_SYM_NAMES_H
#define HOST_SYM_NAMES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/sideband.h"
#include "host/sym/sym_search.h"
#include "host/sym/sym_table.h"

struct names_module {
    uint64_t base, size;
    uint64_t bias; /* trace address - bias = the debug file's address */
    char name[SIDEBAND_NAME_MAX];
    /* what the image says about its debug file */
    uint32_t cv;
    uint8_t cv_guid[SIDEBAND_GUID_BYTES];
    char cv_path[SIDEBAND_PATH_MAX];
    char *own_file; /* --elf/--pe: the file itself */
    /* resolved on first use */
    int tried, used;
    struct sym_table *tab;
    const char *how; /* "guid", "path", "name", "file" */
};

struct names {
    struct names_module *m;
    size_t n, cap;
    int sorted;
    size_t last; /* module of the last lookup */
    struct sym_search search;
    int have_search; /* --symbols given */
};

struct names_hit {
    const struct names_module *module; /* NULL: outside every module */
    uint64_t module_off;
    const char *func;             /* NULL: no symbol */
    uint64_t func_off, func_addr; /* func_addr: the function's entry (trace address) */
    const char *file;             /* NULL: no line */
    unsigned line;
};

void names_init(struct names *n);
void names_free(struct names *n);
/* --symbols PATH; 0, or -1 with err set. */
int names_add_symbols(struct names *n, const char *path, char *err, size_t errlen);
/* A module; sbi (may be NULL) gives its CodeView facts; own_file (may be
 * NULL) is a file that is both its code and its debug file. -1: no memory. */
int names_add_module(struct names *n, uint64_t base, uint64_t size, uint64_t bias, const char *name,
                     const struct sideband_image *sbi, const char *own_file);
/* The index in n->m of the module holding addr, or -1. Modules are sorted
 * by base on the first lookup; indices stay fixed after it. */
long names_module_index(struct names *n, uint64_t addr);
/* What holds addr; want_line: also the source line (costs a DWARF lookup). */
void names_lookup(struct names *n, uint64_t addr, int want_line, struct names_hit *h);

enum {
    NAMES_F_LINE = 1u << 0,      /* " (file.c:31)" after the function */
    NAMES_F_NO_MODULE = 1u << 1, /* nothing (0) when there is no symbol, not module+off */
};
/* addr as text into buf: "func+0xOFF" ("func" at its entry), with the line
 * as flags ask, else "module+0xOFF"; returns the length, 0 when addr is in
 * no module (the caller prints the bare address). Always NUL-terminated
 * when cap > 0, cut to fit. */
size_t names_format(struct names *n, uint64_t addr, unsigned flags, char *buf, size_t cap);

/* One line per module that was named (or asked for but had no debug
 * file), to f with prog as prefix: "prog: symbols: ptbtest: build/test/
 * image/ptbtest.so (by guid, DWARF lines)". Nothing without --symbols or
 * own files. */
void names_report(const struct names *n, FILE *f, const char *prog);

#endif
