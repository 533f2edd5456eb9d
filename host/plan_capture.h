/* `ptboot plan --cpuid FILE --capture trace|resident [--image BASE:SIZE]...
 * [--unit hw|soft] [words]`: what a capture would program on the CPU of a
 * recorded CPUID dump (arch/x86/capture_plan.h), the same text the UEFI
 * app's `plan` command prints on the target. */
#ifndef PTBOOT_HOST_PLAN_CAPTURE_H
#define PTBOOT_HOST_PLAN_CAPTURE_H

/* argv as host_cmd_plan got it; returns the exit code (0 planned,
 * 1 refused, 2 bad arguments). */
int host_plan_capture(int argc, char **argv);

#endif
