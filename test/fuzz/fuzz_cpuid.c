/* libFuzzer target over the text users feed to `ptboot info/plan --cpuid`:
 * the cpuid -r dump parser, the capability decoding behind it, the info
 * report and the default plan. Built with ASan + UBSan. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arch/x86/cpuid_dump.h"
#include "arch/x86/pt_caps.h"
#include "arch/x86/pt_caps_report.h"
#include "arch/x86/rtit_plan_report.h"

static void sink(void *ctx, const char *line)
{
    size_t *n = ctx;
    *n += strlen(line); /* touches every byte of every line */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct x86_cpuid_dump dump;
    unsigned line = 0;
    size_t n = 0;

    int err = x86_cpuid_dump_parse(&dump, (const char *)data, size, &line);
    if (err) {
        if (line == 0 && err != X86_CPUID_DUMP_E_EMPTY && err != X86_CPUID_DUMP_E_ARG)
            __builtin_trap(); /* line errors must say where */
        return 0;
    }
    struct rtit_caps caps;
    rtit_caps_read(&caps, x86_cpuid_dump_query, &dump);
    if (caps.pt && (!caps.leaf7_pt || !caps.has_leaf14 || caps.max_basic_leaf < 0x14))
        __builtin_trap(); /* pt=yes only with a real leaf 14h */
    rtit_caps_report(&caps, NULL, sink, &n);
    rtit_plan_report_default(&caps, sink, &n);
    return 0;
}
