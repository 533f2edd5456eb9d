/* The system calls newlib needs, provided by the app (efi/platform/syscalls.c). */
#ifndef PTBOOT_EFI_PLATFORM_SYSCALLS_H
#define PTBOOT_EFI_PLATFORM_SYSCALLS_H

/* Calls of sbrk since start. The app never allocates from newlib's heap:
 * sbrk always fails, and the count is reported at exit so tests can prove
 * that no code path tried. */
unsigned efi_sbrk_calls(void);

#endif
