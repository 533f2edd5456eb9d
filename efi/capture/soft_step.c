#include <stdio.h>
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "arch/x86/soft_unit.h"
#include "efi/platform/console.h"
#include "efi/platform/cpu_arch.h"
#include "efi/platform/cpu_ctl.h"
#include "efi/capture/idt_chain.h"
#include "efi/capture/soft_step.h"
#include "efi/capture/soft_watch.h"

/* SDM Vol. 3A 6.3.1, Table 6-1: vector 1 is #DB, 14 #PF. */
#define X86_VECTOR_DB 1
#define X86_VECTOR_PF 14
/* SDM Vol. 3A 4.7: #PF error code P (a protection violation, not a
 * missing page) and I/D (an instruction fetch). */
#define X86_PF_P  (1ull << 0)
#define X86_PF_ID (1ull << 4)
/* SDM Vol. 1 3.4.3: EFLAGS.TF (single step), EFLAGS.RF (resume). */
#define X86_RFLAGS_TF (1ull << 8)
#define X86_RFLAGS_RF (1ull << 16)
/* SDM Vol. 3B 17.2.3: DR6.B0/B1/B2 (breakpoint 0/1/2 hit), DR6.BS (single step). */
#define X86_DR6_B0          (1ull << 0)
#define X86_DR6_B1          (1ull << 1)
#define X86_DR6_B2          (1ull << 2)
#define X86_DR6_BS          (1ull << 14)
#define X86_DR6_BREAKPOINTS (X86_DR6_B0 | X86_DR6_B1 | X86_DR6_B2)
/* SDM Vol. 3B 17.2.4: DR7.L0/L1/L2 enable breakpoints 0/1/2 locally; R/W
 * and LEN left 00 = instruction execution, 1 byte (required for execution
 * breakpoints). */
#define X86_DR7_L0 (1ull << 0)
#define X86_DR7_L1 (1ull << 2)
#define X86_DR7_L2 (1ull << 4)
/* SDM Vol. 3A 3.4.5: segment descriptor L (64-bit code) and D/B bits. */
#define X86_DESC_L  (1ull << 53)
#define X86_DESC_DB (1ull << 54)
/* Software interrupts (SDM Vol. 2): INT3, INT imm8, INTO, INT1. */
#define X86_OP_INT3 0xcc
#define X86_OP_INT  0xcd
#define X86_OP_INTO 0xce
#define X86_OP_INT1 0xf1

/* Where a session is:
 *   IDLE      none (the handler, if held, clears TF and DR7 on any #DB)
 *   ARMED     DR0 waits at the entry point
 *   STEPPING  TF set, each trap reported
 *   FREE      a free run: SKIP_CALL's (DR0 waits at the resume IP), a
 *             handler's or a FREE answer's; the watch (or DR2) waits for
 *             the landing
 *   OVER      ended (STOPPED, bounded): DR1 may still watch the return */
enum phase {
    PHASE_IDLE,
    PHASE_ARMED,
    PHASE_STEPPING,
    PHASE_FREE,
    PHASE_OVER
};

/* The handler's state: one session at a time (the #DB vector is global
 * too). */
static struct {
    EFI_CPU_ARCH_PROTOCOL *cpu;
    bool held; /* our handler is registered */
    const struct efi_soft_step_config *cfg;
    struct efi_soft_step_stats *st;
    volatile int phase;
    bool ret_armed;  /* DR1 waits at the entry's return address */
    bool dr0_on;     /* DR0 waits (entry point or resume IP) */
    uint64_t resume; /* DR0's target in a free run */
    bool irq_ret;    /* DR2 waits at an interrupted instruction */
    uint64_t irq_ret_ip, irq_ret_rsp;
    uint16_t mode_cs; /* CS whose mode is cached */
    unsigned mode;
} ss;

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static void write_dr0(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr0" : : "r"(v));
}
static void write_dr1(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr1" : : "r"(v));
}
static void write_dr2(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr2" : : "r"(v));
}
static void write_dr6(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr6" : : "r"(v));
}
static void write_dr7(uint64_t v)
{
    __asm__ volatile("mov %0, %%dr7" : : "r"(v));
}

/* DR7 for the breakpoints the state has on. */
static uint64_t dr7_now(void)
{
    return (ss.dr0_on ? X86_DR7_L0 : 0) | (ss.ret_armed ? X86_DR7_L1 : 0) |
           (ss.irq_ret ? X86_DR7_L2 : 0);
}

/* Both the live register and the saved context (x NULL: outside #DB,
 * e.g. in an IDT stub): CpuDxe's exception entry restores DR7 from the
 * context on return. */
static void apply_dr7(EFI_SYSTEM_CONTEXT_X64 *x)
{
    uint64_t v = dr7_now();
    if (x)
        x->Dr7 = v;
    write_dr7(v);
}

/* Execution mode of the code segment cs: 64 if its descriptor has L set,
 * else 32 or 16 from D/B (SDM Vol. 3A 3.4.5). UEFI x64 runs in 64-bit
 * mode; the lookup keeps the unit right if firmware code thunks to 32-bit
 * code. Selectors in the LDT (TI=1) are not used by UEFI firmware. */
static unsigned exec_mode(uint64_t cs)
{
    if (ss.mode && ss.mode_cs == (uint16_t)cs)
        return ss.mode;
    struct __attribute__((packed)) {
        uint16_t limit;
        uint64_t base;
    } gdtr;
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

/* Hands one step (the instruction at ip, code segment cs, about to run)
 * to the callback; returns the action. */
static int report(uint64_t ip, uint64_t cs)
{
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
    return c->step(c->ctx, ip, exec_mode(cs), rdtsc());
}

/* The session ends (once): tell the caller. */
static void tell_end(uint64_t ip, int why)
{
    if (ss.cfg->end)
        ss.cfg->end(ss.cfg->ctx, ip, rdtsc(), why);
}

/* Nothing of the session stays in the CPU's tables: gates back, watched
 * pages executable and their splits undone. Any context. */
static void session_off(void)
{
    idt_chain_unhook();
    if (efi_soft_watch_ready()) {
        unsigned kept;
        efi_soft_watch_release(&kept);
        ss.st->splits_kept = kept;
    }
}

/* Stepping is over (STOPPED, bounded, no resume IP): the rest runs free;
 * DR1 keeps watching the return. rflags: the saved RFLAGS of the code
 * that goes on; x: the #DB context, or NULL. */
static void over(uint64_t *rflags, EFI_SYSTEM_CONTEXT_X64 *x, uint64_t ip, int why)
{
    *rflags &= ~X86_RFLAGS_TF;
    ss.dr0_on = false;
    ss.irq_ret = false;
    apply_dr7(x);
    session_off();
    ss.st->stopped = true;
    ss.phase = PHASE_OVER;
    tell_end(ip, why);
}

static int stop_why(void)
{
    return ss.st->bounded ? PTB_SOFT_STEP_END_BOUNDED : PTB_SOFT_STEP_END_STOPPED;
}

/* A free run ends: execution is seen again (a landing). */
static void leave_free(EFI_SYSTEM_CONTEXT_X64 *x)
{
    ss.dr0_on = false;
    ss.irq_ret = false;
    apply_dr7(x);
    efi_soft_watch_disarm();
    ss.phase = PHASE_STEPPING;
}

/* A free run can end where it lands in the ranges: the watch is there and
 * ip is not on a watched page (there it would fault at once). */
static bool can_run_free(uint64_t ip)
{
    return ss.cfg->unseen && efi_soft_watch_ready() && !efi_soft_watch_covers(ip);
}

/* What the step at ip answered: applied to the saved RFLAGS (and debug
 * registers) of the code about to run. dr6: the #DB's causes (0 outside
 * #DB). */
static void apply(int action, uint64_t *rflags, EFI_SYSTEM_CONTEXT_X64 *x, uint64_t ip,
                  uint64_t dr6)
{
    switch (action) {
    case SOFT_UNIT_SKIP_CALL: {
        uint64_t resume = ss.cfg->resume ? ss.cfg->resume(ss.cfg->ctx) : 0;
        /* Free run: no TF, and no RF left over from an earlier breakpoint
         * hit, which would let the first instruction pass DR0 unchecked
         * should it be the resume IP itself (a call to the next insn). */
        *rflags &= ~X86_RFLAGS_TF;
        if (!(dr6 & X86_DR6_BREAKPOINTS))
            *rflags &= ~X86_RFLAGS_RF;
        if (!resume) {
            over(rflags, x, ip, PTB_SOFT_STEP_END_STOPPED);
            break;
        }
        ss.st->skips++;
        ss.resume = resume;
        if (x)
            x->Dr0 = resume;
        write_dr0(resume);
        ss.dr0_on = true;
        apply_dr7(x);
        ss.phase = PHASE_FREE;
        /* a callback into the ranges lands there too */
        efi_soft_watch_arm();
        break;
    }
    case SOFT_UNIT_STOPPED: over(rflags, x, ip, stop_why()); break;
    case SOFT_UNIT_FREE:
        if (can_run_free(ip)) {
            if (ss.cfg->unseen(ss.cfg->ctx, rdtsc()) == SOFT_UNIT_STOPPED) {
                over(rflags, x, ip, PTB_SOFT_STEP_END_STOPPED);
                break;
            }
            *rflags &= ~X86_RFLAGS_TF;
            if (!(dr6 & X86_DR6_BREAKPOINTS))
                *rflags &= ~X86_RFLAGS_RF;
            ss.st->unseen_runs++;
            ss.phase = PHASE_FREE;
            efi_soft_watch_arm();
            break;
        }
        *rflags |= X86_RFLAGS_TF;
        break;
    default: *rflags |= X86_RFLAGS_TF; break;
    }
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
        x->Dr7 = 0;
        write_dr7(0);
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
            report(ip, x->Cs);
        ss.ret_armed = false;
        ss.dr0_on = false;
        ss.irq_ret = false;
        ss.st->returned = true;
        x->Rflags &= ~X86_RFLAGS_TF;
        apply_dr7(x);
        session_off();
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
        ss.dr0_on = false;
        apply_dr7(x);
        x->Rflags |= X86_RFLAGS_RF;
        ss.phase = PHASE_STEPPING;
        action = report(ip, x->Cs);
    } else if (ss.phase == PHASE_FREE && (dr6 & X86_DR6_B0) && ss.dr0_on && ip == ss.resume) {
        /* Back at the resume IP: disarm, report it, step again. RF lets
         * the instruction run instead of faulting again (SDM 17.3.1.1). */
        leave_free(x);
        x->Rflags |= X86_RFLAGS_RF;
        ss.st->breakpoints++;
        action = report(ip, x->Cs);
    } else if (ss.phase == PHASE_FREE && (dr6 & X86_DR6_B2) && ss.irq_ret && ip == ss.irq_ret_ip) {
        /* The interrupted instruction, about to run: the handler returned
         * if the stack is the one the interrupt left (else the same code
         * runs deeper down: let it pass) */
        x->Rflags |= X86_RFLAGS_RF;
        if (x->Rsp != ss.irq_ret_rsp)
            return;
        leave_free(x);
        ss.st->irq_returns++;
        action = report(ip, x->Cs);
    } else if (ss.phase == PHASE_FREE && (dr6 & X86_DR6_BS)) {
        /* TF came back during a free run: an IRET restored traced code's
         * RFLAGS where neither the watch nor DR2 waited; execution is
         * seen again here */
        leave_free(x);
        x->Rflags &= ~X86_RFLAGS_RF;
        ss.st->tf_returns++;
        action = report(ip, x->Cs);
    } else if (ss.phase == PHASE_STEPPING && (dr6 & X86_DR6_BS)) {
        /* A trap: the next instruction has no breakpoint of ours (DR1's
         * is handled above), so RF must not suppress the next one. */
        x->Rflags &= ~X86_RFLAGS_RF;
        action = report(ip, x->Cs);
    } else {
        ss.st->unexpected++;
        return;
    }
    apply(action, &x->Rflags, x, ip, dr6);
}

/* ---- interrupts and exceptions (efi/capture/idt_chain.h) -------------------- */

/* The length of a software interrupt instruction at ip (0: none). */
static unsigned soft_int_len(uint64_t ip)
{
    const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)ip;
    switch (p[0]) {
    case X86_OP_INT3:
    case X86_OP_INTO:
    case X86_OP_INT1: return 1;
    case X86_OP_INT: return 2;
    default: return 0;
    }
}

/* The handler of an event at a traced instruction runs free (action: the
 * unit's answer to the event); it returns to ret_ip with the frame's RSP. */
static void handler_runs(struct idt_chain_event *e, int action, uint64_t ret_ip)
{
    if (action != SOFT_UNIT_STOPPED)
        action = ss.cfg->unseen ? ss.cfg->unseen(ss.cfg->ctx, rdtsc()) : SOFT_UNIT_STOPPED;
    if (action == SOFT_UNIT_STOPPED) {
        over(e->rflags, NULL, ret_ip, stop_why());
        return;
    }
    ss.st->unseen_runs++;
    ss.phase = PHASE_FREE;
    efi_soft_watch_arm();
    if (!efi_soft_watch_covers(ret_ip)) {
        ss.irq_ret_ip = ret_ip;
        ss.irq_ret_rsp = *e->rsp;
        ss.irq_ret = true;
        write_dr2(ret_ip);
        apply_dr7(NULL);
    }
}

/* A fetch from a watched page: the free run lands here. The instruction
 * has not run (a fault); it is reported as a step and stepped. */
static int landing(struct idt_chain_event *e)
{
    uint64_t ip = *e->rip;
    leave_free(NULL);
    ss.st->landings++;
    int action = report(ip, *e->cs);
    apply(action, e->rflags, NULL, ip, 0);
    return IDT_CHAIN_RESUME;
}

/* In a free run, the event interrupted the code the run was waiting for:
 * TF is back (an IRET restored traced code's RFLAGS), or the IP is where
 * the watch, DR2 (same frame) or DR0 would have ended the run. */
static bool back_in_range(const struct idt_chain_event *e)
{
    uint64_t ip = *e->rip;
    return (*e->rflags & X86_RFLAGS_TF) || (efi_soft_watch_armed() && efi_soft_watch_covers(ip)) ||
           (ss.irq_ret && ip == ss.irq_ret_ip && *e->rsp == ss.irq_ret_rsp) ||
           (ss.dr0_on && ip == ss.resume);
}

static int on_event(void *ctx, struct idt_chain_event *e)
{
    (void)ctx;
    if (e->vector == X86_VECTOR_PF && efi_soft_watch_armed() &&
        (e->error & (X86_PF_P | X86_PF_ID)) == (X86_PF_P | X86_PF_ID) &&
        efi_soft_watch_owns(cpu_read_cr2()))
        return landing(e);
    if (ss.phase == PHASE_FREE && ss.cfg->interrupt && ss.st->reported && back_in_range(e)) {
        /* a free run came back (an IRET or RET to a watched IP) and an
         * interrupt came before that instruction's fetch, which would
         * have ended the run (interrupts go before a code breakpoint or
         * a fetch fault, SDM Vol. 3A 6.9): a CPU's FilterEn sees the
         * landing first, then the interrupt */
        uint64_t ip = *e->rip;
        leave_free(NULL);
        ss.st->landings++;
        apply(report(ip, *e->cs), e->rflags, NULL, ip, 0);
    }
    /* traced code runs with TF set; anything else is none of ours */
    if (ss.phase != PHASE_STEPPING || !(*e->rflags & X86_RFLAGS_TF) || !ss.cfg->interrupt ||
        !ss.st->reported)
        return IDT_CHAIN_PASS;
    uint64_t rip = *e->rip, last = ss.st->last_ip;
    if (rip == last) {
        /* an interrupt before the instruction reported last, or a fault
         * of it: SDM's FUP(NLIP)/FUP(CLIP) are both this IP */
        ss.st->interrupts++;
        int action = ss.cfg->interrupt(ss.cfg->ctx, e->handler, exec_mode(e->handler_cs), rdtsc());
        handler_runs(e, action, rip);
        return IDT_CHAIN_PASS;
    }
    unsigned len = soft_int_len(last);
    if (len && rip == last + len) {
        /* INT n stepped: the instruction went to its handler (the
         * single-step trap would come only after the handler's IRET and
         * the instruction after it) */
        ss.st->soft_ints++;
        int action = report(e->handler, e->handler_cs);
        handler_runs(e, action, rip);
    }
    return IDT_CHAIN_PASS;
}

/* The session's interrupt hooks and watch, before it can step (boot
 * services, or an image-load notify). */
static void session_on(const struct efi_soft_step_config *cfg)
{
    ss.st->vectors = -1;
    ss.st->watch = 0;
    if (!cfg->interrupt)
        return;
    ss.st->vectors = idt_chain_hook(on_event, NULL);
    if (cfg->nwatch && cfg->unseen) {
        ss.st->watch = efi_soft_watch_prepare(cfg->watch_lo, cfg->watch_hi, cfg->nwatch,
                                              cfg->self_lo, cfg->self_hi);
        ss.st->splits = efi_soft_watch_splits();
    }
}

/* No breakpoint of ours may fire once a session is gone. */
static void disarm(void)
{
    write_dr7(0);
    write_dr0(0);
    write_dr1(0);
    write_dr2(0);
    write_dr6(0);
    ss.ret_armed = false;
    ss.dr0_on = false;
    ss.irq_ret = false;
    if (ss.st)
        session_off();
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
    ss.dr0_on = false;
    ss.irq_ret = false;
    ss.resume = 0;
    ss.mode = 0;
    write_dr6(0);
    session_on(cfg);
}

int efi_soft_step_arm(const struct efi_soft_step_config *cfg, struct efi_soft_step_stats *stats)
{
    if (!ss.held || !cfg->entry_ip || (ss.phase != PHASE_IDLE && ss.phase != PHASE_OVER))
        return PTB_SOFT_STEP_STATE;
    disarm();
    begin(cfg, stats);
    write_dr0(cfg->entry_ip);
    ss.dr0_on = true;
    ss.phase = PHASE_ARMED;
    write_dr7(dr7_now());
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
    uint64_t ip = was == PHASE_FREE && ss.dr0_on ? ss.resume
                  : was == PHASE_ARMED           ? ss.cfg->entry_ip
                                                 : ss.st->last_ip;
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
        ss.dr0_on = true;
        ss.phase = PHASE_ARMED;
        write_dr7(dr7_now());
    } else {
        ss.phase = PHASE_STEPPING;
    }
    *call_status = stepped_call(call, arg);
    /* A breakpoint still armed (the call never came back to the resume IP,
     * e.g. it left through Exit()) must not fire later; the gates and
     * pages of the session are given back. */
    disarm();
    efi_soft_watch_free();
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

void efi_soft_step_watch_ranges(struct efi_soft_step_config *cfg, const struct rtit_config *rc)
{
    bool filter = false;
    cfg->nwatch = 0;
    for (unsigned i = 0; i < RTIT_MAX_RANGES; i++)
        filter |= rc->range[i].cfg == RTIT_ADDR_CFG_FILTER;
    for (unsigned i = 0; filter && i < RTIT_MAX_RANGES && cfg->nwatch < PTB_SOFT_STEP_MAX_WATCH;
         i++) {
        const struct rtit_addr_range *r = &rc->range[i];
        if (r->cfg != RTIT_ADDR_CFG_FILTER && r->cfg != RTIT_ADDR_CFG_STOP)
            continue;
        cfg->watch_lo[cfg->nwatch] = r->start;
        cfg->watch_hi[cfg->nwatch++] = r->end;
    }
}

void efi_soft_step_say_events(const struct efi_soft_step_stats *st,
                              void (*say)(const char *fmt, ...)
                                  __attribute__((format(printf, 1, 2))))
{
    char watch[64];
    if (st->watch < 0)
        snprintf(watch, sizeof watch, "off(%s)", efi_soft_watch_strerror(st->watch));
    else
        snprintf(watch, sizeof watch, "%ld", st->watch);
    for (char *p = watch; *p; p++)
        if (*p == ' ')
            *p = '-';
    say("ptboot: trace: soft unit events interrupts=%llu soft_ints=%llu unseen_runs=%llu "
        "landings=%llu "
        "irq_returns=%llu tf_returns=%llu vectors=%d watch=%s splits=%u splits_kept=%u\n",
        (unsigned long long)st->interrupts, (unsigned long long)st->soft_ints,
        (unsigned long long)st->unseen_runs, (unsigned long long)st->landings,
        (unsigned long long)st->irq_returns, (unsigned long long)st->tf_returns, st->vectors, watch,
        st->splits, st->splits_kept);
}
