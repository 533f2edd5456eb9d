/* Frame lines cut by the console, joined again: see serial_join.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/serial_join.h"

size_t serial_split_lines(const uint8_t *text, size_t size, struct serial_log_line **lines)
{
    size_t n = 0, cap = 0, log_line = 1, start = 0;
    struct serial_log_line *v = NULL;
    for (size_t i = 0; i <= size; i++) {
        if (i < size && text[i] != '\n' && text[i] != '\r')
            continue;
        if (i > start) {
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                struct serial_log_line *w = realloc(v, cap * sizeof *v);
                if (!w) {
                    fprintf(stderr, "ptboot serial: out of memory\n");
                    exit(1);
                }
                v = w;
            }
            v[n++] = (struct serial_log_line){ start, i - start, log_line };
        }
        if (i < size && text[i] == '\n')
            log_line++;
        start = i + 1;
    }
    *lines = v;
    return n;
}

bool serial_has_prefix(const char *s, size_t len)
{
    for (size_t i = 0; i + PTD_FRAME_PREFIX_LEN <= len; i++)
        if (s[i] == '@' && !memcmp(s + i, PTD_FRAME_PREFIX, PTD_FRAME_PREFIX_LEN))
            return true;
    return false;
}

static void tally(struct serial_join_stats *st, uint32_t w)
{
    for (unsigned k = 0; k < SERIAL_WRAP_WIDTHS; k++) {
        if (st->width_count[k] && st->width[k] == w) {
            st->width_count[k]++;
            return;
        }
        if (!st->width_count[k]) {
            st->width[k] = w;
            st->width_count[k] = 1;
            return;
        }
    }
}

/* Trailing blanks of a piece are part of what the console printed (a cut
 * after a field's space), but some captures drop them: the join is tried as
 * the pieces are, and with one space between pieces where a piece ends
 * without one. */
#define JOIN_MAX (PTD_FRAME_LINE_MAX + 2 * SERIAL_JOIN_PIECES)

size_t serial_join(const uint8_t *text, const struct serial_log_line *lines, size_t n, size_t i,
                   struct ptd_frame_rec *rec, size_t *skipped, struct serial_join_stats *st)
{
    const char *t = (const char *)text;
    const struct serial_log_line *first = &lines[i];
    char buf[JOIN_MAX];
    *skipped = 0;
    if (first->len > PTD_FRAME_LINE_MAX)
        return 0;
    for (size_t skip = 0; skip <= SERIAL_JOIN_SKIP; skip++) {
        /* the skipped lines are other text: never a frame line */
        if (skip &&
            (i + skip >= n || serial_has_prefix(t + lines[i + skip].start, lines[i + skip].len)))
            break;
        for (int spaced = 0; spaced < 2; spaced++) {
            size_t len = first->len;
            memcpy(buf, t + first->start, len);
            for (size_t k = 1; k <= SERIAL_JOIN_PIECES && i + skip + k < n; k++) {
                const struct serial_log_line *p = &lines[i + skip + k];
                if (serial_has_prefix(t + p->start, p->len))
                    break;
                if (spaced && len && buf[len - 1] != ' ')
                    buf[len++] = ' ';
                if (len + p->len > sizeof buf - 1)
                    break;
                memcpy(buf + len, t + p->start, p->len);
                len += p->len;
                enum ptd_frame_type ty = ptd_frame_parse(buf, len, rec);
                if (ty == PTD_FRAME_BEGIN || ty == PTD_FRAME_DATA || ty == PTD_FRAME_END) {
                    st->joined++;
                    if (skip) {
                        st->joined_split++;
                        if (!st->first_split_log)
                            st->first_split_log = first->log_line;
                    } else {
                        tally(st, (uint32_t)first->len);
                        for (size_t q = 1; q < k; q++)
                            tally(st, (uint32_t)lines[i + q].len);
                    }
                    *skipped = skip;
                    return skip + k;
                }
            }
        }
    }
    st->fragments++;
    tally(st, (uint32_t)first->len);
    return 0;
}

uint32_t serial_wrap_width(const struct serial_join_stats *st)
{
    size_t best = 0, total = 0;
    uint32_t w = 0;
    for (unsigned k = 0; k < SERIAL_WRAP_WIDTHS; k++) {
        total += st->width_count[k];
        if (st->width_count[k] > best) {
            best = st->width_count[k];
            w = st->width[k];
        }
    }
    /* most pieces have one width: a console's wrap column */
    return best >= 2 && best * 4 >= total * 3 ? w : 0;
}
