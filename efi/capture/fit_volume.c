/* The capture's files fitted to the boot volume before tracing: see
 * fit_volume.h. */
#include <stdio.h>
#include <efi.h>
#include <efilib.h>

#include "efi/capture/files.h"
#include "efi/capture/fit_volume.h"
#include "efi/platform/console.h"
#include "efi/platform/volume.h"
#include "format/code_image.h"

/* Room the sideband may grow by while tracing (3 lines of at most
 * SIDEBAND_LINE_MAX per image loaded meanwhile: about 85 images); a
 * sideband that outgrows it is still written before the code snapshot
 * (efi/capture/files.h). */
#define SIDEBAND_GROWTH (64u << 10)
#define FIT_MIN_BUFFER  (4u << 10)
#define FIT_REGION      (64u << 10) /* the plan's default ToPA region */

/* The largest buffer word value at most max that the plan keeps as it is:
 * a power of two below one region, whole regions above. */
static uint64_t fit_buffer(uint64_t max)
{
    if (max >= FIT_REGION)
        return max / FIT_REGION * FIT_REGION;
    uint64_t b = FIT_MIN_BUFFER;
    while (b * 2 <= max)
        b *= 2;
    return b;
}

int efi_capture_fit_volume(EFI_HANDLE image, struct efi_capture *cap, const char **words,
                           size_t *nwords, size_t max_words)
{
    static char buffer_word[48];
    struct efi_volume_space sp;
    char s1[24], s2[24], s3[24], s4[24], s5[24], s6[24];
    if (efi_volume_space(image, &sp) != PTB_VOLUME_OK) {
        efi_con_puts("ptboot: trace: note: the boot volume does not say how much room it has; "
                     "the files are written as far as they fit\n");
        return 0;
    }
    uint64_t trace_max;
    if (efi_capture_plan_bytes(cap, words, *nwords, &trace_max))
        return 0; /* efi_capture_plan says why next */
    const struct code_dump *snap = &cap->watch.snap;
    const uint64_t page_cost = CODE_PAGE_BYTES + sizeof(uint64_t);
    uint64_t snap_now = (uint64_t)snap->count * page_cost,
             snap_max = (uint64_t)snap->cap * page_cost;
    uint64_t fixed =
        efi_volume_file_cost(&sp, sideband_write(&cap->sb, NULL, 0) + SIDEBAND_GROWTH) +
        efi_capture_files_overhead(&sp) + 4 * sp.block_bytes; /* each file's last block */
    uint64_t need = trace_max + snap_max + fixed;
    if (sp.free_bytes >= need)
        return 0;
    uint64_t least = FIT_MIN_BUFFER + snap_now + fixed;
    if (sp.free_bytes < least) {
        efi_con_printf(
            "ptboot: error: trace: volume full: %s free, %s needed (at least %s with the smallest "
            "buffer and the target's snapshot only); --no-files traces without writing files "
            "(--serial-dump sends them over serial)\n",
            efi_capture_size_text(sp.free_bytes, false, s1, sizeof s1),
            efi_capture_size_text(need, true, s2, sizeof s2),
            efi_capture_size_text(least, true, s3, sizeof s3));
        return -1;
    }
    /* shrink: the trace first gets up to half of what is left, the
     * snapshot room (images loaded while tracing) the rest */
    uint64_t avail = sp.free_bytes - fixed - snap_now;
    uint64_t buffer = trace_max;
    if (buffer > avail / 2)
        buffer = fit_buffer(avail / 2 > FIT_MIN_BUFFER ? avail / 2 : FIT_MIN_BUFFER);
    snprintf(buffer_word, sizeof buffer_word, "buffer=%llu", (unsigned long long)buffer);
    uint64_t got = buffer;
    if (*nwords < max_words) {
        words[(*nwords)++] = buffer_word;
        /* the plan may still round it up (a region size, a CPU count) */
        while (!efi_capture_plan_bytes(cap, words, *nwords, &got) && got > buffer &&
               buffer > FIT_MIN_BUFFER) {
            buffer = fit_buffer(buffer / 2);
            snprintf(buffer_word, sizeof buffer_word, "buffer=%llu", (unsigned long long)buffer);
        }
    }
    if (got > avail) {
        efi_con_printf("ptboot: error: trace: volume full: %s free, %s needed; no buffer this plan "
                       "allows fits (give buffer=SIZE, or --no-files)\n",
                       efi_capture_size_text(sp.free_bytes, false, s1, sizeof s1),
                       efi_capture_size_text(need, true, s2, sizeof s2));
        return -1;
    }
    uint64_t room = (avail - got) / page_cost;
    size_t old_cap = snap->cap;
    if (snap->count + room < snap->cap)
        cap->watch.snap.cap = snap->count + (size_t)room;
    efi_con_printf(
        "ptboot: trace: note: volume has %s free, the capture could need %s: buffer %s -> %s, "
        "snapshot room %s -> %s\n",
        efi_capture_size_text(sp.free_bytes, false, s1, sizeof s1),
        efi_capture_size_text(need, true, s2, sizeof s2),
        efi_capture_size_text(trace_max, false, s3, sizeof s3),
        efi_capture_size_text(got, false, s4, sizeof s4),
        efi_capture_size_text((uint64_t)old_cap * CODE_PAGE_BYTES, false, s5, sizeof s5),
        efi_capture_size_text((uint64_t)cap->watch.snap.cap * CODE_PAGE_BYTES, false, s6,
                              sizeof s6));
    return 0;
}
