/* Large host inputs (traces, page dumps, --raw/--elf files, serial logs):
 * the file's bytes in memory without a copy where the file can be mapped,
 * read into memory where it cannot (pipes, FIFOs, /dev/stdin, terminals),
 * with the same bytes either way. The one mapping helper of the host
 * tools: flow_image's page dumps and raw files, every command's trace and
 * ptboot serial's log go through it (docs/performance.md, "Large inputs").
 *
 * A mapping is private and read-only: its pages are read from the file as
 * the decoder touches them and are page cache, not the process's own
 * memory; nothing is zeroed or copied first. */
#ifndef HOST_INPUT_FILE_H
#define HOST_INPUT_FILE_H

#include <stddef.h>
#include <stdint.h>

struct input_file {
    uint8_t *data; /* the bytes (read-only when mapped) */
    size_t size;
    int mapped;      /* 1 a mapping, 0 a malloc'd buffer */
    size_t released; /* bytes at the start given back (input_file_done) */
};

/* How the bytes are had: map where possible, or read always (the fallback,
 * chosen by tests to compare the two and by callers that keep the buffer). */
enum input_how {
    INPUT_MAP,
    INPUT_READ
};

/* 0, or -1 with err "cannot open PATH: why" / "cannot read PATH: why".
 * A read buffer has one byte more, zero, after the data (text parsers). */
int input_file_open(struct input_file *f, const char *path, enum input_how how, char *err,
                    size_t errsize);
/* The same from an open descriptor (not closed; "-" for standard input
 * is the caller's word); name is used in messages. */
int input_file_from_fd(struct input_file *f, int fd, const char *name, enum input_how how,
                       char *err, size_t errsize);
void input_file_close(struct input_file *f);

/* A sequential reader is past offset: the mapped pages well behind it go
 * back to the page cache, so a whole trace decoded once costs a window of
 * resident memory, not its size. Cheap to call at every step; harmless on
 * a read buffer (kept) and when the reader goes back (pages read again). */
void input_file_done(struct input_file *f, uint64_t offset);

/* INPUT_MAP unless PTBOOT_INPUT=read is set in the environment: the read
 * path on every input, for tests that compare the two. */
enum input_how input_file_how(void);

#endif
