/* Loading a recorded CPUID dump file for the host commands (info, plan). */
#ifndef PTBOOT_HOST_CPUID_FILE_H
#define PTBOOT_HOST_CPUID_FILE_H

#include "arch/x86/cpuid_dump.h"

/* Reads and parses FILE ("-" for standard input); on failure prints "<who>: FILE[:line]: reason" to
 * stderr and returns NULL. The result is malloc'd: free() it. */
struct x86_cpuid_dump *host_cpuid_file_load(const char *path, const char *who);

#endif
