/* Loading a recorded CPUID dump file for the host commands (info, plan). */
#ifndef PTBOOT_HOST_CPUID_FILE_H
#define PTBOOT_HOST_CPUID_FILE_H

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"

/* Reads and parses FILE ("-" for standard input); on failure prints "<who>: FILE[:line]: reason" to
 * stderr and returns NULL. The result is malloc'd: free() it. */
struct x86_cpuid_dump *host_cpuid_file_load(const char *path, const char *who);

/* host_cpuid_file_load, then the Intel PT capabilities of that CPU into
 * *caps (what `info --cpuid` and `plan --cpuid` report on). Returns 0, or
 * -1 after the message. */
int host_cpuid_file_caps(const char *path, const char *who, struct rtit_caps *caps);

#endif
