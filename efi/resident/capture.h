/* The resident tracer's capture seen by the app later in the same boot
 * (docs/resident.md): the header found through the configuration table
 * (PTBOOT_RESIDENT_GUID, UEFI 2.10 section 4.6), tracing stopped first if
 * still on, and the capture as the app's other commands take one: the
 * trace bytes, the sideband, and the code as a page dump (format/code_image.h
 * format: the target's snapshot and, for the hardware unit, every
 * recorded image still in memory). Used by `resident`, `dump --resident`,
 * `flow --resident` and `decode`. */
#ifndef PTBOOT_EFI_RESIDENT_CAPTURE_H
#define PTBOOT_EFI_RESIDENT_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <efi.h>

#include "efi/resident/resident.h"
#include "format/sideband.h"

struct resident_capture {
    const uint8_t *trace; /* the trace, from the buffer's start */
    size_t trace_len;
    uint8_t *code_dump;  /* pages * 4 KiB */
    uint64_t *code_addr; /* one address per page */
    size_t pages;
    EFI_PHYSICAL_ADDRESS mem; /* code_dump and code_addr */
    UINTN mem_pages;
};

/* The header of this boot's resident tracer, or NULL (none; a header of
 * another version is said). */
struct resident_header *resident_find(EFI_SYSTEM_TABLE *st);
/* Stops an armed or tracing driver through its stop function (saying so). */
void resident_stop_if_tracing(struct resident_header *h);
/* The trace and the code of h (who: the command, for messages). Returns
 * 0, or -1 after saying why (no memory). Free with resident_capture_close. */
int resident_capture_open(struct resident_capture *rc, const struct resident_header *h,
                          const char *who);
void resident_capture_close(struct resident_capture *rc);
/* Gives the #DB vector back to the app when this boot's resident tracer
 * (soft unit) holds it and its session is over; true when it did. While
 * it still traces it keeps the vector and says so (*said = true). For
 * struct efi_capture's db_release. */
bool resident_release_db(bool *said);
/* The driver's sideband text parsed into sb. Returns 0, or -1 after saying
 * why (none written, or not parsed). */
int resident_capture_sideband(const struct resident_header *h, struct sideband *sb,
                              const char *who);

#endif
