/* The resident driver's software unit (docs/resident.md "Two units"): the
 * --image's trace by single-stepping, through efi/capture/soft_step.h's
 * #DB glue, into the header's buffer (the recorder's trace area), with the
 * header and the recorder's live slot kept current after every step.
 *
 *   resident_soft_init   the driver's state it works on (once)
 *   resident_soft_arm    the --image loaded: the unit configured for its
 *                        range (FilterEn, --trace-stop as TraceStop, ring or
 *                        stop-when-full), room for its code (the recorder's
 *                        code area, copied now, or reserved pages), DR0 at
 *                        its entry point
 *   resident_soft_arm_again  a later instance of an --image name after a
 *                        session that returned: a session of its own after
 *                        the previous ones in the same buffer
 *                        (docs/early-boot.md)
 *   resident_soft_follow_pages  --follow: reserved room for the code pages
 *                        the sessions run (efi/resident/touched.h), copied
 *                        when a session ends or pauses
 *   resident_soft_stop   ends the session (ExitBootServices, a command, a
 *                        hang report without --hang-repeat)
 *   resident_soft_pause  a hang report with --hang-repeat: the unit stops
 *                        and the ring is made linear, the #DB session goes
 *                        on; resident_soft_restart then traces into the
 *                        zeroed buffer (the next step starts it with a PSB+)
 *
 * The session's end callback runs in the #DB handler or at
 * ExitBootServices: no boot services there. */
#ifndef PTBOOT_EFI_RESIDENT_SOFT_H
#define PTBOOT_EFI_RESIDENT_SOFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "efi/resident/recorder.h"
#include "efi/resident/resident.h"
#include "efi/resident/words.h"
#include "format/sideband.h"

struct resident_soft_ctx {
    struct resident_header *h;
    struct resident_recorder *rec;
    const struct resident_words *w;
    struct sideband *sb;            /* may be NULL */
    void (*publish_sideband)(void); /* the driver's: the sideband text now */
    uint64_t self_lo, self_hi;      /* the driver's image: a --follow session leaves it out */
};

void resident_soft_init(const struct resident_soft_ctx *c);
/* Arms at im's entry (im: the --image as recorded). Returns 0, or -1 with
 * a message in err. Boot services (the notify of its load). */
int resident_soft_arm(const struct resident_image *im, char *err, size_t err_len);
/* A later instance (see above): 0 armed, -1 not (said on COM1). Boot
 * services. */
int resident_soft_arm_again(const struct resident_image *im);
/* 0, or -1 with a message in err. Boot services. */
int resident_soft_follow_pages(char *err, size_t err_len);
void resident_soft_stop(uint32_t reason);
void resident_soft_pause(void);
void resident_soft_restart(void);

#endif
