/* IDT chaining (idt_chain.h). */
#include <string.h>

#include "efi/capture/idt_chain.h"
#include "efi/platform/cpu_ctl.h"

/* SDM Vol. 3A Table 6-1: vectors left alone. #DB is the glue's own (the
 * CPU Architectural Protocol's handler); NMI, #DF and #MC may run on their
 * own stacks at any moment, even inside the glue. */
#define X86_VECTOR_DB  1
#define X86_VECTOR_NMI 2
#define X86_VECTOR_DF  8
#define X86_VECTOR_MC  18
/* Vectors whose exceptions push an error code: #DF, #TS, #NP, #SS, #GP,
 * #PF, #AC, #CP, #VC, #SX (Table 6-1). */
#define X86_ERROR_CODE_VECTORS                                                                 \
    ((1u << 8) | (1u << 10) | (1u << 11) | (1u << 12) | (1u << 13) | (1u << 14) | (1u << 17) | \
     (1u << 21) | (1u << 29) | (1u << 30))
/* 64-bit gate descriptor (6.14.1): P is bit 47, the type bits 43:40
 * (0xE interrupt gate, 0xF trap gate). */
#define GATE_P         0x80u
#define GATE_TYPE_MASK 0x0fu
#define GATE_INTERRUPT 0x0eu
#define GATE_TRAP      0x0fu
#define STUB_BYTES     16u

struct gate {
    uint16_t off0, sel;
    uint8_t ist, attr;
    uint16_t off1;
    uint32_t off2, reserved;
};
_Static_assert(sizeof(struct gate) == 16, "64-bit IDT gate");

extern const uint8_t idt_chain_stubs[];
extern const uint8_t idt_chain_iret[], idt_chain_iret_err[];
void idt_chain_dispatch(uint64_t *slot) __attribute__((visibility("hidden")));

static struct {
    idt_chain_fn fn;
    void *ctx;
    struct gate *idt;
    unsigned n; /* gates in the IDT */
    bool hooked;
    bool is_hooked[IDT_CHAIN_VECTORS];
    struct gate saved[IDT_CHAIN_VECTORS];
    /* kept after unhooking: a stub may still be on its way */
    uint64_t orig[IDT_CHAIN_VECTORS];
} chain;

static uint64_t gate_target(const struct gate *g)
{
    return (uint64_t)g->off0 | (uint64_t)g->off1 << 16 | (uint64_t)g->off2 << 32;
}

static void gate_set_target(struct gate *g, uint64_t a)
{
    g->off0 = (uint16_t)a;
    g->off1 = (uint16_t)(a >> 16);
    g->off2 = (uint32_t)(a >> 32);
}

static uint64_t stub(unsigned v)
{
    return (uint64_t)(uintptr_t)idt_chain_stubs + (uint64_t)v * STUB_BYTES;
}

void idt_chain_dispatch(uint64_t *slot)
{
    unsigned v = (unsigned)(*slot & (IDT_CHAIN_VECTORS - 1));
    uint64_t *cpu = slot + 1;
    struct idt_chain_event e;
    e.vector = v;
    /* INT n with one of these vectors pushes no error code: the firmware
     * has no reason to do that, and CpuDxe's own entry assumes the same */
    e.has_error = v < 32 && ((X86_ERROR_CODE_VECTORS >> v) & 1);
    e.error = e.has_error ? cpu[0] : 0;
    uint64_t *f = cpu + (e.has_error ? 1 : 0);
    e.rip = &f[0];
    e.cs = &f[1];
    e.rflags = &f[2];
    e.rsp = &f[3];
    e.ss = &f[4];
    e.handler = chain.orig[v];
    e.handler_cs = chain.saved[v].sel;
    int r = chain.fn ? chain.fn(chain.ctx, &e) : IDT_CHAIN_PASS;
    if (r == IDT_CHAIN_RESUME)
        *slot = (uint64_t)(uintptr_t)(e.has_error ? idt_chain_iret_err : idt_chain_iret);
    else
        *slot = chain.orig[v];
}

static bool leave_alone(unsigned v)
{
    return v == X86_VECTOR_DB || v == X86_VECTOR_NMI || v == X86_VECTOR_DF || v == X86_VECTOR_MC;
}

int idt_chain_hook(idt_chain_fn fn, void *ctx)
{
    struct __attribute__((packed)) {
        uint16_t limit;
        uint64_t base;
    } idtr;
    if (chain.hooked)
        return -1;
    __asm__ volatile("sidt %0" : "=m"(idtr));
    unsigned n = ((unsigned)idtr.limit + 1) / sizeof(struct gate);
    if (!idtr.base || !n)
        return -1;
    if (n > IDT_CHAIN_VECTORS)
        n = IDT_CHAIN_VECTORS;
    chain.fn = fn;
    chain.ctx = ctx;
    chain.idt = (struct gate *)(uintptr_t)idtr.base;
    chain.n = n;
    int hooked = 0;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    for (unsigned v = 0; v < n; v++) {
        struct gate *g = &chain.idt[v];
        unsigned type = g->attr & GATE_TYPE_MASK;
        chain.is_hooked[v] = false;
        if (leave_alone(v) || !(g->attr & GATE_P) || (type != GATE_INTERRUPT && type != GATE_TRAP))
            continue;
        chain.saved[v] = *g;
        chain.orig[v] = gate_target(g);
        gate_set_target(g, stub(v));
        chain.is_hooked[v] = true;
        hooked++;
    }
    chain.hooked = true;
    cpu_wp_restore(cr0);
    cpu_irq_restore(flags);
    return hooked;
}

void idt_chain_unhook(void)
{
    if (!chain.hooked)
        return;
    uint64_t flags = cpu_irq_save();
    uint64_t cr0 = cpu_wp_off();
    for (unsigned v = 0; v < chain.n; v++) {
        struct gate *g = &chain.idt[v];
        /* a gate someone else changed meanwhile stays theirs */
        if (chain.is_hooked[v] && gate_target(g) == stub(v) && g->sel == chain.saved[v].sel)
            *g = chain.saved[v];
        chain.is_hooked[v] = false;
    }
    chain.hooked = false;
    cpu_wp_restore(cr0);
    cpu_irq_restore(flags);
}

bool idt_chain_hooked(void)
{
    return chain.hooked;
}
