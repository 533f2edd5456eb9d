/* A tiny UEFI boot-service driver for pe_info's tests, linked by lld-link
 * (test/capture/capture.mk) so that it carries a real CodeView RSDS debug
 * record. Never run; only its headers are read. */
typedef unsigned long long u64;
static volatile int sink;

static void helper(int x)
{
    sink += x;
}

u64 efi_main(void *image, void *st)
{
    (void)image;
    (void)st;
    for (int i = 0; i < 3; i++)
        helper(i);
    return 0;
}
