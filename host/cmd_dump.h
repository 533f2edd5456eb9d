/* Helpers shared by the dump and bench commands. */
#ifndef PTBOOT_HOST_CMD_DUMP_H
#define PTBOOT_HOST_CMD_DUMP_H

#include <stddef.h>
#include <stdint.h>

/* Read a whole file into a malloc'd buffer; prints the error (with prog as
 * prefix) and returns -1 on failure. */
int host_load_file(const char *prog, const char *path, uint8_t **buf, size_t *size);

#endif
