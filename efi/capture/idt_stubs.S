/* The entry stubs of efi/capture/idt_chain.c: one per vector, 16 bytes
 * apart from idt_chain_stubs, each pushing its vector and joining the
 * common part, which saves every register the C code may change (the
 * general registers and, with FXSAVE64, the x87/SSE state and MXCSR),
 * clears DF, and calls
 *
 *     void idt_chain_dispatch(uint64_t *slot)      (SysV ABI)
 *
 * with slot pointing at the pushed vector, just below the frame the CPU
 * pushed ([error code,] RIP, CS, RFLAGS, RSP, SS; SDM Vol. 3A 6.14.1).
 * The dispatcher replaces the vector in the slot with where to go next:
 * the original handler (the stack is then exactly as the CPU left it, and
 * so are the registers and RFLAGS), or idt_chain_iret / idt_chain_iret_err
 * (the event was handled here: IRETQ, past the error code if there is
 * one). The RET at the end takes that address from the slot. */
    .text
    .globl idt_chain_stubs, idt_chain_iret, idt_chain_iret_err
    .hidden idt_chain_dispatch

    .balign 16
idt_chain_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    pushq $vec
    jmp idt_chain_common
    .set vec, vec + 1
    .endr

idt_chain_common:
    pushfq
    pushq %rax
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %rbx
    pushq %rbp
    movq %rsp, %rbx
    leaq 96(%rsp), %rdi         /* the slot: above 11 registers and RFLAGS */
    subq $512, %rsp
    andq $-16, %rsp
    fxsave64 (%rsp)
    cld
    call idt_chain_dispatch
    fxrstor64 (%rsp)
    movq %rbx, %rsp
    popq %rbp
    popq %rbx
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rax
    popfq
    ret

idt_chain_iret_err:
    leaq 8(%rsp), %rsp
idt_chain_iret:
    iretq

    .section .note.GNU-stack,"",@progbits
