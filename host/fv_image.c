/* A firmware image as a tree: reading and writing it again
 * (host/fv_image.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/fv_image.h"
#include "host/fv_lzma.h"

static uint32_t rd32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static struct fv_node *node_new(struct fv_image *im, enum fv_node_kind kind, struct fv_node *parent)
{
    struct fv_node *n = calloc(1, sizeof *n);
    if (!n) {
        fprintf(stderr, "ptboot fv: out of memory\n");
        exit(1);
    }
    n->kind = kind;
    n->parent = parent;
    n->index = -1;
    if (parent) {
        n->depth = parent->depth + (parent->kind == FV_NODE_VOLUME);
        if (parent->last_child)
            parent->last_child->next = n;
        else
            parent->child = n;
        parent->last_child = n;
    } else {
        if (im->last)
            im->last->next = n;
        else
            im->first = n;
        im->last = n;
    }
    return n;
}

static void node_error(struct fv_image *im, struct fv_node *n, uint64_t at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void node_error(struct fv_image *im, struct fv_node *n, uint64_t at, const char *fmt, ...)
{
    if (n->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->error, sizeof n->error, fmt, ap);
    va_end(ap);
    n->error_offset = at;
    im->errors++;
    if (!im->first_error)
        im->first_error = n;
}

struct fv_node *fv_node_file(struct fv_node *n)
{
    while (n && n->kind != FV_NODE_FILE)
        n = n->parent;
    return n;
}

struct fv_node *fv_node_volume(struct fv_node *n)
{
    while (n && n->kind != FV_NODE_VOLUME)
        n = n->parent;
    return n;
}

/* ---- reading ---- */

static void load_volume(struct fv_image *im, struct fv_node *vn, const uint8_t *p, uint64_t avail);

/* Types whose data is a list of sections (PI 1.8 Vol. 3 section 2.1.4):
 * every defined type but RAW and pad files. */
static bool has_sections(uint8_t type)
{
    return type >= FFS_TYPE_FREEFORM && type <= FFS_TYPE_MM_CORE_STANDALONE;
}

static void load_sections(struct fv_image *im, struct fv_node *parent, const uint8_t *list,
                          uint64_t len)
{
    uint64_t pos = 0, err_off = 0;
    struct ffs_section s;
    for (;;) {
        int rc = ffs_section_next(list, len, &pos, &s, &err_off);
        if (rc == 0)
            break;
        if (rc < 0) {
            node_error(im, parent, err_off, "section at 0x%llx: %s", (unsigned long long)err_off,
                       fv_strerror(rc));
            break;
        }
        struct fv_node *sn = node_new(im, FV_NODE_SECTION, parent);
        sn->bytes = list + s.offset;
        sn->size = s.size;
        sn->offset = s.offset;
        sn->sec = s;
        const uint8_t *data = sn->bytes + s.data_offset;
        uint64_t data_len = s.size - s.data_offset;
        struct fv_node *file = fv_node_file(parent);
        switch (s.type) {
        case FFS_SECTION_FIRMWARE_VOLUME_IMAGE:
            if (sn->depth >= FV_IMAGE_DEPTH_MAX) {
                node_error(im, sn, s.offset, "volumes nested deeper than %d", FV_IMAGE_DEPTH_MAX);
                break;
            }
            {
                struct fv_node *vn = node_new(im, FV_NODE_VOLUME, sn);
                vn->offset = s.offset + s.data_offset; /* in the section list */
                load_volume(im, vn, data, data_len);
            }
            break;
        case FFS_SECTION_GUID_DEFINED:
            if (pi_guid_equal(&s.guid, &PI_GUID_LZMA)) {
                char err[160];
                size_t room = im->max_unpacked - im->unpacked;
                if (fv_lzma_decode(data, data_len, room, &sn->unpacked, &sn->unpacked_len, err,
                                   sizeof err)) {
                    node_error(im, sn, s.offset, "LZMA section at 0x%llx: %s",
                               (unsigned long long)s.offset, err);
                    break;
                }
                im->unpacked += sn->unpacked_len;
                load_sections(im, sn, sn->unpacked, sn->unpacked_len);
            } else if (!(s.guid_attributes & FFS_GUIDED_PROCESSING_REQUIRED)) {
                /* readable as it is (e.g. a CRC32 section): its sections follow */
                load_sections(im, sn, data, data_len);
            } else {
                const char *name = pi_guid_name(&s.guid);
                snprintf(sn->note, sizeof sn->note, "%s encoding: not unpacked",
                         name ? name : "unknown");
            }
            break;
        case FFS_SECTION_COMPRESSION:
            if (s.compression_type == 0)
                load_sections(im, sn, data, data_len);
            else
                snprintf(sn->note, sizeof sn->note, "EFI compression type %u: not unpacked",
                         s.compression_type);
            break;
        case FFS_SECTION_USER_INTERFACE:
            if (file && !file->ui[0])
                ffs_ui_text(data, data_len, file->ui, sizeof file->ui);
            break;
        default: break;
        }
    }
}

static void load_volume(struct fv_image *im, struct fv_node *vn, const uint8_t *p, uint64_t avail)
{
    vn->bytes = p;
    int rc = fv_volume_parse(p, avail, &vn->vol);
    if (rc) {
        vn->size = avail;
        node_error(im, vn, 0, "volume header: %s", fv_strerror(rc));
        return;
    }
    vn->parsed = true;
    vn->size = vn->vol.length;
    vn->index = im->volumes++;
    vn->free_offset = vn->vol.length;
    if (!fv_has_files(&vn->vol))
        return;
    uint64_t pos = vn->vol.files_offset, err_off = 0;
    struct ffs_file f;
    for (;;) {
        rc = fv_file_next(p, &vn->vol, &pos, &f, &err_off);
        if (rc == 0) {
            vn->free_offset = pos;
            break;
        }
        if (rc < 0) {
            node_error(im, vn, err_off, "file at 0x%llx: %s", (unsigned long long)err_off,
                       fv_strerror(rc));
            break;
        }
        struct fv_node *fn = node_new(im, FV_NODE_FILE, vn);
        fn->bytes = p + f.offset;
        fn->size = f.size;
        fn->offset = f.offset;
        fn->file = f;
        if (f.type == FFS_TYPE_PAD) {
            vn->pads++;
            continue;
        }
        vn->files++;
        im->files++;
        if (f.state == FFS_FILE_VALID && has_sections(f.type))
            load_sections(im, fn, fn->bytes + f.header_bytes, f.size - f.header_bytes);
    }
}

int fv_image_load(struct fv_image *im, const uint8_t *data, size_t len, size_t max_unpacked)
{
    memset(im, 0, sizeof *im);
    im->data = data;
    im->len = len;
    im->max_unpacked = max_unpacked;
    /* Volumes start at 8-byte boundaries (they are block aligned in any
     * flash layout); a signature elsewhere is data. */
    for (uint64_t off = 0; off + FV_HEADER_FIXED_BYTES <= len; off += 8) {
        if (rd32(data + off + FV_SIGNATURE_OFFSET) != FV_SIGNATURE)
            continue;
        struct fv_volume probe;
        int rc = fv_volume_parse(data + off, len - off, &probe);
        if (rc) {
            /* A header naming a file system we know is a volume gone bad;
             * anything else is code or data holding the four bytes. */
            struct pi_guid fs;
            memcpy(fs.b, data + off + 16, PI_GUID_BYTES);
            if (!pi_guid_equal(&fs, &PI_GUID_FFS2) && !pi_guid_equal(&fs, &PI_GUID_FFS3) &&
                !pi_guid_equal(&fs, &PI_GUID_NV_DATA))
                continue;
        }
        struct fv_node *vn = node_new(im, FV_NODE_VOLUME, NULL);
        vn->offset = off;
        load_volume(im, vn, data + off, len - off);
        if (vn->parsed)
            off += align_up(vn->vol.length, 8) - 8;
    }
    int found = 0;
    for (struct fv_node *n = im->first; n; n = n->next)
        found++;
    return found;
}

static void free_nodes(struct fv_node *n)
{
    while (n) {
        struct fv_node *next = n->next;
        free_nodes(n->child);
        free(n->unpacked);
        free(n->new_bytes);
        free(n);
        n = next;
    }
}

void fv_image_free(struct fv_image *im)
{
    free_nodes(im->first);
    im->first = im->last = NULL;
}

static int walk(struct fv_node *n, fv_node_fn fn, void *ctx)
{
    for (; n; n = n->next) {
        int rc = fn(n, ctx);
        if (rc)
            return rc;
        rc = walk(n->child, fn, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

int fv_image_walk(struct fv_image *im, fv_node_fn fn, void *ctx)
{
    return walk(im->first, fn, ctx);
}

void fv_node_where(const struct fv_node *n, char *out, size_t cap)
{
    /* a volume is named by itself, anything else by its file and volume */
    const struct fv_node *file =
        n->kind == FV_NODE_VOLUME ? NULL : fv_node_file((struct fv_node *)n);
    const struct fv_node *vol = fv_node_volume((struct fv_node *)(file ? file : n));
    char vpart[96] = "";
    if (vol && vol->index >= 0)
        snprintf(vpart, sizeof vpart, "volume %d", vol->index);
    else if (vol && !vol->parent)
        snprintf(vpart, sizeof vpart, "volume at 0x%llx", (unsigned long long)vol->offset);
    else if (vol) {
        /* a nested volume whose header was refused: say where it sits */
        const struct fv_node *outer = fv_node_volume(vol->parent);
        snprintf(vpart, sizeof vpart, "volume in volume %d", outer ? outer->index : -1);
    }
    if (!file) {
        snprintf(out, cap, "%s", vpart);
        return;
    }
    char g[PI_GUID_TEXT_BYTES];
    pi_guid_format(&file->file.name, g);
    snprintf(out, cap, "%s file %s at 0x%llx%s%s%s", vpart, g, (unsigned long long)file->offset,
             file->ui[0] ? " (" : "", file->ui, file->ui[0] ? ")" : "");
}

struct fv_node *fv_node_section(struct fv_node *n, uint8_t type)
{
    for (struct fv_node *c = n->child; c; c = c->next)
        if (c->kind == FV_NODE_SECTION && c->sec.type == type)
            return c;
    return NULL;
}

struct fv_node *fv_volume_find(struct fv_node *vol, const struct pi_guid *g, const char *ui)
{
    for (struct fv_node *c = vol->child; c; c = c->next) {
        if (c->kind != FV_NODE_FILE || c->file.type == FFS_TYPE_PAD)
            continue;
        if (g && pi_guid_equal(&c->file.name, g))
            return c;
        if (ui && c->ui[0] && !strcasecmp(c->ui, ui))
            return c;
    }
    return NULL;
}

/* ---- changing ---- */

static void mark_dirty(struct fv_node *n)
{
    for (; n; n = n->parent)
        n->dirty = true;
}

int fv_node_replace(struct fv_node *n, const uint8_t *bytes, uint64_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return -1;
    memcpy(copy, bytes, size);
    free(n->new_bytes);
    n->new_bytes = copy;
    n->new_size = size;
    mark_dirty(n);
    return 0;
}

struct fv_node *fv_volume_add(struct fv_node *vol, const uint8_t *bytes, uint64_t size)
{
    return fv_volume_insert(vol, vol->last_child, bytes, size);
}

struct fv_node *fv_volume_insert(struct fv_node *vol, struct fv_node *after, const uint8_t *bytes,
                                 uint64_t size)
{
    struct fv_node *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->kind = FV_NODE_FILE;
    n->parent = vol;
    n->depth = vol->depth + 1;
    n->index = -1;
    if (after) {
        n->next = after->next;
        after->next = n;
    } else {
        n->next = vol->child;
        vol->child = n;
    }
    if (vol->last_child == after)
        vol->last_child = n;
    if (fv_node_replace(n, bytes, size))
        return NULL;
    if (size >= FFS_HEADER_BYTES)
        memcpy(n->file.name.b, bytes, PI_GUID_BYTES);
    n->file.type = size > 18 ? bytes[18] : 0;
    n->offset = UINT64_MAX;
    return n;
}

/* ---- writing again ---- */

/* A growing byte buffer. */
struct buf {
    uint8_t *p;
    size_t len, cap;
};

static int buf_reserve(struct buf *b, size_t more)
{
    if (b->cap - b->len >= more)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len < more)
        cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

struct build_ctx {
    struct fv_build *b;
    char *err;
    size_t err_len;
};

static int build_volume(struct build_ctx *c, struct fv_node *vn, uint8_t **out);
static int build_section(struct build_ctx *c, struct fv_node *sn, uint8_t **out, uint64_t *len);

static void note_volume(struct build_ctx *c, const struct fv_node *vn, uint64_t free_after)
{
    if (c->b->nnotes == FV_BUILD_NOTES)
        return;
    struct fv_build_note *nt = &c->b->notes[c->b->nnotes++];
    memset(nt, 0, sizeof *nt);
    nt->volume = vn->index;
    nt->free_before = vn->vol.length - vn->free_offset;
    nt->free_after = free_after;
}

/* The bytes of a list of sections (a file's data, an unpacked section)
 * from its children, each at a 4-byte boundary as it was. */
static int build_list(struct build_ctx *c, struct fv_node *parent, struct buf *out)
{
    for (struct fv_node *sn = parent->child; sn; sn = sn->next) {
        const uint8_t *bytes = sn->bytes;
        uint64_t len = sn->size;
        uint8_t *made = NULL;
        if (sn->dirty && build_section(c, sn, &made, &len))
            return -1;
        if (made)
            bytes = made;
        size_t at = (size_t)align_up(out->len, FFS_SECTION_ALIGN);
        if (buf_reserve(out, at - out->len + len)) {
            free(made);
            snprintf(c->err, c->err_len, "out of memory");
            return -1;
        }
        memset(out->p + out->len, 0, at - out->len);
        memcpy(out->p + at, bytes, len);
        out->len = at + len;
        free(made);
    }
    return 0;
}

static int build_section(struct build_ctx *c, struct fv_node *sn, uint8_t **out, uint64_t *len)
{
    char where[160];
    if (sn->new_bytes) {
        *out = malloc(sn->new_size);
        if (!*out)
            return -1;
        memcpy(*out, sn->new_bytes, sn->new_size);
        *len = sn->new_size;
        return 0;
    }
    const struct ffs_section *s = &sn->sec;
    if (s->type == FFS_SECTION_FIRMWARE_VOLUME_IMAGE && sn->child) {
        uint8_t *vol;
        if (build_volume(c, sn->child, &vol))
            return -1;
        /* a volume keeps its length: the section keeps its header */
        *out = malloc(sn->size);
        if (!*out) {
            free(vol);
            return -1;
        }
        memcpy(*out, sn->bytes, s->data_offset);
        memcpy(*out + s->data_offset, vol, sn->child->vol.length);
        free(vol);
        *len = sn->size;
        return 0;
    }
    if (s->type == FFS_SECTION_GUID_DEFINED && pi_guid_equal(&s->guid, &PI_GUID_LZMA) &&
        sn->unpacked) {
        struct buf inner = { 0 };
        if (build_list(c, sn, &inner)) {
            free(inner.p);
            return -1;
        }
        if (inner.len != sn->unpacked_len) {
            /* OVMF's SEC sizes the decompression scratch for the old
             * size; the volumes inside keep their lengths, so this means
             * a bug here, not a user error */
            fv_node_where(sn, where, sizeof where);
            snprintf(c->err, c->err_len,
                     "%s: the LZMA section's contents changed size (%zu to %zu bytes)", where,
                     sn->unpacked_len, inner.len);
            free(inner.p);
            return -1;
        }
        uint8_t *packed;
        size_t packed_len;
        char lerr[160];
        int rc = fv_lzma_encode(sn->bytes + s->data_offset, inner.p, inner.len, &packed,
                                &packed_len, lerr, sizeof lerr);
        free(inner.p);
        if (rc) {
            snprintf(c->err, c->err_len, "%s", lerr);
            return -1;
        }
        size_t cap = packed_len + FFS_SECTION_HEADER2_BYTES + FFS_GUIDED_HEADER_EXTRA;
        *out = malloc(cap);
        if (!*out) {
            free(packed);
            return -1;
        }
        long end = ffs_guided_section_write(*out, cap, 0, &s->guid, s->guid_attributes, packed,
                                            packed_len);
        free(packed);
        if (end < 0) {
            snprintf(c->err, c->err_len, "LZMA section: %s", fv_strerror((int)end));
            free(*out);
            return -1;
        }
        *len = (uint64_t)end;
        /* the volume noted last is the one inside */
        if (c->b->nnotes) {
            c->b->notes[c->b->nnotes - 1].packed_before = sn->size;
            c->b->notes[c->b->nnotes - 1].packed_after = *len;
        }
        return 0;
    }
    fv_node_where(sn, where, sizeof where);
    char g[PI_GUID_TEXT_BYTES];
    pi_guid_format(&s->guid, g);
    snprintf(c->err, c->err_len, "%s: cannot write a %s section (%s) again", where,
             ffs_section_type_name(s->type), g);
    return -1;
}

static int build_file(struct build_ctx *c, struct fv_node *fn, uint8_t **out, uint64_t *len)
{
    if (fn->new_bytes) {
        *out = malloc(fn->new_size);
        if (!*out)
            return -1;
        memcpy(*out, fn->new_bytes, fn->new_size);
        *len = fn->new_size;
        return 0;
    }
    const struct fv_node *vn = fv_node_volume(fn);
    bool ffs3 = vn->vol.fs == FV_FS_FFS3;
    struct buf data = { 0 };
    if (build_list(c, fn, &data)) {
        free(data.p);
        return -1;
    }
    uint32_t hb = ffs_header_bytes_for(data.len);
    uint8_t *f = malloc(hb + data.len);
    if (!f) {
        free(data.p);
        return -1;
    }
    memcpy(f + hb, data.p, data.len);
    free(data.p);
    int rc = ffs_file_finish(f, hb + data.len, &fn->file.name, fn->file.type, fn->file.attributes,
                             vn->vol.erased, ffs3);
    if (rc < 0) {
        char where[160];
        fv_node_where(fn, where, sizeof where);
        snprintf(c->err, c->err_len, "%s: %s", where, fv_strerror(rc));
        free(f);
        return -1;
    }
    *out = f;
    *len = hb + data.len;
    return 0;
}

/* A volume again: files before the first change keep their place, the
 * rest are laid out from there (old pad files dropped, new ones where
 * alignment needs them). */
static int build_volume(struct build_ctx *c, struct fv_node *vn, uint8_t **out)
{
    uint64_t length = vn->vol.length;
    uint8_t *vol = malloc(length);
    if (!vol)
        return -1;
    memcpy(vol, vn->bytes, length);
    size_t n = 0, k;
    struct fv_node *first = NULL;
    for (struct fv_node *f = vn->child; f; f = f->next)
        n++;
    struct fv_layout_file *items = calloc(n ? n : 1, sizeof *items);
    uint8_t **made = calloc(n ? n : 1, sizeof *made);
    if (!items || !made) {
        free(vol);
        free(items);
        free(made);
        return -1;
    }
    struct fv_node *kept = NULL; /* the last file before the first change */
    for (struct fv_node *f = vn->child; f && !first; f = f->next) {
        if (f->dirty)
            first = f;
        else
            kept = f;
    }
    /* the files from the first change on are laid out again from where it
     * was, or (a new file) from the end of the file before it */
    uint64_t from = vn->free_offset;
    if (first && first->bytes)
        from = first->offset;
    else if (first)
        from = kept ? kept->offset + kept->size : vn->vol.files_offset;
    int rc = 0;
    k = 0;
    for (struct fv_node *f = first; f && !rc; f = f->next) {
        if (f->bytes && f->file.type == FFS_TYPE_PAD)
            continue; /* pads are made anew */
        items[k].bytes = f->bytes;
        items[k].size = f->size;
        items[k].offset = f->bytes ? f->offset : UINT64_MAX;
        if (f->dirty) {
            uint64_t len = 0;
            rc = build_file(c, f, &made[k], &len);
            items[k].bytes = made[k];
            items[k].size = len;
        }
        k++;
    }
    if (!rc) {
        struct fv_layout_result r;
        int lr = fv_layout(vol, &vn->vol, from, items, k, &r);
        char where[160];
        fv_node_where(vn, where, sizeof where);
        if (lr == FV_E_NO_ROOM) {
            uint64_t free_now = length - vn->free_offset;
            snprintf(c->err, c->err_len,
                     "%s has no room: its files would need %llu bytes more than its %llu (0x%llx) "
                     "(free now: %llu bytes; missing: %llu bytes, %.1f KiB)",
                     where, (unsigned long long)r.missing, (unsigned long long)length,
                     (unsigned long long)length, (unsigned long long)free_now,
                     (unsigned long long)r.missing, r.missing / 1024.0);
            rc = -1;
        } else if (lr) {
            snprintf(c->err, c->err_len, "%s: %s", where, fv_strerror(lr));
            rc = -1;
        } else {
            fv_header_checksum_fix(vol, vn->vol.header_length);
            note_volume(c, vn, length - r.end);
        }
    }
    for (size_t i = 0; i < n; i++)
        free(made[i]);
    free(made);
    free(items);
    if (rc) {
        free(vol);
        return -1;
    }
    *out = vol;
    return 0;
}

/* The new image must read back whole: every volume, file and section
 * checked again by the same readers (a bug here must not reach a flash
 * chip or a firmware). */
static int check_again(const uint8_t *data, size_t len, size_t max_unpacked, char *err,
                       size_t err_len)
{
    struct fv_image again;
    int n = fv_image_load(&again, data, len, max_unpacked);
    int rc = 0;
    if (n <= 0 || again.errors) {
        char where[160] = "?";
        if (again.first_error)
            fv_node_where(again.first_error, where, sizeof where);
        snprintf(err, err_len, "the image written does not read back (%s: %s): not written", where,
                 again.first_error ? again.first_error->error : "no volume");
        rc = -1;
    }
    fv_image_free(&again);
    return rc;
}

int fv_image_build(struct fv_image *im, struct fv_build *b, char *err, size_t err_len)
{
    memset(b, 0, sizeof *b);
    b->out = malloc(im->len ? im->len : 1);
    if (!b->out) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    memcpy(b->out, im->data, im->len);
    b->len = im->len;
    struct build_ctx c = { b, err, err_len };
    for (struct fv_node *vn = im->first; vn; vn = vn->next) {
        if (!vn->dirty)
            continue;
        uint8_t *vol;
        if (build_volume(&c, vn, &vol)) {
            free(b->out);
            b->out = NULL;
            return -1;
        }
        memcpy(b->out + vn->offset, vol, vn->vol.length);
        free(vol);
    }
    if (check_again(b->out, b->len, im->max_unpacked, err, err_len)) {
        free(b->out);
        b->out = NULL;
        return -1;
    }
    return 0;
}
