/* EFI_CPU_ARCH_PROTOCOL (UEFI Platform Initialization spec, Vol. 2, DXE
 * Architectural Protocols, "CPU Architectural Protocol"). gnu-efi does not
 * declare it; only the members up to RegisterInterruptHandler are used, the
 * rest are kept as opaque pointers so the layout stays right. */
#ifndef PTBOOT_EFI_PLATFORM_CPU_ARCH_H
#define PTBOOT_EFI_PLATFORM_CPU_ARCH_H

#include <efi.h>

#define PTB_CPU_ARCH_PROTOCOL_GUID                         \
    {                                                      \
        0x26baccb1, 0x6f42, 0x11d4,                        \
        {                                                  \
            0xbc, 0xe7, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 \
        }                                                  \
    }

typedef VOID(EFIAPI *EFI_CPU_INTERRUPT_HANDLER)(EFI_EXCEPTION_TYPE type, EFI_SYSTEM_CONTEXT ctx);

typedef struct _EFI_CPU_ARCH_PROTOCOL EFI_CPU_ARCH_PROTOCOL;
struct _EFI_CPU_ARCH_PROTOCOL {
    void *FlushDataCache;
    void *EnableInterrupt;
    void *DisableInterrupt;
    void *GetInterruptState;
    void *Init;
    /* Handler NULL unregisters; EFI_ALREADY_STARTED if one is registered. */
    EFI_STATUS(EFIAPI *RegisterInterruptHandler)
    (EFI_CPU_ARCH_PROTOCOL *self, EFI_EXCEPTION_TYPE type, EFI_CPU_INTERRUPT_HANDLER handler);
    void *GetTimerValue;
    void *SetMemoryAttributes;
    UINT32 NumberOfTimers;
    UINT32 DmaBufferAlignment;
};

/* SDM Vol. 3A 6.3.1, Table 6-1: vector 13 is #GP. */
#define X86_VECTOR_GP 13

#endif
