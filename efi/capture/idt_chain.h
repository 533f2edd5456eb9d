/* IDT chaining for the software trace unit: while a session traces, every
 * present gate of the IDT (but #DB, NMI, #DF and #MC) first enters a stub
 * of ours (efi/capture/idt_stubs.S), which calls a C function with the
 * event; that function answers PASS (the original handler runs, with the
 * stack, registers and flags exactly as the CPU left them) or RESUME (the
 * event was the glue's own, e.g. a fetch from a page it made
 * non-executable: IRETQ straight back). Unhooking puts every gate back as
 * it was. This is how interrupts and exceptions taken at a traced
 * instruction are seen although the CPU clears TF when it enters their
 * handlers (SDM Vol. 3A 6.12.1.2, Vol. 3B 17.3.1.4).
 *
 * SDM Vol. 3A 6.14.1 (64-bit IDT gate descriptors, the stack frame),
 * 6.3.1 Table 6-1 (which vectors push an error code). */
#ifndef PTBOOT_EFI_CAPTURE_IDT_CHAIN_H
#define PTBOOT_EFI_CAPTURE_IDT_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#define IDT_CHAIN_VECTORS 256

/* One interrupt or exception, as the CPU delivered it. The pointers are
 * into the CPU's frame: writing *rflags or *rip changes what IRET loads. */
struct idt_chain_event {
    unsigned vector;
    bool has_error;
    uint64_t error;
    uint64_t *rip, *cs, *rflags, *rsp, *ss;
    uint64_t handler;    /* where the gate led before the hook */
    uint16_t handler_cs; /* the gate's selector */
};

enum {
    IDT_CHAIN_PASS = 0,
    IDT_CHAIN_RESUME = 1
};

typedef int (*idt_chain_fn)(void *ctx, struct idt_chain_event *e);

/* Hooks the IDT of this CPU (SIDT). Returns the number of gates hooked,
 * or -1 when it is hooked already or there is no IDT. */
int idt_chain_hook(idt_chain_fn fn, void *ctx);
/* Puts the gates back (those still pointing at our stubs); safe to call
 * from the callback and when not hooked. */
void idt_chain_unhook(void);
bool idt_chain_hooked(void);

#endif
