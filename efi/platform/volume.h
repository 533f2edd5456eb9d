/* Files on the volume the app was loaded from (the USB stick). */
#ifndef PTBOOT_EFI_PLATFORM_VOLUME_H
#define PTBOOT_EFI_PLATFORM_VOLUME_H

#include <stddef.h>
#include <efi.h>

enum efi_volume_result {
    PTB_VOLUME_OK = 0,
    PTB_VOLUME_NOT_FOUND = -1, /* no such file */
    PTB_VOLUME_TOO_LARGE = -2, /* file larger than the buffer */
    PTB_VOLUME_IO = -3,        /* no file system, or a read failed */
    PTB_VOLUME_NO_MEMORY = -4, /* AllocatePages failed */
    PTB_VOLUME_BAD_INPUT = -5, /* what to write does not hold together */
    PTB_VOLUME_FULL = -6,      /* EFI_VOLUME_FULL: no room left on the volume */
    PTB_VOLUME_MISMATCH = -7,  /* read back, a file differs from what was written */
};

/* Reads the whole of path (UEFI form, e.g. "\\ptboot.cfg") into buf, NUL
 * terminated, so buf must hold the file plus one byte. */
enum efi_volume_result efi_volume_read(EFI_HANDLE image, const char *path, char *buf, size_t cap,
                                       size_t *len);
/* Loads the whole of path into fresh pages from the firmware
 * (AllocatePages, EfiLoaderData: never newlib's heap). Fails with
 * PTB_VOLUME_TOO_LARGE above max bytes, PTB_VOLUME_NO_MEMORY if the
 * firmware has no room. Release with efi_volume_free(). */
enum efi_volume_result efi_volume_load(EFI_HANDLE image, const char *path, size_t max, void **data,
                                       size_t *len);
void efi_volume_free(void *data, size_t len);
const char *efi_volume_result_name(enum efi_volume_result r);

/* ---- writing (capture files, docs/capture-files.md) ----------------------
 * Paths are UEFI form on the app's own volume ('/' is accepted for '\\').
 * Simple File System protocol, UEFI 2.10 section 13.5 (EFI_FILE_PROTOCOL
 * Open with EFI_FILE_MODE_CREATE, Write, Flush, Delete). */

/* Creates the directory path unless it exists (as a directory). */
enum efi_volume_result efi_volume_mkdir(EFI_HANDLE image, const char *path);
/* 1 if path exists (file or directory), 0 if not, <0 on i/o error. */
int efi_volume_exists(EFI_HANDLE image, const char *path);

/* A file being written: created empty (an existing file of that name is
 * replaced), then appended to, then closed (flushed). */
struct efi_volume_file {
    EFI_FILE_HANDLE fh;
    unsigned long long written;
    enum efi_volume_result status; /* first error, kept until close */
};
enum efi_volume_result efi_volume_create(EFI_HANDLE image, const char *path,
                                         struct efi_volume_file *f);
enum efi_volume_result efi_volume_append(struct efi_volume_file *f, const void *data, size_t len);
/* Flushes and closes; returns the first error of the file's life. */
enum efi_volume_result efi_volume_close(struct efi_volume_file *f);
/* The three in one for a file held whole in memory. */
enum efi_volume_result efi_volume_write(EFI_HANDLE image, const char *path, const void *data,
                                        size_t len);
/* Deletes path (a file); PTB_VOLUME_OK also when it was not there. */
enum efi_volume_result efi_volume_delete(EFI_HANDLE image, const char *path);

/* The volume's free bytes and the unit files grow by (FAT: the cluster),
 * from EFI_FILE_SYSTEM_INFO (UEFI 2.10 13.5.16). */
struct efi_volume_space {
    unsigned long long free_bytes, size_bytes, block_bytes;
};
enum efi_volume_result efi_volume_space(EFI_HANDLE image, struct efi_volume_space *sp);
/* The bytes a file of len bytes takes on the volume: len rounded up to
 * whole blocks (at least one block for an empty file's entry). */
unsigned long long efi_volume_file_cost(const struct efi_volume_space *sp, unsigned long long len);

/* Reads path back from the volume in chunks, handing each to fn (e.g. a
 * CRC), and its size (EFI_FILE_INFO.FileSize) to *size. */
enum efi_volume_result efi_volume_read_each(EFI_HANDLE image, const char *path,
                                            void (*fn)(void *ctx, const void *data, size_t len),
                                            void *ctx, unsigned long long *size);

#endif
