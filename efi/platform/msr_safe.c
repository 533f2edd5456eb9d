#include <efi.h>
#include <efilib.h>

#include "efi/platform/console.h"
#include "efi/platform/cpu_arch.h"
#include "efi/platform/msr_safe.h"

/* Labels in msr_insn.S (efi_msr_rdmsr_raw/efi_msr_wrmsr_raw: msr_safe.h). */
extern char efi_msr_rdmsr_insn[], efi_msr_rdmsr_fault[];
extern char efi_msr_wrmsr_insn[], efi_msr_wrmsr_fault[];

static EFI_CPU_ARCH_PROTOCOL *cpu_arch;
static unsigned gp_caught;

/* Runs in exception context (firmware's CpuExceptionHandlerLib), which
 * restores the CPU from the context on return: moving Rip resumes at the
 * fault label. Registered only while one of our two instructions runs; any
 * other #GP in that window is not ours to hide: report it and stop. */
static VOID EFIAPI gp_handler(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx)
{
    EFI_SYSTEM_CONTEXT_X64 *x = ctx.SystemContextX64;
    (void)type;
    if (x->Rip == (UINT64)(UINTN)efi_msr_rdmsr_insn) {
        x->Rip = (UINT64)(UINTN)efi_msr_rdmsr_fault;
    } else if (x->Rip == (UINT64)(UINTN)efi_msr_wrmsr_insn) {
        x->Rip = (UINT64)(UINTN)efi_msr_wrmsr_fault;
    } else {
        efi_con_printf("ptboot: unexpected #GP at rip=0x%llx inside the MSR path; halting\n",
                       (unsigned long long)x->Rip);
        efi_con_flush();
        for (;;)
            __asm__ volatile("cli; hlt");
    }
    gp_caught++;
}

const char *efi_msr_init(EFI_BOOT_SERVICES *bs)
{
    EFI_GUID guid = PTB_CPU_ARCH_PROTOCOL_GUID;
    cpu_arch = NULL;
    if (EFI_ERROR(bs->LocateProtocol(&guid, NULL, (void **)&cpu_arch)) || !cpu_arch) {
        cpu_arch = NULL;
        return "no-cpu-arch";
    }
    return "ready";
}

/* Registers the handler for the duration of one access. If the firmware
 * already has a #GP handler registered (EFI_ALREADY_STARTED) we cannot
 * protect the access, so it is refused rather than risked. */
static int guard_begin(void)
{
    if (!cpu_arch)
        return -1;
    efi_con_flush(); /* whatever happens next, the log so far is out */
    EFI_STATUS s = cpu_arch->RegisterInterruptHandler(cpu_arch, X86_VECTOR_GP, gp_handler);
    return EFI_ERROR(s) ? -1 : 0;
}

static void guard_end(void)
{
    cpu_arch->RegisterInterruptHandler(cpu_arch, X86_VECTOR_GP, NULL);
}

enum efi_msr_result efi_msr_read(uint32_t msr, uint64_t *value)
{
    *value = 0;
    if (guard_begin())
        return PTB_MSR_UNPROTECTED;
    int gp = efi_msr_rdmsr_raw(msr, value);
    guard_end();
    if (gp)
        *value = 0;
    return gp ? PTB_MSR_GP : PTB_MSR_OK;
}

enum efi_msr_result efi_msr_write(uint32_t msr, uint64_t value)
{
    if (guard_begin())
        return PTB_MSR_UNPROTECTED;
    int gp = efi_msr_wrmsr_raw(msr, value);
    guard_end();
    return gp ? PTB_MSR_GP : PTB_MSR_OK;
}

unsigned efi_msr_faults(void)
{
    return gp_caught;
}

const char *efi_msr_result_name(enum efi_msr_result r)
{
    switch (r) {
    case PTB_MSR_OK: return "ok";
    case PTB_MSR_GP: return "gp";
    case PTB_MSR_UNPROTECTED: return "unprotected";
    }
    return "?";
}

static int safe_rd(void *ctx, uint32_t msr, uint64_t *value)
{
    (void)ctx;
    return efi_msr_read(msr, value) != PTB_MSR_OK;
}

static int safe_wr(void *ctx, uint32_t msr, uint64_t value)
{
    (void)ctx;
    return efi_msr_write(msr, value) != PTB_MSR_OK;
}

const struct rtit_msr_ops efi_msr_safe_ops = { safe_rd, safe_wr, NULL };

static int raw_rd(void *ctx, uint32_t msr, uint64_t *value)
{
    (void)ctx;
    return efi_msr_rdmsr_raw(msr, value);
}

static int raw_wr(void *ctx, uint32_t msr, uint64_t value)
{
    (void)ctx;
    return efi_msr_wrmsr_raw(msr, value);
}

const struct rtit_msr_ops efi_msr_raw_ops = { raw_rd, raw_wr, NULL };
