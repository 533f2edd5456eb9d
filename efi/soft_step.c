#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/soft_unit.h"
#include "efi/console.h"
#include "efi/cpu_arch.h"
#include "efi/soft_step.h"

/* SDM Vol. 3A 6.3.1, Table 6-1: vector 1 is #DB. */
#define X86_VECTOR_DB 1
/* SDM Vol. 1 3.4.3: EFLAGS.TF (single step), EFLAGS.RF (resume). */
#define X86_RFLAGS_TF (1ull << 8)
#define X86_RFLAGS_RF (1ull << 16)
/* SDM Vol. 3B 17.2.3: DR6.B0 (breakpoint 0 hit), DR6.BS (single step). */
#define X86_DR6_B0 (1ull << 0)
#define X86_DR6_BS (1ull << 14)
/* SDM Vol. 3B 17.2.4: DR7.L0 enables breakpoint 0 locally; R/W0 = 00
 * (instruction execution) and LEN0 = 00 (1 byte, required for execution
 * breakpoints) are bits 16-19 left zero. */
#define X86_DR7_L0 (1ull << 0)
/* SDM Vol. 3A 3.4.5: segment descriptor L (64-bit code) and D/B bits. */
#define X86_DESC_L (1ull << 53)
#define X86_DESC_DB (1ull << 54)

/* SDM Vol. 3B 17.2.4: DR7.L1 enables breakpoint 1 locally. */
#define X86_DR7_L1 (1ull << 2)
#define X86_DR6_B1 (1ull << 1)

/* The handler's state: one stepping session at a time (the #DB vector is
 * global too). */
static struct {
    const struct efi_soft_step_config *cfg;
    struct efi_soft_step_stats *st;
    volatile bool active;
    bool entry_armed;    /* DR0 waits at the entry point */
    bool armed;          /* DR0 waits at the resume IP (SKIP_CALL) */
    bool ret_armed;      /* DR1 waits at the entry's return address */
    uint64_t dr7;
    uint16_t mode_cs;    /* CS whose mode is cached */
    unsigned mode;
} ss;

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static void write_dr6(uint64_t v) { __asm__ volatile("mov %0, %%dr6" : : "r"(v)); }
static void write_dr7(uint64_t v) { __asm__ volatile("mov %0, %%dr7" : : "r"(v)); }
static void write_dr0(uint64_t v) { __asm__ volatile("mov %0, %%dr0" : : "r"(v)); }

/* Execution mode of the code segment cs: 64 if its descriptor has L set,
 * else 32 or 16 from D/B (SDM Vol. 3A 3.4.5). UEFI x64 runs in 64-bit
 * mode; the lookup keeps the unit right if firmware code thunks to 32-bit
 * code. Selectors in the LDT (TI=1) are not used by UEFI firmware. */
static unsigned exec_mode(uint64_t cs)
{
    if (ss.mode && ss.mode_cs == (uint16_t)cs)
        return ss.mode;
    struct __attribute__((packed)) { uint16_t limit; uint64_t base; } gdtr;
    __asm__ volatile("sgdt %0" : "=m"(gdtr));
    unsigned mode = 64;
    uint64_t index = (cs & 0xfff8) >> 3;
    if (!(cs & 4) && index * 8 + 7 <= gdtr.limit) {
        uint64_t d = ((const volatile uint64_t *)(uintptr_t)gdtr.base)[index];
        mode = (d & X86_DESC_L) ? 64 : (d & X86_DESC_DB) ? 32 : 16;
    }
    ss.mode_cs = (uint16_t)cs;
    ss.mode = mode;
    return mode;
}

/* Hands one step to the callback; returns the action. */
static int report(EFI_SYSTEM_CONTEXT_X64 *x)
{
    uint64_t ip = x->Rip;
    const struct efi_soft_step_config *c = ss.cfg;
    if (!c->step_all && ip >= c->self_lo && ip < c->self_hi) {
        ss.st->skipped_self++;
        return SOFT_UNIT_CONTINUE;
    }
    if (c->max_steps && ss.st->reported >= c->max_steps) {
        ss.st->bounded = true;
        return SOFT_UNIT_STOPPED;
    }
    ss.st->reported++;
    ss.st->last_ip = ip;
    if (!c->step)
        return SOFT_UNIT_CONTINUE;
    return c->step(c->ctx, ip, exec_mode(x->Cs), rdtsc());
}

static void set_dr(EFI_SYSTEM_CONTEXT_X64 *x)
{
    x->Dr7 = ss.dr7;
    write_dr7(ss.dr7);
}

/* Back at the entry's return address: the traced call is over. */
static void finish(EFI_SYSTEM_CONTEXT_X64 *x)
{
    ss.ret_armed = false;
    ss.armed = false;
    ss.dr7 = 0;
    set_dr(x);
    x->Rflags &= ~X86_RFLAGS_TF;
    ss.st->returned = true;
    ss.active = false;
}

/* Runs in the firmware's exception context (CpuDxe's common entry), which
 * restores the CPU from the context on return, RFLAGS and DR0-DR3/DR7
 * included; the CPU cleared TF on entry, so this handler is not stepped. */
static VOID EFIAPI db_handler(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx)
{
    EFI_SYSTEM_CONTEXT_X64 *x = ctx.SystemContextX64;
    (void)type;
    uint64_t dr6;
    __asm__ volatile("mov %%dr6, %0" : "=r"(dr6));
    dr6 |= x->Dr6;
    /* DR6 bits are sticky: clear them so the next #DB says only its own
     * cause (SDM Vol. 3B 17.2.3). */
    write_dr6(0);
    x->Dr6 = 0;
    ss.st->traps++;
    if (!ss.active) {
        x->Rflags &= ~X86_RFLAGS_TF;
        ss.dr7 = 0;
        set_dr(x);
        return;
    }
    int action;
    if ((dr6 & X86_DR6_B1) && ss.ret_armed && x->Rip == ss.st->return_ip) {
        /* Instruction breakpoints are faults: this one has not run. */
        report(x);
        finish(x);
        return;
    } else if ((dr6 & X86_DR6_B0) && ss.entry_armed) {
        /* The entry point: from here on, step; come back at the return
         * address, which is on top of the stack at the first instruction
         * of the entry (the CALL pushed it). */
        ss.entry_armed = false;
        ss.st->entered = true;
        ss.st->return_ip = *(const volatile uint64_t *)(uintptr_t)x->Rsp;
        ss.ret_armed = true;
        ss.dr7 = X86_DR7_L1;
        x->Dr1 = ss.st->return_ip;
        __asm__ volatile("mov %0, %%dr1" : : "r"(ss.st->return_ip));
        set_dr(x);
        x->Rflags |= X86_RFLAGS_RF;
        action = report(x);
    } else if ((dr6 & X86_DR6_B0) && ss.armed) {
        /* Back at the resume IP: disarm, report it, step again. RF lets
         * the instruction run instead of faulting again (SDM 17.3.1.1). */
        ss.armed = false;
        ss.dr7 &= ~X86_DR7_L0;
        set_dr(x);
        x->Rflags |= X86_RFLAGS_RF;
        ss.st->breakpoints++;
        action = report(x);
    } else if (dr6 & X86_DR6_BS) {
        /* A trap: the next instruction has no breakpoint of ours (DR1's
         * is handled right here), so RF must not suppress the next one. */
        x->Rflags &= ~X86_RFLAGS_RF;
        if (ss.ret_armed && x->Rip == ss.st->return_ip) {
            report(x);
            finish(x);
            return;
        }
        action = report(x);
    } else {
        ss.st->unexpected++;
        return;
    }
    switch (action) {
    case SOFT_UNIT_SKIP_CALL: {
        uint64_t resume = ss.cfg->resume ? ss.cfg->resume(ss.cfg->ctx) : 0;
        /* Free run: no TF, and no RF left over from an earlier breakpoint
         * hit, which would let the first instruction pass DR0 unchecked
         * should it be the resume IP itself (a call to the next insn). */
        x->Rflags &= ~X86_RFLAGS_TF;
        if (!(dr6 & (X86_DR6_B0 | X86_DR6_B1)))
            x->Rflags &= ~X86_RFLAGS_RF;
        if (resume) {
            ss.st->skips++;
            ss.armed = true;
            x->Dr0 = resume;
            write_dr0(resume);
            ss.dr7 |= X86_DR7_L0;
            set_dr(x);
        } else {
            ss.st->stopped = true;
        }
        break;
    }
    case SOFT_UNIT_STOPPED:
        x->Rflags &= ~X86_RFLAGS_TF;
        ss.dr7 &= ~X86_DR7_L0;
        set_dr(x);
        ss.armed = false;
        ss.st->stopped = true;
        break;
    default:
        x->Rflags |= X86_RFLAGS_TF;
        break;
    }
}

/* TF is set with POPFQ: the trap comes after the instruction that follows
 * (SDM Vol. 3B 17.3.1.4), inside this file's code, which is skipped as
 * ptboot's own. The call itself goes through a plain C pointer call. */
static __attribute__((noinline)) EFI_STATUS stepped_call(efi_soft_call_fn call, void *arg)
{
    if (!ss.cfg->entry_ip)
        __asm__ volatile("pushfq; orq %0, (%%rsp); popfq" : : "i"(X86_RFLAGS_TF) : "memory", "cc");
    EFI_STATUS s = call(arg);
    __asm__ volatile("pushfq; andq %0, (%%rsp); popfq" : : "i"(~X86_RFLAGS_TF) : "memory", "cc");
    return s;
}

int efi_soft_step_run(const struct efi_soft_step_config *cfg, efi_soft_call_fn call, void *arg,
                      EFI_STATUS *call_status, struct efi_soft_step_stats *stats)
{
    static EFI_CPU_ARCH_PROTOCOL *cpu;
    EFI_GUID guid = EFI_CPU_ARCH_PROTOCOL_GUID_INIT;
    memset(stats, 0, sizeof *stats);
    if (!cpu && (EFI_ERROR(BS->LocateProtocol(&guid, NULL, (void **)&cpu)) || !cpu)) {
        cpu = NULL;
        return EFI_SOFT_STEP_NO_CPU_ARCH;
    }
    ss.cfg = cfg;
    ss.st = stats;
    ss.armed = false;
    ss.ret_armed = false;
    ss.entry_armed = false;
    ss.dr7 = 0;
    ss.mode = 0;
    ss.active = false;
    efi_con_flush(); /* if stepping goes wrong, the log so far is out */
    if (EFI_ERROR(cpu->RegisterInterruptHandler(cpu, X86_VECTOR_DB, db_handler)))
        return EFI_SOFT_STEP_BUSY;
    write_dr6(0);
    if (cfg->entry_ip) {
        ss.entry_armed = true;
        ss.dr7 = X86_DR7_L0;
        write_dr0(cfg->entry_ip);
        write_dr7(ss.dr7);
    }
    ss.active = true;
    *call_status = stepped_call(call, arg);
    ss.active = false;
    /* A breakpoint still armed (the call never came back to the resume IP,
     * e.g. it left through Exit()) must not fire later. */
    write_dr7(0);
    write_dr0(0);
    write_dr6(0);
    ss.armed = false;
    ss.ret_armed = false;
    ss.entry_armed = false;
    ss.dr7 = 0;
    cpu->RegisterInterruptHandler(cpu, X86_VECTOR_DB, NULL);
    return EFI_SOFT_STEP_OK;
}

const char *efi_soft_step_strerror(int err)
{
    switch (err) {
    case EFI_SOFT_STEP_OK: return "ok";
    case EFI_SOFT_STEP_NO_CPU_ARCH: return "no CPU Architectural Protocol (cannot hook #DB)";
    case EFI_SOFT_STEP_BUSY: return "a #DB handler is already registered (a debugger?)";
    }
    return "?";
}
