/* EFI_LOAD_OPTION (UEFI 2.10 section 3.1.3 "Load Options"), the contents of
 * the Boot####/Driver#### variables, and the device-path pieces `install`
 * needs to build one (section 10.3 "Device Path Nodes": the generic node
 * header, the Media File Path node, the End node). Also the ####-order
 * variables (BootOrder/DriverOrder, section 3.3 "Globally Defined
 * Variables": an array of UINT16 option numbers).
 *
 * Pure C over caller bytes (no UEFI types, no allocation), so the host unit
 * tests exercise exactly the code the app runs. All multi-byte fields are
 * little-endian (UEFI 2.10 section 1.9.1, "Data Structure Descriptions"),
 * read and written byte by byte: a load option is packed, its fields are
 * not aligned. Text is UCS-2 (CHAR16); here only its ASCII subset is made
 * or compared. */
#ifndef PTBOOT_FORMAT_LOAD_OPTION_H
#define PTBOOT_FORMAT_LOAD_OPTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Attributes (section 3.1.3: LOAD_OPTION_ACTIVE, _FORCE_RECONNECT, _HIDDEN;
 * named here in our own namespace, as format/ includes nothing of UEFI). */
#define PTB_LO_ACTIVE          0x00000001u
#define PTB_LO_FORCE_RECONNECT 0x00000002u
#define PTB_LO_HIDDEN          0x00000008u

/* The fixed head: UINT32 Attributes, UINT16 FilePathListLength. */
#define PTB_LO_HEAD_BYTES 6

/* Device path node header: UINT8 Type, UINT8 SubType, UINT16 Length
 * (section 10.2 "EFI Device Path Protocol"); Length counts the header. */
#define PTB_DP_HEADER_BYTES         4
#define PTB_DP_TYPE_MEDIA           0x04
#define PTB_DP_SUBTYPE_FILE_PATH    0x04 /* section 10.3.5.4 */
#define PTB_DP_TYPE_END             0x7f
#define PTB_DP_SUBTYPE_END_ENTIRE   0xff
#define PTB_DP_SUBTYPE_END_INSTANCE 0x01

enum load_option_error {
    PTB_LO_OK = 0,
    PTB_LO_E_SPACE = -1,   /* the output does not fit the caller's buffer */
    PTB_LO_E_SHORT = -2,   /* shorter than the fixed head */
    PTB_LO_E_DESC = -3,    /* Description has no CHAR16 NUL inside the option */
    PTB_LO_E_PATHLEN = -4, /* FilePathListLength runs past the end */
    PTB_LO_E_NODE = -5,    /* a device path node shorter than 4 bytes or past its list */
    PTB_LO_E_NOEND = -6,   /* the first path instance has no End node */
    PTB_LO_E_TEXT = -7,    /* text not printable ASCII (or too long) */
};

/* A decoded option: pointers into the caller's bytes. */
struct load_option {
    uint32_t attributes;
    const uint8_t *description; /* UCS-2LE, desc_chars characters, NUL not counted */
    size_t desc_chars;
    const uint8_t *file_path; /* FilePathList, file_path_len bytes */
    size_t file_path_len;
    const uint8_t *optional; /* OptionalData (may be empty) */
    size_t optional_len;
};

/* Checks and splits an option of len bytes. Returns 0, or a negative
 * enum load_option_error with *err_off set to the offset where it went wrong. */
int load_option_decode(const uint8_t *buf, size_t len, struct load_option *lo, size_t *err_off);

/* Writes an option: Attributes, FilePathListLength = dp_len, the ASCII
 * description as UCS-2 with its NUL, the dp_len bytes of device path, the
 * optional bytes. Returns the bytes written or PTB_LO_E_SPACE /
 * PTB_LO_E_TEXT (description not printable ASCII). */
long load_option_encode(uint8_t *out, size_t cap, uint32_t attributes, const char *desc,
                        const uint8_t *dp, size_t dp_len, const uint8_t *optional,
                        size_t optional_len);

/* Bytes of a device path up to and including the first End node (of either
 * subtype), at most max; PTB_LO_E_NODE / PTB_LO_E_NOEND if it is malformed. */
long device_path_size(const uint8_t *dp, size_t max);

/* Writes dev (a device path of dev_len bytes ending in an End node, or
 * dev_len == 0 for none) without its End node, then a Media File Path node
 * for path (ASCII, '\' separated), then an End-Entire node. Returns the
 * bytes written or a negative enum load_option_error. */
long device_path_append_file(uint8_t *out, size_t cap, const uint8_t *dev, size_t dev_len,
                             const char *path);

/* The last Media File Path node's text, as ASCII into out (NUL
 * terminated). Returns its length, 0 if the path has no such node, or
 * PTB_LO_E_TEXT if the text is not printable ASCII or does not fit. */
long device_path_file_text(const uint8_t *dp, size_t len, char *out, size_t cap);

/* UCS-2LE text of chars characters (no NUL needed) compared with ASCII. */
bool ucs2_equals(const uint8_t *ucs2, size_t chars, const char *ascii);
/* ASCII text as UCS-2LE with its NUL (for OptionalData that an image reads
 * as its command line). Returns bytes written or PTB_LO_E_SPACE/TEXT. */
long ucs2_from_ascii(uint8_t *out, size_t cap, const char *ascii);
/* UCS-2LE bytes (up to a NUL or the end) to ASCII, NUL terminated.
 * Returns the length, or PTB_LO_E_TEXT if a character is not printable
 * ASCII, the byte count is odd or it does not fit. */
long ucs2_to_ascii(const uint8_t *ucs2, size_t bytes, char *out, size_t cap);

/* "Driver####"/"Boot####": prefix followed by exactly four uppercase hex
 * digits (section 3.1.1, as firmware writes them). Returns the number or -1. */
int load_option_number(const char *name, const char *prefix);
/* name = prefix + four uppercase hex digits; cap >= strlen(prefix) + 5. */
void load_option_name(char *name, size_t cap, const char *prefix, unsigned number);

/* Order variables (DriverOrder, BootOrder): arrays of UINT16 option numbers.
 * load_option_order_prepend puts number first and drops other copies of it;
 * returns the new count, or -1 if cap is too small. load_option_order_remove drops
 * every copy; returns the new count. */
long load_option_order_prepend(uint16_t *order, size_t count, size_t cap, uint16_t number);
size_t load_option_order_remove(uint16_t *order, size_t count, uint16_t number);
/* The lowest number in 0..0xffff for which used(number) is false, or -1. */
long load_option_free_number(bool (*used)(void *ctx, unsigned number), void *ctx);

const char *load_option_strerror(int err);

#endif
