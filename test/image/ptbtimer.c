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
 * Then an exception of its own: it registers a #UD handler in this image
 * with the CPU Architectural Protocol and runs UD2; the firmware's
 * exception entry calls the handler, which steps the saved RIP over the
 * UD2 (a CPU writes FUP(the UD2) + TIP.PGD, TIP.PGE(handler) ...
 * TIP.PGE(after the UD2)).
 *
 * Returns EFI_SUCCESS when the computation is right, the notify ran at
 * least once and the #UD handler once (EFI_ABORTED otherwise), so a trace
 * that changed the program's behaviour, or a run in which no timer tick
 * came, shows.
 * Built like ptbtest.efi (test/image/image.mk): no libc, no libefi,
 * -O1, every function noinline. */
#include <efi.h>
#include <efidebug.h>

#define PTBTIMER_ROUNDS 1500

#define NOINLINE __attribute__((noinline, noclone, used))

static volatile UINT64 sink;
static volatile UINT64 notified;
static volatile UINT64 ud_seen;

/* EFI_CPU_ARCH_PROTOCOL (PI spec Vol. 2), up to RegisterInterruptHandler;
 * gnu-efi does not declare it */
#define PTBTIMER_CPU_ARCH_GUID                             \
    {                                                      \
        0x26baccb1, 0x6f42, 0x11d4,                        \
        {                                                  \
            0xbc, 0xe7, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 \
        }                                                  \
    }
#define PTBTIMER_VECTOR_UD 6
#define PTBTIMER_UD2_BYTES 2
typedef VOID(EFIAPI *ptbtimer_handler)(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx);
struct ptbtimer_cpu_arch {
    void *flush, *enable, *disable, *get_state, *init;
    EFI_STATUS(EFIAPI *register_handler)
    (struct ptbtimer_cpu_arch *self, EFI_EXCEPTION_TYPE type, ptbtimer_handler handler);
};

/* #UD: count it and go on after the UD2 */
NOINLINE VOID EFIAPI ptbtimer_ud(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx)
{
    (void)type;
    ctx.SystemContextX64->Rip += PTBTIMER_UD2_BYTES;
    ud_seen++;
}

/* One #UD, handled by ptbtimer_ud; 0 when there is no CPU protocol or
 * the vector is taken (then the check does not ask for it). */
NOINLINE int ptbtimer_fault(EFI_BOOT_SERVICES *bs)
{
    EFI_GUID guid = PTBTIMER_CPU_ARCH_GUID;
    struct ptbtimer_cpu_arch *cpu = NULL;
    if (EFI_ERROR(bs->LocateProtocol(&guid, NULL, (VOID **)&cpu)) || !cpu ||
        EFI_ERROR(cpu->register_handler(cpu, PTBTIMER_VECTOR_UD, ptbtimer_ud)))
        return 0;
    __asm__ volatile("ud2" ::: "memory");
    cpu->register_handler(cpu, PTBTIMER_VECTOR_UD, NULL);
    return 1;
}

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
    int faulted = ptbtimer_fault(bs);
    sink = w;
    if (w != work_expected(0x2545f4914f6cdd1dull) || !notified || (faulted && ud_seen != 1))
        return EFI_ABORTED;
    return EFI_SUCCESS;
}
