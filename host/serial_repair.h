/* A capture's sideband and code snapshot rebuilt from what came over a
 * damaged serial log (`ptboot serial`, docs/serial.md "A capture with
 * holes"), so what can be decoded is decoded:
 *
 *   - sideband.txt: the text lines that came whole (a line is whole when
 *     its first byte follows a newline that came, or starts the file, and
 *     its newline came too); lines the parser still refuses (an image.debug
 *     whose image line was lost, ...) dropped one by one; a lost first line
 *     (the version) given back as the newest version, a lost `end` given
 *     back. The images it still names decode with their names.
 *   - code.dump + code.addr: the pages whose 4096 bytes and whose address
 *     both came, in their order.
 *
 * The rebuilt files are written under the capture's own names; the
 * capture's manifest.txt lists them as missing with what was rebuilt, so
 * the readers still say the capture is incomplete. */
#ifndef PTBOOT_HOST_SERIAL_REPAIR_H
#define PTBOOT_HOST_SERIAL_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "host/serial_recover.h"

struct serial_sideband_repair {
    size_t lines_kept;    /* text lines in the rebuilt sideband (from the log) */
    size_t lines_cut;     /* text lines touched by a loss */
    size_t lines_refused; /* whole lines the parser refused, dropped */
    unsigned images;      /* images the rebuilt sideband names */
    int version_added, end_added;
};

/* Rebuilds sideband text from size bytes (lost ones anything) and the
 * runs that came. Returns the text (malloc'd, *len bytes) or NULL when
 * nothing parseable is left; *rep says what was kept and dropped. */
char *serial_repair_sideband(const uint8_t *data, uint64_t size, const struct serial_range *r,
                             size_t nr, size_t *len, struct serial_sideband_repair *rep);

/* Rebuilds a code snapshot from code.dump's and code.addr's bytes and
 * runs: the whole pages with whole addresses. Returns the number of pages
 * kept (*dump and *addr malloc'd, 4096 and 8 bytes per page), *of the
 * pages there were. */
size_t serial_repair_code(const uint8_t *dump, uint64_t dump_size, const struct serial_range *dr,
                          size_t ndr, const uint8_t *addr, uint64_t addr_size,
                          const struct serial_range *ar, size_t nar, uint8_t **out_dump,
                          uint8_t **out_addr, size_t *of);

#endif
