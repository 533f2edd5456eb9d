/* ptbtest.efi: the image `trace` runs in tests and in `make run`. A UEFI
 * application with a known control flow and no console output, so the
 * trace of its entry point is fully predictable from its source and its
 * symbols (nm on build/test/image/ptbtest.so):
 *   - fib(PTBTEST_FIB_N) recursively: fib is called 2*fib(N+1)-1 times
 *     (177 for N = 10);
 *   - a loop over a table of function pointers (indirect calls), each op
 *     called PTBTEST_ROUNDS times, in table order;
 *   - a recursion PTBTEST_DEPTH (100) deep: deeper than the CPU's 64-entry
 *     return-compression stack, so the trace must carry full return TIPs;
 *   - conditional branches taken and not taken (parity tests in the ops);
 *   - one call out of the image, into the firmware: BootServices->
 *     CalculateCrc32 (the trace leaves the filter range and comes back;
 *     the software unit lets the firmware run free meanwhile), checked
 *     against ptbtest_crc32, the same CRC computed here.
 * It links only gnu-efi's crt0 and self-relocator (no libc, no libefi) and
 * returns EFI_SUCCESS when every result is right (EFI_ABORTED otherwise),
 * so a trace that changed the program's behaviour shows in the status.
 * Built with -O1 and every function noinline: each call in the source is a
 * call in the code. */
#include <efi.h>

#define PTBTEST_FIB_N  10
#define PTBTEST_ROUNDS 8
#define PTBTEST_DEPTH  100

#define NOINLINE __attribute__((noinline, noclone, used))

/* Results go through volatile stores so nothing is folded at compile time. */
static volatile UINT64 sink;

NOINLINE UINT64 ptbtest_fib(UINT64 n)
{
    if (n < 2)
        return n;
    return ptbtest_fib(n - 1) + ptbtest_fib(n - 2);
}

NOINLINE UINT64 ptbtest_op_add(UINT64 x)
{
    return x + 3;
}
NOINLINE UINT64 ptbtest_op_mul(UINT64 x)
{
    return x * 5;
}
NOINLINE UINT64 ptbtest_op_xor(UINT64 x)
{
    return x ^ 0x55;
}
NOINLINE UINT64 ptbtest_op_odd(UINT64 x)
{
    if (x & 1) /* taken and not taken, depending on the round */
        return x + 1;
    return x - 1;
}

typedef UINT64 (*ptbtest_op)(UINT64);
/* volatile: the compiler must load each pointer, so each call is indirect. */
static ptbtest_op volatile ops[] = { ptbtest_op_add, ptbtest_op_mul, ptbtest_op_xor,
                                     ptbtest_op_odd };

NOINLINE UINT64 ptbtest_table(UINT64 x)
{
    for (int r = 0; r < PTBTEST_ROUNDS; r++)
        for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++)
            x = ops[i](x);
    return x;
}

NOINLINE UINT64 ptbtest_deep(UINT64 depth)
{
    if (depth == 0)
        return 0;
    UINT64 r = ptbtest_deep(depth - 1) + 1; /* not a tail call */
    sink = r;
    return r;
}

/* CRC-32 (IEEE 802.3, reflected, as UEFI's CalculateCrc32). */
NOINLINE UINT32 ptbtest_crc32(const UINT8 *p, UINTN n)
{
    UINT32 c = 0xffffffffu;
    for (UINTN i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}

static const UINT8 crc_data[] = "ptboot";

/* The same computations done without calls, to check the results. */
static UINT64 table_expected(UINT64 x)
{
    for (int r = 0; r < PTBTEST_ROUNDS; r++) {
        x = x + 3;
        x = x * 5;
        x = x ^ 0x55;
        x = (x & 1) ? x + 1 : x - 1;
    }
    return x;
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *st)
{
    (void)image;
    UINT64 f = ptbtest_fib(PTBTEST_FIB_N);
    UINT64 t = ptbtest_table(7);
    UINT64 d = ptbtest_deep(PTBTEST_DEPTH);
    UINT32 mine = ptbtest_crc32(crc_data, sizeof crc_data - 1), theirs = 0;
    EFI_STATUS s = st->BootServices->CalculateCrc32((void *)crc_data, sizeof crc_data - 1, &theirs);
    sink = f + t + d;
    if (f != 55 || t != table_expected(7) || d != PTBTEST_DEPTH || EFI_ERROR(s) || mine != theirs)
        return EFI_ABORTED;
    return EFI_SUCCESS;
}
