/* The resident driver's start from a firmware volume (efi/resident/early.h). */
#include <string.h>
#include <efi.h>
#include <efilib.h>

#include "efi/platform/fv2.h"
#include "efi/resident/early.h"
#include "efi/resident/resident.h"
#include "format/ffs.h"
#include "format/load_option.h"

void early_start_read(EFI_LOADED_IMAGE *li, char *words, size_t cap, struct early_start *st)
{
    memset(st, 0, sizeof *st);
    words[0] = '\0';
    if (!li)
        return;
    const EFI_GUID *file = efi_fv_file_of(li->FilePath);
    if (file) {
        struct pi_guid g;
        memcpy(g.b, file, PI_GUID_BYTES);
        pi_guid_format(&g, st->file);
        st->from_fv = true;
    }
    if (li->LoadOptions && li->LoadOptionsSize) {
        ucs2_to_ascii(li->LoadOptions, li->LoadOptionsSize & ~(UINT32)1, words, cap);
        st->source = EARLY_WORDS_LOAD_OPTIONS;
        return;
    }
    if (!file)
        return;
    /* `install --early`'s words win over the volume's (if the variable
     * service is up: a driver dispatched before it finds EFI_UNSUPPORTED) */
    EFI_GUID vendor = PTBOOT_RESIDENT_GUID_INIT;
    UINTN vsize = cap - 1;
    EFI_STATUS vs = RT->GetVariable(PTBOOT_EARLY_VARIABLE, &vendor, NULL, &vsize, words);
    if (!EFI_ERROR(vs)) {
        words[vsize < cap ? vsize : cap - 1] = '\0';
        for (size_t i = 0; words[i]; i++)
            if (words[i] < 0x20 || words[i] > 0x7e)
                words[i] = ' ';
        st->source = EARLY_WORDS_VARIABLE;
        return;
    }
    words[0] = '\0';
    if (vs != EFI_NOT_FOUND) {
        st->variable_unavailable = true;
        st->variable_status = vs;
    }
    /* The words as `fv inject --config` wrote them: ASCII, no NUL. */
    size_t n = 0;
    if (efi_fv_read_section(li->DeviceHandle, file, FFS_SECTION_RAW, 0, words, cap - 1, &n) == 0) {
        words[n] = '\0';
        for (size_t i = 0; i < n; i++)
            if (words[i] < 0x20 || words[i] > 0x7e)
                words[i] = ' ';
        st->source = EARLY_WORDS_FV;
    }
}

const char *early_source_name(enum early_source s)
{
    switch (s) {
    case EARLY_WORDS_LOAD_OPTIONS: return "load-options";
    case EARLY_WORDS_FV: return "firmware-volume";
    case EARLY_WORDS_VARIABLE: return "variable";
    case EARLY_WORDS_NONE: break;
    }
    return "none";
}

static struct waiter {
    EFI_GUID guid;
    void (*fn)(void);
    EFI_EVENT event;
    void *registration;
    bool done;
} waiters[EARLY_WAITERS];
static unsigned n_waiters;

static VOID EFIAPI on_protocol(EFI_EVENT e, VOID *ctx)
{
    struct waiter *w = ctx;
    void *iface = NULL;
    /* by status alone: some architectural protocols (Variable Write) are
     * installed with a NULL interface */
    if (w->done || EFI_ERROR(BS->LocateProtocol(&w->guid, NULL, &iface)))
        return;
    w->done = true;
    BS->CloseEvent(e);
    w->fn();
}

int early_when_protocol(EFI_GUID *guid, void (*fn)(void))
{
    void *iface = NULL;
    if (!EFI_ERROR(BS->LocateProtocol(guid, NULL, &iface))) {
        fn();
        return 1;
    }
    if (n_waiters == EARLY_WAITERS)
        return -1;
    struct waiter *w = &waiters[n_waiters];
    w->guid = *guid;
    w->fn = fn;
    w->done = false;
    if (EFI_ERROR(BS->CreateEvent(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, on_protocol, w, &w->event)))
        return -1;
    if (EFI_ERROR(BS->RegisterProtocolNotify(guid, w->event, &w->registration))) {
        BS->CloseEvent(w->event);
        return -1;
    }
    n_waiters++;
    return 0;
}
