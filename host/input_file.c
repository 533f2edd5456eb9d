/* Large host inputs, mapped or read: see input_file.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/input_file.h"

/* input_file_done keeps this much behind the reader resident (a decoder
 * resynchronising or a summary's look back stays in memory) and gives the
 * rest back in steps of INPUT_RELEASE_STEP (few system calls). */
#define INPUT_KEEP_BEHIND  (16u << 20)
#define INPUT_RELEASE_STEP (32u << 20)

enum input_how input_file_how(void)
{
    const char *v = getenv("PTBOOT_INPUT");
    return v && !strcmp(v, "read") ? INPUT_READ : INPUT_MAP;
}

/* Everything a read() gives until it ends, in a growing buffer: files,
 * pipes, FIFOs, terminals alike. One zero byte after the data. */
static int read_all(struct input_file *f, int fd, const char *name, char *err, size_t errsize)
{
    size_t n = 0, cap = 1 << 16;
    struct stat st;
    uint8_t *b;

    /* a regular file's size is known: one buffer of that size (+1) */
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        cap = (size_t)st.st_size + 1;
    b = malloc(cap);
    for (;;) {
        if (!b) {
            snprintf(err, errsize, "cannot read %s: out of memory", name);
            return -1;
        }
        if (n + 1 >= cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
            continue;
        }
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errsize, "cannot read %s: %s", name, strerror(errno));
            free(b);
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    b[n] = 0;
    f->data = b;
    f->size = n;
    f->mapped = 0;
    return 0;
}

int input_file_from_fd(struct input_file *f, int fd, const char *name, enum input_how how,
                       char *err, size_t errsize)
{
    struct stat st;

    memset(f, 0, sizeof *f);
    if (fstat(fd, &st) != 0) {
        snprintf(err, errsize, "cannot read %s: %s", name, strerror(errno));
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errsize, "cannot read %s: is a directory", name);
        return -1;
    }
    /* an empty file has nothing to map (mmap refuses a length of 0) */
    if (how == INPUT_MAP && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (uint64_t)st.st_size <= (uint64_t)SIZE_MAX) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p != MAP_FAILED) {
            f->data = p;
            f->size = (size_t)st.st_size;
            f->mapped = 1;
            return 0;
        }
    }
    return read_all(f, fd, name, err, errsize);
}

int input_file_open(struct input_file *f, const char *path, enum input_how how, char *err,
                    size_t errsize)
{
    int fd = open(path, O_RDONLY);
    int rc;

    memset(f, 0, sizeof *f);
    if (fd < 0) {
        snprintf(err, errsize, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    rc = input_file_from_fd(f, fd, path, how, err, errsize);
    close(fd);
    return rc;
}

void input_file_close(struct input_file *f)
{
    if (f->mapped)
        munmap(f->data, f->size);
    else
        free(f->data);
    memset(f, 0, sizeof *f);
}

void input_file_done(struct input_file *f, uint64_t offset)
{
    if (!f->mapped || offset > f->size ||
        offset < (uint64_t)f->released + INPUT_KEEP_BEHIND + INPUT_RELEASE_STEP)
        return;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t upto = (size_t)(offset - INPUT_KEEP_BEHIND) & ~(page - 1);
    /* the pages were never written (PROT_READ): dropped, they are read
     * from the file again if touched */
    if (madvise(f->data + f->released, upto - f->released, MADV_DONTNEED) == 0)
        f->released = upto;
}
