/* Chrome Trace Event JSON (the JSON object format of Google's "Trace Event
 * Format" document, read by Perfetto UI and chrome://tracing): process 1 is
 * the capture, thread N its CPU N; a call is a "B"/"E" pair on its CPU's
 * track, written as the decode goes (so nesting is exact and memory does
 * not grow with the trace); errors, overflows, enables and disables are
 * thread-scoped instants, image loads process-scoped ones. Timestamps are
 * microseconds from the TSC when its frequency is known, TSC ticks when it
 * is not, instruction counts when the trace has no time: otherData says
 * which. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decoder/ptd_qry.h"
#include "host/export/export.h"

void export_json_str(FILE *out, const char *s)
{
    putc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(out, "\\u%04x", c);
        else
            putc(c, out);
    }
    putc('"', out);
}

static void put_ts_value(struct export *x, uint64_t tsc, uint64_t insns)
{
    FILE *o = x->out;
    if (!x->use_tsc) {
        fprintf(o, "%" PRIu64, insns);
        return;
    }
    uint64_t t = x->tsc0 && tsc >= x->tsc0 ? tsc - x->tsc0 : 0;
    if (x->tsc_hz)
        fprintf(o, "%.3f", (double)t * 1e6 / (double)x->tsc_hz);
    else
        fprintf(o, "%" PRIu64, t);
}

static void sep(struct export *x)
{
    fputs(x->events++ ? ",\n" : "\n", x->out);
}

static void begin_event(struct export *x, const char *ph, const char *name, uint64_t tsc,
                        uint64_t insns)
{
    FILE *o = x->out;
    sep(x);
    fprintf(o, "{\"ph\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":", ph, (unsigned)x->cpu);
    put_ts_value(x, tsc, insns);
    if (name) {
        fputs(",\"name\":", o);
        export_json_str(o, name);
    }
}

static const char *mark_name(uint32_t k)
{
    switch (k) {
    case PTD_SUM_TR_ERROR: return "error";
    case PTD_SUM_TR_OVERFLOW: return "overflow";
    case PTD_SUM_TR_ENABLE: return "enable";
    case PTD_SUM_TR_DISABLE: return "disable";
    default: return "mark";
    }
}

void export_chrome_begin(struct export *x)
{
    FILE *o = x->out;
    fputs("{\"traceEvents\":[", o);
    sep(x);
    fputs("{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":", o);
    export_json_str(o, x->title ? x->title : "ptboot capture");
    fputs("}}", o);
    for (unsigned c = 0; c < x->ncpus; c++) {
        sep(x);
        fprintf(o,
                "{\"ph\":\"M\",\"pid\":1,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":"
                "\"cpu %u\"}}",
                c, c);
    }
}

void export_chrome_event(struct export *x, const struct ptd_sum_obs *ev)
{
    FILE *o = x->out;
    switch (ev->type) {
    case PTD_SUM_OBS_PUSH:
        begin_event(x, "B", export_frame_name(x, ev->entry, ev->fkind), ev->tsc, ev->insns);
        fprintf(o, ",\"cat\":\"%s\"}",
                ev->fkind == PTD_SUM_FN_IRQ    ? "irq"
                : ev->fkind == PTD_SUM_FN_ROOT ? "root"
                                               : "call");
        x->chrome_depth++;
        break;
    case PTD_SUM_OBS_POP:
        for (; x->chrome_depth > ev->depth; x->chrome_depth--) {
            begin_event(x, "E", NULL, ev->tsc, ev->insns);
            fputc('}', o);
        }
        break;
    case PTD_SUM_OBS_MARK: {
        char name[160];
        if (ev->mark == PTD_SUM_TR_ERROR)
            snprintf(name, sizeof name, "error: %s", ptd_errstr(ev->code));
        else
            snprintf(name, sizeof name, "%s", mark_name(ev->mark));
        begin_event(x, "i", name, ev->tsc, ev->insns);
        fprintf(o,
                ",\"s\":\"t\",\"cat\":\"%s\",\"args\":{\"offset\":\"0x%" PRIx64
                "\",\"ip\":\"0x%" PRIx64 "\"}}",
                mark_name(ev->mark), ev->offset, ev->ip);
        break;
    }
    default: break;
    }
}

void export_chrome_end(struct export *x)
{
    FILE *o = x->out;
    /* image loads: the sideband's load time when there is one on this
     * clock, else the first instruction that ran in the image */
    if (x->sb && x->names)
        for (uint32_t i = 0; i < x->sb->nimages; i++) {
            const struct sideband_image *im = &x->sb->images[i];
            if (!(im->flags & SIDEBAND_IMG_WHILE))
                continue;
            long m = names_module_index(x->names, im->base);
            const struct export_image_stat *is = m >= 0 && x->img ? &x->img[m] : NULL;
            int at_load = x->use_tsc && im->load_tsc && x->tsc0 && im->load_tsc >= x->tsc0;
            if (!at_load && !(is && is->ran))
                continue;
            char name[SIDEBAND_NAME_MAX + 16];
            snprintf(name, sizeof name, "load %s", im->name);
            x->cpu = 0;
            begin_event(x, "i", name, at_load ? im->load_tsc : is->first_tsc,
                        at_load ? 0 : is->first_insns);
            fprintf(o,
                    ",\"s\":\"p\",\"cat\":\"image\",\"args\":{\"base\":\"0x%" PRIx64
                    "\",\"size\":\"0x%" PRIx64 "\",\"when\":\"%s\"}}",
                    im->base, im->size,
                    at_load ? "loaded (sideband TSC)" : "first instruction run in it");
        }
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"ptboot export\"", o);
    const char *unit = !x->use_tsc ? "instructions (the trace has no time)"
                       : x->tsc_hz
                           ? "microseconds (from the TSC)"
                           : "TSC ticks, not microseconds (TSC frequency unknown: --tsc-hz)";
    fputs(",\"ts_unit\":", o);
    export_json_str(o, unit);
    if (x->use_tsc && x->tsc_hz)
        fprintf(o, ",\"tsc_hz\":%" PRIu64, x->tsc_hz);
    if (x->sb) {
        fprintf(o, ",\"unit\":\"%s\",\"cpu\":", sideband_unit_name(x->sb->unit));
        char cpu[64];
        snprintf(cpu, sizeof cpu, "%s %u/%u/%u",
                 x->sb->cpu.vendor[0] ? x->sb->cpu.vendor : "unknown", (unsigned)x->sb->cpu.family,
                 (unsigned)x->sb->cpu.model, (unsigned)x->sb->cpu.stepping);
        export_json_str(o, cpu);
    }
    fprintf(o,
            ",\"trace_bytes\":%" PRIu64 ",\"instructions\":%" PRIu64 ",\"calls\":%" PRIu64
            ",\"errors\":%" PRIu64 ",\"overflows\":%" PRIu64 "}}\n",
            x->trace_bytes, x->insns, x->calls, x->errors, x->overflows);
}
