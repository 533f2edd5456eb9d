/* EFI_STATUS by name: see status.h. */
#include <stdio.h>
#include <efi.h>

#include "efi/platform/status.h"

const char *efi_status_name(EFI_STATUS s, char *buf, size_t cap)
{
    switch (s) {
    case EFI_SUCCESS: return "success";
    case EFI_LOAD_ERROR: return "load error";
    case EFI_INVALID_PARAMETER: return "invalid parameter";
    case EFI_UNSUPPORTED: return "unsupported";
    case EFI_BAD_BUFFER_SIZE: return "bad buffer size";
    case EFI_BUFFER_TOO_SMALL: return "buffer too small";
    case EFI_NOT_READY: return "not ready";
    case EFI_DEVICE_ERROR: return "device error";
    case EFI_WRITE_PROTECTED: return "write protected";
    case EFI_OUT_OF_RESOURCES: return "out of resources";
    case EFI_VOLUME_CORRUPTED: return "volume corrupted";
    case EFI_VOLUME_FULL: return "volume full";
    case EFI_NO_MEDIA: return "no media";
    case EFI_MEDIA_CHANGED: return "media changed";
    case EFI_NOT_FOUND: return "not found";
    case EFI_ACCESS_DENIED: return "access denied";
    case EFI_NO_RESPONSE: return "no response";
    case EFI_NO_MAPPING: return "no mapping";
    case EFI_TIMEOUT: return "timeout";
    case EFI_NOT_STARTED: return "not started";
    case EFI_ALREADY_STARTED: return "already started";
    case EFI_ABORTED: return "aborted";
    case EFI_ICMP_ERROR: return "ICMP error";
    case EFI_TFTP_ERROR: return "TFTP error";
    case EFI_PROTOCOL_ERROR: return "protocol error";
    case EFI_INCOMPATIBLE_VERSION: return "incompatible version";
    case EFI_SECURITY_VIOLATION: return "security violation";
    case EFI_CRC_ERROR: return "CRC error";
    case EFI_END_OF_MEDIA: return "end of media";
    case EFI_END_OF_FILE: return "end of file";
    default: break;
    }
    snprintf(buf, cap, "status 0x%llx", (unsigned long long)s);
    return buf;
}

const char *efi_load_image_hint(EFI_STATUS s)
{
    switch (s) {
    case EFI_NOT_FOUND: return "no such file on that volume";
    case EFI_LOAD_ERROR: return "not a PE/COFF image the firmware can load";
    case EFI_UNSUPPORTED: return "an image for another machine or subsystem";
    case EFI_INCOMPATIBLE_VERSION: return "an image for another machine type";
    case EFI_SECURITY_VIOLATION:
        return "Secure Boot refused it (unsigned, or not trusted): disable Secure Boot";
    case EFI_ACCESS_DENIED: return "the platform's image policy refused it";
    case EFI_OUT_OF_RESOURCES: return "no memory for the image";
    case EFI_INVALID_PARAMETER: return "a bad device path";
    default: return "";
    }
}
