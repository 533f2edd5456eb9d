/* Firmware volumes (format/fv.h; PI 1.8 Vol. 3 section 3.2.1). */
#include "format/fv.h"
#include "format/text.h"

/* EFI_FIRMWARE_VOLUME_HEADER field offsets */
#define FVH_FS_GUID          16
#define FVH_LENGTH           32
#define FVH_ATTRIBUTES       44
#define FVH_HEADER_LENGTH    48
#define FVH_EXT_OFFSET       52
#define FVH_REVISION         55
#define FVH_BLOCK_MAP        56
#define FV_BLOCK_ENTRY_BYTES 8
#define FV_REVISION_MAX      2
/* EFI_FIRMWARE_VOLUME_EXT_HEADER: FvName then ExtHeaderSize */
#define FVX_SIZE 16

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
static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

uint16_t fv_header_sum(const uint8_t *vol, uint16_t header_length)
{
    uint16_t s = 0;
    for (uint32_t i = 0; i + 1 < header_length; i += 2)
        s = (uint16_t)(s + rd16(vol + i));
    return s;
}

void fv_header_checksum_fix(uint8_t *vol, uint16_t header_length)
{
    vol[FV_CHECKSUM_OFFSET] = vol[FV_CHECKSUM_OFFSET + 1] = 0;
    uint16_t c = (uint16_t)(0x10000 - fv_header_sum(vol, header_length));
    vol[FV_CHECKSUM_OFFSET] = (uint8_t)c;
    vol[FV_CHECKSUM_OFFSET + 1] = (uint8_t)(c >> 8);
}

int fv_volume_parse(const uint8_t *p, uint64_t avail, struct fv_volume *v)
{
    if (avail < FV_HEADER_FIXED_BYTES)
        return FV_E_TRUNCATED;
    if (rd32(p + FV_SIGNATURE_OFFSET) != FV_SIGNATURE)
        return FV_E_SIGNATURE;
    v->length = rd64(p + FVH_LENGTH);
    bytes_copy(v->fs_guid.b, p + FVH_FS_GUID, PI_GUID_BYTES);
    v->attributes = rd32(p + FVH_ATTRIBUTES);
    v->header_length = rd16(p + FVH_HEADER_LENGTH);
    v->ext_offset = rd16(p + FVH_EXT_OFFSET);
    v->revision = p[FVH_REVISION];
    v->erased = (v->attributes & FV_ATTR_ERASE_POLARITY) ? 0xff : 0x00;
    if (v->header_length < FV_HEADER_FIXED_BYTES + FV_BLOCK_ENTRY_BYTES || (v->header_length & 1) ||
        v->header_length > v->length)
        return FV_E_HEADER_LENGTH;
    if (v->length > avail)
        return FV_E_TRUNCATED;
    if (fv_header_sum(p, v->header_length) != 0)
        return FV_E_HEADER_CHECKSUM;
    if (v->revision < 1 || v->revision > FV_REVISION_MAX)
        return FV_E_REVISION;
    /* The block map: {NumBlocks, Length} pairs up to {0, 0}. */
    v->block_bytes = 0;
    bool ended = false;
    for (uint32_t at = FVH_BLOCK_MAP; at + FV_BLOCK_ENTRY_BYTES <= v->header_length && !ended;
         at += FV_BLOCK_ENTRY_BYTES) {
        uint32_t num = rd32(p + at), len = rd32(p + at + 4);
        if (!num && !len)
            ended = true;
        else
            v->block_bytes += (uint64_t)num * len;
    }
    if (!ended)
        return FV_E_BLOCK_MAP;
    v->has_name = false;
    bytes_zero(v->name.b, PI_GUID_BYTES);
    v->files_offset = align_up(v->header_length, FFS_FILE_ALIGN);
    if (v->ext_offset) {
        if (v->ext_offset < v->header_length ||
            v->ext_offset + (uint64_t)FV_EXT_HEADER_MIN_BYTES > v->length)
            return FV_E_EXT_HEADER;
        uint32_t ext_size = rd32(p + v->ext_offset + FVX_SIZE);
        if (ext_size < FV_EXT_HEADER_MIN_BYTES || v->ext_offset + (uint64_t)ext_size > v->length)
            return FV_E_EXT_HEADER;
        bytes_copy(v->name.b, p + v->ext_offset, PI_GUID_BYTES);
        v->has_name = true;
        /* The files begin after the extended header (build tools wrap it
         * in a pad file, which this skips with it). */
        v->files_offset = align_up(v->ext_offset + (uint64_t)ext_size, FFS_FILE_ALIGN);
    }
    if (v->files_offset > v->length)
        return FV_E_EXT_HEADER;
    if (pi_guid_equal(&v->fs_guid, &PI_GUID_FFS2))
        v->fs = FV_FS_FFS2;
    else if (pi_guid_equal(&v->fs_guid, &PI_GUID_FFS3))
        v->fs = FV_FS_FFS3;
    else if (pi_guid_equal(&v->fs_guid, &PI_GUID_NV_DATA))
        v->fs = FV_FS_NVRAM;
    else
        v->fs = FV_FS_OTHER;
    return FV_OK;
}

bool fv_has_files(const struct fv_volume *v)
{
    return v->fs == FV_FS_FFS2 || v->fs == FV_FS_FFS3;
}

/* The first byte in [from, to) that is not erased, or to. */
static uint64_t first_unerased(const uint8_t *vol, uint64_t from, uint64_t to, uint8_t erased)
{
    for (uint64_t i = from; i < to; i++)
        if (vol[i] != erased)
            return i;
    return to;
}

int fv_file_next(const uint8_t *vol, const struct fv_volume *v, uint64_t *pos, struct ffs_file *f,
                 uint64_t *err_off)
{
    uint64_t at = align_up(*pos, FFS_FILE_ALIGN);
    if (at > v->length)
        at = v->length;
    /* Free space: an erased header where the next file would be (or no
     * room for a header at all), erased to the volume's end. */
    if (v->length - at < FFS_HEADER_BYTES ||
        first_unerased(vol, at, at + FFS_HEADER_BYTES, v->erased) == at + FFS_HEADER_BYTES) {
        uint64_t bad = first_unerased(vol, at, v->length, v->erased);
        if (bad != v->length) {
            *err_off = bad;
            return FV_E_FREE_SPACE;
        }
        *pos = at;
        return 0;
    }
    int rc = ffs_file_parse(vol + at, v->length - at, v->erased, v->fs == FV_FS_FFS3, f);
    if (rc) {
        *err_off = at;
        return rc;
    }
    f->offset = at;
    *pos = at + f->size;
    return 1;
}

uint64_t fv_place(uint64_t pos, uint32_t header_bytes, uint32_t align, uint64_t *pad)
{
    uint64_t at = align_up(pos, FFS_FILE_ALIGN);
    *pad = 0;
    if (align <= FFS_FILE_ALIGN || (at + header_bytes) % align == 0)
        return at;
    /* A pad file (a header at least) first, then the first offset whose
     * data lands on the boundary; align >= 16 and headers of 24 or 32
     * bytes keep that offset on an 8-byte boundary. */
    uint64_t q = align_up(at + FFS_HEADER_BYTES + header_bytes, align) - header_bytes;
    *pad = q - at;
    return q;
}

/* Header bytes and attributes of a laid-out file (its own header says). */
static uint32_t file_header_bytes(const struct fv_layout_file *f)
{
    return (f->bytes[19] & FFS_ATTR_LARGE_FILE) ? FFS_HEADER2_BYTES : FFS_HEADER_BYTES;
}

static bool is_vtf(const struct fv_layout_file *f)
{
    struct pi_guid g;
    bytes_copy(g.b, f->bytes, PI_GUID_BYTES);
    return pi_guid_equal(&g, &PI_GUID_VTF);
}

/* One pass over the files: where each goes (write: and put it there).
 * Returns FV_OK with r->end, or an error. */
static int layout_pass(uint8_t *vol, const struct fv_volume *v, uint64_t from,
                       const struct fv_layout_file *files, size_t n, struct fv_layout_result *r,
                       bool write)
{
    uint64_t pos = from; /* end of the previous file */
    bool ffs3 = v->fs == FV_FS_FFS3;
    r->pads = 0;
    if (write)
        for (uint64_t k = from; k < align_up(from, FFS_FILE_ALIGN) && k < v->length; k++)
            vol[k] = v->erased;
    for (size_t i = 0; i < n; i++) {
        const struct fv_layout_file *f = &files[i];
        uint8_t attr = f->bytes[19];
        uint64_t start = align_up(pos, FFS_FILE_ALIGN);
        uint64_t pad, at = fv_place(start, file_header_bytes(f), ffs_data_alignment(attr), &pad);
        if (is_vtf(f) && i + 1 == n && v->length >= f->size && v->length - f->size > at) {
            /* the volume top file ends at the volume's end */
            uint64_t top = v->length - f->size;
            uint32_t align = ffs_data_alignment(attr);
            if (top - start >= FFS_HEADER_BYTES && top % FFS_FILE_ALIGN == 0 &&
                (top + file_header_bytes(f)) % align == 0) {
                at = top;
                pad = top - start;
            }
        }
        if ((attr & FFS_ATTR_FIXED) && at != f->offset) {
            r->failed = i;
            return FV_E_FIXED;
        }
        if (pad > FFS_SIZE_SMALL_MAX && !ffs3) {
            r->failed = i;
            return FV_E_TOO_LARGE;
        }
        if (write) {
            if (pad) {
                int rc = ffs_pad_write(vol + start, pad, v->erased, ffs3);
                if (rc) {
                    r->failed = i;
                    return rc;
                }
                r->pads++;
            }
            bytes_copy(vol + at, f->bytes, f->size);
            uint64_t next = align_up(at + f->size, FFS_FILE_ALIGN);
            for (uint64_t k = at + f->size; k < next && k < v->length; k++)
                vol[k] = v->erased;
        } else if (pad) {
            r->pads++;
        }
        pos = at + f->size;
    }
    r->end = pos;
    return FV_OK;
}

int fv_layout(uint8_t *vol, const struct fv_volume *v, uint64_t from,
              const struct fv_layout_file *files, size_t n, struct fv_layout_result *r)
{
    r->end = r->missing = 0;
    r->pads = r->failed = 0;
    int rc = layout_pass(vol, v, from, files, n, r, false);
    if (rc)
        return rc;
    if (r->end > v->length) {
        r->missing = r->end - v->length;
        return FV_E_NO_ROOM;
    }
    rc = layout_pass(vol, v, from, files, n, r, true);
    if (rc)
        return rc;
    for (uint64_t k = r->end; k < v->length; k++)
        vol[k] = v->erased;
    return FV_OK;
}
