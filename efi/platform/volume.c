#include <efi.h>
#include <efilib.h>

#include "efi/platform/volume.h"

#define VOLUME_PATH_MAX 256

static EFI_FILE_HANDLE open_root(EFI_HANDLE image)
{
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(BS->HandleProtocol(image, &LoadedImageProtocol, (void **)&li)) || !li)
        return NULL;
    return LibOpenRoot(li->DeviceHandle);
}

/* Opens path with mode and attributes; '/' is accepted for '\\'. */
static enum efi_volume_result open_mode(EFI_HANDLE image, const char *path, EFI_FILE_HANDLE *fh,
                                        UINT64 mode, UINT64 attrs)
{
    CHAR16 wpath[VOLUME_PATH_MAX];
    size_t n = 0;
    for (; path[n] && n + 1 < VOLUME_PATH_MAX; n++)
        wpath[n] = (CHAR16)(path[n] == '/' ? '\\' : path[n]);
    wpath[n] = 0;
    if (path[n])
        return PTB_VOLUME_NOT_FOUND; /* longer than any FAT path */

    EFI_FILE_HANDLE root = open_root(image);
    if (!root)
        return PTB_VOLUME_IO;
    EFI_STATUS s = root->Open(root, fh, wpath, mode, attrs);
    root->Close(root);
    if (s == EFI_NOT_FOUND)
        return PTB_VOLUME_NOT_FOUND;
    return EFI_ERROR(s) ? PTB_VOLUME_IO : PTB_VOLUME_OK;
}

static enum efi_volume_result open_file(EFI_HANDLE image, const char *path, EFI_FILE_HANDLE *fh)
{
    return open_mode(image, path, fh, EFI_FILE_MODE_READ, 0);
}

/* Opens path for reading and tells its size (gnu-efi's LibFileInfo
 * allocates the EFI_FILE_INFO from pool). */
static enum efi_volume_result open_sized(EFI_HANDLE image, const char *path, EFI_FILE_HANDLE *fh,
                                         UINT64 *size)
{
    enum efi_volume_result r = open_file(image, path, fh);
    if (r != PTB_VOLUME_OK)
        return r;
    EFI_FILE_INFO *info = LibFileInfo(*fh);
    if (!info) {
        (*fh)->Close(*fh);
        return PTB_VOLUME_IO;
    }
    *size = info->FileSize;
    FreePool(info);
    return PTB_VOLUME_OK;
}

enum efi_volume_result efi_volume_read(EFI_HANDLE image, const char *path, char *buf, size_t cap,
                                       size_t *len)
{
    *len = 0;
    if (cap == 0)
        return PTB_VOLUME_TOO_LARGE;
    buf[0] = '\0';
    EFI_FILE_HANDLE fh = NULL;
    enum efi_volume_result opened = open_file(image, path, &fh);
    if (opened != PTB_VOLUME_OK)
        return opened;

    EFI_STATUS s;
    enum efi_volume_result r = PTB_VOLUME_OK;
    size_t total = 0;
    for (;;) {
        UINTN chunk = cap - 1 - total;
        if (chunk == 0) {
            /* Full: one more byte would mean the file does not fit. */
            char probe;
            UINTN one = 1;
            if (!EFI_ERROR(fh->Read(fh, &one, &probe)) && one)
                r = PTB_VOLUME_TOO_LARGE;
            break;
        }
        s = fh->Read(fh, &chunk, buf + total);
        if (EFI_ERROR(s)) {
            r = PTB_VOLUME_IO;
            break;
        }
        if (chunk == 0)
            break;
        total += chunk;
    }
    fh->Close(fh);
    buf[total] = '\0';
    *len = total;
    return r;
}

#define PAGE_BYTES 4096

enum efi_volume_result efi_volume_load(EFI_HANDLE image, const char *path, size_t max, void **data,
                                       size_t *len)
{
    *data = NULL;
    *len = 0;
    EFI_FILE_HANDLE fh = NULL;
    UINT64 size;
    enum efi_volume_result r = open_sized(image, path, &fh, &size);
    if (r != PTB_VOLUME_OK)
        return r;
    if (size > max) {
        fh->Close(fh);
        return PTB_VOLUME_TOO_LARGE;
    }
    EFI_PHYSICAL_ADDRESS addr = 0;
    UINTN pages = (UINTN)((size + PAGE_BYTES - 1) / PAGE_BYTES);
    if (pages == 0)
        pages = 1;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &addr))) {
        fh->Close(fh);
        return PTB_VOLUME_NO_MEMORY;
    }
    UINT8 *buf = (UINT8 *)(UINTN)addr;
    UINT64 done = 0;
    while (done < size) {
        UINTN chunk = (UINTN)(size - done);
        if (EFI_ERROR(fh->Read(fh, &chunk, buf + done)) || chunk == 0) {
            r = PTB_VOLUME_IO;
            break;
        }
        done += chunk;
    }
    fh->Close(fh);
    if (r != PTB_VOLUME_OK) {
        BS->FreePages(addr, pages);
        return r;
    }
    *data = buf;
    *len = (size_t)size;
    return PTB_VOLUME_OK;
}

void efi_volume_free(void *data, size_t len)
{
    if (!data)
        return;
    UINTN pages = (UINTN)((len + PAGE_BYTES - 1) / PAGE_BYTES);
    BS->FreePages((EFI_PHYSICAL_ADDRESS)(UINTN)data, pages ? pages : 1);
}

const char *efi_volume_result_name(enum efi_volume_result r)
{
    switch (r) {
    case PTB_VOLUME_OK: return "ok";
    case PTB_VOLUME_NOT_FOUND: return "not found";
    case PTB_VOLUME_TOO_LARGE: return "too large";
    case PTB_VOLUME_IO: return "i/o error";
    case PTB_VOLUME_NO_MEMORY: return "out of memory";
    case PTB_VOLUME_BAD_INPUT: return "inconsistent input";
    case PTB_VOLUME_FULL: return "volume full";
    case PTB_VOLUME_MISMATCH: return "read back differs";
    }
    return "?";
}

/* ---- writing ------------------------------------------------------------ */

#define MODE_RW_CREATE (EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE | EFI_FILE_MODE_CREATE)

int efi_volume_exists(EFI_HANDLE image, const char *path)
{
    EFI_FILE_HANDLE fh = NULL;
    enum efi_volume_result r = open_file(image, path, &fh);
    if (r == PTB_VOLUME_OK) {
        fh->Close(fh);
        return 1;
    }
    return r == PTB_VOLUME_NOT_FOUND ? 0 : (int)r;
}

enum efi_volume_result efi_volume_mkdir(EFI_HANDLE image, const char *path)
{
    EFI_FILE_HANDLE fh = NULL;
    /* With EFI_FILE_MODE_CREATE, Open opens an existing directory as is
     * (UEFI 2.10 13.5, EFI_FILE_PROTOCOL.Open: "if the file exists, it is
     * opened"); an existing plain file of that name is an error for us. */
    enum efi_volume_result r = open_mode(image, path, &fh, MODE_RW_CREATE, EFI_FILE_DIRECTORY);
    if (r != PTB_VOLUME_OK)
        return r == PTB_VOLUME_NOT_FOUND ? PTB_VOLUME_IO : r;
    EFI_FILE_INFO *info = LibFileInfo(fh);
    int is_dir = info && (info->Attribute & EFI_FILE_DIRECTORY);
    if (info)
        FreePool(info);
    fh->Close(fh);
    return is_dir ? PTB_VOLUME_OK : PTB_VOLUME_IO;
}

enum efi_volume_result efi_volume_create(EFI_HANDLE image, const char *path,
                                         struct efi_volume_file *f)
{
    f->fh = NULL;
    f->written = 0;
    f->status = PTB_VOLUME_OK;
    EFI_FILE_HANDLE fh = NULL;
    /* Open never truncates: an old file of that name is deleted first
     * (Delete also closes the handle), then created anew. */
    enum efi_volume_result r = open_mode(image, path, &fh, MODE_RW_CREATE, 0);
    if (r != PTB_VOLUME_OK)
        return f->status = (r == PTB_VOLUME_NOT_FOUND ? PTB_VOLUME_IO : r);
    EFI_FILE_INFO *info = LibFileInfo(fh);
    int old = info && info->FileSize > 0;
    int dir = info && (info->Attribute & EFI_FILE_DIRECTORY);
    if (info)
        FreePool(info);
    if (dir) {
        fh->Close(fh);
        return f->status = PTB_VOLUME_IO;
    }
    if (old) {
        if (EFI_ERROR(fh->Delete(fh)))
            return f->status = PTB_VOLUME_IO;
        r = open_mode(image, path, &fh, MODE_RW_CREATE, 0);
        if (r != PTB_VOLUME_OK)
            return f->status = PTB_VOLUME_IO;
    }
    f->fh = fh;
    return PTB_VOLUME_OK;
}

/* Large writes go in chunks: some FAT drivers handle very large single
 * writes poorly, and a chunk bounds what one failed call loses. */
#define WRITE_CHUNK (1u << 20)

enum efi_volume_result efi_volume_append(struct efi_volume_file *f, const void *data, size_t len)
{
    const UINT8 *p = data;
    if (!f->fh || f->status != PTB_VOLUME_OK)
        return f->status != PTB_VOLUME_OK ? f->status : PTB_VOLUME_IO;
    while (len) {
        UINTN n = len < WRITE_CHUNK ? len : WRITE_CHUNK;
        UINTN asked = n;
        EFI_STATUS s = f->fh->Write(f->fh, &n, (void *)p);
        /* EFI_FILE_PROTOCOL.Write (UEFI 2.10 13.5.8): EFI_VOLUME_FULL, or
         * fewer bytes written than asked, means the volume has no room */
        if (s == EFI_VOLUME_FULL || (!EFI_ERROR(s) && n != asked))
            return f->status = PTB_VOLUME_FULL;
        if (EFI_ERROR(s))
            return f->status = PTB_VOLUME_IO;
        p += n;
        len -= n;
        f->written += n;
    }
    return PTB_VOLUME_OK;
}

enum efi_volume_result efi_volume_close(struct efi_volume_file *f)
{
    if (f->fh) {
        EFI_STATUS s = f->fh->Flush(f->fh);
        if (EFI_ERROR(s) && f->status == PTB_VOLUME_OK)
            f->status = s == EFI_VOLUME_FULL ? PTB_VOLUME_FULL : PTB_VOLUME_IO;
        if (EFI_ERROR(f->fh->Close(f->fh)) && f->status == PTB_VOLUME_OK)
            f->status = PTB_VOLUME_IO;
        f->fh = NULL;
    }
    return f->status;
}

enum efi_volume_result efi_volume_write(EFI_HANDLE image, const char *path, const void *data,
                                        size_t len)
{
    struct efi_volume_file f;
    if (efi_volume_create(image, path, &f) != PTB_VOLUME_OK)
        return efi_volume_close(&f);
    efi_volume_append(&f, data, len);
    return efi_volume_close(&f);
}

enum efi_volume_result efi_volume_delete(EFI_HANDLE image, const char *path)
{
    EFI_FILE_HANDLE fh = NULL;
    enum efi_volume_result r =
        open_mode(image, path, &fh, EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE, 0);
    if (r == PTB_VOLUME_NOT_FOUND)
        return PTB_VOLUME_OK;
    if (r != PTB_VOLUME_OK)
        return r;
    /* Delete closes the handle, also when it fails (UEFI 2.10 13.5.7) */
    return EFI_ERROR(fh->Delete(fh)) ? PTB_VOLUME_IO : PTB_VOLUME_OK;
}

enum efi_volume_result efi_volume_space(EFI_HANDLE image, struct efi_volume_space *sp)
{
    sp->free_bytes = sp->size_bytes = 0;
    sp->block_bytes = 512;
    EFI_FILE_HANDLE root = open_root(image);
    if (!root)
        return PTB_VOLUME_IO;
    /* gnu-efi's LibFileSystemInfo allocates the EFI_FILE_SYSTEM_INFO from pool */
    EFI_FILE_SYSTEM_INFO *info = LibFileSystemInfo(root);
    root->Close(root);
    if (!info)
        return PTB_VOLUME_IO;
    sp->free_bytes = info->FreeSpace;
    sp->size_bytes = info->VolumeSize;
    if (info->BlockSize)
        sp->block_bytes = info->BlockSize;
    FreePool(info);
    return PTB_VOLUME_OK;
}

unsigned long long efi_volume_file_cost(const struct efi_volume_space *sp, unsigned long long len)
{
    unsigned long long b = sp->block_bytes ? sp->block_bytes : 512;
    unsigned long long blocks = (len + b - 1) / b;
    return (blocks ? blocks : 1) * b;
}

#define READ_CHUNK (64u << 10)

enum efi_volume_result efi_volume_read_each(EFI_HANDLE image, const char *path,
                                            void (*fn)(void *ctx, const void *data, size_t len),
                                            void *ctx, unsigned long long *size)
{
    *size = 0;
    EFI_FILE_HANDLE fh = NULL;
    UINT64 file_size;
    enum efi_volume_result r = open_sized(image, path, &fh, &file_size);
    if (r != PTB_VOLUME_OK)
        return r;
    *size = file_size;
    EFI_PHYSICAL_ADDRESS mem = 0;
    if (EFI_ERROR(
            BS->AllocatePages(AllocateAnyPages, EfiLoaderData, READ_CHUNK / PAGE_BYTES, &mem))) {
        fh->Close(fh);
        return PTB_VOLUME_NO_MEMORY;
    }
    UINT8 *buf = (UINT8 *)(UINTN)mem;
    for (;;) {
        UINTN n = READ_CHUNK;
        if (EFI_ERROR(fh->Read(fh, &n, buf))) {
            r = PTB_VOLUME_IO;
            break;
        }
        if (n == 0)
            break;
        fn(ctx, buf, n);
    }
    BS->FreePages(mem, READ_CHUNK / PAGE_BYTES);
    fh->Close(fh);
    return r;
}
