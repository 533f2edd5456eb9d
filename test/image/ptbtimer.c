/* ptbtimer.efi: a longer traced program with a timer event of its own, for
 * the software trace unit's interrupts (test/boot/trace_irq.sh). It creates
 * a periodic timer event (EVT_TIMER | EVT_NOTIFY_SIGNAL, TPL_CALLBACK, the
 * shortest period: every tick of the firmware's timer) whose notify
 * function is in this image, then computes for PTBTIMER_ROUNDS rounds
 * (about 45,000 instructions). While it computes, the firmware's timer
 * interrupt comes in at its instructions, and from the interrupt handler
 * (RestoreTPL) the firmware runs the notify function: code of the traced
 * image, nested in an interrupt whose handler is outside it, which a CPU
 * with Intel PT traces as FUP + TIP.PGD (the handler), TIP.PGE (the notify),
 * TIP.PGD (back into the firmware), TIP.PGE (the return from the
 * interrupt). The timer is cancelled and the event closed at the end.
 *
 * Returns EFI_SUCCESS when the computation is right and the notify ran at
 * least once (EFI_ABORTED otherwise), so a trace that changed the
 * program's behaviour, or a run in which no timer tick came, shows.
 * Built like ptbtest.efi (test/image/image.mk): no libc, no libefi,
 * -O1, every function noinline. */
#include <efi.h>

#define PTBTIMER_ROUNDS 1500

#define NOINLINE __attribute__((noinline, noclone, used))

static volatile UINT64 sink;
static volatile UINT64 notified;

/* One step of the notify's own work: a call and a branch of its own. */
NOINLINE UINT64 ptbtimer_count(UINT64 n)
{
    if (n & 1)
        return n + 1;
    return n + 3;
}

/* The event's notify function: runs at TPL_CALLBACK from the firmware's
 * timer interrupt (or from a boot service that lowers the TPL). */
NOINLINE VOID EFIAPI ptbtimer_notify(EFI_EVENT event, VOID *context)
{
    (void)event;
    volatile UINT64 *n = context;
    *n = ptbtimer_count(*n);
}

/* A round of arithmetic with a data-dependent branch. */
NOINLINE UINT64 ptbtimer_round(UINT64 x, UINT64 r)
{
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if ((x >> 33) & 1)
        x ^= r;
    else
        x += r;
    return x;
}

NOINLINE UINT64 ptbtimer_work(UINT64 x)
{
    for (UINT64 r = 0; r < PTBTIMER_ROUNDS; r++)
        x = ptbtimer_round(x, r);
    return x;
}

/* The same computation without calls, to check the result. */
static UINT64 work_expected(UINT64 x)
{
    for (UINT64 r = 0; r < PTBTIMER_ROUNDS; r++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        x = ((x >> 33) & 1) ? x ^ r : x + r;
    }
    return x;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    (void)image;
    EFI_BOOT_SERVICES *bs = st->BootServices;
    EFI_EVENT ev;
    if (EFI_ERROR(bs->CreateEvent(EVT_TIMER | EVT_NOTIFY_SIGNAL, TPL_CALLBACK, ptbtimer_notify,
                                  (VOID *)&notified, &ev)))
        return EFI_ABORTED;
    /* 1 (100 ns): the firmware rounds it up to its timer tick */
    if (EFI_ERROR(bs->SetTimer(ev, TimerPeriodic, 1))) {
        bs->CloseEvent(ev);
        return EFI_ABORTED;
    }
    UINT64 w = ptbtimer_work(0x2545f4914f6cdd1dull);
    bs->SetTimer(ev, TimerCancel, 0);
    bs->CloseEvent(ev);
    sink = w;
    if (w != work_expected(0x2545f4914f6cdd1dull) || !notified)
        return EFI_ABORTED;
    return EFI_SUCCESS;
}
