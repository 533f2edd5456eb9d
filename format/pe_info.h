/* What a PE/COFF image says about itself: SizeOfImage, the entry point and
 * the name its build gave it in the debug directory (CodeView RSDS or NB10
 * record: the PDB path, e.g. ".../DEBUG/PcRtc.dll" or "ptboot.pdb", whose
 * basename without extension is the module name firmware logs use).
 *
 * Works on the bytes of an image as loaded in memory (section data at its
 * RVA: what EFI_LOADED_IMAGE_PROTOCOL.ImageBase points to) or as a file on
 * disk (section data at PointerToRawData). Every offset read from the image
 * is checked against the buffer, so a hostile or truncated image gives an
 * error, never an out-of-bounds read. Pure C, no UEFI types: the host unit
 * tests run this code (PE/COFF: Microsoft's "PE Format" specification;
 * UEFI 2.10 section 2.1.1, images are PE32+ with subsystems 10..13). */
#ifndef PTBOOT_FORMAT_PE_INFO_H
#define PTBOOT_FORMAT_PE_INFO_H

#include <stddef.h>
#include <stdint.h>

enum pe_layout {
    PE_LAYOUT_MEMORY, /* loaded: offset = RVA */
    PE_LAYOUT_FILE,   /* on disk: RVAs translated through the section table */
};

#define PE_INFO_NAME_MAX 72
/* The debug file's path as the CodeView record names it: long enough for
 * the tail of an EDK2 build path (".../X64/MdeModulePkg/.../DEBUG/X.dll"),
 * which is what a host finds the debug file by. */
#define PE_INFO_PATH_MAX   128
#define PE_INFO_GUID_BYTES 16

struct pe_info {
    uint16_t machine;    /* COFF Machine (0x8664 for x64) */
    uint16_t subsystem;  /* 10 EFI application, 11 boot driver, 12 runtime driver */
    uint64_t image_base; /* the optional header's ImageBase (link-time) */
    uint32_t size_of_image;
    uint32_t entry_rva; /* AddressOfEntryPoint, 0 if none */
    uint32_t size_of_headers;
    /* From the debug directory; name[0] == 0 if there is none. */
    char pdb_path[PE_INFO_PATH_MAX]; /* cut to fit (the tail is kept) */
    char name[PE_INFO_NAME_MAX];     /* basename without extension */
    uint32_t codeview;               /* 'RSDS' or 'NB10' signature found, else 0 */
    /* What ties the image to its debug file: RSDS: the GUID as stored in
     * the record (16 bytes) and the age; NB10: the 4-byte signature (a
     * time stamp) in cv_guid[0..3], the rest 0, and the age. */
    uint8_t cv_guid[PE_INFO_GUID_BYTES];
    uint32_t cv_age;
};

/* pe_info.codeview: the record's signature */
#define PE_CV_RSDS 0x53445352u /* "RSDS": PDB 7.0 (GUID, age, path) */
#define PE_CV_NB10 0x3031424eu /* "NB10": PDB 2.0 (signature, age, path) */

enum pe_info_error {
    PE_INFO_OK = 0,
    PE_INFO_E_DOS = -1,      /* no MZ header, or e_lfanew outside the buffer */
    PE_INFO_E_PE = -2,       /* no "PE\0\0" signature at e_lfanew */
    PE_INFO_E_OPTIONAL = -3, /* optional header missing, truncated or of an unknown magic */
    PE_INFO_E_SECTIONS = -4, /* section table outside the buffer */
};

/* Parses the headers and, when present and intact, the CodeView debug
 * record. A damaged debug directory is not an error: the name stays empty
 * (the caller falls back to the file path). */
int pe_info_parse(const uint8_t *buf, size_t len, enum pe_layout layout, struct pe_info *info);
const char *pe_info_strerror(int err);

/* The module name from a path (PDB path or file path, '/' or '\\'
 * separators): the basename without its last extension, into out (cap
 * bytes). Returns out. */
char *pe_info_basename(const char *path, char *out, size_t cap);

#endif
