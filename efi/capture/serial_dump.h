/* The serial dump: named files (raw trace, sideband, code snapshots) sent
 * over the console in the framed text of decoder/ptd_frame.h, for
 * `ptboot serial LOG` on the workstation to turn back into files
 * (docs/serial.md). Callers hand over name + bytes; nothing is copied. */
#ifndef PTBOOT_EFI_CAPTURE_SERIAL_DUMP_H
#define PTBOOT_EFI_CAPTURE_SERIAL_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "decoder/ptd_frame.h"

struct efi_dump_file {
    const char *name; /* as the host will write it: no spaces, <= 64 chars */
    const void *data;
    size_t size;
    enum ptd_frame_kind kind; /* PTD_FRAME_KIND_PT for Intel PT traces */
};

struct efi_dump_stats {
    uint64_t files, lines, payload_bytes, wire_bytes;
};

/* Dumps the files in order, between the lines
 *   ptboot: serial-dump begin files=<n>
 *   ptboot: serial-dump end files=<n> lines=<n> bytes=<payload> wire=<chars>
 * payload is the bytes per data line (0: PTD_FRAME_PAYLOAD_DEFAULT).
 * A file whose name the format cannot carry is skipped with an error line.
 * Returns the number of files dumped; stats (may be NULL) gets the counts. */
size_t efi_serial_dump(const struct efi_dump_file *files, size_t count, uint32_t payload,
                       struct efi_dump_stats *stats);

/* The kind for a file name: PTD_FRAME_KIND_PT for "*.pt", else raw. */
enum ptd_frame_kind efi_serial_dump_kind(const char *name);

#endif
