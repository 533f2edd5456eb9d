/* `selftest`: proves on the running machine that (1) an MSR access that
 * raises #GP comes back as an error while the machine goes on, (2) a valid
 * MSR reads through the same path, and (3) the heap is closed: malloc fails
 * and the sbrk counter sees it. QEMU's TCG never faults on the RTIT MSRs, so
 * (1) uses an access that faults architecturally on every CPU. */
#include <stdlib.h>

#include "efi/app.h"
#include "efi/platform/console.h"
#include "efi/platform/msr_safe.h"
#include "efi/platform/syscalls.h"

/* SDM Vol. 3A 10.4.4: IA32_APIC_BASE, architectural since P6
 * (CPUID.1:EDX[9]): an MSR every x86-64 CPU has, to show a good read. */
#define MSR_IA32_APIC_BASE 0x1b
/* SDM Vol. 4, Table 2-2: IA32_PKRS (0x6e1) exists only with
 * CPUID.(7,0):ECX[31] (PKS), and its bits 63:32 are reserved. A WRMSR of
 * bit 32 therefore raises #GP on every CPU: reserved bit where PKS exists,
 * missing MSR where it does not. It is also the one MSR write that QEMU's
 * TCG faults on (it accepts the RTIT and unknown MSRs silently), so the same
 * test proves the handler in QEMU and on hardware. */
#define MSR_IA32_PKRS       0x6e1
#define PKRS_RESERVED_BIT32 (1ull << 32)

int efi_cmd_selftest(struct efi_app *app, int argc, char **argv)
{
    (void)app;
    if (argc > 0) {
        efi_con_printf("ptboot: error: selftest: unknown argument '%s'\n", argv[0]);
        return PTB_APP_USAGE;
    }
    int failures = 0;

    uint64_t base = 0;
    enum efi_msr_result r = efi_msr_read(MSR_IA32_APIC_BASE, &base);
    efi_con_printf("ptboot: selftest msr-read 0x%x result=%s value=0x%llx expected=ok\n",
                   MSR_IA32_APIC_BASE, efi_msr_result_name(r), (unsigned long long)base);
    failures += r != PTB_MSR_OK;

    unsigned faults_before = efi_msr_faults();
    r = efi_msr_write(MSR_IA32_PKRS, PKRS_RESERVED_BIT32);
    unsigned caught = efi_msr_faults() - faults_before;
    efi_con_printf("ptboot: selftest msr-write 0x%x result=%s faults_caught=%u expected=gp\n",
                   MSR_IA32_PKRS, efi_msr_result_name(r), caught);
    failures += r != PTB_MSR_GP || caught != 1;

    unsigned sbrk_before = efi_sbrk_calls();
    /* volatile: the compiler may not elide a malloc/free pair. */
    void *volatile p = malloc(64);
    unsigned sbrk_after = efi_sbrk_calls();
    efi_con_printf("ptboot: selftest alloc malloc=%s sbrk_calls_before=%u after=%u expected=null\n",
                   p ? "granted" : "null", sbrk_before, sbrk_after);
    failures += p != NULL || sbrk_after == sbrk_before;
    free(p);

    efi_con_printf("ptboot: selftest result=%s\n", failures ? "fail" : "pass");
    return failures ? PTB_APP_FAILED : PTB_APP_OK;
}
