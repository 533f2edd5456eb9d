/* Progress on stderr: see progress.h. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "host/input_file.h"
#include "host/progress.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_start(struct progress *p, const char *what, uint64_t total)
{
    p->what = what;
    p->total = total;
    p->tty = isatty(2);
    p->shown = 0;
    p->calls = 0;
    p->input = NULL;
    p->input_base = 0;
    p->t0 = p->last = p->tty ? now() : 0;
}

void progress_update(struct progress *p, uint64_t done)
{
    if (p->input)
        input_file_done(p->input, p->input_base + done);
    if (!p->tty || (++p->calls & 63))
        return;
    double t = now();
    if (t - p->t0 < 1.0 || t - p->last < 0.2)
        return;
    p->last = t;
    p->shown = 1;
    unsigned pct = p->total ? (unsigned)(done * 100 / p->total) : 0;
    fprintf(stderr, "\r%s: %3u%% of %.1f MB, %.0f s", p->what, pct > 100 ? 100 : pct,
            (double)p->total / 1e6, t - p->t0);
    fflush(stderr);
}

void progress_end(struct progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
}

void progress_input(struct progress *p, struct input_file *in, uint64_t base)
{
    p->input = in;
    p->input_base = base;
}
