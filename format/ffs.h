/* Firmware files and their sections: the PI specification's firmware
 * file system (PI 1.8 Vol. 3, section 2.2: EFI_FFS_FILE_HEADER,
 * EFI_FFS_FILE_HEADER2; section 2.2.4 and 3.2.5: the section headers),
 * read and written over caller buffers.
 *
 * A file is a 24-byte header (32 with FFS_ATTR_LARGE_FILE, FFS3 volumes
 * only) then its data; for most types the data is a list of sections,
 * each a 4-byte header (8 with the 0xffffff size escape) at a 4-byte
 * boundary of the data. Encapsulation sections (GUID-defined, compressed,
 * firmware volume images) hold more sections or a whole volume: the
 * caller walks into them (format/fv.h reads the volumes; decompression is
 * the host's, host/fv_lzma.h).
 *
 * Pure C, freestanding, no allocation: used by format/fv.c, by the host's
 * `ptboot fv` and by its unit tests and fuzz target. */
#ifndef PTBOOT_FORMAT_FFS_H
#define PTBOOT_FORMAT_FFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/pi_guid.h"

/* Errors of ffs.h and fv.h; fv_strerror names each. */
enum fv_err {
    FV_OK = 0,
    FV_E_TRUNCATED = -1,       /* a header or size reaches past the bytes given */
    FV_E_SIGNATURE = -2,       /* no "_FVH" signature */
    FV_E_HEADER_LENGTH = -3,   /* HeaderLength odd, too small, or past FvLength */
    FV_E_HEADER_CHECKSUM = -4, /* the volume header's 16-bit sum is not 0 */
    FV_E_REVISION = -5,        /* Revision neither 1 nor 2 */
    FV_E_BLOCK_MAP = -6,       /* no terminating {0,0} entry inside the header */
    FV_E_EXT_HEADER = -7,      /* the extended header lies outside the volume */
    FV_E_FILE_SIZE = -8,       /* a file smaller than its header or past the volume */
    FV_E_FILE_HEADER_CHECKSUM = -9,
    FV_E_FILE_DATA_CHECKSUM = -10,
    FV_E_FILE_STATE = -11,   /* a state no writer leaves a file in */
    FV_E_FREE_SPACE = -12,   /* bytes other than the erase value after the last file */
    FV_E_SECTION_SIZE = -13, /* a section smaller than its header or past its container */
    FV_E_SPACE = -14,        /* the caller's output buffer is too small */
    FV_E_NO_ROOM = -15,      /* the files do not fit the volume */
    FV_E_FIXED = -16,        /* a file marked FFS_ATTR_FIXED would move */
    FV_E_TOO_LARGE = -17,    /* a file or section larger than its format allows */
    FV_E_LARGE_FILE = -18,   /* FFS_ATTR_LARGE_FILE outside an FFS3 volume */
};
const char *fv_strerror(int err);

/* ---- files (PI 1.8 Vol. 3 section 2.2.3) ---- */

#define FFS_HEADER_BYTES  24
#define FFS_HEADER2_BYTES 32
/* Largest size the 3-byte Size field holds; larger files use HEADER2. */
#define FFS_SIZE_SMALL_MAX 0xffffffu
/* Files start at 8-byte boundaries of their volume. */
#define FFS_FILE_ALIGN 8

/* EFI_FFS_FILE_ATTRIBUTES */
#define FFS_ATTR_LARGE_FILE       0x01
#define FFS_ATTR_DATA_ALIGNMENT_2 0x02
#define FFS_ATTR_FIXED            0x04
#define FFS_ATTR_DATA_ALIGNMENT   0x38
#define FFS_ATTR_CHECKSUM         0x40
/* IntegrityCheck.Checksum.File when FFS_ATTR_CHECKSUM is clear */
#define FFS_FIXED_CHECKSUM 0xaa

/* EFI_FFS_FILE_STATE bits, as set with erase polarity 0 (inverted in a
 * volume whose erased bytes are 0xff). */
#define FFS_STATE_HEADER_CONSTRUCTION 0x01
#define FFS_STATE_HEADER_VALID        0x02
#define FFS_STATE_DATA_VALID          0x04
#define FFS_STATE_MARKED_FOR_UPDATE   0x08
#define FFS_STATE_DELETED             0x10
#define FFS_STATE_HEADER_INVALID      0x20

/* EFI_FV_FILETYPE */
enum ffs_type {
    FFS_TYPE_RAW = 0x01,
    FFS_TYPE_FREEFORM = 0x02,
    FFS_TYPE_SECURITY_CORE = 0x03,
    FFS_TYPE_PEI_CORE = 0x04,
    FFS_TYPE_DXE_CORE = 0x05,
    FFS_TYPE_PEIM = 0x06,
    FFS_TYPE_DRIVER = 0x07,
    FFS_TYPE_COMBINED_PEIM_DRIVER = 0x08,
    FFS_TYPE_APPLICATION = 0x09,
    FFS_TYPE_MM = 0x0a,
    FFS_TYPE_FIRMWARE_VOLUME_IMAGE = 0x0b,
    FFS_TYPE_COMBINED_MM_DXE = 0x0c,
    FFS_TYPE_MM_CORE = 0x0d,
    FFS_TYPE_MM_STANDALONE = 0x0e,
    FFS_TYPE_MM_CORE_STANDALONE = 0x0f,
    FFS_TYPE_PAD = 0xf0,
};

/* What the state byte says (the highest valid bit wins, as firmware
 * reads it). */
enum ffs_state {
    FFS_FILE_VALID,      /* header and data valid (or marked for update) */
    FFS_FILE_DELETED,    /* valid once, deleted since: skipped */
    FFS_FILE_INCOMPLETE, /* header valid, data never completed */
    FFS_FILE_UNWRITTEN,  /* header under construction or never started */
    FFS_FILE_BAD_HEADER, /* header marked invalid */
};

struct ffs_file {
    uint64_t offset; /* of its header, from the volume's start */
    struct pi_guid name;
    uint8_t type, attributes, state_byte;
    enum ffs_state state;
    uint32_t header_bytes; /* 24 or 32 */
    uint64_t size;         /* header and data */
    uint32_t data_align;   /* bytes the data must be aligned to in the volume */
};

/* Reads the file header at p (avail bytes to the volume's end; the file
 * is checked to lie inside them) of a volume with the given erase byte
 * (0xff or 0x00) and file system (ffs3: large files allowed). A valid
 * file's header checksum and data checksum are checked; a file in any
 * other state only for its size. f->offset is left to the caller. */
int ffs_file_parse(const uint8_t *p, uint64_t avail, uint8_t erased, bool ffs3, struct ffs_file *f);
/* The state byte as written with erase polarity 0. */
uint8_t ffs_state_bits(uint8_t state_byte, uint8_t erased);
/* Data alignment in bytes of an attributes byte (PI 1.8 Vol. 3 table
 * "FFS_ATTRIB_DATA_ALIGNMENT"), and the attribute bits for the smallest
 * encodable alignment >= align (0 when align <= 8). */
uint32_t ffs_data_alignment(uint8_t attributes);
uint8_t ffs_alignment_attributes(uint32_t align);
/* "DRIVER", "PEIM", ... ("0x%02x" types get "OEM"/"DEBUG"/"FFS"/"UNKNOWN"). */
const char *ffs_type_name(uint8_t type);

/* Writes the header of a file whose data (size - header bytes) already
 * follows at file + header bytes: name, type, attributes (FFS_ATTR_LARGE_FILE
 * is set here when the size needs it), size, both checksums and the
 * valid state for the erase byte. large_ok: the volume is FFS3. Returns
 * the header bytes, or FV_E_TOO_LARGE. */
int ffs_file_finish(uint8_t *file, uint64_t size, const struct pi_guid *name, uint8_t type,
                    uint8_t attributes, uint8_t erased, bool large_ok);
/* Header bytes a file of data_bytes data needs (24 or 32). */
uint32_t ffs_header_bytes_for(uint64_t data_bytes);
/* A pad file of size bytes (>= FFS_HEADER_BYTES) at out: name and data all
 * erased bytes, as build tools write them. */
int ffs_pad_write(uint8_t *out, uint64_t size, uint8_t erased, bool large_ok);

/* ---- sections (PI 1.8 Vol. 3 sections 2.2.4, 3.2.5) ---- */

#define FFS_SECTION_HEADER_BYTES  4
#define FFS_SECTION_HEADER2_BYTES 8
#define FFS_SECTION_ALIGN         4
/* the 3-byte size meaning "see ExtendedSize" */
#define FFS_SECTION_SIZE_ESCAPE 0xffffffu
/* EFI_GUID_DEFINED_SECTION: common header, SectionDefinitionGuid,
 * DataOffset, Attributes */
#define FFS_GUIDED_HEADER_EXTRA        20
#define FFS_GUIDED_PROCESSING_REQUIRED 0x01
#define FFS_GUIDED_AUTH_STATUS_VALID   0x02

enum ffs_section_type {
    FFS_SECTION_COMPRESSION = 0x01,
    FFS_SECTION_GUID_DEFINED = 0x02,
    FFS_SECTION_DISPOSABLE = 0x03,
    FFS_SECTION_PE32 = 0x10,
    FFS_SECTION_PIC = 0x11,
    FFS_SECTION_TE = 0x12,
    FFS_SECTION_DXE_DEPEX = 0x13,
    FFS_SECTION_VERSION = 0x14,
    FFS_SECTION_USER_INTERFACE = 0x15,
    FFS_SECTION_COMPATIBILITY16 = 0x16,
    FFS_SECTION_FIRMWARE_VOLUME_IMAGE = 0x17,
    FFS_SECTION_FREEFORM_SUBTYPE_GUID = 0x18,
    FFS_SECTION_RAW = 0x19,
    FFS_SECTION_PEI_DEPEX = 0x1b,
    FFS_SECTION_MM_DEPEX = 0x1c,
};

struct ffs_section {
    uint64_t offset; /* of its header, in the section list's bytes */
    uint8_t type;
    uint32_t header_bytes; /* 4 or 8 */
    uint64_t size;         /* header and data */
    uint64_t data_offset;  /* from the section's start: its data */
    /* GUID_DEFINED: the encoding and its attributes; FREEFORM_SUBTYPE_GUID:
     * the subtype */
    struct pi_guid guid;
    uint16_t guid_attributes;
    /* COMPRESSION */
    uint32_t uncompressed_length;
    uint8_t compression_type;
};

/* The section at *pos (rounded up to 4) of a list of len bytes: 1 with s
 * filled and *pos past it, 0 at the list's end, or an error (err_off: its
 * offset in the list). */
int ffs_section_next(const uint8_t *list, uint64_t len, uint64_t *pos, struct ffs_section *s,
                     uint64_t *err_off);
const char *ffs_section_type_name(uint8_t type);

/* Section writers: each aligns pos to 4 (zero bytes in the gap), writes
 * the header and copies len bytes of data (data NULL: leaves them for the
 * caller, at the returned end - len). Return the end offset, or
 * FV_E_SPACE / FV_E_TOO_LARGE. */
long ffs_section_write(uint8_t *out, size_t cap, size_t pos, uint8_t type, const uint8_t *data,
                       size_t len);
long ffs_guided_section_write(uint8_t *out, size_t cap, size_t pos, const struct pi_guid *guid,
                              uint16_t attributes, const uint8_t *data, size_t len);
/* A USER_INTERFACE section: name (ASCII) as UCS-2 with its NUL. */
long ffs_ui_section_write(uint8_t *out, size_t cap, size_t pos, const char *name);
/* The ASCII text of a USER_INTERFACE section's data (UCS-2; other
 * characters become '?'), NUL-terminated in out[cap]. Returns its length. */
size_t ffs_ui_text(const uint8_t *data, uint64_t len, char *out, size_t cap);

#endif
