/* Disassembly by Zydis, loaded when first needed: see disasm.h. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <Zydis/Zydis.h>

#include "host/disasm.h"

/* The library the headers describe: Zydis' shared object is versioned
 * MAJOR.MINOR (its soname), as ZYDIS_VERSION gives them. */
#define ZYDIS_LIB_FMT "libZydis.so.%u.%u"

static struct {
    __typeof__(&ZydisDecoderInit) decoder_init;
    __typeof__(&ZydisFormatterInit) formatter_init;
    __typeof__(&ZydisDecoderDecodeFull) decode;
    __typeof__(&ZydisFormatterFormatInstruction) format;
    ZydisDecoder dec[3]; /* by enum ptd_exec_mode */
    ZydisFormatter fmt;
} zy;

/* Not inlined (build/ptboot is optimized whole, host/host.mk): the
 * linker's warning about dlopen in a static program names this function,
 * and the build leaves out that warning by the name. */
__attribute__((noinline)) int host_disasm_open(int att, char *err, size_t errsize)
{
    char name[64];
    snprintf(name, sizeof name, ZYDIS_LIB_FMT, (unsigned)ZYDIS_VERSION_MAJOR(ZYDIS_VERSION),
             (unsigned)ZYDIS_VERSION_MINOR(ZYDIS_VERSION));
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errsize, "disassembly needs %s: %s (--no-inst prints the flow without it)",
                 name, dlerror());
        return -1;
    }
    /* POSIX: dlsym's object pointer converts to a function pointer */
    *(void **)&zy.decoder_init = dlsym(lib, "ZydisDecoderInit");
    *(void **)&zy.formatter_init = dlsym(lib, "ZydisFormatterInit");
    *(void **)&zy.decode = dlsym(lib, "ZydisDecoderDecodeFull");
    *(void **)&zy.format = dlsym(lib, "ZydisFormatterFormatInstruction");
    if (!zy.decoder_init || !zy.formatter_init || !zy.decode || !zy.format) {
        snprintf(err, errsize, "%s lacks a function ptboot uses (a different Zydis?)", name);
        return -1;
    }
    zy.decoder_init(&zy.dec[PTD_EXEC_MODE_16], ZYDIS_MACHINE_MODE_LEGACY_16, ZYDIS_STACK_WIDTH_16);
    zy.decoder_init(&zy.dec[PTD_EXEC_MODE_32], ZYDIS_MACHINE_MODE_LEGACY_32, ZYDIS_STACK_WIDTH_32);
    zy.decoder_init(&zy.dec[PTD_EXEC_MODE_64], ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64);
    zy.formatter_init(&zy.fmt, att ? ZYDIS_FORMATTER_STYLE_ATT : ZYDIS_FORMATTER_STYLE_INTEL);
    return 0;
}

static const char hexd[] = "0123456789abcdef";

char *host_disasm_append(const struct ptd_flow_insn *in, char *p, char *end)
{
    ZydisDecodedInstruction zi;
    ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
    unsigned m = in->mode < 3 ? in->mode : PTD_EXEC_MODE_64;
    *p++ = ' ';
    *p++ = ' ';
    if (ZYAN_SUCCESS(zy.decode(&zy.dec[m], in->raw, in->size, &zi, ops)) &&
        ZYAN_SUCCESS(zy.format(&zy.fmt, &zi, ops, zi.operand_count_visible, p, (size_t)(end - p),
                               in->ip, ZYAN_NULL)))
        return p + strlen(p);
    for (unsigned i = 0; i < in->size && end - p > 8; i++) {
        *p++ = hexd[in->raw[i] >> 4];
        *p++ = hexd[in->raw[i] & 15];
        *p++ = ' ';
    }
    memcpy(p, "(bad)", 5);
    return p + 5;
}
