#include <string.h>

#include "efi/app.h"

static const struct efi_command commands[] = {
    { "help", "", "list the commands and the app's options", efi_cmd_help },
    { "info", "[--cpuid FILE | --cpus]", "CPU and Intel PT capabilities, RTIT MSRs as found",
      efi_cmd_info },
    { "dump", "[options] (FILE[:FROM[-TO]] | --resident)",
      "packets of a trace file on the stick, as libipt's ptdump prints them", efi_cmd_dump },
    { "flow", "(--pt FILE (--pages PREFIX | --live) | --resident) [options]",
      "instruction flow of a trace, as libipt's ptxed --no-inst prints it", efi_cmd_flow },
    { "decode", "[--last N] [--no-summary] [--resident | DIR]",
      "decode summaries of a capture: the resident tracer's, or a \\ptboot\\capNNN on the stick "
      "(default: resident, else last.txt's)",
      efi_cmd_decode },
    { "serial-dump", "[--line-bytes N] FILE...",
      "send files over serial as framed base64 lines, for `ptboot serial`", efi_cmd_serial_dump },
    { "images", "[--save] [--load FILE]",
      "loaded images: base, size, entry, name (debug directory, firmware file or path)",
      efi_cmd_images },
    { "memmap", "[--ranges | --mark [--also BASE:SIZE] | --survived]",
      "RAM ranges on-target decoding may read (from the memory map); --mark/--survived: which RAM "
      "survives a reset",
      efi_cmd_memmap },
    { "trace", "[options] [PATH | --boot-next]",
      "load an image and trace it running (Intel PT or the software unit), decode on target",
      efi_cmd_trace },
    { "plan", "[trace|resident] [--unit hw|soft] [--image BASE:SIZE]... [--cpuid FILE] [words]",
      "what a capture would program on this CPU (decisions, ToPA, MSR writes), nothing written",
      efi_cmd_plan },
    { "install",
      "[--early] [--driver PATH] [--image NAME]... [--unit hw|soft|auto] [--buffer BYTES] "
      "[--trace-stop OFF] [--follow] [--max-insns N] [--hang-timeout S [--hang-repeat]] [--ring] "
      "[--recorder-at ADDR] [--recorder-code BYTES] [--no-recorder] [words]",
      "add the resident boot tracer as a Driver#### option (traces the next boot); --early: the "
      "words of ptboot's driver in the firmware volume (variable PtbootEarly)",
      efi_cmd_install },
    { "recover", "[--serial-dump] [--no-files] [--keep]",
      "the hang recorder of the boot before a reset: summary, files (reset=1), serial dump; then "
      "frees it",
      efi_cmd_recover },
    { "uninstall", "[--early]",
      "remove the resident boot tracer's Driver#### options (--early: the variable PtbootEarly)",
      efi_cmd_uninstall },
    { "resident", "[status|stop|flow|dump|report|chain FILE [--args TEXT]]...",
      "the resident tracer of this boot: status, decode, dump", efi_cmd_resident },
    { "selftest", "", "prove the #GP-safe MSR path and the no-allocation rule", efi_cmd_selftest },
};

const struct efi_command *efi_command_find(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return &commands[i];
    return NULL;
}

const struct efi_command *efi_command_at(size_t i)
{
    return i < sizeof commands / sizeof commands[0] ? &commands[i] : NULL;
}
