/* Marker instructions at the points where tracing is switched on and off.
 *
 * On a real CPU they are plain multi-byte NOPs (0F 1F /0 with a 32-bit
 * displacement; SDM Vol. 2B, NOP: "recommended multi-byte sequence"), so
 * they cost a cycle and change nothing. Under QEMU, the virtual trace unit
 * (test/vpt, docs/vpt.md: trigger=markers) recognises their displacement
 * ("vpt+" / "vpt-") and opens or closes its recording window exactly where
 * TraceEn would change, so the same start/stop code is traced in QEMU as on
 * hardware. */
#ifndef PTBOOT_ARCH_X86_TRACE_MARKERS_H
#define PTBOOT_ARCH_X86_TRACE_MARKERS_H

#if defined(__x86_64__)
/* nopl 0x2b747076(%rax): 0f 1f 80 76 70 74 2b */
static inline void rtit_marker_trace_on(void)
{
    __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x76, 0x70, 0x74, 0x2b" ::: "memory");
}
/* nopl 0x2d747076(%rax): 0f 1f 80 76 70 74 2d */
static inline void rtit_marker_trace_off(void)
{
    __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x76, 0x70, 0x74, 0x2d" ::: "memory");
}
#else
static inline void rtit_marker_trace_on(void)
{
}
static inline void rtit_marker_trace_off(void)
{
}
#endif

#endif
