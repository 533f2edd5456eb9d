/* ptbhang.efi: the stand-in for a driver or loader that hangs during the
 * boot, for the hang recorder's tests (test/hang/hang.sh, docs/hang.md).
 * It waits for a device that never becomes ready: ptbhang_wait_ready()
 * polls ptbhang_read_status() in an endless loop (a call, a return and a
 * conditional branch taken or not by the round's parity, every round), the
 * commonest shape of a bring-up hang. LoadOptions choose how it hangs:
 *   "tpl"       at TPL_APPLICATION, interrupts on: timer events still run,
 *               so a hang timeout can report while it spins;
 *   "callback"  at TPL_CALLBACK (RaiseTPL), interrupts on;
 *   "cli"       with interrupts off (CLI): no timer event runs any more,
 *               only a reset ends it.
 * No LoadOptions (`trace \ptbhang.efi` gives none) is "callback".
 * Before it hangs it prints "ptbhang: waiting mode=<mode>" and sets the
 * variable PtbhangHung; when it starts and finds that variable (the boot
 * after the reset that ended the hang) it deletes it, prints "ptbhang: hung
 * before, returning" and returns EFI_SUCCESS, so a test's next boot goes on.
 * No libc, no libefi (gnu-efi's crt0 and self-relocator only), built like
 * ptbtest.efi: -O1, every function noinline, so the symbols name the loop. */
#include <efi.h>

#define NOINLINE      __attribute__((noinline, noclone, used))
#define PTBHANG_READY 1u
/* The variable that makes the hang one-shot (vendor GUID of this image). */
#define PTBHANG_VAR L"PtbhangHung"
static EFI_GUID hang_guid = {
    0x0e7b6c1a, 0x52d3, 0x4f08, { 0x9b, 0x1c, 0x3a, 0x6e, 0x44, 0x90, 0x2d, 0x71 }
};

/* The device's status register: never ready. volatile: read every round. */
static volatile UINT64 device_status;

NOINLINE UINT64 ptbhang_read_status(UINT64 round)
{
    UINT64 s = device_status;
    if (round & 1)
        s |= 0x10;
    else
        s &= ~0x10ull;
    return s;
}

NOINLINE void ptbhang_wait_ready(void)
{
    for (UINT64 round = 0;; round++)
        if (ptbhang_read_status(round) & PTBHANG_READY)
            break;
}

static void say(EFI_SYSTEM_TABLE *st, const CHAR16 *s)
{
    st->ConOut->OutputString(st->ConOut, (CHAR16 *)s);
}

/* LoadOptions begin with word (UCS-2)? None at all counts as "callback". */
NOINLINE BOOLEAN ptbhang_mode_is(EFI_LOADED_IMAGE *li, const CHAR16 *word)
{
    const CHAR16 *w = li ? li->LoadOptions : NULL;
    UINTN chars = li ? li->LoadOptionsSize / sizeof(CHAR16) : 0, i = 0;
    if ((!w || !chars || !w[0]) && word[0] == L'c' && word[1] == L'a')
        return TRUE;
    for (; word[i]; i++)
        if (!w || i >= chars || w[i] != word[i])
            return FALSE;
    return i == chars || !w[i] || w[i] == L' ';
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_GUID lip = LOADED_IMAGE_PROTOCOL;
    EFI_LOADED_IMAGE *li = NULL;
    st->BootServices->HandleProtocol(image, &lip, (void **)&li);
    UINT8 flag = 1;
    UINTN size = sizeof flag;
    if (!EFI_ERROR(st->RuntimeServices->GetVariable(PTBHANG_VAR, &hang_guid, NULL, &size, &flag))) {
        st->RuntimeServices->SetVariable(PTBHANG_VAR, &hang_guid, 0, 0, NULL);
        say(st, L"ptbhang: hung before, returning\r\n");
        return EFI_SUCCESS;
    }
    BOOLEAN cli = ptbhang_mode_is(li, L"cli"), cb = ptbhang_mode_is(li, L"callback");
    if (!cli && !cb && !ptbhang_mode_is(li, L"tpl")) {
        say(st, L"ptbhang: error: LoadOptions tpl, callback or cli\r\n");
        return EFI_INVALID_PARAMETER;
    }
    st->RuntimeServices->SetVariable(PTBHANG_VAR, &hang_guid,
                                     EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS,
                                     sizeof flag, &flag);
    say(st, cli  ? L"ptbhang: waiting mode=cli\r\n"
            : cb ? L"ptbhang: waiting mode=callback\r\n"
                 : L"ptbhang: waiting mode=tpl\r\n");
    if (cb)
        st->BootServices->RaiseTPL(TPL_CALLBACK);
    if (cli)
        __asm__ volatile("cli");
    ptbhang_wait_ready();
    return EFI_ABORTED; /* never */
}
