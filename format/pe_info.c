/* PE/COFF headers and the CodeView record of the debug directory, bounds
 * checked at every read: see pe_info.h. Offsets are those of Microsoft's
 * "PE Format" specification (MS-DOS stub, COFF file header, optional
 * header, section table, section "The .debug Section"). */
#include "format/pe_info.h"
#include "format/text.h"

#define DOS_MAGIC            0x5a4d      /* "MZ" */
#define DOS_LFANEW           0x3c        /* u32: offset of the PE signature */
#define PE_SIGNATURE         0x00004550u /* "PE\0\0" */
#define COFF_HEADER_BYTES    20
#define COFF_NUM_SECTIONS    2
#define COFF_SIZE_OPT_HEADER 16
#define OPT_MAGIC_PE32       0x10b
#define OPT_MAGIC_PE32PLUS   0x20b
#define OPT_ENTRY            16
#define OPT_IMAGE_BASE32     28
#define OPT_IMAGE_BASE64     24
#define OPT_SIZE_OF_IMAGE    56
#define OPT_SIZE_OF_HEADERS  60
#define OPT_SUBSYSTEM        68
#define OPT_NUM_DIRS32       92
#define OPT_NUM_DIRS64       108
#define DATA_DIR_BYTES       8
#define DIR_DEBUG            6 /* data directory index of the debug directory */
#define SECTION_BYTES        40
#define SEC_VSIZE            8
#define SEC_VADDR            12
#define SEC_RAW_SIZE         16
#define SEC_RAW_PTR          20
#define DEBUG_ENTRY_BYTES    28
#define DEBUG_TYPE           12
#define DEBUG_SIZE           16
#define DEBUG_RVA            20
#define DEBUG_FILE_PTR       24
#define DEBUG_TYPE_CODEVIEW  2
#define CV_RSDS              PE_CV_RSDS /* path at +24 */
#define CV_NB10              PE_CV_NB10 /* path at +16 */
#define CV_RSDS_PATH         24
#define CV_NB10_PATH         16
#define CV_RSDS_GUID         4 /* GUID (16 bytes), then the age (u32) at +20 */
#define CV_RSDS_AGE          20
#define CV_NB10_SIG          8 /* NB10: offset (u32, 0) at +4, signature, age at +12 */
#define CV_NB10_AGE          12
/* At most this many debug entries are looked at: real images have 1 to 4;
 * the bound keeps a hostile directory size from costing time. */
#define DEBUG_ENTRIES_MAX 16
#define SECTIONS_MAX      96 /* the PE format's own limit */

struct img {
    const uint8_t *b;
    size_t len;
    enum pe_layout layout;
    size_t sections; /* offset of the section table */
    unsigned nsections;
};

/* Bounds-checked little-endian reads: 0 if [off, off+n) is not inside. */
static int in(const struct img *m, uint64_t off, uint64_t n)
{
    return off <= m->len && n <= m->len - off;
}

static uint16_t rd16(const struct img *m, uint64_t off)
{
    if (!in(m, off, 2))
        return 0;
    return (uint16_t)(m->b[off] | m->b[off + 1] << 8);
}

static uint32_t rd32(const struct img *m, uint64_t off)
{
    if (!in(m, off, 4))
        return 0;
    return (uint32_t)m->b[off] | (uint32_t)m->b[off + 1] << 8 | (uint32_t)m->b[off + 2] << 16 |
           (uint32_t)m->b[off + 3] << 24;
}

static uint64_t rd64(const struct img *m, uint64_t off)
{
    return rd32(m, off) | (uint64_t)rd32(m, off + 4) << 32;
}

/* The buffer offset of n bytes at rva, or -1: in memory the RVA itself;
 * in a file, through the section holding it (or the headers before the
 * first section). */
static int64_t rva_to_off(const struct img *m, uint32_t rva, uint32_t n)
{
    if (m->layout == PE_LAYOUT_MEMORY)
        return in(m, rva, n) ? (int64_t)rva : -1;
    for (unsigned i = 0; i < m->nsections; i++) {
        uint64_t s = m->sections + (uint64_t)i * SECTION_BYTES;
        uint32_t va = rd32(m, s + SEC_VADDR), raw = rd32(m, s + SEC_RAW_SIZE);
        uint32_t ptr = rd32(m, s + SEC_RAW_PTR);
        if (rva >= va && (uint64_t)rva - va + n <= raw) {
            uint64_t off = (uint64_t)ptr + (rva - va);
            return in(m, off, n) ? (int64_t)off : -1;
        }
    }
    return -1;
}

char *pe_info_basename(const char *path, char *out, size_t cap)
{
    const char *start = path, *dot = NULL, *p;
    if (cap == 0)
        return out;
    for (p = path; *p; p++)
        if (*p == '/' || *p == '\\')
            start = p + 1;
    for (p = start; *p; p++)
        if (*p == '.')
            dot = p;
    size_t n = (size_t)((dot && dot > start ? dot : p) - start);
    if (n >= cap)
        n = cap - 1;
    bytes_copy(out, start, n);
    out[n] = '\0';
    return out;
}

/* The CodeView record of one debug entry into info; 0 if found. */
static int codeview(const struct img *m, uint64_t entry, struct pe_info *info)
{
    if (rd32(m, entry + DEBUG_TYPE) != DEBUG_TYPE_CODEVIEW)
        return -1;
    uint32_t size = rd32(m, entry + DEBUG_SIZE);
    int64_t off;
    if (m->layout == PE_LAYOUT_MEMORY) {
        uint32_t rva = rd32(m, entry + DEBUG_RVA);
        if (rva == 0) /* not mapped into memory (PE format: RVA may be 0) */
            return -1;
        off = rva_to_off(m, rva, size);
    } else {
        uint32_t ptr = rd32(m, entry + DEBUG_FILE_PTR);
        off = in(m, ptr, size) ? (int64_t)ptr : -1;
    }
    if (off < 0 || size < 8)
        return -1;
    uint32_t sig = rd32(m, (uint64_t)off);
    uint32_t at = sig == CV_RSDS ? CV_RSDS_PATH : sig == CV_NB10 ? CV_NB10_PATH : 0;
    if (!at || size <= at)
        return -1;
    /* The path runs to a NUL within the record; one without a NUL or with
     * non-printable bytes is not trusted. */
    const uint8_t *s = m->b + off + at;
    size_t max = size - at, n = 0;
    while (n < max && s[n])
        n++;
    if (n == 0 || n == max)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (s[i] < 0x20 || s[i] >= 0x7f)
            return -1;
    /* keep the tail when the path is long: the basename is what matters */
    size_t skip = n >= PE_INFO_PATH_MAX ? n - (PE_INFO_PATH_MAX - 1) : 0;
    bytes_copy(info->pdb_path, s + skip, n - skip);
    info->pdb_path[n - skip] = '\0';
    pe_info_basename(info->pdb_path, info->name, sizeof info->name);
    info->codeview = sig;
    /* the path starts after the GUID/signature and age, so both are inside */
    if (sig == CV_RSDS) {
        bytes_copy(info->cv_guid, m->b + off + CV_RSDS_GUID, PE_INFO_GUID_BYTES);
        info->cv_age = rd32(m, (uint64_t)off + CV_RSDS_AGE);
    } else {
        bytes_copy(info->cv_guid, m->b + off + CV_NB10_SIG, 4);
        info->cv_age = rd32(m, (uint64_t)off + CV_NB10_AGE);
    }
    return 0;
}

int pe_info_parse(const uint8_t *buf, size_t len, enum pe_layout layout, struct pe_info *info)
{
    struct img m = { buf, len, layout, 0, 0 };
    bytes_zero(info, sizeof(*info));
    if (!buf || rd16(&m, 0) != DOS_MAGIC)
        return PE_INFO_E_DOS;
    uint32_t pe = rd32(&m, DOS_LFANEW);
    if (!in(&m, pe, 4 + COFF_HEADER_BYTES))
        return PE_INFO_E_DOS;
    if (rd32(&m, pe) != PE_SIGNATURE)
        return PE_INFO_E_PE;
    uint64_t coff = (uint64_t)pe + 4;
    info->machine = rd16(&m, coff);
    m.nsections = rd16(&m, coff + COFF_NUM_SECTIONS);
    uint16_t optsize = rd16(&m, coff + COFF_SIZE_OPT_HEADER);
    uint64_t opt = coff + COFF_HEADER_BYTES;
    if (!in(&m, opt, optsize) || optsize < 2)
        return PE_INFO_E_OPTIONAL;
    uint16_t magic = rd16(&m, opt);
    uint64_t dirs_at;
    uint32_t ndirs;
    if (magic == OPT_MAGIC_PE32PLUS) {
        if (optsize < OPT_NUM_DIRS64 + 4)
            return PE_INFO_E_OPTIONAL;
        info->image_base = rd64(&m, opt + OPT_IMAGE_BASE64);
        ndirs = rd32(&m, opt + OPT_NUM_DIRS64);
        dirs_at = opt + OPT_NUM_DIRS64 + 4;
    } else if (magic == OPT_MAGIC_PE32) {
        if (optsize < OPT_NUM_DIRS32 + 4)
            return PE_INFO_E_OPTIONAL;
        info->image_base = rd32(&m, opt + OPT_IMAGE_BASE32);
        ndirs = rd32(&m, opt + OPT_NUM_DIRS32);
        dirs_at = opt + OPT_NUM_DIRS32 + 4;
    } else {
        return PE_INFO_E_OPTIONAL;
    }
    info->entry_rva = rd32(&m, opt + OPT_ENTRY);
    info->size_of_image = rd32(&m, opt + OPT_SIZE_OF_IMAGE);
    info->size_of_headers = rd32(&m, opt + OPT_SIZE_OF_HEADERS);
    info->subsystem = rd16(&m, opt + OPT_SUBSYSTEM);
    m.sections = (size_t)(opt + optsize);
    if (m.nsections > SECTIONS_MAX || !in(&m, m.sections, (uint64_t)m.nsections * SECTION_BYTES))
        return PE_INFO_E_SECTIONS;

    /* The debug directory: only if the optional header has room for it. */
    uint64_t dd = dirs_at + (uint64_t)DIR_DEBUG * DATA_DIR_BYTES;
    if (ndirs <= DIR_DEBUG || dd + DATA_DIR_BYTES > opt + optsize)
        return PE_INFO_OK;
    uint32_t rva = rd32(&m, dd), size = rd32(&m, dd + 4);
    if (rva == 0 || size < DEBUG_ENTRY_BYTES)
        return PE_INFO_OK;
    uint32_t n = size / DEBUG_ENTRY_BYTES;
    if (n > DEBUG_ENTRIES_MAX)
        n = DEBUG_ENTRIES_MAX;
    int64_t at = rva_to_off(&m, rva, n * DEBUG_ENTRY_BYTES);
    if (at < 0)
        return PE_INFO_OK;
    for (uint32_t i = 0; i < n; i++)
        if (codeview(&m, (uint64_t)at + (uint64_t)i * DEBUG_ENTRY_BYTES, info) == 0)
            break;
    return PE_INFO_OK;
}

const char *pe_info_strerror(int err)
{
    switch (err) {
    case PE_INFO_OK: return "ok";
    case PE_INFO_E_DOS: return "no MZ header (or e_lfanew outside the image)";
    case PE_INFO_E_PE: return "no PE signature at e_lfanew";
    case PE_INFO_E_OPTIONAL: return "optional header missing, truncated or of unknown magic";
    case PE_INFO_E_SECTIONS: return "section table outside the image";
    }
    return "unknown error";
}
