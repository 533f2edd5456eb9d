/* A capture's sideband and code rebuilt from a damaged serial log: see
 * serial_repair.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/code_image.h"
#include "format/sideband.h"
#include "host/serial_repair.h"

/* Whole lines tried with the parser at most this often (each refusal drops
 * one line): a sideband names at most SIDEBAND_MAX_IMAGES images. */
#define REPAIR_PARSE_TRIES 256

struct text_line {
    size_t start, len; /* in the rebuilt text, the newline included */
};

static void *must(void *p)
{
    if (!p) {
        fprintf(stderr, "ptboot serial: out of memory\n");
        exit(1);
    }
    return p;
}

/* Appends data[a, b) to the text being built. */
static void put(char **t, size_t *n, size_t *cap, const void *data, size_t len)
{
    while (*n + len + 1 > *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        *t = must(realloc(*t, *cap));
    }
    memcpy(*t + *n, data, len);
    *n += len;
    (*t)[*n] = '\0';
}

/* The whole text lines of data: those inside one run, starting at the
 * file's start or after a newline of the same run, ending with a newline
 * of the run (or at the file's end). */
static void whole_lines(const uint8_t *data, uint64_t size, const struct serial_range *r, size_t nr,
                        char **t, size_t *n, size_t *cap, struct serial_sideband_repair *rep)
{
    for (size_t k = 0; k < nr; k++) {
        uint64_t a = r[k].off, b = r[k].off + r[k].len;
        uint64_t p = a;
        if (a > 0) {
            /* the run starts inside a line whose start was lost */
            while (p < b && data[p] != '\n')
                p++;
            if (p < b)
                p++;
            rep->lines_cut++;
        }
        while (p < b) {
            uint64_t e = p;
            while (e < b && data[e] != '\n')
                e++;
            if (e < b || b == size) {
                put(t, n, cap, data + p, (size_t)(e - p));
                put(t, n, cap, "\n", 1);
                rep->lines_kept++;
                p = e + 1;
            } else {
                rep->lines_cut++; /* cut by the loss after the run */
                break;
            }
        }
    }
}

static bool starts(const char *s, size_t len, const char *word)
{
    size_t w = strlen(word);
    return len >= w && !memcmp(s, word, w);
}

/* The text's lines: starts and lengths (newline included). */
static size_t split(const char *t, size_t n, struct text_line **out)
{
    size_t cnt = 0, cap = 0;
    struct text_line *v = NULL;
    for (size_t p = 0; p < n;) {
        size_t e = p;
        while (e < n && t[e] != '\n')
            e++;
        if (cnt == cap) {
            cap = cap ? 2 * cap : 64;
            v = must(realloc(v, cap * sizeof *v));
        }
        v[cnt++] = (struct text_line){ p, e - p + (e < n) };
        p = e + 1;
    }
    *out = v;
    return cnt;
}

char *serial_repair_sideband(const uint8_t *data, uint64_t size, const struct serial_range *r,
                             size_t nr, size_t *len, struct serial_sideband_repair *rep)
{
    static struct sideband sb;
    char *body = NULL, *t = NULL;
    size_t bn = 0, bcap = 0, n = 0, cap = 0;
    memset(rep, 0, sizeof *rep);
    whole_lines(data, size, r, nr, &body, &bn, &bcap, rep);
    if (!body)
        return NULL;

    /* the version first, `end` last */
    char head[64];
    if (!starts(body, bn, SIDEBAND_MAGIC " ")) {
        snprintf(head, sizeof head, "%s %d\n", SIDEBAND_MAGIC, SIDEBAND_VERSION);
        put(&t, &n, &cap, head, strlen(head));
        rep->version_added = 1;
    }
    put(&t, &n, &cap, body, bn);
    free(body);
    struct text_line *lines;
    size_t nl = split(t, n, &lines);
    if (!nl || !starts(t + lines[nl - 1].start, lines[nl - 1].len, "end")) {
        put(&t, &n, &cap, "end\n", 4);
        rep->end_added = 1;
    }
    free(lines);

    /* lines the parser refuses are dropped, one at a time */
    for (int tries = 0; tries < REPAIR_PARSE_TRIES; tries++) {
        struct sideband_error se;
        if (sideband_parse(&sb, t, n, &se) == 0) {
            rep->images = sb.nimages;
            *len = n;
            return t;
        }
        nl = split(t, n, &lines);
        if (se.line <= 1 || se.line > nl) {
            free(lines);
            break; /* the version line itself, or no line to blame */
        }
        struct text_line bad = lines[se.line - 1];
        free(lines);
        if (starts(t + bad.start, bad.len, "end") && bad.start + bad.len >= n)
            break;
        memmove(t + bad.start, t + bad.start + bad.len, n - bad.start - bad.len);
        n -= bad.len;
        t[n] = '\0';
        rep->lines_refused++;
        if (rep->lines_kept)
            rep->lines_kept--;
    }
    free(t);
    return NULL;
}

/* True when [off, off + len) lies inside one run. */
static bool came(const struct serial_range *r, size_t nr, uint64_t off, uint64_t len)
{
    size_t lo = 0, hi = nr;
    while (lo < hi) { /* the last run starting at or before off */
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].off <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && off + len <= r[lo - 1].off + r[lo - 1].len;
}

size_t serial_repair_code(const uint8_t *dump, uint64_t dump_size, const struct serial_range *dr,
                          size_t ndr, const uint8_t *addr, uint64_t addr_size,
                          const struct serial_range *ar, size_t nar, uint8_t **out_dump,
                          uint8_t **out_addr, size_t *of)
{
    size_t pages = (size_t)(dump_size / CODE_PAGE_BYTES);
    if (addr_size / 8 < pages)
        pages = (size_t)(addr_size / 8);
    *of = pages;
    *out_dump = must(malloc(pages ? pages * CODE_PAGE_BYTES : 1));
    *out_addr = must(malloc(pages ? pages * 8 : 1));
    size_t kept = 0;
    for (size_t i = 0; i < pages; i++) {
        if (!came(dr, ndr, (uint64_t)i * CODE_PAGE_BYTES, CODE_PAGE_BYTES) ||
            !came(ar, nar, (uint64_t)i * 8, 8))
            continue;
        memcpy(*out_dump + kept * CODE_PAGE_BYTES, dump + i * CODE_PAGE_BYTES, CODE_PAGE_BYTES);
        memcpy(*out_addr + kept * 8, addr + i * 8, 8);
        kept++;
    }
    return kept;
}
