/* A capture as files on the boot volume (docs/capture-files.md), the
 * directory `ptboot flow --capture DIR` reads:
 *
 *   \ptboot\capNNN\trace.pt      the trace, linear, from its first PSB
 *   \ptboot\capNNN\sideband.txt  format/sideband.h's text form
 *   \ptboot\capNNN\code.dump     code snapshot: 4 KiB pages
 *   \ptboot\capNNN\code.addr     one little-endian u64 address per page
 *   \ptboot\last.txt             "capNNN\n": the newest capture
 *
 * NNN counts up from 001 to the first unused number (to 999), so a lab
 * machine booting the stick again and again keeps every capture, and
 * last.txt finds the newest without listing the directory. */
#ifndef PTBOOT_EFI_CAPTURE_FILES_H
#define PTBOOT_EFI_CAPTURE_FILES_H

#include <stddef.h>
#include <stdint.h>
#include <efi.h>

#include "format/sideband.h"
#include "efi/platform/volume.h"

#define CAPTURE_FILES_ROOT "\\ptboot"
#define CAPTURE_FILES_MAX 999
#define CAPTURE_FILES_DIR_MAX 32 /* "\\ptboot\\cap999" and a NUL */

struct capture_files_in {
    const struct sideband *sb;       /* required */
    const uint8_t *trace;            /* linear trace from a PSB (arch/x86/rtit_linear.h) */
    size_t trace_len;                /* 0: an empty trace.pt */
    /* the code snapshot as a page dump (format/code_image.h): 4 KiB pages and
     * one little-endian u64 address per page, e.g. efi_capture_page_dump's
     * or an image watcher's (its struct code_dump snap); NULL/0: none */
    const uint8_t *code_dump;
    size_t code_dump_len;
    const uint8_t *code_addr;
    size_t code_addr_len;
};

/* Writes the four files into a new \ptboot\capNNN and updates last.txt.
 * dir receives "\\ptboot\\capNNN". Returns PTB_VOLUME_OK or the first
 * error (what was written stays; which file failed goes to *failed). */
enum efi_volume_result efi_capture_files_write(EFI_HANDLE image, const struct capture_files_in *in,
                                               char dir[CAPTURE_FILES_DIR_MAX],
                                               const char **failed);

#endif
