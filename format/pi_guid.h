/* GUIDs as the PI and UEFI specifications store them (EFI_GUID: a
 * little-endian u32, two little-endian u16, then 8 bytes in order; UEFI
 * 2.10 appendix A) and as people write them
 * ("8c8ce578-8a3d-4f1c-9935-896185c32dd3"), plus the few GUIDs ptboot's
 * firmware-volume tools must recognise, each named once here.
 *
 * Pure C, no allocation: used by format/fv.c and format/ffs.c and by the
 * host's `ptboot fv` (host/fv_image.c). */
#ifndef PTBOOT_FORMAT_PI_GUID_H
#define PTBOOT_FORMAT_PI_GUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PI_GUID_BYTES 16
/* "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" and its NUL */
#define PI_GUID_TEXT_BYTES 37

struct pi_guid {
    uint8_t b[PI_GUID_BYTES]; /* as stored in firmware */
};

/* Firmware file systems (PI 1.8 Vol. 3 section 3.2.2). */
extern const struct pi_guid PI_GUID_FFS2; /* 8c8ce578-8a3d-4f1c-9935-896185c32dd3 */
extern const struct pi_guid PI_GUID_FFS3; /* 5473c07a-3dcb-4dca-bd6f-1e9689e7349a */
/* The variable store's volume (EDK2's EFI_SYSTEM_NV_DATA_FV_GUID): an FV
 * header over a variable store, not a file system. */
extern const struct pi_guid PI_GUID_NV_DATA; /* fff12b8d-7696-4c8b-a985-2747075b4f50 */
/* GUID-defined section encodings (EDK2's LZMA custom decompress, without
 * and with the x86 branch converter). */
extern const struct pi_guid PI_GUID_LZMA;    /* ee4e5898-3914-4259-9d6e-dc7bd79403cf */
extern const struct pi_guid PI_GUID_LZMAF86; /* d42ae6bd-1352-4bfb-909a-ca72a6eae889 */
/* The APRIORI files (PI 1.8 Vol. 2 section 10.3.3, Vol. 1 for PEI): a
 * FREEFORM file whose RAW section lists file GUIDs dispatched first. */
extern const struct pi_guid PI_GUID_APRIORI_DXE; /* fc510ee7-ffdc-11d4-bd41-0080c73c8881 */
extern const struct pi_guid PI_GUID_APRIORI_PEI; /* 1b45cc0a-156a-428a-af62-49864da0e6e6 */
/* The volume top file: ends exactly at its volume's end (the reset vector
 * lives in it; PI 1.8 Vol. 3 section 2.1.2). */
extern const struct pi_guid PI_GUID_VTF; /* 1ba0062e-c779-4582-8566-336ae8f78f09 */
/* EFI_CPU_ARCH_PROTOCOL (PI 1.8 Vol. 2 section 12.3): installed by the
 * CPU driver; its interrupt registration is what the soft unit's #DB
 * handler needs. */
extern const struct pi_guid PI_GUID_CPU_ARCH; /* 26baccb1-6f42-11d4-bce7-0080c73c8881 */

bool pi_guid_equal(const struct pi_guid *a, const struct pi_guid *b);
/* All bytes 0xff (pad files' names) or all 0x00. */
bool pi_guid_is_filled(const struct pi_guid *g, uint8_t fill);
/* Lowercase text form into out[PI_GUID_TEXT_BYTES]. */
void pi_guid_format(const struct pi_guid *g, char out[PI_GUID_TEXT_BYTES]);
/* Parses the text form (either case, exactly 36 characters); 0 or -1. */
int pi_guid_parse(const char *s, size_t len, struct pi_guid *g);
/* A short name for the GUIDs above ("ffs2", "lzma", ...), NULL for others. */
const char *pi_guid_name(const struct pi_guid *g);

#endif
