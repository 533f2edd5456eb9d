/* Code options of the host decoders besides --raw/--pages: ptxed's
 * `--elf FILE[:BASE]` (the ELF's loadable segments at their addresses, or
 * moved together so the lowest one starts at BASE) and `--pe FILE[:BASE]`
 * (a PE/COFF image's headers and sections at its ImageBase, or at BASE,
 * as a UEFI loader lays them out). Each file also becomes a module: a
 * name (basename without extension), where it sits in the trace's address
 * space, and the offset from there to the file's own addresses, so its
 * symbols name the code it holds (host/sym/names.h). */
#ifndef HOST_CODE_LOAD_H
#define HOST_CODE_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "host/flow_image.h"

enum code_kind {
    CODE_ELF = 1,
    CODE_PE
};

struct code_module {
    enum code_kind kind;
    char path[4096];
    char name[72];       /* basename without extension */
    uint64_t base, size; /* [base, base+size) in the trace's addresses */
    /* trace address - bias = the file's own address: an ELF's p_vaddr,
     * a PE's RVA */
    uint64_t bias;
};

struct code_modules {
    struct code_module *v;
    size_t n, cap;
};

void code_modules_free(struct code_modules *m);

/* spec: FILE or FILE:BASE (BASE in C notation, as ptxed's strtoull(.., 0)).
 * Loads the bytes into img and appends a module; 0, or -1 with err set
 * ("FILE: not an ELF file"). */
int code_load_elf(struct flow_image *img, struct code_modules *m, const char *spec, char *err,
                  size_t errlen);
int code_load_pe(struct flow_image *img, struct code_modules *m, const char *spec, char *err,
                 size_t errlen);

#endif
