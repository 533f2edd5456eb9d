/* osloader.efi: a tiny OS-loader stand-in for the resident boot tracer's
 * test (test/resident/resident.sh). It does what every OS loader does at
 * the end of the firmware's life, with a known control flow before it:
 *   1. osl_fib(OSL_FIB_N) recursively: osl_fib is entered
 *      2*fib(OSL_FIB_N+1)-1 times (25 for N = 6);
 *   2. osl_mix() OSL_ROUNDS times (each with a taken and a not-taken
 *      branch, by round parity);
 *   3. GetMemoryMap (twice: the size, then the map) and ExitBootServices
 *      with the map key, retried once with a fresh map if the key went
 *      stale (UEFI 2.10 section 7.4.6);
 *   4. ResetSystem(EfiResetShutdown) through the runtime services, which
 *      still work after ExitBootServices (section 8.5.1): QEMU exits.
 * With LoadOptions "return" it skips 3 and 4 and returns EFI_SUCCESS, so a
 * test can look at the trace later in the same boot.
 * No libc, no libefi (gnu-efi's crt0 and self-relocator only), built like
 * test/image/ptbtest.c: -O1, every function noinline, so each call in the
 * source is a call in the code and the symbols name them. */
#include <efi.h>

#define OSL_FIB_N  6
#define OSL_ROUNDS 4
/* Room for descriptors added by our own AllocatePool between the calls. */
#define OSL_MAP_SLACK 8

#define NOINLINE __attribute__((noinline, noclone, used))

static volatile UINT64 sink;

NOINLINE UINT64 osl_fib(UINT64 n)
{
    if (n < 2)
        return n;
    return osl_fib(n - 1) + osl_fib(n - 2);
}

NOINLINE UINT64 osl_mix(UINT64 x, UINT64 round)
{
    if (round & 1)
        return x * 3 + round;
    return x ^ (round << 4);
}

NOINLINE BOOLEAN osl_wants_return(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_GUID guid = LOADED_IMAGE_PROTOCOL;
    EFI_LOADED_IMAGE *li = NULL;
    if (EFI_ERROR(st->BootServices->HandleProtocol(image, &guid, (void **)&li)) || !li)
        return FALSE;
    const CHAR16 *w = li->LoadOptions;
    static const CHAR16 word[] = L"return";
    if (!w || li->LoadOptionsSize < sizeof word - sizeof(CHAR16))
        return FALSE;
    for (UINTN i = 0; word[i]; i++)
        if (w[i] != word[i])
            return FALSE;
    return TRUE;
}

NOINLINE EFI_STATUS osl_exit_boot_services(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_BOOT_SERVICES *bs = st->BootServices;
    EFI_STATUS s = EFI_LOAD_ERROR;
    for (int attempt = 0; attempt < 2; attempt++) {
        UINTN size = 0, key, dsize;
        UINT32 dver;
        EFI_MEMORY_DESCRIPTOR *map = NULL;
        s = bs->GetMemoryMap(&size, NULL, &key, &dsize, &dver);
        if (s != EFI_BUFFER_TOO_SMALL)
            return s;
        size += OSL_MAP_SLACK * dsize;
        s = bs->AllocatePool(EfiLoaderData, size, (void **)&map);
        if (EFI_ERROR(s))
            return s;
        s = bs->GetMemoryMap(&size, map, &key, &dsize, &dver);
        if (EFI_ERROR(s))
            return s;
        s = bs->ExitBootServices(image, key);
        if (!EFI_ERROR(s))
            return s;
    }
    return s;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    UINT64 x = osl_fib(OSL_FIB_N);
    for (UINT64 r = 0; r < OSL_ROUNDS; r++)
        x = osl_mix(x, r);
    sink = x;
    if (osl_wants_return(image, st))
        return EFI_SUCCESS;
    EFI_STATUS s = osl_exit_boot_services(image, st);
    if (EFI_ERROR(s))
        return s;
    /* No boot services from here on; the runtime services remain. */
    st->RuntimeServices->ResetSystem(EfiResetShutdown, EFI_SUCCESS, 0, NULL);
    for (;;)
        __asm__ volatile("hlt");
}
