/* PE/COFF images as debug files: functions from the COFF symbol table
 * (present in images linked by GNU ld or converted by objcopy, absent from
 * MSVC's and lld-link's, whose symbols live in a PDB), addresses as RVAs;
 * the image's own CodeView record as its identity. Offsets: Microsoft's
 * "PE Format", sections "COFF File Header", "COFF Symbol Table", "COFF
 * String Table". Every read is checked against the file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "format/pe_info.h"
#include "host/sym/sym_table.h"

#define COFF_SYMBOL_BYTES  18
#define COFF_SECTION_BYTES 40
#define SCN_CNT_CODE       0x00000020u
#define SCN_MEM_EXECUTE    0x20000000u
#define CLASS_EXTERNAL     2
#define CLASS_STATIC       3
#define DTYPE_FUNCTION     2 /* Type's high byte: complex type */

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static int is_marker(const char *n)
{
    return !strcmp(n, "_text") || !strcmp(n, "_etext") || !strcmp(n, "_data") ||
           !strcmp(n, "_edata") || !strcmp(n, "ImageBase") || !strcmp(n, "__ImageBase");
}

int sym_pe_load(struct sym_table *t, const uint8_t *buf, size_t len, int symbols, char *err,
                size_t errlen)
{
    struct pe_info pi;
    int r = pe_info_parse(buf, len, PE_LAYOUT_FILE, &pi);
    if (r != PE_INFO_OK) {
        snprintf(err, errlen, "%s: %s", t->path, pe_info_strerror(r));
        return -1;
    }
    t->linked = 1;
    t->cv = pi.codeview;
    memcpy(t->cv_guid, pi.cv_guid, sizeof t->cv_guid);
    t->cv_age = pi.cv_age;
    struct sym_builder b;
    memset(&b, 0, sizeof b);
    /* pe_info checked the headers and the section table */
    uint32_t pe = rd32(buf + 0x3c);
    const uint8_t *coff = buf + pe + 4;
    unsigned nsec = rd16(coff + 2), optsize = rd16(coff + 16);
    uint32_t symoff = rd32(coff + 8), nsym = rd32(coff + 12);
    const uint8_t *sec = coff + 20 + optsize;
    if (symbols && symoff && nsym && symoff <= len && nsym <= (len - symoff) / COFF_SYMBOL_BYTES) {
        const uint8_t *strtab = buf + symoff + (size_t)nsym * COFF_SYMBOL_BYTES;
        size_t strlen_ = (size_t)(buf + len - strtab);
        uint32_t strsize = strlen_ >= 4 ? rd32(strtab) : 0;
        if (strsize > strlen_)
            strsize = (uint32_t)strlen_;
        for (uint32_t i = 0; i < nsym; i++) {
            const uint8_t *s = buf + symoff + (size_t)i * COFF_SYMBOL_BYTES;
            char name[256];
            int16_t secno = (int16_t)rd16(s + 12);
            uint8_t cls = s[16], aux = s[17];
            if (!rd32(s)) {
                /* a long name: offset into the string table */
                uint32_t o = rd32(s + 4);
                size_t k = 0;
                while (o + k < strsize && strtab[o + k] && k + 1 < sizeof name) {
                    name[k] = (char)strtab[o + k];
                    k++;
                }
                name[k] = '\0';
            } else {
                size_t k = 0;
                while (k < 8 && s[k]) {
                    name[k] = (char)s[k];
                    k++;
                }
                name[k] = '\0';
            }
            i += aux; /* auxiliary records follow their symbol */
            if (secno <= 0 || (unsigned)secno > nsec ||
                (cls != CLASS_EXTERNAL && cls != CLASS_STATIC) || !name[0] || name[0] == '.')
                continue;
            const uint8_t *sh = sec + (size_t)(secno - 1) * COFF_SECTION_BYTES;
            uint32_t flags = rd32(sh + 36), va = rd32(sh + 12), vsize = rd32(sh + 8);
            uint32_t value = rd32(s + 8);
            if (!(flags & (SCN_CNT_CODE | SCN_MEM_EXECUTE)) ||
                value >= (vsize ? vsize : rd32(sh + 16)))
                continue;
            int rank = (cls == CLASS_EXTERNAL ? 0 : 2) + (strchr(name, '.') ? 4 : 0) +
                       ((rd16(s + 14) >> 4 & 3) == DTYPE_FUNCTION ? 0 : 1) +
                       (is_marker(name) ? 16 : 0);
            if (sym_builder_add(&b, (uint64_t)va + value, 0, name, rank) < 0) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
        }
    }
    if (sym_builder_finish(&b, t) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    return 0;
}
