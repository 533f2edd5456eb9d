/* ptbspin.efi: a longer-running companion of ptbtest.efi for the trace
 * buffer's edge cases (test/boot/trace_buffer.sh): PTBSPIN_ROUNDS rounds of
 * indirect calls through a table of small functions, chosen by the data,
 * with conditional branches in between, so its trace (TIP for every
 * indirect call, TNT for the rest; about 11 KB) is over twice the smallest
 * ToPA buffer a capture plan allows (4 KiB) and carries several PSBs (one every 2 KiB at
 * the lowest PSBFreq). No calls out of the image, no console output, no
 * libc, no libefi: only gnu-efi's crt0 and self-relocator run besides it.
 * Returns EFI_SUCCESS when the result equals the same computation done
 * without calls (EFI_ABORTED otherwise), so a trace that changed the
 * program's behaviour shows in the status. */
#include <efi.h>

#define PTBSPIN_ROUNDS 300
#define PTBSPIN_STEPS  8

#define NOINLINE __attribute__((noinline, noclone, used))

static volatile UINT64 sink;

NOINLINE UINT64 ptbspin_a(UINT64 x)
{
    return x * 3 + 1;
}
NOINLINE UINT64 ptbspin_b(UINT64 x)
{
    return x >> 1;
}
NOINLINE UINT64 ptbspin_c(UINT64 x)
{
    return x ^ 0x5a5a;
}
NOINLINE UINT64 ptbspin_d(UINT64 x)
{
    return x + (x & 7) + 11;
}

typedef UINT64 (*ptbspin_op)(UINT64);
/* volatile: each pointer is loaded, so each call is indirect */
static ptbspin_op volatile ops[] = { ptbspin_a, ptbspin_b, ptbspin_c, ptbspin_d };

static UINT64 op_plain(unsigned k, UINT64 x)
{
    switch (k) {
    case 0: return x * 3 + 1;
    case 1: return x >> 1;
    case 2: return x ^ 0x5a5a;
    default: return x + (x & 7) + 11;
    }
}

/* One round: the op is picked by the data; odd results take a branch. */
NOINLINE UINT64 ptbspin_round(UINT64 x, UINT64 r)
{
    for (unsigned i = 0; i < PTBSPIN_STEPS; i++) {
        x = ops[(x >> i) & 3](x + r);
        if (x & 1)
            x += i;
    }
    return x;
}

static UINT64 round_expected(UINT64 x, UINT64 r)
{
    for (unsigned i = 0; i < PTBSPIN_STEPS; i++) {
        x = op_plain((unsigned)((x >> i) & 3), x + r);
        if (x & 1)
            x += i;
    }
    return x;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    (void)image;
    (void)st;
    UINT64 x = 1, y = 1;
    for (UINT64 r = 0; r < PTBSPIN_ROUNDS; r++)
        x = ptbspin_round(x, r);
    for (UINT64 r = 0; r < PTBSPIN_ROUNDS; r++)
        y = round_expected(y, r);
    sink = x;
    return x == y ? EFI_SUCCESS : EFI_ABORTED;
}
