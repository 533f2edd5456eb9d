/* Frame lines a console cut into pieces, put back together (`ptboot
 * serial`, host/serial_recover.c; docs/serial.md "Lines cut by the
 * console"): a terminal that wraps at N columns turns each ~160-character
 * frame line into pieces of N characters, and a firmware message printed in
 * the middle of a frame line cuts it in two with its own line between. A
 * piece that starts a frame line (the prefix is there, the line CRC is not
 * right) is joined with the lines after it: up to SERIAL_JOIN_PIECES
 * pieces, after skipping up to SERIAL_JOIN_SKIP lines of other text, never
 * across another frame line. A join is taken only when its line CRC (and
 * syntax) is right, so no wrong line is ever made.
 *
 * The log is split into lines first (struct serial_log_line): the same
 * rules as the parser's, LF or lone CR ends a line, log line numbers
 * count LFs. */
#ifndef PTBOOT_HOST_SERIAL_JOIN_H
#define PTBOOT_HOST_SERIAL_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_frame.h"

#define SERIAL_JOIN_PIECES 8 /* 400-character lines wrapped at 50 columns */
#define SERIAL_JOIN_SKIP   3 /* lines of other text inside one frame line */
#define SERIAL_WRAP_WIDTHS 8 /* distinct piece widths tallied */

struct serial_log_line {
    size_t start, len; /* in the log's text, without CR/LF */
    size_t log_line;
};

/* What the joins found, for the report. */
struct serial_join_stats {
    size_t joined;          /* frame lines made whole from pieces */
    size_t joined_split;    /* of them, with other text between pieces */
    size_t first_split_log; /* log line of the first such, 0: none */
    size_t fragments;       /* frame pieces that joined with nothing */
    /* widths of the pieces before the last one of each join and of the
     * fragments that joined with nothing: the console's wrap column */
    uint32_t width[SERIAL_WRAP_WIDTHS];
    size_t width_count[SERIAL_WRAP_WIDTHS];
};

/* Splits text into lines: *lines (malloc'd) and their count. */
size_t serial_split_lines(const uint8_t *text, size_t size, struct serial_log_line **lines);

/* True when the line holds the frame prefix. */
bool serial_has_prefix(const char *s, size_t len);

/* Lines[i] parsed as a damaged frame line: tries to join it with the lines
 * after it. On success fills *rec with the whole line's record and returns
 * how many lines after i it took (those in between that were other text
 * included: *skipped of them, the first of which is lines[i + 1]); 0 when
 * no join parses. */
size_t serial_join(const uint8_t *text, const struct serial_log_line *lines, size_t n, size_t i,
                   struct ptd_frame_rec *rec, size_t *skipped, struct serial_join_stats *st);

/* The wrap column when the pieces say the log was wrapped (most pieces of
 * one width, at least 2 of them), else 0. */
uint32_t serial_wrap_width(const struct serial_join_stats *st);

#endif
