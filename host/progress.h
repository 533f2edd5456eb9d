/* Progress on stderr for host commands that run longer than a second:
 * "ptboot export: 42% of 266 MB" rewritten in place, only when stderr is a
 * terminal (a log or a pipe gets nothing), first shown after one second,
 * at most five times a second, and erased at the end. */
#ifndef HOST_PROGRESS_H
#define HOST_PROGRESS_H

#include <stdint.h>

struct input_file;

struct progress {
    const char *what;
    uint64_t total;
    double t0, last;
    int tty, shown;
    uint32_t calls;
    struct input_file *input; /* progress_input's: released behind done */
    uint64_t input_base;
};

void progress_start(struct progress *p, const char *what, uint64_t total);
/* done of total so far; cheap enough to call every few thousand steps */
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);
/* done counts bytes of in from base on: progress_update gives the mapped
 * pages well behind it back (input_file_done), so a long decode's resident
 * memory stays a window of its trace, terminal or not. */
void progress_input(struct progress *p, struct input_file *in, uint64_t base);

#endif
