#include <efi.h>
#include <efilib.h>

#include "efi/platform/watchdog.h"
#include "efi/capture/hang.h"

/* SetTimer's unit: 100 ns (UEFI 2.10 section 7.1, EFI_BOOT_SERVICES.SetTimer). */
#define TICKS_PER_MS 10000ull

static struct {
    struct efi_hang_config cfg;
    const struct efi_hang_ops *ops;
    EFI_EVENT tick, report;
    uint64_t ticks;
    uint64_t traced_since;  /* tick when tracing was first seen, 0: not */
    uint64_t pending_since; /* tick the report event was signalled, 0: none */
    volatile bool reporting;
    bool done; /* reported without repeat: no more */
    unsigned reports;
} hg;

/* One report, from the report event (TPL_CALLBACK) or the tick's fallback
 * (TPL_NOTIFY). */
static void send_report(bool at_notify)
{
    if (hg.reporting || hg.done || !hg.pending_since)
        return;
    hg.reporting = true;
    if (!at_notify)
        efi_watchdog_off();
    uint64_t since = hg.traced_since;
    hg.reports++;
    hg.ops->report(hg.reports, (uint32_t)((hg.ticks - since) * HANG_TICK_MS / 1000), at_notify);
    if (hg.cfg.repeat && hg.ops->restart) {
        hg.ops->restart();
        hg.traced_since = 0; /* counts again from the next tick that sees it tracing */
    } else {
        hg.done = true;
    }
    if (!at_notify)
        efi_watchdog_boot_manager();
    hg.pending_since = 0;
    hg.reporting = false;
}

static VOID EFIAPI on_report(EFI_EVENT e, VOID *ctx)
{
    (void)e;
    (void)ctx;
    send_report(false);
}

static VOID EFIAPI on_tick(EFI_EVENT e, VOID *ctx)
{
    (void)e;
    (void)ctx;
    hg.ticks++;
    if (hg.reporting)
        return; /* a report at TPL_CALLBACK runs under us: leave the unit alone */
    if (hg.ops->save)
        hg.ops->save();
    if (!hg.cfg.timeout_s || hg.done)
        return;
    if (hg.pending_since) {
        /* the report event could not run: the hung code is at TPL_CALLBACK */
        if (hg.ticks - hg.pending_since >= HANG_FALLBACK_TICKS)
            send_report(true);
        return;
    }
    if (!hg.ops->tracing()) {
        hg.traced_since = 0;
        return;
    }
    if (!hg.traced_since)
        hg.traced_since = hg.ticks;
    if ((hg.ticks - hg.traced_since) * HANG_TICK_MS >= (uint64_t)hg.cfg.timeout_s * 1000) {
        hg.pending_since = hg.ticks;
        BS->SignalEvent(hg.report);
    }
}

int efi_hang_start(const struct efi_hang_config *c, const struct efi_hang_ops *ops)
{
    efi_hang_stop();
    hg.cfg = *c;
    hg.ops = ops;
    hg.ticks = hg.traced_since = hg.pending_since = 0;
    hg.done = hg.reporting = false;
    hg.reports = 0;
    if (EFI_ERROR(BS->CreateEvent(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, on_report, NULL, &hg.report))) {
        hg.report = NULL;
        return -1;
    }
    if (EFI_ERROR(
            BS->CreateEvent(EVT_TIMER | EVT_NOTIFY_SIGNAL, TPL_NOTIFY, on_tick, NULL, &hg.tick)) ||
        EFI_ERROR(BS->SetTimer(hg.tick, TimerPeriodic, HANG_TICK_MS * TICKS_PER_MS))) {
        efi_hang_stop();
        return -1;
    }
    return 0;
}

void efi_hang_stop(void)
{
    if (hg.tick) {
        BS->SetTimer(hg.tick, TimerCancel, 0);
        BS->CloseEvent(hg.tick);
        hg.tick = NULL;
    }
    if (hg.report) {
        BS->CloseEvent(hg.report);
        hg.report = NULL;
    }
}

void efi_hang_quiesce(void)
{
    if (hg.tick)
        BS->SetTimer(hg.tick, TimerCancel, 0);
    hg.done = true;
    hg.pending_since = 0;
}

unsigned efi_hang_reports(void)
{
    return hg.reports;
}

bool efi_hang_reporting(void)
{
    return hg.reporting;
}
