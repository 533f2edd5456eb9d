/* A firmware image as a tree, for `ptboot fv` (host/cmd_fv.c): the volumes
 * found in the file, their files, the files' sections, and inside
 * encapsulation sections (LZMA GUID-defined sections, unpacked with
 * host/fv_lzma.h; FIRMWARE_VOLUME_IMAGE sections) more sections and
 * volumes, as OVMF nests its DXE volume:
 *
 *   volume 0 (FVMAIN_COMPACT)
 *     file FIRMWARE_VOLUME_IMAGE
 *       section GUID_DEFINED lzma  -> unpacked:
 *         section RAW (padding), section FIRMWARE_VOLUME_IMAGE -> volume 1 (PEIFV)
 *         section RAW (padding), section FIRMWARE_VOLUME_IMAGE -> volume 2 (DXEFV)
 *   volume 3 (SECFV)
 *
 * The format/ readers (format/fv.h, format/ffs.h) check every header,
 * size and checksum; what they refuse is kept on the node as an error, so
 * that `list` still shows the rest and `inject` refuses to change a
 * corrupt image.
 *
 * Changing the tree: a file is added to (or replaced in) a volume, or a
 * section's bytes replaced; fv_image_build() then writes the image again
 * from the changed nodes up: the volume is laid out anew from the first
 * changed file (format/fv.h fv_layout: alignment, pad files, erased free
 * space; a volume keeps its length, so "no room" is said with how much is
 * missing), its FIRMWARE_VOLUME_IMAGE section takes it in place, an LZMA
 * section is compressed again with its old properties, the file holding
 * it gets its new size and checksums, and that file's volume is laid out
 * again in turn. Nodes that did not change keep their bytes exactly. */
#ifndef PTBOOT_HOST_FV_IMAGE_H
#define PTBOOT_HOST_FV_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ffs.h"
#include "format/fv.h"

/* Nesting deeper than this is refused (volumes in sections in files in
 * volumes...): OVMF needs 2. */
#define FV_IMAGE_DEPTH_MAX   8
#define FV_IMAGE_ERROR_BYTES 200
#define FV_IMAGE_NAME_BYTES  64

enum fv_node_kind {
    FV_NODE_VOLUME,
    FV_NODE_FILE,
    FV_NODE_SECTION
};

struct fv_node {
    enum fv_node_kind kind;
    struct fv_node *parent, *child, *last_child, *next;
    const uint8_t *bytes; /* the node's bytes as read (NULL for a new node) */
    uint64_t size;
    uint64_t offset; /* in its container: the image, a volume, a section list */
    unsigned depth;  /* volumes nested above it */
    /* FV_NODE_VOLUME */
    struct fv_volume vol;
    int index;            /* volumes numbered in the order found (depth first) */
    uint64_t free_offset; /* where the free space begins */
    unsigned files, pads;
    bool parsed; /* its header was read (else: error says why) */
    /* FV_NODE_FILE */
    struct ffs_file file;
    char ui[FV_IMAGE_NAME_BYTES]; /* its USER_INTERFACE section, "" if none */
    /* FV_NODE_SECTION */
    struct ffs_section sec;
    uint8_t *unpacked; /* an LZMA section's contents (owned) */
    size_t unpacked_len;
    char note[80]; /* what was not looked into, and why */
    /* changes: replacement bytes of the whole node (owned), or a new
     * node (bytes NULL); dirty: it or something inside it changed */
    uint8_t *new_bytes;
    uint64_t new_size;
    bool dirty;
    /* what the format/ readers refused here, "" if nothing */
    char error[FV_IMAGE_ERROR_BYTES];
    uint64_t error_offset; /* in the node's container */
};

struct fv_image {
    const uint8_t *data; /* the image file (the caller's) */
    size_t len;
    struct fv_node *first, *last; /* top-level volumes in file order */
    int volumes;                  /* all volumes, nested ones too */
    size_t files;
    size_t errors;
    struct fv_node *first_error;
    size_t max_unpacked; /* bytes all LZMA sections may unpack to together */
    size_t unpacked;
};

/* Reads data[0..len) (kept by reference: it must outlive the tree):
 * every volume at an 8-byte boundary whose header checks out, and those
 * whose header names a known file system but is corrupt (as errors).
 * Returns the volumes found (0: not a firmware image). */
int fv_image_load(struct fv_image *im, const uint8_t *data, size_t len, size_t max_unpacked);
void fv_image_free(struct fv_image *im);

/* Walks every node depth first (children in order); stops when fn
 * returns non-zero and returns that. */
typedef int (*fv_node_fn)(struct fv_node *n, void *ctx);
int fv_image_walk(struct fv_image *im, fv_node_fn fn, void *ctx);

/* Where a node is, for messages: "volume 2 file 0x50b4f8 (name)". */
void fv_node_where(const struct fv_node *n, char *out, size_t cap);
/* The volume a node is in (itself for a volume), and the nearest file. */
struct fv_node *fv_node_volume(struct fv_node *n);
struct fv_node *fv_node_file(struct fv_node *n);
/* The first child section of type type in a file or section list. */
struct fv_node *fv_node_section(struct fv_node *n, uint8_t type);
/* A file of a volume by name GUID or USER_INTERFACE name; NULL if none. */
struct fv_node *fv_volume_find(struct fv_node *vol, const struct pi_guid *g, const char *ui);

/* Changes (marking the path up as dirty): bytes (copied) replace a file
 * or a section whole; fv_volume_add appends a file (bytes copied). */
int fv_node_replace(struct fv_node *n, const uint8_t *bytes, uint64_t size);
struct fv_node *fv_volume_add(struct fv_node *vol, const uint8_t *bytes, uint64_t size);
/* A new file right after the file after (NULL: first in the volume). */
struct fv_node *fv_volume_insert(struct fv_node *vol, struct fv_node *after, const uint8_t *bytes,
                                 uint64_t size);

/* One changed volume as built: what `inject` reports. */
struct fv_build_note {
    int volume;
    uint64_t free_before, free_after;
    /* the LZMA section holding it (0: none): its size before and after */
    uint64_t packed_before, packed_after;
};
#define FV_BUILD_NOTES 8

struct fv_build {
    uint8_t *out; /* the new image (malloc'd, len bytes) */
    size_t len;
    struct fv_build_note notes[FV_BUILD_NOTES];
    size_t nnotes;
};

/* Writes the image again with its changes. 0, or -1 with the reason in
 * err (no room: which volume and how many bytes are missing). */
int fv_image_build(struct fv_image *im, struct fv_build *b, char *err, size_t err_len);

#endif
