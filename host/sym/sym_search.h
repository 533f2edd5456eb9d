/* Where the debug files are: `--symbols PATH` (a file, or a directory
 * searched recursively) gives candidate files (linked ELF files and PE/COFF
 * images), each with what identifies it; an image of the capture is matched
 * to one of them (docs/symbols.md):
 *   1. by the GUID of its CodeView RSDS record: a PE whose own record has
 *      that GUID, or an ELF whose GNU build ID starts with those 16 bytes
 *      (how ptboot's own images tie the two, test/image/pe_codeview.c);
 *      an NB10 record's signature likewise against a PE's;
 *   2. by the path its CodeView record names (what EDK2's GCC builds give:
 *      ".../DEBUG/PcdDxe.dll"): a file of that name, the one with the
 *      longest run of matching trailing directories;
 *   3. by the image's name: a file whose name without extension is it (or
 *      is the image's name without its extension, "osloader.efi").
 * Among equals an ELF with DWARF wins over one without, and an ELF over a
 * PE. A file whose build ID or CodeView GUID contradicts the image's GUID
 * is a different build and is never taken (2 and 3). */
#ifndef HOST_SYM_SEARCH_H
#define HOST_SYM_SEARCH_H

#include <stddef.h>
#include <stdint.h>

struct sym_cand {
    char *path;
    int kind;  /* enum sym_kind */
    int dwarf; /* has DWARF sections */
    uint8_t build_id[20];
    size_t build_id_len;
    uint32_t cv; /* PE: its own CodeView signature, else 0 */
    uint8_t cv_guid[16];
    uint32_t cv_age;
};

struct sym_search {
    struct sym_cand *v;
    size_t n, cap;
    size_t files_seen; /* regular files looked at */
};

/* What an image says about its debug file (any field may be empty). */
struct sym_want {
    const char *name;    /* the image's name, e.g. "PcdDxe" */
    uint32_t cv;         /* 0, or 1 RSDS / 2 NB10 (enum sideband_cv) */
    const uint8_t *guid; /* 16 bytes (NB10: signature in 0..3) */
    const char *cv_path;
};

void sym_search_init(struct sym_search *s);
void sym_search_free(struct sym_search *s);
/* Adds PATH (a file or a directory, recursively); 0, or -1 with err set
 * when PATH does not exist or a given file is no ELF/PE. */
int sym_search_add(struct sym_search *s, const char *path, char *err, size_t errlen);
/* The best candidate for w, or -1; *how says which rule ("guid", "path",
 * "name"). */
int sym_search_match(const struct sym_search *s, const struct sym_want *w, const char **how);

#endif
