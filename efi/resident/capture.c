#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/console.h"
#include "efi/resident/capture.h"
#include "efi/resident/report.h"
#include "format/code_image.h"

#define PAGE_BYTES 4096ull
/* At most this much code goes into a capture's page dump. */
#define CAPTURE_MAX_CODE_BYTES (64ull << 20)

struct resident_header *resident_find(EFI_SYSTEM_TABLE *st)
{
    EFI_GUID guid = PTBOOT_RESIDENT_GUID_INIT;
    for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];
        if (!CompareGuid(&t->VendorGuid, &guid)) {
            struct resident_header *h = t->VendorTable;
            if (h && h->magic == RESIDENT_MAGIC && h->version == RESIDENT_VERSION &&
                h->header_bytes == sizeof *h)
                return h;
            efi_con_puts("ptboot: error: resident: the table has a header of another version\n");
            return NULL;
        }
    }
    return NULL;
}

void resident_stop_if_tracing(struct resident_header *h)
{
    if ((h->state == RESIDENT_ARMED || h->state == RESIDENT_TRACING) && h->stop) {
        h->stop(h);
        efi_con_printf("ptboot: resident stopped state=%s reason=%s\n",
                       resident_state_name(h->state), resident_stop_reason_name(h->stop_reason));
    }
}

/* An image row whose memory still holds that image: its PE headers say
 * the same size (an unloaded application's pages are freed and reused). */
static bool still_loaded(const struct resident_image *im)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)im->base;
    if (!im->base || im->size < 0x40 || p[0] != 'M' || p[1] != 'Z')
        return false;
    uint32_t lfanew, size_of_image;
    memcpy(&lfanew, p + 0x3c, 4);
    if ((uint64_t)lfanew + 24 + 60 > im->size || memcmp(p + lfanew, "PE\0\0", 4))
        return false;
    /* SizeOfImage: optional header + 56 (PE format) */
    memcpy(&size_of_image, p + lfanew + 24 + 56, 4);
    return size_of_image == im->size;
}

/* Appends [lo, lo + bytes) (page aligned) from src to the code dump,
 * each page once. */
static void add_pages(struct code_dump *d, uint64_t lo, const uint8_t *src, uint64_t bytes)
{
    for (uint64_t off = 0; off < bytes && d->count < d->cap; off += PAGE_BYTES)
        if (code_dump_find(d, lo + off) == d->count)
            code_dump_add(d, lo + off, src + off);
}

int resident_capture_open(struct resident_capture *rc, const struct resident_header *h,
                          const char *who)
{
    memset(rc, 0, sizeof *rc);
    resident_trace_bytes(h, &rc->trace, &rc->trace_len);
    /* the code: a --follow session's pages (efi/resident/touched.h), the
     * target's snapshot, then (hw) live images */
    uint64_t want =
        (uint64_t)h->code_pages * PAGE_BYTES + (h->snapshot_taken ? h->snapshot_bytes : 0);
    uint32_t n = h->image_count < RESIDENT_IMAGES_MAX ? h->image_count : RESIDENT_IMAGES_MAX;
    if (h->unit == RESIDENT_UNIT_HW)
        for (uint32_t i = 0; i < n; i++)
            want += (h->images[i].size + 2 * PAGE_BYTES) & ~(PAGE_BYTES - 1);
    if (want > CAPTURE_MAX_CODE_BYTES)
        want = CAPTURE_MAX_CODE_BYTES;
    size_t cap = (size_t)(want / PAGE_BYTES);
    if (!cap)
        return 0;
    rc->mem_pages = cap + (cap * sizeof(uint64_t) + PAGE_BYTES - 1) / PAGE_BYTES;
    if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, rc->mem_pages, &rc->mem))) {
        efi_con_printf("ptboot: error: %s: no memory for the resident capture's code\n", who);
        rc->mem_pages = 0;
        return -1;
    }
    rc->code_dump = (uint8_t *)(uintptr_t)rc->mem;
    rc->code_addr = (uint64_t *)(uintptr_t)(rc->mem + cap * PAGE_BYTES);
    struct code_dump d;
    code_dump_init(&d, rc->code_dump, rc->code_addr, cap);
    const uint64_t *followed = (const uint64_t *)(uintptr_t)h->code_addr;
    for (uint32_t i = 0; i < h->code_pages; i++)
        add_pages(&d, followed[i],
                  (const uint8_t *)(uintptr_t)h->code_dump + (uint64_t)i * PAGE_BYTES, PAGE_BYTES);
    if (h->snapshot_taken)
        add_pages(&d, h->target.base & ~(PAGE_BYTES - 1), (const uint8_t *)(uintptr_t)h->snapshot,
                  h->snapshot_bytes);
    if (h->unit == RESIDENT_UNIT_HW)
        for (uint32_t i = 0; i < n; i++) {
            const struct resident_image *im = &h->images[i];
            if (!still_loaded(im))
                continue;
            uint64_t lo = im->base & ~(PAGE_BYTES - 1);
            uint64_t bytes = (im->base + im->size - lo + PAGE_BYTES - 1) & ~(PAGE_BYTES - 1);
            add_pages(&d, lo, (const uint8_t *)(uintptr_t)lo, bytes);
        }
    rc->pages = d.count;
    return 0;
}

void resident_capture_close(struct resident_capture *rc)
{
    if (rc->mem_pages)
        BS->FreePages(rc->mem, rc->mem_pages);
    memset(rc, 0, sizeof *rc);
}

int resident_capture_sideband(const struct resident_header *h, struct sideband *sb, const char *who)
{
    struct sideband_error serr;
    if (!h->sideband_text_bytes || sideband_parse(sb, (const char *)(uintptr_t)h->sideband_text,
                                                  h->sideband_text_bytes, &serr)) {
        efi_con_printf("ptboot: error: %s: no sideband from the resident driver\n", who);
        return -1;
    }
    return 0;
}

/* The #DB vector for another user (the app's `trace --unit soft`): the
 * resident tracer of this boot (a soft driver, efi/resident/resident.h)
 * holds it from its start; once its session is over (stopped, or it
 * failed) its stop function gives the vector back (that function runs in
 * the driver's image, with boot services). While it is armed or tracing
 * the vector stays its own: said (*said), with the way out. */
bool resident_release_db(bool *said)
{
    struct resident_header *h = resident_find(ST);
    if (!h || h->unit != RESIDENT_UNIT_SOFT || !h->stop)
        return false;
    if (h->state == RESIDENT_ARMED || h->state == RESIDENT_TRACING) {
        efi_con_printf(
            "ptboot: error: trace: soft unit: the resident tracer of this boot holds the #DB "
            "vector (state=%s image=%s): `resident stop` ends its trace and frees it\n",
            resident_state_name(h->state), h->image_filter);
        *said = true;
        return false;
    }
    h->stop(h);
    efi_con_printf("ptboot: trace: note: the resident tracer (state=%s) gave the #DB vector back\n",
                   resident_state_name(h->state));
    return true;
}
