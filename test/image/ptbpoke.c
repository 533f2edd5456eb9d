/* ptbpoke.efi: damages the hang recorder that this boot's resident driver
 * kept for `ptboot.efi recover` (the configuration table entry of
 * efi/resident/previous.h), the way a firmware that reuses the memory, or
 * a bit flip, would, for test/hang/hang.sh's checks that nothing is
 * trusted unchecked. LoadOptions:
 *   "header"    flips one bit in the header's fixed part (its CRC fails);
 *   "sideband"  flips one bit in the sideband text (its CRC fails);
 *   "trace N"   writes N bytes of 0xAF (what Debian's OVMF fills free
 *               memory with) over the start of the trace area.
 * Prints "ptbpoke: <what> at 0x<address>" or "ptbpoke: error: ...". No
 * libc, no libefi (built like ptbtest.efi); the recorder's layout comes
 * from format/recorder.h, the table's GUID and struct from
 * efi/resident/previous.h (header-only use). */
#include <efi.h>

#include "efi/resident/previous.h"
#include "format/recorder.h"

static void say(EFI_SYSTEM_TABLE *st, const CHAR16 *s)
{
    st->ConOut->OutputString(st->ConOut, (CHAR16 *)s);
}

static void say_hex(EFI_SYSTEM_TABLE *st, UINT64 v)
{
    CHAR16 buf[20];
    int n = 0;
    buf[n++] = L'0';
    buf[n++] = L'x';
    int started = 0;
    for (int shift = 60; shift >= 0; shift -= 4) {
        unsigned d = (unsigned)(v >> shift) & 15;
        if (d || started || shift == 0) {
            buf[n++] = (CHAR16)(d < 10 ? L'0' + d : L'a' + d - 10);
            started = 1;
        }
    }
    buf[n++] = L'\r';
    buf[n++] = L'\n';
    buf[n] = 0;
    say(st, buf);
}

static int same_guid(const EFI_GUID *a, const EFI_GUID *b)
{
    const UINT8 *x = (const UINT8 *)a, *y = (const UINT8 *)b;
    for (unsigned i = 0; i < sizeof *a; i++)
        if (x[i] != y[i])
            return 0;
    return 1;
}

/* The word of LoadOptions at position k (UCS-2, space separated) equals w? */
static int word_is(const CHAR16 *opt, UINTN chars, unsigned k, const CHAR16 *w)
{
    UINTN i = 0;
    for (unsigned n = 0; n < k; n++) {
        while (i < chars && opt[i] && opt[i] != L' ')
            i++;
        while (i < chars && opt[i] == L' ')
            i++;
    }
    UINTN j = 0;
    for (; w[j]; j++)
        if (i + j >= chars || opt[i + j] != w[j])
            return 0;
    return i + j == chars || !opt[i + j] || opt[i + j] == L' ';
}

/* The decimal number after the first word. */
static UINT64 second_number(const CHAR16 *opt, UINTN chars)
{
    UINTN i = 0;
    while (i < chars && opt[i] && opt[i] != L' ')
        i++;
    while (i < chars && opt[i] == L' ')
        i++;
    UINT64 v = 0;
    for (; i < chars && opt[i] >= L'0' && opt[i] <= L'9'; i++)
        v = v * 10 + (UINT64)(opt[i] - L'0');
    return v;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    EFI_GUID lip = LOADED_IMAGE_PROTOCOL, kept_guid = PTBOOT_RECORDER_KEPT_GUID_INIT;
    EFI_LOADED_IMAGE *li = NULL;
    st->BootServices->HandleProtocol(image, &lip, (void **)&li);
    const CHAR16 *opt = li ? li->LoadOptions : NULL;
    UINTN chars = li && opt ? li->LoadOptionsSize / sizeof(CHAR16) : 0;
    struct resident_kept *k = NULL;
    for (UINTN i = 0; i < st->NumberOfTableEntries; i++)
        if (same_guid(&st->ConfigurationTable[i].VendorGuid, &kept_guid))
            k = st->ConfigurationTable[i].VendorTable;
    if (!k || k->magic != RESIDENT_KEPT_MAGIC || !opt) {
        say(st, L"ptbpoke: error: no kept recorder (or no LoadOptions)\r\n");
        return EFI_NOT_FOUND;
    }
    UINT8 *copy = (UINT8 *)(UINTN)k->copy;
    const struct recorder_fixed *f = (const struct recorder_fixed *)copy;
    UINT8 *at;
    if (word_is(opt, chars, 0, L"header")) {
        at = copy + 100; /* inside options[]: the fixed part's CRC fails */
        *at ^= 0x10;
        say(st, L"ptbpoke: header at ");
    } else if (word_is(opt, chars, 0, L"sideband") && f->sideband_off < k->bytes) {
        at = copy + f->sideband_off + 5;
        *at ^= 0x01;
        say(st, L"ptbpoke: sideband at ");
    } else if (word_is(opt, chars, 0, L"trace") && f->trace_off < k->bytes) {
        UINT64 n = second_number(opt, chars);
        if (n > f->trace_bytes)
            n = f->trace_bytes;
        at = copy + f->trace_off;
        for (UINT64 i = 0; i < n; i++)
            at[i] = 0xaf;
        say(st, L"ptbpoke: trace at ");
    } else {
        say(st, L"ptbpoke: error: LoadOptions header, sideband or trace N\r\n");
        return EFI_INVALID_PARAMETER;
    }
    say_hex(st, (UINT64)(UINTN)at);
    return EFI_SUCCESS;
}
