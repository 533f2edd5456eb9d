#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86/capture_plan.h"
#include "decoder/ptd_num.h"
#include "efi/resident/words.h"

#define PAGE_BYTES 4096ull

/* A number: all of v (the project's one number parser, decoder/ptd_num.h),
 * in [lo, hi], a multiple of align. */
static bool number(const char *v, enum ptd_num_base base, uint64_t lo, uint64_t hi, uint64_t align,
                   uint64_t *out)
{
    uint64_t x;
    if (!ptd_num_parse(v, base, &x) || x < lo || x > hi || x % align)
        return false;
    *out = x;
    return true;
}

int resident_words_parse(struct resident_words *w, char *const *words, int n, char *err,
                         size_t err_len)
{
    memset(w, 0, sizeof *w);
    w->buffer_bytes = RESIDENT_BUFFER_DEFAULT;
    w->mtc_freq = -1;
    w->recorder_code = RESIDENT_RECORDER_CODE_DEFAULT;
    for (int i = 0; i < n; i++) {
        const char *o = words[i];
        const char *v = i + 1 < n ? words[i + 1] : NULL;
        bool value = !strcmp(o, "--image") || !strcmp(o, "--unit") || !strcmp(o, "--buffer") ||
                     !strcmp(o, "--trace-stop") || !strcmp(o, "--hang-timeout") ||
                     !strcmp(o, "--recorder-at") || !strcmp(o, "--recorder-code") ||
                     !strcmp(o, "--max-insns");
        if (value && !v) {
            snprintf(err, err_len, "%s needs a value", o);
            return -1;
        }
        uint64_t x;
        if (!strcmp(o, "--image")) {
            /* several --image words: a comma-separated list */
            size_t len = strlen(w->image);
            if (!v[0] || strchr(v, ',')) {
                snprintf(err, err_len, "--image %s: a file or module name (one per --image)", v);
                return -1;
            }
            if (len + (len > 0) + strlen(v) >= sizeof w->image) {
                snprintf(err, err_len, "--image %s: the names take more than %u characters", v,
                         (unsigned)sizeof w->image - 1);
                return -1;
            }
            if (len)
                w->image[len++] = ',';
            memcpy(w->image + len, v, strlen(v) + 1);
        } else if (!strcmp(o, "--unit")) {
            if (!strcmp(v, "hw"))
                w->unit = RESIDENT_CHOOSE_HW;
            else if (!strcmp(v, "soft"))
                w->unit = RESIDENT_CHOOSE_SOFT;
            else if (!strcmp(v, "auto"))
                w->unit = RESIDENT_CHOOSE_AUTO;
            else {
                snprintf(err, err_len, "--unit %s: hw, soft or auto", v);
                return -1;
            }
        } else if (!strcmp(o, "--buffer")) {
            if (!number(v, PTD_NUM_AUTO, RESIDENT_BUFFER_MIN, RESIDENT_BUFFER_MAX, 1, &x) ||
                (x & (x - 1))) {
                snprintf(err, err_len, "--buffer %s: a power of two from 4096 to 1 GiB", v);
                return -1;
            }
            w->buffer_bytes = x;
        } else if (!strcmp(o, "--trace-stop")) {
            if (!number(v, PTD_NUM_HEX, 0, UINT64_MAX, 1, &w->trace_stop_offset)) {
                snprintf(err, err_len, "--trace-stop %s: a hex offset into the --image", v);
                return -1;
            }
            w->have_trace_stop = true;
        } else if (!strcmp(o, "--hang-timeout")) {
            if (!number(v, PTD_NUM_AUTO, 1, RESIDENT_HANG_MAX_S, 1, &x)) {
                snprintf(err, err_len, "--hang-timeout %s: seconds, 1 to %u", v,
                         RESIDENT_HANG_MAX_S);
                return -1;
            }
            w->hang_timeout_s = (uint32_t)x;
            w->ring = true; /* a hang report wants the newest trace */
        } else if (!strcmp(o, "--recorder-at")) {
            if (!number(v, PTD_NUM_AUTO, PAGE_BYTES, UINT64_MAX, PAGE_BYTES, &w->recorder_at)) {
                snprintf(err, err_len, "--recorder-at %s: a page-aligned physical address", v);
                return -1;
            }
            w->recorder_at_given = true;
        } else if (!strcmp(o, "--recorder-code")) {
            if (!number(v, PTD_NUM_AUTO, 0, RESIDENT_RECORDER_CODE_MAX, PAGE_BYTES,
                        &w->recorder_code)) {
                snprintf(err, err_len,
                         "--recorder-code %s: bytes, a multiple of 4096, at most 64 MiB", v);
                return -1;
            }
        } else if (!strcmp(o, "--max-insns")) {
            if (!number(v, PTD_NUM_AUTO, 1, UINT64_MAX, 1, &w->max_insns)) {
                snprintf(err, err_len, "--max-insns %s: a number of instructions (> 0)", v);
                return -1;
            }
        } else if (!strcmp(o, "--verbose")) {
            w->verbose = true;
        } else if (!strcmp(o, "--follow")) {
            w->follow = true;
        } else if (!strcmp(o, "--hang-repeat")) {
            w->hang_repeat = true;
        } else if (!strcmp(o, "--ring")) {
            w->ring = true;
        } else if (!strcmp(o, "--no-recorder")) {
            w->no_recorder = true;
        } else if (o[0] != '-') {
            /* a capture word (buffer=8M, no-mtc, ...): checked by the plan */
            char name[32];
            bool takes_value;
            size_t k = strcspn(o, "=");
            snprintf(name, sizeof name, "%.*s", (int)(k < sizeof name - 1 ? k : sizeof name - 1),
                     o);
            if (!capture_word_known(name, &takes_value)) {
                snprintf(err, err_len, "unknown capture word '%s'", o);
                return -1;
            }
            if (w->n_plan_words == RESIDENT_WORDS_MAX) {
                snprintf(err, err_len, "too many capture words");
                return -1;
            }
            /* the two the soft unit takes as well: its MTCs (RTIT_CTL
             * MTCEn and the 4-bit MTCFreq field, SDM 36.2.7.2) */
            if (!strcmp(name, "no-mtc")) {
                w->no_mtc = true;
                w->n_soft_words++;
            } else if (!strcmp(name, "mtc")) {
                uint64_t f;
                if (!o[k] || !number(o + k + 1, PTD_NUM_AUTO, 0, 15, 1, &f)) {
                    snprintf(err, err_len, "%s: mtc=N wants an MTC frequency from 0 to 15", o);
                    return -1;
                }
                w->mtc_freq = (int)f;
                w->n_soft_words++;
            }
            w->plan_words[w->n_plan_words++] = o;
            continue;
        } else {
            snprintf(err, err_len,
                     "unknown option '%s' (--image NAME, --unit hw|soft|auto, --buffer BYTES, "
                     "--trace-stop OFFSET, --verbose, --follow, --max-insns N, --hang-timeout "
                     "SECONDS, --hang-repeat, --ring, "
                     "--recorder-at ADDR, --recorder-code BYTES, --no-recorder, capture words)",
                     o);
            return -1;
        }
        if (value)
            i++;
    }
    if (w->follow && !w->max_insns)
        w->max_insns = RESIDENT_FOLLOW_MAX_INSNS;
    if (w->hang_repeat && !w->hang_timeout_s) {
        snprintf(err, err_len, "--hang-repeat needs --hang-timeout");
        return -1;
    }
    return 0;
}
