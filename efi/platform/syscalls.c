/* newlib's system calls for the UEFI app. newlib for x86_64-elf calls them
 * without a leading underscore (except _exit). There is no file descriptor
 * layer: stdout and stderr go to the console, everything else fails with the
 * errno a POSIX system would give. Files on the stick are read through UEFI
 * protocols (efi/platform/volume.c), not through stdio. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "efi/platform/console.h"
#include "efi/platform/syscalls.h"

#undef errno
extern int errno;

/* Prototypes for newlib's syscall names (it has no header for them). */
void *sbrk(ptrdiff_t incr);
int write(int fd, const void *buf, size_t len);
int read(int fd, void *buf, size_t len);
int close(int fd);
off_t lseek(int fd, off_t off, int whence);
int fstat(int fd, struct stat *st);
int isatty(int fd);
int getpid(void);
int kill(int pid, int sig);
void _exit(int status);

static unsigned sbrk_calls;

unsigned efi_sbrk_calls(void)
{
    return sbrk_calls;
}

/* Every stdio function links malloc, so sbrk must exist; it never grants
 * memory. Buffers come from the stack, from fixed arrays, or from UEFI's
 * AllocatePages where a command needs a trace buffer. */
void *sbrk(ptrdiff_t incr)
{
    (void)incr;
    sbrk_calls++;
    errno = ENOMEM;
    return (void *)-1;
}

int write(int fd, const void *buf, size_t len)
{
    if (fd != 1 && fd != 2) {
        errno = EBADF;
        return -1;
    }
    efi_con_write(buf, len);
    return (int)len;
}

int read(int fd, void *buf, size_t len)
{
    (void)fd;
    (void)buf;
    (void)len;
    errno = EBADF;
    return -1;
}

int close(int fd)
{
    (void)fd;
    errno = EBADF;
    return -1;
}

off_t lseek(int fd, off_t off, int whence)
{
    (void)fd;
    (void)off;
    (void)whence;
    errno = ESPIPE;
    return -1;
}

int fstat(int fd, struct stat *st)
{
    if (fd < 0 || fd > 2) {
        errno = EBADF;
        return -1;
    }
    st->st_mode = S_IFCHR; /* character device: newlib line-buffers it */
    return 0;
}

int isatty(int fd)
{
    return fd >= 0 && fd <= 2;
}

int getpid(void)
{
    return 1;
}

int kill(int pid, int sig)
{
    (void)pid;
    (void)sig;
    errno = EINVAL;
    return -1;
}

/* exit()/abort() inside the app: nothing sensible to return to from deep
 * inside, so say so and stop the CPU rather than run on in a broken state. */
void _exit(int status)
{
    efi_con_printf("\nptboot: _exit(%d) called; halting\n", status);
    efi_con_flush();
    for (;;)
        __asm__ volatile("cli; hlt");
}
