# efi/: the UEFI application (filled in below).
