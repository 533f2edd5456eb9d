#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/cpu_arch.h"
#include "efi/resident_step.h"

/* SDM Vol. 3A 6.3.1, Table 6-1: vector 1 is #DB. */
#define X86_VECTOR_DB 1
/* SDM Vol. 1 3.4.3: EFLAGS.TF (single step), EFLAGS.RF (resume). */
#define X86_RFLAGS_TF (1ull << 8)
#define X86_RFLAGS_RF (1ull << 16)
/* SDM Vol. 3B 17.2.3: DR6.B0/B1 (breakpoint 0/1 hit), DR6.BS (single step). */
#define X86_DR6_B0 (1ull << 0)
#define X86_DR6_B1 (1ull << 1)
#define X86_DR6_BS (1ull << 14)
/* SDM Vol. 3B 17.2.4: DR7.L0/L1 enable breakpoints 0/1; R/W and LEN left
 * 00 = instruction execution, 1 byte (required for execution breakpoints). */
#define X86_DR7_L0 (1ull << 0)
#define X86_DR7_L1 (1ull << 2)
/* The traced image runs in long mode (UEFI 2.10 section 2.3.4: x64
 * firmware calls images in 64-bit mode). */
#define RESIDENT_EXEC_MODE 64

static struct {
    struct resident_header *h;
    struct soft_unit *unit;
    void (*on_end)(void);
    uint64_t entry;        /* DR0 target while armed at the entry */
    uint64_t resume;       /* DR0 target during a SKIP_CALL free run */
    uint64_t ret_ip;       /* DR1 target: the entry's return address */
    uint64_t dr7;
    int phase;             /* 0 idle, 1 armed at entry, 2 stepping, 3 free run */
} rs;

enum { PHASE_IDLE, PHASE_ARMED, PHASE_STEPPING, PHASE_FREE };

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

/* Both the live register and the saved context: CpuDxe's exception entry
 * may or may not reload DR7 from the context on return. */
static void set_dr7(EFI_SYSTEM_CONTEXT_X64 *x, uint64_t v)
{
    rs.dr7 = v;
    if (x)
        x->Dr7 = v;
    write_dr7(v);
}

static void publish(void)
{
    struct soft_unit_status s;
    soft_unit_get_status(rs.unit, &s);
    struct resident_header *h = rs.h;
    h->write_pos = s.write_pos;
    h->bytes = s.bytes;
    h->insns = s.insns;
    h->steps = s.steps;
    h->wrapped = s.wrapped;
}

/* The traced image is still in memory whenever tracing ends (at its
 * entry's return address, inside one of its calls at ExitBootServices, or
 * at the unit's stop): keep its code for later decoding. */
static void snapshot(void)
{
    struct resident_header *h = rs.h;
    if (!h->snapshot || !h->has_target)
        return;
    memcpy((void *)(uintptr_t)h->snapshot,
           (const void *)(uintptr_t)(h->target.base & ~(uint64_t)4095), h->snapshot_bytes);
    h->snapshot_taken = 1;
}

static void end(EFI_SYSTEM_CONTEXT_X64 *x, uint64_t ip, uint32_t reason)
{
    if (rs.phase == PHASE_STEPPING || rs.phase == PHASE_FREE) {
        soft_unit_stop(rs.unit, ip, rdtsc());
        snapshot();
    }
    if (x)
        x->Rflags &= ~X86_RFLAGS_TF;
    set_dr7(x, 0);
    rs.phase = PHASE_IDLE;
    rs.h->stop_tsc = rdtsc();
    rs.h->state = RESIDENT_STOPPED;
    rs.h->stop_reason = reason;
    publish();
    if (rs.on_end)
        rs.on_end();
}

/* Runs in the firmware's exception context; the CPU cleared TF on entry,
 * so none of this is stepped. RFLAGS is restored from the context. */
static VOID EFIAPI db_handler(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx)
{
    EFI_SYSTEM_CONTEXT_X64 *x = ctx.SystemContextX64;
    (void)type;
    uint64_t dr6;
    __asm__ volatile("mov %%dr6, %0" : "=r"(dr6));
    dr6 |= x->Dr6;
    /* DR6 bits are sticky (SDM Vol. 3B 17.2.3). */
    write_dr6(0);
    x->Dr6 = 0;
    uint64_t ip = x->Rip;
    if (rs.phase == PHASE_IDLE) {
        x->Rflags &= ~X86_RFLAGS_TF;
        set_dr7(x, 0);
        return;
    }
    if ((dr6 & (X86_DR6_B1 | X86_DR6_BS)) && ip == rs.ret_ip && rs.phase != PHASE_ARMED) {
        /* Back at the entry's return address: the image returned. The
         * unit sees this step too, so that it knows where the RET went
         * (out of the range: TIP.PGD) before it is stopped. */
        if (rs.phase == PHASE_STEPPING)
            soft_unit_step(rs.unit, ip, RESIDENT_EXEC_MODE, rdtsc());
        end(x, ip, RESIDENT_STOP_RETURNED);
        return;
    }
    if (rs.phase == PHASE_ARMED) {
        if (!(dr6 & X86_DR6_B0) || ip != rs.entry)
            return;
        /* First instruction of the entry point: the CALL's return
         * address is on top of the stack. */
        rs.ret_ip = *(const volatile uint64_t *)(uintptr_t)x->Rsp;
        x->Dr1 = rs.ret_ip;
        write_dr1(rs.ret_ip);
        set_dr7(x, X86_DR7_L1);
        rs.h->state = RESIDENT_TRACING;
        rs.h->start_tsc = rdtsc();
        x->Rflags |= X86_RFLAGS_RF;
        rs.phase = PHASE_STEPPING;
    } else if (rs.phase == PHASE_FREE) {
        if (!(dr6 & X86_DR6_B0) || ip != rs.resume)
            return;
        set_dr7(x, X86_DR7_L1);
        x->Rflags |= X86_RFLAGS_RF;
        rs.phase = PHASE_STEPPING;
    } else if (!(dr6 & X86_DR6_BS)) {
        return;
    }
    int action = soft_unit_step(rs.unit, ip, RESIDENT_EXEC_MODE, rdtsc());
    switch (action) {
    case SOFT_UNIT_SKIP_CALL:
        rs.resume = soft_unit_resume_ip(rs.unit);
        x->Rflags &= ~X86_RFLAGS_TF;
        x->Dr0 = rs.resume;
        write_dr0(rs.resume);
        set_dr7(x, X86_DR7_L0 | X86_DR7_L1);
        rs.phase = PHASE_FREE;
        break;
    case SOFT_UNIT_STOPPED:
        end(x, ip, RESIDENT_STOP_UNIT);
        return;
    default:
        x->Rflags |= X86_RFLAGS_TF;
        break;
    }
    publish();
}

EFI_STATUS resident_step_init(struct resident_header *h, struct soft_unit *unit,
                              void (*on_end)(void))
{
    EFI_GUID guid = EFI_CPU_ARCH_PROTOCOL_GUID_INIT;
    EFI_CPU_ARCH_PROTOCOL *cpu = NULL;
    memset(&rs, 0, sizeof rs);
    rs.h = h;
    rs.unit = unit;
    rs.on_end = on_end;
    if (EFI_ERROR(BS->LocateProtocol(&guid, NULL, (void **)&cpu)) || !cpu)
        return EFI_NOT_FOUND;
    return cpu->RegisterInterruptHandler(cpu, X86_VECTOR_DB, db_handler);
}

void resident_step_arm(uint64_t entry)
{
    rs.entry = entry;
    rs.phase = PHASE_ARMED;
    write_dr6(0);
    write_dr0(entry);
    set_dr7(NULL, X86_DR7_L0);
}

void resident_step_stop(uint32_t reason)
{
    if (rs.phase == PHASE_IDLE)
        return;
    /* Called from outside the traced code (TF is clear here: the notify
     * runs inside a call the image made, i.e. in a free run, or in
     * another image). Close the packets at the resume IP. */
    end(NULL, rs.phase == PHASE_FREE ? rs.resume : rs.entry, reason);
}
