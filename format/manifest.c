/* manifest.txt: see manifest.h. */
#include "format/manifest.h"
#include "format/text.h"

#define MANIFEST_MAGIC "ptboot-manifest"

void manifest_init(struct manifest *m)
{
    bytes_zero(m, sizeof *m);
}

static bool name_ok(const char *name)
{
    size_t n = text_len(name);
    if (n == 0 || n >= MANIFEST_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (name[i] <= ' ' || name[i] > '~')
            return false;
    return true;
}

static struct manifest_file *add(struct manifest *m, const char *name, uint64_t bytes)
{
    if (!name_ok(name))
        return NULL;
    if (m->nfiles == MANIFEST_MAX_FILES)
        return NULL;
    struct manifest_file *f = &m->files[m->nfiles++];
    bytes_zero(f, sizeof *f);
    bytes_copy(f->name, name, text_len(name) + 1);
    f->bytes = bytes;
    return f;
}

int manifest_add_file(struct manifest *m, const char *name, uint64_t bytes, uint32_t crc32)
{
    if (!name_ok(name))
        return MANIFEST_E_NAME;
    struct manifest_file *f = add(m, name, bytes);
    if (!f)
        return MANIFEST_E_FULL;
    f->present = true;
    f->crc32 = crc32;
    m->complete = manifest_is_complete(m);
    return MANIFEST_OK;
}

int manifest_add_missing(struct manifest *m, const char *name, uint64_t bytes, const char *why)
{
    if (!name_ok(name))
        return MANIFEST_E_NAME;
    struct manifest_file *f = add(m, name, bytes);
    if (!f)
        return MANIFEST_E_FULL;
    size_t n = 0;
    for (; why && why[n] && n + 1 < MANIFEST_WHY_MAX; n++)
        f->why[n] = why[n] >= ' ' && why[n] <= '~' ? why[n] : '?';
    f->why[n] = '\0';
    m->complete = false;
    return MANIFEST_OK;
}

bool manifest_is_complete(const struct manifest *m)
{
    for (uint32_t i = 0; i < m->nfiles; i++)
        if (!m->files[i].present)
            return false;
    return true;
}

const struct manifest_file *manifest_find(const struct manifest *m, const char *name)
{
    size_t n = text_len(name);
    for (uint32_t i = 0; i < m->nfiles; i++)
        if (n && text_is(name, n, m->files[i].name))
            return &m->files[i];
    return NULL;
}

size_t manifest_write(const struct manifest *m, char *buf, size_t cap)
{
    struct text_out o;
    text_out_init(&o, buf, cap);
    text_out_str(&o, MANIFEST_MAGIC " ");
    text_out_dec(&o, MANIFEST_VERSION);
    text_out_str(&o, "\n");
    for (uint32_t i = 0; i < m->nfiles; i++) {
        const struct manifest_file *f = &m->files[i];
        text_out_str(&o, f->present ? "file " : "missing ");
        text_out_str(&o, f->name);
        text_out_str(&o, " bytes=");
        text_out_dec(&o, f->bytes);
        if (f->present) {
            text_out_str(&o, " crc32=");
            text_out_hex(&o, f->crc32, 8, false);
        } else {
            text_out_str(&o, " why=");
            text_out_str(&o, f->why[0] ? f->why : "unknown");
        }
        text_out_str(&o, "\n");
    }
    text_out_str(&o, manifest_is_complete(m) ? "complete 1\n" : "complete 0\n");
    text_out_str(&o, "end\n");
    return o.len;
}

/* ---- reader ---- */

struct cursor {
    const char *p, *end;
};

static bool take(struct cursor *c, const char *word)
{
    size_t n = text_len(word);
    if ((size_t)(c->end - c->p) < n || !bytes_equal(c->p, word, n))
        return false;
    c->p += n;
    return true;
}

static bool take_dec(struct cursor *c, uint64_t *v)
{
    uint64_t x = 0;
    const char *s = c->p;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
        c->p++;
    }
    *v = x;
    return c->p > s;
}

static bool take_hex8(struct cursor *c, uint32_t *v)
{
    uint32_t x = 0;
    if (c->end - c->p < 8)
        return false;
    for (int i = 0; i < 8; i++, c->p++) {
        char ch = *c->p;
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else
            return false;
        x = x << 4 | d;
    }
    *v = x;
    return true;
}

/* A name up to the next space into out. */
static bool take_name(struct cursor *c, char out[MANIFEST_NAME_MAX])
{
    size_t n = 0;
    while (c->p < c->end && *c->p != ' ') {
        if (n + 1 >= MANIFEST_NAME_MAX || *c->p < ' ' || *c->p > '~')
            return false;
        out[n++] = *c->p++;
    }
    out[n] = '\0';
    return n > 0;
}

static int parse_line(struct manifest *m, struct cursor *c, int *state, const char **msg)
{
    char name[MANIFEST_NAME_MAX];
    uint64_t v;
    if (*state == 0) {
        if (!take(c, MANIFEST_MAGIC " ") || !take_dec(c, &v) || c->p != c->end) {
            *msg = "not a manifest (want 'ptboot-manifest 1')";
            return -1;
        }
        if (v != MANIFEST_VERSION) {
            *msg = "manifest version not supported (want 1)";
            return -1;
        }
        *state = 1;
        return 0;
    }
    if (*state == 2) {
        if (!take(c, "end") || c->p != c->end) {
            *msg = "want 'end' after 'complete'";
            return -1;
        }
        *state = 3;
        return 0;
    }
    if (take(c, "complete ")) {
        if (!take_dec(c, &v) || v > 1 || c->p != c->end) {
            *msg = "complete: want 0 or 1";
            return -1;
        }
        if ((v == 1) != manifest_is_complete(m)) {
            *msg = v ? "complete 1 with a file missing" : "complete 0 with no file missing";
            return -1;
        }
        m->complete = v == 1;
        *state = 2;
        return 0;
    }
    bool present = take(c, "file ");
    if (!present && !take(c, "missing ")) {
        *msg = "unknown line (want file, missing, complete)";
        return -1;
    }
    if (!take_name(c, name) || !take(c, " bytes=") || !take_dec(c, &v)) {
        *msg = "want NAME bytes=N";
        return -1;
    }
    if (manifest_find(m, name)) {
        *msg = "a file listed twice";
        return -1;
    }
    if (present) {
        uint32_t crc;
        if (!take(c, " crc32=") || !take_hex8(c, &crc) || c->p != c->end) {
            *msg = "want crc32=8 hex digits";
            return -1;
        }
        if (manifest_add_file(m, name, v, crc)) {
            *msg = "too many files";
            return -1;
        }
        return 0;
    }
    if (!take(c, " why=")) {
        *msg = "want why=TEXT";
        return -1;
    }
    char why[MANIFEST_WHY_MAX];
    size_t n = 0;
    for (; c->p < c->end && n + 1 < sizeof why; c->p++)
        why[n++] = *c->p;
    why[n] = '\0';
    if (manifest_add_missing(m, name, v, why)) {
        *msg = "too many files";
        return -1;
    }
    return 0;
}

int manifest_parse(struct manifest *m, const char *text, size_t len, unsigned *line,
                   const char **msg)
{
    manifest_init(m);
    *line = 0;
    *msg = "";
    int state = 0; /* 0: magic, 1: entries, 2: after complete, 3: after end */
    const char *p = text, *end = text + len;
    while (p < end) {
        const char *nl = text_find(p, (size_t)(end - p), '\n');
        const char *le = nl ? nl : end;
        (*line)++;
        struct cursor c = { p, le };
        if (c.end > c.p && c.end[-1] == '\r')
            c.end--;
        p = nl ? nl + 1 : end;
        if (state == 3) {
            *msg = "text after 'end'";
            return MANIFEST_E_SYNTAX;
        }
        if (parse_line(m, &c, &state, msg))
            return MANIFEST_E_SYNTAX;
    }
    if (state != 3) {
        (*line)++;
        *msg = "cut short (no 'end' line)";
        return MANIFEST_E_SYNTAX;
    }
    return MANIFEST_OK;
}
