/* libptd serial framing: files (raw trace, sideband, code snapshots) as text
 * lines that survive a serial console, and the parser that gets them back.
 * Both sides share this file: the UEFI app encodes (efi/serial_dump.c), the
 * host recovers (`ptboot serial LOG`, host/cmd_serial.c). Freestanding, no
 * allocation, no global state. The format is described in docs/serial.md;
 * in short, every frame line is
 *
 *   @PTF1 B <id> <name> <size> <crc32>  <kind> <linecrc>        begin of file <id>
 *   @PTF1 D <id> <seq> <offset> <P|->   <base64> <linecrc>      data line <seq>
 *   @PTF1 E <id> <name> <lines> <size>  <crc32> <linecrc>       end of file <id>
 *
 * id, seq, size and lines are decimal; offset is hex (no 0x); crc32 and
 * linecrc are 8 lowercase hex digits. linecrc is the CRC32 of the line from
 * '@' up to and including the space before it, so any damaged line is
 * caught. The prefix may be preceded by other output on the same line (the
 * parser searches for it) and the line may end in CR LF, LF or CR.
 *
 * "Cut at PSB boundaries": in a file of kind "pt" a data line never runs
 * across the start of a PSB (the sync point of Intel SDM vol. 3C, "Trace
 * Packets and Data Types", PSB): the line before it ends short, and the
 * line that starts at the PSB carries the flag P. A receiver that lost lines resumes at the next P line and
 * decodes from there on. */
#ifndef PTD_FRAME_H
#define PTD_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The line prefix (with the format version); searched for anywhere in a line. */
#define PTD_FRAME_PREFIX     "@PTF1 "
#define PTD_FRAME_PREFIX_LEN 6
/* Payload bytes per data line: default and bounds (multiples of 3 give
 * base64 without padding; 96 bytes -> 128 characters). */
#define PTD_FRAME_PAYLOAD_DEFAULT 96
#define PTD_FRAME_PAYLOAD_MAX     192
/* File names: 1..PTD_FRAME_NAME_MAX printable ASCII characters, no space. */
#define PTD_FRAME_NAME_MAX 64
/* Longest frame line (NUL included): a begin/end line with the longest
 * name, or a data line with the largest payload. */
#define PTD_FRAME_LINE_MAX 400

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, initial and final
 * value 0xFFFFFFFF, as zlib's crc32()). Incremental: start with crc = 0. */
uint32_t ptd_crc32(uint32_t crc, const void *data, size_t len);

enum ptd_frame_kind {
    PTD_FRAME_KIND_RAW = 0, /* any bytes: lines are cut every payload bytes */
    PTD_FRAME_KIND_PT = 1,  /* an Intel PT trace: lines are also cut at PSBs */
};

/* ---- encoder ------------------------------------------------------------------ */

struct ptd_frame_enc {
    const uint8_t *data;
    uint64_t size;
    uint64_t pos;      /* next byte to put on a data line */
    uint64_t next_psb; /* first PSB at or after pos (kind pt), or size */
    const char *name;
    uint32_t id;
    uint32_t seq; /* next data line's sequence number */
    uint32_t file_crc;
    uint32_t payload; /* bytes per full data line */
    uint8_t kind;
    uint8_t phase; /* internal: begin, data, end, done */
};

/* Sets up the encoding of one file: id (any number the receiver uses to tell
 * files apart within one dump), its name (kept by pointer; 1..NAME_MAX
 * characters, no spaces or control characters), its bytes (kept by pointer;
 * its CRC32 is computed here, one pass), the kind, and the payload bytes per
 * line (0 for the default). Returns 0, or -1 for a bad name or payload. */
int ptd_frame_enc_init(struct ptd_frame_enc *e, uint32_t id, const char *name, const uint8_t *data,
                       uint64_t size, enum ptd_frame_kind kind, uint32_t payload);
/* Writes whole lines (each ending in "\n") into buf[0..cap) while at least
 * PTD_FRAME_LINE_MAX bytes are left, and returns the bytes written; 0 once
 * the end line has been written (or cap < PTD_FRAME_LINE_MAX). */
size_t ptd_frame_enc_lines(struct ptd_frame_enc *e, char *buf, size_t cap);
/* Data lines the file takes (for reports); computed by walking the PSBs. */
uint32_t ptd_frame_enc_count(const struct ptd_frame_enc *e);

/* ---- parser ------------------------------------------------------------------- */

enum ptd_frame_type {
    PTD_FRAME_NONE = 0, /* not a frame line (no prefix) */
    PTD_FRAME_BEGIN,
    PTD_FRAME_DATA,
    PTD_FRAME_END,
    PTD_FRAME_CORRUPT, /* the prefix is there, the line is damaged */
};

/* Why a line is corrupt. */
enum ptd_frame_damage {
    PTD_FRAME_OK = 0,
    PTD_FRAME_BAD_CRC,    /* the line CRC does not match its text */
    PTD_FRAME_BAD_SYNTAX, /* fields missing, malformed or out of range */
};

struct ptd_frame_rec {
    enum ptd_frame_type type;
    enum ptd_frame_damage damage; /* PTD_FRAME_CORRUPT: why */
    /* A corrupt line's type letter ('B', 'D', 'E'; 0 when it is none of
     * them), id, seq and offset as they read, when they parse (hints: they
     * are not covered by a good CRC; seq and offset are read from a line of
     * type D or of unknown type). */
    bool hint_id, hint_seq, hint_offset;
    char hint_type;
    uint32_t id;
    uint32_t seq;                      /* D */
    uint64_t offset;                   /* D */
    bool psb;                          /* D: the payload starts at a PSB */
    uint32_t len;                      /* D: payload bytes */
    uint32_t lines;                    /* E */
    uint64_t size;                     /* B, E */
    uint32_t file_crc;                 /* B, E */
    uint8_t kind;                      /* B: enum ptd_frame_kind */
    char name[PTD_FRAME_NAME_MAX + 1]; /* B, E */
    uint8_t payload[PTD_FRAME_PAYLOAD_MAX];
};

/* Parses one line of a log (len bytes, no NUL needed; trailing CR/LF and
 * blanks are ignored) into *rec; returns rec->type. */
enum ptd_frame_type ptd_frame_parse(const char *line, size_t len, struct ptd_frame_rec *rec);

/* "pt" / "raw" for a kind; NULL for an unknown one. */
const char *ptd_frame_kind_name(unsigned kind);

#endif
