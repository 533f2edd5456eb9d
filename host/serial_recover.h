/* The in-memory part of `ptboot serial` (host/cmd_serial.c): a serial log
 * split into the files of its dumps (decoder/ptd_frame.h, docs/serial.md),
 * each file's lost and damaged lines found and reported, what survives
 * assembled and written. Separate from the CLI so that the fuzz target
 * (test/fuzz/fuzz_frame.c) runs exactly this code on arbitrary logs.
 *
 * Memory is proportional to the log, whatever the lines claim: data lines
 * are kept in arrival order with their payload in one pool, sorted by
 * sequence number at the end, and files are assembled per written part. */
#ifndef PTBOOT_HOST_SERIAL_RECOVER_H
#define PTBOOT_HOST_SERIAL_RECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder/ptd_frame.h"
#include "format/manifest.h"
#include "host/serial_join.h"

#define SERIAL_MAX_FILE (1ull << 32)
/* --quiet: report lines per file (and for the log) before the rest are
 * only counted */
#define SERIAL_QUIET_LINES 16
/* segments written per trace by default (--max-segments) */
#define SERIAL_MAX_SEGMENTS 64

struct sline { /* a data line that arrived intact */
    uint32_t seq, len;
    uint64_t off;
    size_t pool; /* its payload: pool[pool .. pool + len) */
    size_t log_line;
    bool psb;
};

struct sdamage { /* a damaged frame line, to be attributed */
    size_t log_line;
    enum ptd_frame_damage damage;
    char type; /* 'B', 'D', 'E' or 0 (unknown) */
    bool has_seq, has_off;
    uint32_t seq;
    uint64_t off;
    bool used;
    uint32_t at; /* the lost line it was attributed to */
};

struct sfile {
    uint32_t id;
    bool have_begin, have_end;
    struct ptd_frame_rec begin, end; /* payload unused */
    size_t begin_log, end_log;
    struct sline *lines; /* arrival order; sorted by seq in finish_file */
    size_t nlines, lines_cap;
    uint8_t *pool;
    size_t pool_len, pool_cap;
    uint32_t max_seq_plus1;
    uint64_t extent;     /* max off + len seen */
    uint32_t maxlen;     /* longest data line seen (a full line) */
    struct sdamage *dmg; /* in log order */
    size_t ndmg, dmg_cap;
    unsigned dump;                          /* which dump of the log (1, 2, ...), see new_file */
    char base[PTD_FRAME_NAME_MAX + 1];      /* the name in the dump, made safe */
    size_t sub_len;                         /* out_name's "dump<k>/" prefix (0: in DIR itself) */
    char out_name[PTD_FRAME_NAME_MAX + 48]; /* path under DIR */
    bool whole;                             /* written as DIR/out_name, CRC checked */
    uint64_t size;                          /* its size (as far as known) */
    uint32_t crc;                           /* its CRC-32 from the begin or end line */
    char why[MANIFEST_WHY_MAX];             /* not whole: what was lost, for the manifest */
    char **segs;                            /* paths of the segments written (incomplete pt) */
    size_t nsegs, segs_cap;
    size_t said, hidden; /* report lines printed, and held back by --quiet */
    size_t ngood;        /* lines[0 .. ngood): the sorted lines that belong */
    bool rebuilt;        /* incomplete, but rebuilt from what came (serial_repair.h) */
};

/* A run of bytes of a file that came (from its good lines). */
struct serial_range {
    uint64_t off, len;
};

struct serial_ctx {
    const char *prog;
    const char *dir; /* NULL: a dry run, reports only (nothing written) */
    bool quiet;
    bool force;          /* overwrite files in dir (else an existing one is kept) */
    size_t max_segments; /* per trace (0: no limit) */
    size_t said, hidden; /* report lines about the log (not a file) */
    size_t not_written;  /* files that could not be written (said) */
    size_t kept;         /* of them, because they exist (no --force) */
    struct sfile *files;
    size_t nfiles, cap;
    size_t written;                /* files and segments written */
    unsigned ndumps;               /* dumps in the log (files grouped by new_file) */
    bool marker;                   /* a "serial-dump begin" line since the last new file */
    bool split;                    /* a name in more than one dump: dump k>=2 in DIR/dump<k>/ */
    size_t duplicates;             /* frame lines seen twice (same id, fields, CRC): dropped */
    struct serial_join_stats join; /* frame lines joined from pieces */
};

/* Takes every line of a log (size bytes of text; lines end at LF or at a
 * lone CR, log line numbers count LFs) into c->files. */
void host_serial_take_log(struct serial_ctx *c, const uint8_t *text, size_t size);
/* Reports and writes every file (into c->dir, the k-th dump's into
 * c->dir/dump<k> when c->split; with dir NULL only the reports, on stdout);
 * returns how many came back whole. */
size_t host_serial_finish(struct serial_ctx *c);
/* A new file DIR/... for writing (an existing one only with c->force,
 * else kept and said); NULL after saying why (counted in not_written). */
FILE *host_serial_create(struct serial_ctx *c, const char *path);
/* After host_serial_finish: the runs of bytes of f that came, merged, in
 * order (*out malloc'd), and f's bytes (f->size of them, malloc'd) with
 * the lost ones as zeros. */
size_t host_serial_ranges(const struct sfile *f, struct serial_range **out);
uint8_t *host_serial_bytes(const struct sfile *f);
/* Frees what take_log and finish allocated (c->files and theirs). */
void host_serial_free(struct serial_ctx *c);

#endif
