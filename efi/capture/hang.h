/* The hang timeout and the periodic save, for the resident driver and for
 * `trace` (docs/hang.md): one timer event and one report event, created
 * with boot services, run by the firmware's timer interrupt afterwards.
 *
 *   tick    EVT_TIMER | EVT_NOTIFY_SIGNAL at TPL_NOTIFY, every
 *           HANG_TICK_MS: calls save() (the hardware unit's write
 *           position into the recorder), and counts how long the unit has
 *           been tracing (tracing() true); when that reaches the timeout,
 *           it signals the report event. TPL_NOTIFY, so that it still runs
 *           when the hung code is at TPL_CALLBACK (UEFI 2.10 section 7.1:
 *           an event's notify runs when the TPL drops below its own).
 *   report  EVT_NOTIFY_SIGNAL at TPL_CALLBACK: runs at once when the hung
 *           code is at TPL_APPLICATION; there it may use SetWatchdogTimer
 *           (allowed up to TPL_CALLBACK, Table 7-1 of section 7.1): the
 *           watchdog is switched off for the report, which at 115200 baud
 *           takes minutes for a big dump, and armed again afterwards with
 *           the boot manager's 5 minutes (section 3.1.2). When the hung code
 *           is itself at TPL_CALLBACK the report event cannot run: after
 *           HANG_FALLBACK_TICKS the tick sends the report itself at
 *           TPL_NOTIFY, leaving the watchdog as it is (a watchdog reset in
 *           the middle is recovered by the next boot from the recorder).
 *
 * The report (report()) stops the unit, says what was traced, and either
 * resumes tracing into a fresh buffer (repeat: restart()) or leaves it
 * stopped. What it cannot see: a spin at TPL_HIGH_LEVEL or with interrupts
 * off (no timer interrupt is taken, no event runs): the recorder and a
 * reset are the way out there. */
#ifndef PTBOOT_EFI_CAPTURE_HANG_H
#define PTBOOT_EFI_CAPTURE_HANG_H

#include <stdbool.h>
#include <stdint.h>

#define HANG_TICK_MS        100u
#define HANG_FALLBACK_TICKS 3u

struct efi_hang_ops {
    bool (*tracing)(void); /* the unit traces now */
    void (*save)(void);    /* periodic save (may be NULL) */
    /* the report; n counts from 1, at_notify: sent from the tick at
     * TPL_NOTIFY (the watchdog untouched) */
    void (*report)(unsigned n, uint32_t after_s, bool at_notify);
    void (*restart)(void); /* --hang-repeat: trace again (may be NULL) */
};

struct efi_hang_config {
    uint32_t timeout_s; /* 0: no timeout, the save only */
    bool repeat;
};

/* Creates and starts the events. Returns 0, or -1 (no events: nothing
 * will time out). Boot services. */
int efi_hang_start(const struct efi_hang_config *c, const struct efi_hang_ops *ops);
/* Stops them (boot services; not from a notify). */
void efi_hang_stop(void);
/* At ExitBootServices: the tick cancelled (SetTimer allocates nothing, so
 * the notify may call it, UEFI 2.10 section 7.4.6), no report after: the
 * events' code and the unit belong to the OS's world from now on. */
void efi_hang_quiesce(void);
/* Reports sent so far. */
unsigned efi_hang_reports(void);
/* True while a report is being written (the save must wait). */
bool efi_hang_reporting(void);

#endif
