/* Before tracing, the capture's files must fit the boot volume
 * (docs/capture-files.md "Written whole, or said so"): the trace buffer
 * (every processor's), the snapshot room, the sideband and a block per
 * file. When they do not, the buffer and the snapshot room shrink to what
 * fits (a `note:` says so; a buffer= word is added to the words), or, when
 * not even the smallest capture fits, the capture is refused
 * ("volume full: 16 KiB free, 9.1 MiB needed ..."). Used by `trace`
 * (efi/cmd/trace.c) after its target is loaded and snapshotted and before
 * efi_capture_plan. */
#ifndef PTBOOT_EFI_CAPTURE_FIT_VOLUME_H
#define PTBOOT_EFI_CAPTURE_FIT_VOLUME_H

#include <stddef.h>
#include <efi.h>

#include "efi/capture/capture.h"

/* words/nwords: the capture's option words (one more may be added, up to
 * max_words). Returns 0 (it fits, or was made to) or -1 (refused: said). */
int efi_capture_fit_volume(EFI_HANDLE image, struct efi_capture *cap, const char **words,
                           size_t *nwords, size_t max_words);

#endif
