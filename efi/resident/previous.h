/* The previous boot's hang recorder at the next installed boot
 * (docs/hang.md): the driver, before it places its own recorder (at the
 * same address, with --recorder-at), looks for the one the variable
 * PtbootRecorder names, reads it back (efi/resident/recover.h), reports
 * it over COM1 (what was found, the summaries, the recover line), and
 * keeps a copy in boot-services memory for `ptboot.efi recover` later in
 * this boot, published in the configuration table under
 * PTBOOT_RECORDER_KEPT_GUID (struct resident_kept), since its own place is
 * about to hold this boot's trace. */
#ifndef PTBOOT_EFI_RESIDENT_PREVIOUS_H
#define PTBOOT_EFI_RESIDENT_PREVIOUS_H

#include <stdbool.h>
#include <stdint.h>
#include <efi.h>

/* 0bbb006e-cfa7-457a-b9da-161519502b90 */
#define PTBOOT_RECORDER_KEPT_GUID_INIT                     \
    {                                                      \
        0x0bbb006e, 0xcfa7, 0x457a,                        \
        {                                                  \
            0xb9, 0xda, 0x16, 0x15, 0x19, 0x50, 0x2b, 0x90 \
        }                                                  \
    }
#define RESIDENT_KEPT_MAGIC 0x5450454b43455250ull /* "PRECKEPT" */

struct resident_kept {
    uint64_t magic;
    uint64_t phys;       /* where the recorder was written (its header says so) */
    uint64_t copy;       /* the copy's address (EfiBootServicesData) */
    uint64_t bytes;      /* of the region and of the copy */
    uint64_t self_pages; /* pages of this struct's own allocation */
    int64_t msr_pos;     /* hw: the RTIT pointers' position the driver read
                            * before its own start reprogrammed them, -1 */
};

/* The driver at load: arena for the summaries (EBS_REPORT_SUM_ARENA
 * bytes, NULL: none). Reports over COM1; says nothing when there is no
 * variable. */
void resident_previous(void *arena);
/* The kept copy of this boot, or NULL. */
struct resident_kept *resident_kept_find(EFI_SYSTEM_TABLE *st);
/* Frees the copy and removes the table entry. */
void resident_kept_release(struct resident_kept *k);

/* Where the region [phys, phys + bytes) can be read now: 1 all of it is
 * RAM in this boot's map, 0 all of it is outside the map, -1 neither
 * (part of it is MMIO, reserved or absent: not read). */
int resident_region_readable(uint64_t phys, uint64_t bytes);

#endif
