/* Firmware volumes (PI 1.8 Vol. 3 section 3.2.1, EFI_FIRMWARE_VOLUME_HEADER
 * and EFI_FIRMWARE_VOLUME_EXT_HEADER): the header read and checked, the
 * files walked one by one (format/ffs.h reads each), and files laid out
 * into a volume as build tools do (8-byte boundaries, each file's data at
 * its alignment, pad files in the gaps, the volume top file at the very
 * end, free space erased).
 *
 * A flash image holds volumes one after another; OVMF also nests them
 * (a FIRMWARE_VOLUME_IMAGE section inside an LZMA-compressed GUID-defined
 * section inside a file of the outer volume): the host's `ptboot fv`
 * (host/fv_image.h) walks that tree with these functions.
 *
 * Pure C, freestanding, no allocation: the caller gives every buffer. */
#ifndef PTBOOT_FORMAT_FV_H
#define PTBOOT_FORMAT_FV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ffs.h"
#include "format/pi_guid.h"

/* EFI_FIRMWARE_VOLUME_HEADER without its block map, and the smallest
 * header: one block-map entry and the {0,0} terminator. */
#define FV_HEADER_FIXED_BYTES 56
#define FV_HEADER_MIN_BYTES   72
#define FV_SIGNATURE_OFFSET   40
#define FV_SIGNATURE          0x4856465fu /* "_FVH" */
#define FV_CHECKSUM_OFFSET    50
/* EFI_FIRMWARE_VOLUME_EXT_HEADER: FvName, ExtHeaderSize */
#define FV_EXT_HEADER_MIN_BYTES 20
/* EFI_FVB_ATTRIBUTES_2: erased bytes read as 1s */
#define FV_ATTR_ERASE_POLARITY 0x00000800u

enum fv_fs {
    FV_FS_FFS2,  /* EFI_FIRMWARE_FILE_SYSTEM2_GUID */
    FV_FS_FFS3,  /* EFI_FIRMWARE_FILE_SYSTEM3_GUID: large files too */
    FV_FS_NVRAM, /* a variable store, not files */
    FV_FS_OTHER,
};

struct fv_volume {
    uint64_t length; /* FvLength */
    struct pi_guid fs_guid;
    enum fv_fs fs;
    uint32_t attributes;
    uint16_t header_length, ext_offset;
    uint8_t revision;
    uint8_t erased;       /* 0xff with FV_ATTR_ERASE_POLARITY, else 0x00 */
    uint64_t block_bytes; /* the block map's total (normally == length) */
    bool has_name;        /* the extended header's FvName */
    struct pi_guid name;
    uint64_t files_offset; /* where the first file may start */
};

/* Reads the volume header at p, avail bytes to the end of what the caller
 * holds. Checks the signature, lengths, checksum, revision, block map and
 * extended header; the volume must fit in avail. Returns FV_OK or an
 * enum fv_err. */
int fv_volume_parse(const uint8_t *p, uint64_t avail, struct fv_volume *v);
/* Whether the volume holds files (FFS2 or FFS3). */
bool fv_has_files(const struct fv_volume *v);

/* The next file at or after *pos (start with v->files_offset): 1 with f
 * filled (f->offset set) and *pos past it; 0 at the free space (*pos: its
 * start; every byte from there to the end is erased); or an error with
 * *err_off its offset in the volume. Bounded by the volume: every call
 * moves *pos forward by at least one header. */
int fv_file_next(const uint8_t *vol, const struct fv_volume *v, uint64_t *pos, struct ffs_file *f,
                 uint64_t *err_off);

/* The 16-bit sum of the header (0 when its checksum is right), and the
 * checksum set so that it is. */
uint16_t fv_header_sum(const uint8_t *vol, uint16_t header_length);
void fv_header_checksum_fix(uint8_t *vol, uint16_t header_length);

/* Where a file with header_bytes of header and data aligned to align goes
 * at the first 8-byte boundary at or after pos: returns its offset, and
 * *pad the size of the pad file before it (0: none needed). */
uint64_t fv_place(uint64_t pos, uint32_t header_bytes, uint32_t align, uint64_t *pad);

/* One file to lay out: its bytes (header included, checksums right). */
struct fv_layout_file {
    const uint8_t *bytes;
    uint64_t size;
    uint64_t offset; /* where it was (a file marked FFS_ATTR_FIXED must stay) */
};

struct fv_layout_result {
    uint64_t end;     /* first byte after the last file */
    uint64_t missing; /* FV_E_NO_ROOM: bytes the volume would need more */
    size_t pads;      /* pad files written */
    size_t failed;    /* FV_E_FIXED / FV_E_TOO_LARGE: the file's index */
};

/* Writes files[0..n) into vol from offset from (an 8-byte boundary after
 * the files kept in front), in order, each at the first place that meets
 * its alignment (a pad file before it when needed; the volume top file
 * ends at the volume's end), and erases the rest. Nothing is written
 * unless everything fits: FV_E_NO_ROOM says how much is missing. The
 * files' bytes must not lie in vol's range [from, length). */
int fv_layout(uint8_t *vol, const struct fv_volume *v, uint64_t from,
              const struct fv_layout_file *files, size_t n, struct fv_layout_result *r);

#endif
