/* Serial dump (efi/capture/serial_dump.h). Lines are encoded into one large buffer
 * and leave in one console write per buffer: the console costs per call,
 * not per byte (efi/platform/console.c), and a 115200-baud UART takes 11.5 KB/s, so
 * the encoder (tens of MB/s) never holds the line up. */
#include <string.h>

#include "efi/platform/console.h"
#include "efi/capture/serial_dump.h"

/* Lines per console write: 16 KiB of text, ~110 data lines. */
#define DUMP_BUF_BYTES (16u << 10)

enum ptd_frame_kind efi_serial_dump_kind(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && !strcmp(name + n - 3, ".pt") ? PTD_FRAME_KIND_PT : PTD_FRAME_KIND_RAW;
}

size_t efi_serial_dump(const struct efi_dump_file *files, size_t count, uint32_t payload,
                       struct efi_dump_stats *stats)
{
    static char buf[DUMP_BUF_BYTES]; /* off the stack */
    struct efi_dump_stats st = { 0 };
    size_t dumped = 0;

    efi_con_printf("ptboot: serial-dump begin files=%llu\n", (unsigned long long)count);
    for (size_t i = 0; i < count; i++) {
        struct ptd_frame_enc enc;
        size_t n;
        if (ptd_frame_enc_init(&enc, (uint32_t)(i + 1), files[i].name, files[i].data, files[i].size,
                               files[i].kind, payload) < 0) {
            efi_con_printf("ptboot: error: serial-dump: %s: name not allowed in a dump "
                           "(1..%d printable characters, no spaces)\n",
                           files[i].name ? files[i].name : "(null)", PTD_FRAME_NAME_MAX);
            continue;
        }
        /* The console's own buffer goes first, so our lines start on a
         * line of their own. */
        efi_con_flush();
        while ((n = ptd_frame_enc_lines(&enc, buf, sizeof buf)) > 0) {
            efi_con_write(buf, n);
            efi_con_flush();
            st.wire_bytes += n;
        }
        st.lines += enc.seq + 2;
        st.wire_bytes += enc.seq + 2; /* the console sends "\n" as CR LF */
        st.payload_bytes += files[i].size;
        st.files++;
        dumped++;
    }
    efi_con_printf("ptboot: serial-dump end files=%llu lines=%llu bytes=%llu wire=%llu\n",
                   (unsigned long long)st.files, (unsigned long long)st.lines,
                   (unsigned long long)st.payload_bytes, (unsigned long long)st.wire_bytes);
    efi_con_flush();
    if (stats)
        *stats = st;
    return dumped;
}
