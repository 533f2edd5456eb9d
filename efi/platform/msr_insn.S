/* The only RDMSR/WRMSR instructions of the app. Each sits at a known
 * address (efi_msr_*_insn); when it raises #GP the handler in msr_safe.c
 * moves RIP to the matching efi_msr_*_fault label, which returns 1 instead
 * of the firmware's exception dead-loop. SysV ABI (called from our C code).
 *
 *   int efi_msr_rdmsr_raw(uint32_t msr, uint64_t *value)   0 ok, 1 #GP
 *   int efi_msr_wrmsr_raw(uint32_t msr, uint64_t value)    0 ok, 1 #GP
 */
    .text
    .globl efi_msr_rdmsr_raw, efi_msr_rdmsr_insn, efi_msr_rdmsr_fault
    .globl efi_msr_wrmsr_raw, efi_msr_wrmsr_insn, efi_msr_wrmsr_fault

efi_msr_rdmsr_raw:
    movl %edi, %ecx
efi_msr_rdmsr_insn:
    rdmsr
    shlq $32, %rdx
    movl %eax, %eax
    orq %rdx, %rax
    movq %rax, (%rsi)
    xorl %eax, %eax
    ret
efi_msr_rdmsr_fault:
    movl $1, %eax
    ret

efi_msr_wrmsr_raw:
    movl %edi, %ecx
    movl %esi, %eax
    movq %rsi, %rdx
    shrq $32, %rdx
efi_msr_wrmsr_insn:
    wrmsr
    xorl %eax, %eax
    ret
efi_msr_wrmsr_fault:
    movl $1, %eax
    ret

    .section .note.GNU-stack,"",@progbits
