/* Firmware files and sections (format/ffs.h; PI 1.8 Vol. 3 chapter 2). */
#include "format/ffs.h"
#include "format/text.h"

/* EFI_FFS_FILE_HEADER field offsets */
#define FH_NAME            0
#define FH_CHECKSUM_HEADER 16
#define FH_CHECKSUM_FILE   17
#define FH_TYPE            18
#define FH_ATTRIBUTES      19
#define FH_SIZE            20
#define FH_STATE           23
#define FH_EXTENDED_SIZE   24 /* EFI_FFS_FILE_HEADER2 */
/* The two reserved high state bits: no writer sets them. */
#define FFS_STATE_RESERVED 0xc0

static uint32_t rd24(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}
static uint16_t rd16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t rd32(const uint8_t *p)
{
    return rd16(p) | (uint32_t)rd16(p + 2) << 16;
}
static uint64_t rd64(const uint8_t *p)
{
    return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}
static void wr24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
}
static void wr16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void wr32(uint8_t *p, uint32_t v)
{
    wr16(p, (uint16_t)v);
    wr16(p + 2, (uint16_t)(v >> 16));
}
static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

const char *fv_strerror(int err)
{
    switch (err) {
    case FV_OK: return "ok";
    case FV_E_TRUNCATED: return "truncated (a header or size reaches past the bytes there are)";
    case FV_E_SIGNATURE: return "no _FVH signature";
    case FV_E_HEADER_LENGTH: return "volume header length is odd, too small or past the volume";
    case FV_E_HEADER_CHECKSUM: return "volume header checksum is wrong";
    case FV_E_REVISION: return "volume header revision is neither 1 nor 2";
    case FV_E_BLOCK_MAP: return "volume block map has no end inside the header";
    case FV_E_EXT_HEADER: return "volume extended header lies outside the volume";
    case FV_E_FILE_SIZE: return "file is smaller than its header or reaches past the volume";
    case FV_E_FILE_HEADER_CHECKSUM: return "file header checksum is wrong";
    case FV_E_FILE_DATA_CHECKSUM: return "file data checksum is wrong";
    case FV_E_FILE_STATE: return "file state has reserved bits set";
    case FV_E_FREE_SPACE: return "free space after the last file is not erased";
    case FV_E_SECTION_SIZE: return "section is smaller than its header or reaches past its file";
    case FV_E_SPACE: return "output buffer too small";
    case FV_E_NO_ROOM: return "the volume has no room";
    case FV_E_FIXED: return "a file at a fixed address would have to move";
    case FV_E_TOO_LARGE: return "file or section too large for its format";
    case FV_E_LARGE_FILE: return "large-file header outside an FFS3 volume";
    }
    return "unknown error";
}

/* ---- files ---- */

uint8_t ffs_state_bits(uint8_t state_byte, uint8_t erased)
{
    return erased ? (uint8_t)~state_byte : state_byte;
}

/* The highest bit set decides, as firmware reads a state byte that was
 * written bit by bit (each step flips one more bit away from erased). */
static int state_of(uint8_t bits, enum ffs_state *st)
{
    if (bits & FFS_STATE_RESERVED)
        return FV_E_FILE_STATE;
    if (bits & FFS_STATE_HEADER_INVALID)
        *st = FFS_FILE_BAD_HEADER;
    else if (bits & FFS_STATE_DELETED)
        *st = FFS_FILE_DELETED;
    else if (bits & (FFS_STATE_MARKED_FOR_UPDATE | FFS_STATE_DATA_VALID))
        *st = FFS_FILE_VALID;
    else if (bits & FFS_STATE_HEADER_VALID)
        *st = FFS_FILE_INCOMPLETE;
    else
        *st = FFS_FILE_UNWRITTEN;
    return FV_OK;
}

uint32_t ffs_data_alignment(uint8_t attributes)
{
    /* 0..7: 1, 16, 128, 512, 1K, 4K, 32K, 64K bytes; with
     * FFS_ATTR_DATA_ALIGNMENT_2: 128K doubling up to 16M. */
    static const uint32_t small[8] = { 1, 16, 128, 512, 1024, 4096, 32768, 65536 };
    unsigned i = (attributes & FFS_ATTR_DATA_ALIGNMENT) >> 3;
    if (attributes & FFS_ATTR_DATA_ALIGNMENT_2)
        return (uint32_t)131072 << i;
    return small[i];
}

uint8_t ffs_alignment_attributes(uint32_t align)
{
    if (align <= FFS_FILE_ALIGN)
        return 0;
    for (uint8_t a = 0; a < 16; a++) {
        uint8_t attr = (uint8_t)((a & 7) << 3 | (a >= 8 ? FFS_ATTR_DATA_ALIGNMENT_2 : 0));
        if (ffs_data_alignment(attr) >= align)
            return attr;
    }
    return FFS_ATTR_DATA_ALIGNMENT | FFS_ATTR_DATA_ALIGNMENT_2;
}

static uint8_t sum8(const uint8_t *p, uint64_t n)
{
    uint8_t s = 0;
    for (uint64_t i = 0; i < n; i++)
        s = (uint8_t)(s + p[i]);
    return s;
}

/* The header's sum with IntegrityCheck.File and State taken as 0. */
static uint8_t header_sum(const uint8_t *p, uint32_t header_bytes)
{
    return (uint8_t)(sum8(p, header_bytes) - p[FH_CHECKSUM_FILE] - p[FH_STATE]);
}

int ffs_file_parse(const uint8_t *p, uint64_t avail, uint8_t erased, bool ffs3, struct ffs_file *f)
{
    if (avail < FFS_HEADER_BYTES)
        return FV_E_TRUNCATED;
    bytes_copy(f->name.b, p + FH_NAME, PI_GUID_BYTES);
    f->type = p[FH_TYPE];
    f->attributes = p[FH_ATTRIBUTES];
    f->state_byte = p[FH_STATE];
    int rc = state_of(ffs_state_bits(f->state_byte, erased), &f->state);
    if (rc)
        return rc;
    f->header_bytes = FFS_HEADER_BYTES;
    if (f->attributes & FFS_ATTR_LARGE_FILE) {
        if (!ffs3)
            return FV_E_LARGE_FILE;
        if (avail < FFS_HEADER2_BYTES)
            return FV_E_TRUNCATED;
        f->header_bytes = FFS_HEADER2_BYTES;
        f->size = rd64(p + FH_EXTENDED_SIZE);
    } else {
        f->size = rd24(p + FH_SIZE);
    }
    f->data_align = ffs_data_alignment(f->attributes);
    if (f->state == FFS_FILE_UNWRITTEN || f->state == FFS_FILE_BAD_HEADER) {
        /* Its size cannot be trusted: firmware steps over the header
         * alone (and so do we). */
        f->size = f->header_bytes;
        return FV_OK;
    }
    if (f->size < f->header_bytes || f->size > avail)
        return FV_E_FILE_SIZE;
    if (header_sum(p, f->header_bytes) != 0)
        return FV_E_FILE_HEADER_CHECKSUM;
    if (f->state != FFS_FILE_VALID)
        return FV_OK;
    if (f->attributes & FFS_ATTR_CHECKSUM) {
        if ((uint8_t)(sum8(p + f->header_bytes, f->size - f->header_bytes) + p[FH_CHECKSUM_FILE]))
            return FV_E_FILE_DATA_CHECKSUM;
    } else if (p[FH_CHECKSUM_FILE] != FFS_FIXED_CHECKSUM) {
        return FV_E_FILE_DATA_CHECKSUM;
    }
    return FV_OK;
}

uint32_t ffs_header_bytes_for(uint64_t data_bytes)
{
    return data_bytes + FFS_HEADER_BYTES > FFS_SIZE_SMALL_MAX ? FFS_HEADER2_BYTES
                                                              : FFS_HEADER_BYTES;
}

int ffs_file_finish(uint8_t *file, uint64_t size, const struct pi_guid *name, uint8_t type,
                    uint8_t attributes, uint8_t erased, bool large_ok)
{
    uint32_t hb = FFS_HEADER_BYTES;
    attributes = (uint8_t)(attributes & ~FFS_ATTR_LARGE_FILE);
    if (size > FFS_SIZE_SMALL_MAX) {
        if (!large_ok)
            return FV_E_TOO_LARGE;
        hb = FFS_HEADER2_BYTES;
        attributes |= FFS_ATTR_LARGE_FILE;
    }
    if (size < hb)
        return FV_E_FILE_SIZE;
    bytes_copy(file + FH_NAME, name->b, PI_GUID_BYTES);
    file[FH_TYPE] = type;
    file[FH_ATTRIBUTES] = attributes;
    if (hb == FFS_HEADER2_BYTES) {
        wr24(file + FH_SIZE, 0);
        wr64(file + FH_EXTENDED_SIZE, size);
    } else {
        wr24(file + FH_SIZE, (uint32_t)size);
    }
    file[FH_CHECKSUM_HEADER] = 0;
    file[FH_CHECKSUM_FILE] = 0;
    file[FH_STATE] = 0;
    file[FH_CHECKSUM_HEADER] = (uint8_t)(0x100 - header_sum(file, hb));
    file[FH_CHECKSUM_FILE] = (attributes & FFS_ATTR_CHECKSUM)
                                 ? (uint8_t)(0x100 - sum8(file + hb, size - hb))
                                 : FFS_FIXED_CHECKSUM;
    /* A finished file: header and data valid, written with the volume's
     * polarity (PI 1.8 Vol. 3 section 2.2.3, EFI_FFS_FILE_STATE). */
    uint8_t bits = FFS_STATE_HEADER_CONSTRUCTION | FFS_STATE_HEADER_VALID | FFS_STATE_DATA_VALID;
    file[FH_STATE] = erased ? (uint8_t)~bits : bits;
    return (int)hb;
}

int ffs_pad_write(uint8_t *out, uint64_t size, uint8_t erased, bool large_ok)
{
    if (size < FFS_HEADER_BYTES)
        return FV_E_FILE_SIZE;
    uint32_t hb = size > FFS_SIZE_SMALL_MAX ? FFS_HEADER2_BYTES : FFS_HEADER_BYTES;
    for (uint64_t i = hb; i < size; i++)
        out[i] = erased;
    struct pi_guid name;
    for (size_t i = 0; i < PI_GUID_BYTES; i++)
        name.b[i] = erased;
    int rc = ffs_file_finish(out, size, &name, FFS_TYPE_PAD, 0, erased, large_ok);
    return rc < 0 ? rc : FV_OK;
}

const char *ffs_type_name(uint8_t type)
{
    static const char *const names[] = {
        "ALL",
        "RAW",
        "FREEFORM",
        "SECURITY_CORE",
        "PEI_CORE",
        "DXE_CORE",
        "PEIM",
        "DRIVER",
        "COMBINED_PEIM_DRIVER",
        "APPLICATION",
        "MM",
        "FIRMWARE_VOLUME_IMAGE",
        "COMBINED_MM_DXE",
        "MM_CORE",
        "MM_STANDALONE",
        "MM_CORE_STANDALONE",
    };
    if (type < sizeof names / sizeof names[0])
        return names[type];
    if (type == FFS_TYPE_PAD)
        return "PAD";
    /* PI 1.8 Vol. 3 table 3: OEM 0xc0-0xdf, debug 0xe0-0xef, FFS 0xf0-0xff */
    if (type >= 0xc0 && type <= 0xdf)
        return "OEM";
    if (type >= 0xe0 && type <= 0xef)
        return "DEBUG";
    if (type >= 0xf1)
        return "FFS";
    return "UNKNOWN";
}

/* ---- sections ---- */

static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

int ffs_section_next(const uint8_t *list, uint64_t len, uint64_t *pos, struct ffs_section *s,
                     uint64_t *err_off)
{
    uint64_t at = align_up(*pos, FFS_SECTION_ALIGN);
    if (at >= len || len - at < FFS_SECTION_HEADER_BYTES) {
        *pos = len;
        return 0;
    }
    const uint8_t *p = list + at;
    *err_off = at;
    s->offset = at;
    s->type = p[3];
    s->header_bytes = FFS_SECTION_HEADER_BYTES;
    s->size = rd24(p);
    if (s->size == FFS_SECTION_SIZE_ESCAPE) {
        if (len - at < FFS_SECTION_HEADER2_BYTES)
            return FV_E_TRUNCATED;
        s->header_bytes = FFS_SECTION_HEADER2_BYTES;
        s->size = rd32(p + 4);
    }
    if (s->size < s->header_bytes || s->size > len - at)
        return FV_E_SECTION_SIZE;
    s->data_offset = s->header_bytes;
    s->guid_attributes = 0;
    s->uncompressed_length = 0;
    s->compression_type = 0;
    bytes_zero(s->guid.b, PI_GUID_BYTES);
    const uint8_t *h = p + s->header_bytes;
    switch (s->type) {
    case FFS_SECTION_GUID_DEFINED: {
        if (s->size < s->header_bytes + FFS_GUIDED_HEADER_EXTRA)
            return FV_E_SECTION_SIZE;
        bytes_copy(s->guid.b, h, PI_GUID_BYTES);
        uint16_t data_offset = rd16(h + 16);
        s->guid_attributes = rd16(h + 18);
        if (data_offset < s->header_bytes + FFS_GUIDED_HEADER_EXTRA || data_offset > s->size)
            return FV_E_SECTION_SIZE;
        s->data_offset = data_offset;
        break;
    }
    case FFS_SECTION_COMPRESSION:
        /* UncompressedLength (u32), CompressionType (u8) */
        if (s->size < s->header_bytes + 5)
            return FV_E_SECTION_SIZE;
        s->uncompressed_length = rd32(h);
        s->compression_type = h[4];
        s->data_offset = s->header_bytes + 5;
        break;
    case FFS_SECTION_FREEFORM_SUBTYPE_GUID:
        if (s->size < s->header_bytes + PI_GUID_BYTES)
            return FV_E_SECTION_SIZE;
        bytes_copy(s->guid.b, h, PI_GUID_BYTES);
        s->data_offset = s->header_bytes + PI_GUID_BYTES;
        break;
    default: break;
    }
    *pos = at + s->size;
    return 1;
}

const char *ffs_section_type_name(uint8_t type)
{
    switch (type) {
    case FFS_SECTION_COMPRESSION: return "COMPRESSION";
    case FFS_SECTION_GUID_DEFINED: return "GUID_DEFINED";
    case FFS_SECTION_DISPOSABLE: return "DISPOSABLE";
    case FFS_SECTION_PE32: return "PE32";
    case FFS_SECTION_PIC: return "PIC";
    case FFS_SECTION_TE: return "TE";
    case FFS_SECTION_DXE_DEPEX: return "DXE_DEPEX";
    case FFS_SECTION_VERSION: return "VERSION";
    case FFS_SECTION_USER_INTERFACE: return "USER_INTERFACE";
    case FFS_SECTION_COMPATIBILITY16: return "COMPATIBILITY16";
    case FFS_SECTION_FIRMWARE_VOLUME_IMAGE: return "FIRMWARE_VOLUME_IMAGE";
    case FFS_SECTION_FREEFORM_SUBTYPE_GUID: return "FREEFORM_SUBTYPE_GUID";
    case FFS_SECTION_RAW: return "RAW";
    case FFS_SECTION_PEI_DEPEX: return "PEI_DEPEX";
    case FFS_SECTION_MM_DEPEX: return "MM_DEPEX";
    }
    return "UNKNOWN";
}

/* The header of a section of data_len bytes with extra header bytes after
 * the common one, at pos aligned to 4. Returns where its data starts. */
static long section_header(uint8_t *out, size_t cap, size_t pos, uint8_t type, size_t extra,
                           size_t data_len, size_t *hb_out)
{
    size_t at = (size_t)align_up(pos, FFS_SECTION_ALIGN);
    size_t hb = FFS_SECTION_HEADER_BYTES;
    if (extra + data_len > (size_t)UINT32_MAX - FFS_SECTION_HEADER2_BYTES)
        return FV_E_TOO_LARGE;
    if (hb + extra + data_len >= FFS_SECTION_SIZE_ESCAPE)
        hb = FFS_SECTION_HEADER2_BYTES;
    size_t size = hb + extra + data_len;
    if (at > cap || size > cap - at)
        return FV_E_SPACE;
    for (size_t i = pos; i < at; i++)
        out[i] = 0;
    if (hb == FFS_SECTION_HEADER2_BYTES) {
        wr24(out + at, FFS_SECTION_SIZE_ESCAPE);
        wr32(out + at + 4, (uint32_t)size);
    } else {
        wr24(out + at, (uint32_t)size);
    }
    out[at + 3] = type;
    *hb_out = hb;
    return (long)at;
}

long ffs_section_write(uint8_t *out, size_t cap, size_t pos, uint8_t type, const uint8_t *data,
                       size_t len)
{
    size_t hb;
    long at = section_header(out, cap, pos, type, 0, len, &hb);
    if (at < 0)
        return at;
    if (data)
        bytes_copy(out + at + hb, data, len);
    return at + (long)(hb + len);
}

long ffs_guided_section_write(uint8_t *out, size_t cap, size_t pos, const struct pi_guid *guid,
                              uint16_t attributes, const uint8_t *data, size_t len)
{
    size_t hb;
    long at =
        section_header(out, cap, pos, FFS_SECTION_GUID_DEFINED, FFS_GUIDED_HEADER_EXTRA, len, &hb);
    if (at < 0)
        return at;
    uint8_t *h = out + at + hb;
    bytes_copy(h, guid->b, PI_GUID_BYTES);
    wr16(h + 16, (uint16_t)(hb + FFS_GUIDED_HEADER_EXTRA));
    wr16(h + 18, attributes);
    if (data)
        bytes_copy(h + FFS_GUIDED_HEADER_EXTRA, data, len);
    return at + (long)(hb + FFS_GUIDED_HEADER_EXTRA + len);
}

long ffs_ui_section_write(uint8_t *out, size_t cap, size_t pos, const char *name)
{
    size_t n = text_len(name);
    size_t hb;
    long at = section_header(out, cap, pos, FFS_SECTION_USER_INTERFACE, 0, 2 * (n + 1), &hb);
    if (at < 0)
        return at;
    uint8_t *d = out + at + hb;
    for (size_t i = 0; i <= n; i++)
        wr16(d + 2 * i, (uint16_t)(unsigned char)name[i]);
    return at + (long)(hb + 2 * (n + 1));
}

size_t ffs_ui_text(const uint8_t *data, uint64_t len, char *out, size_t cap)
{
    size_t n = 0;
    if (!cap)
        return 0;
    for (uint64_t i = 0; i + 1 < len && n + 1 < cap; i += 2) {
        uint16_t c = rd16(data + i);
        if (!c)
            break;
        out[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    out[n] = '\0';
    return n;
}
