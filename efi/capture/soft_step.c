#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/soft_unit.h"
#include "efi/platform/console.h"
#include "efi/platform/cpu_arch.h"
#include "efi/capture/soft_step.h"

/* SDM Vol. 3A 6.3.1, Table 6-1: vector 1 is #DB. */
#define X86_VECTOR_DB 1
/* SDM Vol. 1 3.4.3: EFLAGS.TF (single step), EFLAGS.RF (resume). */
#define X86_RFLAGS_TF (1ull << 8)
#define X86_RFLAGS_RF (1ull << 16)
/* SDM Vol. 3B 17.2.3: DR6.B0/B1 (breakpoint 0/1 hit), DR6.BS (single step). */
#define X86_DR6_B0 (1ull << 0)
#define X86_DR6_B1 (1ull << 1)
#define X86_DR6_BS (1ull << 14)
/* SDM Vol. 3B 17.2.4: DR7.L0/L1 enable breakpoints 0/1 locally; R/W and
 * LEN left 00 = instruction execution, 1 byte (required for execution
 * breakpoints). */
#define X86_DR7_L0 (1ull << 0)
#define X86_DR7_L1 (1ull << 2)
/* SDM Vol. 3A 3.4.5: segment descriptor L (64-bit code) and D/B bits. */
#define X86_DESC_L (1ull << 53)
#define X86_DESC_DB (1ull << 54)

/* Where a session is:
 *   IDLE      none (the handler, if held, clears TF and DR7 on any #DB)
 *   ARMED     DR0 waits at the entry point
 *   STEPPING  TF set, each trap reported
 *   FREE      a SKIP_CALL free run: DR0 waits at the resume IP
 *   OVER      ended (STOPPED, bounded): DR1 may still watch the return */
enum phase { PHASE_IDLE, PHASE_ARMED, PHASE_STEPPING, PHASE_FREE, PHASE_OVER };

/* The handler's state: one session at a time (the #DB vector is global
 * too). */
static struct {
    EFI_CPU_ARCH_PROTOCOL *cpu;
    bool held;               /* our handler is registered */
    const struct efi_soft_step_config *cfg;
    struct efi_soft_step_stats *st;
    volatile int phase;
    bool ret_armed;          /* DR1 waits at the entry's return address */
    uint64_t resume;         /* DR0's target in a free run */
    uint16_t mode_cs;        /* CS whose mode is cached */
    unsigned mode;
} ss;

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static void write_dr0(uint64_t v) { __asm__ volatile("mov %0, %%dr0" : : "r"(v)); }
static void write_dr1(uint64_t v) { __asm__ volatile("mov %0, %%dr1" : : "r"(v)); }
static void write_dr6(uint64_t v) { __asm__ volatile("mov %0, %%dr6" : : "r"(v)); }
static void write_dr7(uint64_t v) { __asm__ volatile("mov %0, %%dr7" : : "r"(v)); }

/* Both the live register and the saved context (x NULL: outside #DB):
 * CpuDxe's exception entry restores DR7 from the context on return. */
static void set_dr7(EFI_SYSTEM_CONTEXT_X64 *x, uint64_t v)
{
    if (x)
        x->Dr7 = v;
    write_dr7(v);
}

/* DR7 while DR1 watches the return (if it does) and DR0 does or not. */
static uint64_t dr7_with(uint64_t dr0_bits)
{
    return dr0_bits | (ss.ret_armed ? X86_DR7_L1 : 0);
}

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

/* The session ends (once): tell the caller. */
static void tell_end(uint64_t ip, int why)
{
    if (ss.cfg->end)
        ss.cfg->end(ss.cfg->ctx, ip, rdtsc(), why);
}

/* Stepping is over (STOPPED, bounded, no resume IP): the rest runs free;
 * DR1 keeps watching the return. */
static void over(EFI_SYSTEM_CONTEXT_X64 *x, uint64_t ip, int why)
{
    x->Rflags &= ~X86_RFLAGS_TF;
    set_dr7(x, dr7_with(0));
    ss.st->stopped = true;
    ss.phase = PHASE_OVER;
    tell_end(ip, why);
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
    if (ss.phase == PHASE_IDLE) {
        x->Rflags &= ~X86_RFLAGS_TF;
        set_dr7(x, 0);
        return;
    }
    ss.st->traps++;
    uint64_t ip = x->Rip;
    if (ss.ret_armed && ip == ss.st->return_ip && (dr6 & (X86_DR6_B1 | X86_DR6_BS))) {
        /* Back at the entry's return address: the image returned. While
         * stepping, the unit sees this step too (instruction breakpoints
         * are faults: it has not run), so that it knows where the RET
         * went (out of the range: TIP.PGD) before it is stopped. */
        int was = ss.phase;
        if (was == PHASE_STEPPING)
            report(x);
        ss.ret_armed = false;
        ss.st->returned = true;
        x->Rflags &= ~X86_RFLAGS_TF;
        set_dr7(x, 0);
        ss.phase = PHASE_IDLE;
        if (was == PHASE_STEPPING || was == PHASE_FREE)
            tell_end(ip, PTB_SOFT_STEP_END_RETURNED);
        return;
    }
    int action;
    if (ss.phase == PHASE_ARMED && (dr6 & X86_DR6_B0) && ip == ss.cfg->entry_ip) {
        /* The entry point: from here on, step; come back at the return
         * address, which is on top of the stack at the first instruction
         * of the entry (the CALL pushed it). */
        ss.st->entered = true;
        ss.st->return_ip = *(const volatile uint64_t *)(uintptr_t)x->Rsp;
        ss.ret_armed = true;
        x->Dr1 = ss.st->return_ip;
        write_dr1(ss.st->return_ip);
        set_dr7(x, dr7_with(0));
        x->Rflags |= X86_RFLAGS_RF;
        ss.phase = PHASE_STEPPING;
        action = report(x);
    } else if (ss.phase == PHASE_FREE && (dr6 & X86_DR6_B0) && ip == ss.resume) {
        /* Back at the resume IP: disarm, report it, step again. RF lets
         * the instruction run instead of faulting again (SDM 17.3.1.1). */
        set_dr7(x, dr7_with(0));
        x->Rflags |= X86_RFLAGS_RF;
        ss.st->breakpoints++;
        ss.phase = PHASE_STEPPING;
        action = report(x);
    } else if (ss.phase == PHASE_STEPPING && (dr6 & X86_DR6_BS)) {
        /* A trap: the next instruction has no breakpoint of ours (DR1's
         * is handled above), so RF must not suppress the next one. */
        x->Rflags &= ~X86_RFLAGS_RF;
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
        if (!resume) {
            over(x, ip, PTB_SOFT_STEP_END_STOPPED);
            break;
        }
        ss.st->skips++;
        ss.resume = resume;
        x->Dr0 = resume;
        write_dr0(resume);
        set_dr7(x, dr7_with(X86_DR7_L0));
        ss.phase = PHASE_FREE;
        break;
    }
    case SOFT_UNIT_STOPPED:
        over(x, ip, ss.st->bounded ? PTB_SOFT_STEP_END_BOUNDED : PTB_SOFT_STEP_END_STOPPED);
        break;
    default:
        x->Rflags |= X86_RFLAGS_TF;
        break;
    }
}

/* No breakpoint of ours may fire once a session is gone. */
static void disarm(void)
{
    write_dr7(0);
    write_dr0(0);
    write_dr1(0);
    write_dr6(0);
    ss.ret_armed = false;
    ss.phase = PHASE_IDLE;
}

int efi_soft_step_hold(void)
{
    EFI_GUID guid = PTB_CPU_ARCH_PROTOCOL_GUID;
    if (ss.held)
        return PTB_SOFT_STEP_OK;
    if (!ss.cpu && (EFI_ERROR(BS->LocateProtocol(&guid, NULL, (void **)&ss.cpu)) || !ss.cpu)) {
        ss.cpu = NULL;
        return PTB_SOFT_STEP_NO_CPU_ARCH;
    }
    ss.phase = PHASE_IDLE;
    if (EFI_ERROR(ss.cpu->RegisterInterruptHandler(ss.cpu, X86_VECTOR_DB, db_handler)))
        return PTB_SOFT_STEP_BUSY;
    ss.held = true;
    return PTB_SOFT_STEP_OK;
}

bool efi_soft_step_release(void)
{
    if (!ss.held || (ss.phase != PHASE_IDLE && ss.phase != PHASE_OVER))
        return false;
    disarm();
    ss.cpu->RegisterInterruptHandler(ss.cpu, X86_VECTOR_DB, NULL);
    ss.held = false;
    return true;
}

/* A new session: counters zeroed, nothing armed yet. */
static void begin(const struct efi_soft_step_config *cfg, struct efi_soft_step_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    ss.cfg = cfg;
    ss.st = stats;
    ss.ret_armed = false;
    ss.resume = 0;
    ss.mode = 0;
    write_dr6(0);
}

int efi_soft_step_arm(const struct efi_soft_step_config *cfg, struct efi_soft_step_stats *stats)
{
    if (!ss.held || !cfg->entry_ip || (ss.phase != PHASE_IDLE && ss.phase != PHASE_OVER))
        return PTB_SOFT_STEP_STATE;
    disarm();
    begin(cfg, stats);
    write_dr0(cfg->entry_ip);
    ss.phase = PHASE_ARMED;
    write_dr7(X86_DR7_L0);
    return PTB_SOFT_STEP_OK;
}

bool efi_soft_step_end_now(void)
{
    int was = ss.phase;
    if (was == PHASE_IDLE)
        return false;
    /* Called from outside the traced code (TF is clear here: the caller
     * runs inside a call the image made, i.e. in a free run, or in another
     * image): the packets close at the resume IP, or where stepping was. */
    uint64_t ip = was == PHASE_FREE ? ss.resume : was == PHASE_ARMED ? ss.cfg->entry_ip : ss.st->last_ip;
    disarm();
    if (was != PHASE_OVER)
        tell_end(ip, PTB_SOFT_STEP_END_CALLER);
    return true;
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
    memset(stats, 0, sizeof *stats);
    if (ss.held)
        return PTB_SOFT_STEP_STATE;
    efi_con_flush(); /* if stepping goes wrong, the log so far is out */
    int e = efi_soft_step_hold();
    if (e)
        return e;
    begin(cfg, stats);
    if (cfg->entry_ip) {
        write_dr0(cfg->entry_ip);
        ss.phase = PHASE_ARMED;
        write_dr7(X86_DR7_L0);
    } else {
        ss.phase = PHASE_STEPPING;
    }
    *call_status = stepped_call(call, arg);
    /* A breakpoint still armed (the call never came back to the resume IP,
     * e.g. it left through Exit()) must not fire later. */
    disarm();
    efi_soft_step_release();
    return PTB_SOFT_STEP_OK;
}

const char *efi_soft_step_strerror(int err)
{
    switch (err) {
    case PTB_SOFT_STEP_OK: return "ok";
    case PTB_SOFT_STEP_NO_CPU_ARCH: return "no CPU Architectural Protocol (cannot hook #DB)";
    case PTB_SOFT_STEP_BUSY: return "a #DB handler is already registered (a debugger?)";
    case PTB_SOFT_STEP_STATE: return "the #DB glue is in use";
    }
    return "?";
}
