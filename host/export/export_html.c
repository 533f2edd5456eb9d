/* The HTML report: one self-contained page (no network, no external file:
 * styles and the few lines of script are inline) with the capture's facts,
 * a flame graph as inline SVG (frames top-down, width by instructions or
 * ticks; click a frame to zoom, the top frame to go back), time per image,
 * the functions, the call tree (nested <details>), the errors and gaps, and
 * the decode summary's text with the same names. The script marks the page
 * (body data-ptboot-report="ok") once it has run, and records any script
 * error (data-ptboot-errors), which test/names checks in a real browser. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder/ptd_qry.h"
#include "host/export/export.h"

/* "1 error", "2 errors" */
#define PLURAL(n) ((n) == 1 ? "" : "s")

#define FLAME_WIDTH      1200
#define FLAME_ROW        17
#define FLAME_MAX_FRAMES 6000
#define TREE_MAX_NODES   2000
#define FUNCS_SHOWN      60

void export_html_str(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        default: putc(*s, out); break;
        }
    }
}

static uint64_t incl(const struct export *x, const struct export_node *n)
{
    return x->weight == EXPORT_W_TICKS ? n->incl_ticks : n->incl_insns;
}

static double pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *style =
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}"
    "h1{font-size:1.5em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.4em 0 .4em;border-bottom:1px "
    "solid #ccc}"
    "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid "
    "#eee}"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
    ".bar{display:inline-block;height:10px;background:#e8743b;vertical-align:middle}"
    "pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}"
    "details{margin-left:1.2em}summary{cursor:pointer;font-family:monospace;white-space:pre}"
    "svg text{font:11px monospace;pointer-events:none}svg g.f{cursor:pointer}"
    "svg rect{stroke:#fff;stroke-width:.5}.note{color:#666}";

/* The flame graph's script: zoom on click. Frames carry their place as
 * fractions of the total (data-x, data-w) and their name (data-n). */
static const char *script =
    "(function(){\n"
    "window.addEventListener('error',function(e){document.body.setAttribute('data-ptboot-errors',"
    "(document.body.getAttribute('data-ptboot-errors')||'')+e.message+';');});\n"
    "var svg=document.getElementById('flame');var W=+svg.getAttribute('data-width');\n"
    "var frames=svg.querySelectorAll('g.f');\n"
    "function fit(g,x,w){var r=g.querySelector('rect'),t=g.querySelector('text');\n"
    " if(w*W<0.5||x+w<0||x>1){g.style.display='none';return;}g.style.display='';\n"
    " r.setAttribute('x',(x*W).toFixed(1));r.setAttribute('width',(w*W).toFixed(1));\n"
    " t.setAttribute('x',(x*W+3).toFixed(1));var "
    "n=t.getAttribute('data-n'),c=Math.floor((w*W-6)/7);\n"
    " t.textContent=c<3?'':(n.length>c?n.slice(0,c-2)+'..':n);}\n"
    "function zoom(x0,w0){for(var i=0;i<frames.length;i++){var g=frames[i];\n"
    " fit(g,(+g.getAttribute('data-x')-x0)/w0,+g.getAttribute('data-w')/w0);}}\n"
    "for(var i=0;i<frames.length;i++){frames[i].addEventListener('click',function(){\n"
    " zoom(+this.getAttribute('data-x'),+this.getAttribute('data-w'));});}\n"
    "zoom(0,1);document.body.setAttribute('data-ptboot-report','ok');\n"
    "})();\n";

static unsigned colour(const char *s)
{
    unsigned h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static void frame(struct export *x, double fx, double fw, unsigned depth, const char *name,
                  uint64_t weight, uint64_t calls, uint64_t total)
{
    FILE *o = x->out;
    unsigned h = colour(name);
    fprintf(o, "<g class=\"f\" data-x=\"%.7f\" data-w=\"%.7f\"><title>", fx, fw);
    export_html_str(o, name);
    fprintf(o, " (%" PRIu64 " %s, %.2f%%; %" PRIu64 " calls)</title>", weight,
            x->weight == EXPORT_W_TICKS ? "ticks" : "insns", pct(weight, total), calls);
    fprintf(o,
            "<rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%u\" fill=\"hsl(%u,%u%%,%u%%)\"/>",
            fx * FLAME_WIDTH, depth * FLAME_ROW, fw * FLAME_WIDTH, FLAME_ROW - 1, 10 + h % 45,
            60 + (h >> 8) % 30, 55 + (h >> 16) % 15);
    fprintf(o, "<text x=\"%.1f\" y=\"%u\" data-n=\"", fx * FLAME_WIDTH + 3, depth * FLAME_ROW + 12);
    export_html_str(o, name);
    fputs("\"></text></g>\n", o);
}

/* Frames top-down: the whole at the top, then each root, each child inside
 * its parent's width, in the order the calls came. Frames under half a
 * pixel (and all below them) are left out, and at most FLAME_MAX_FRAMES. */
static void flame(struct export *x, uint64_t total)
{
    struct export_stacks *st = &x->stacks;
    FILE *o = x->out;
    uint32_t maxdepth = 0, drawn = 0;
    for (uint32_t i = 0; i < st->n; i++)
        if (st->v[i].depth > maxdepth && incl(x, &st->v[i]) * FLAME_WIDTH >= total / 2)
            maxdepth = st->v[i].depth;
    unsigned rows = maxdepth + 2;
    if (rows > 200)
        rows = 200;
    fprintf(o,
            "<svg id=\"flame\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%u\" "
            "style=\"max-width:100%%;height:auto\" "
            "data-width=\"%u\" viewBox=\"0 0 %u %u\">\n",
            FLAME_WIDTH, rows * FLAME_ROW, FLAME_WIDTH, FLAME_WIDTH, rows * FLAME_ROW);
    frame(x, 0, 1, 0, "all", total, 0, total);
    if (!total) {
        fputs("</svg>\n", o);
        return;
    }
    /* an explicit stack of (node, x) for the walk */
    uint32_t *sn = malloc((st->n + 1) * sizeof *sn);
    double *sx = malloc((st->n + 1) * sizeof *sx);
    if (!sn || !sx) {
        free(sn);
        free(sx);
        fputs("</svg>\n", o);
        return;
    }
    /* roots in order, side by side */
    double rx = 0;
    for (uint32_t r = 0; r < st->n && drawn < FLAME_MAX_FRAMES; r++) {
        if (st->v[r].parent != EXPORT_NONE)
            continue;
        double rw = (double)incl(x, &st->v[r]) / (double)total;
        uint32_t top = 0;
        sn[top] = r;
        sx[top++] = rx;
        rx += rw;
        while (top && drawn < FLAME_MAX_FRAMES) {
            uint32_t i = sn[--top];
            double fx = sx[top];
            const struct export_node *n = &st->v[i];
            uint64_t w = incl(x, n);
            if (w * FLAME_WIDTH < total / 2 || n->depth + 1 >= rows)
                continue;
            frame(x, fx, (double)w / (double)total, n->depth + 1,
                  export_frame_name(x, n->entry, n->kind), w, n->calls, total);
            drawn++;
            /* children pushed last-first so they come out in call order */
            uint32_t nch = 0;
            for (uint32_t c = n->child; c != EXPORT_NONE; c = st->v[c].sibling)
                nch++;
            double cx = fx;
            uint32_t base = top;
            top += nch;
            uint32_t k = 0;
            for (uint32_t c = n->child; c != EXPORT_NONE; c = st->v[c].sibling, k++) {
                sn[top - 1 - k] = c;
                sx[top - 1 - k] = cx;
                cx += (double)incl(x, &st->v[c]) / (double)total;
            }
            (void)base;
        }
    }
    free(sn);
    free(sx);
    fputs("</svg>\n", o);
    if (drawn >= FLAME_MAX_FRAMES)
        fprintf(o, "<p class=\"note\">The flame graph shows the first %u frames.</p>\n",
                FLAME_MAX_FRAMES);
}

static void fact(FILE *o, const char *k, const char *v)
{
    fputs("<tr><th>", o);
    export_html_str(o, k);
    fputs("</th><td>", o);
    export_html_str(o, v);
    fputs("</td></tr>\n", o);
}

static void facts(struct export *x)
{
    FILE *o = x->out;
    char v[256];
    fputs("<section id=\"facts\"><h2>Capture</h2><table>\n", o);
    if (x->sb) {
        snprintf(v, sizeof v, "%s",
                 x->sb->unit == SIDEBAND_UNIT_HW     ? "Intel PT (hw)"
                 : x->sb->unit == SIDEBAND_UNIT_SOFT ? "software trace unit (soft)"
                                                     : "none");
        fact(o, "trace unit", v);
        snprintf(v, sizeof v, "%s family %u model %u stepping %u",
                 x->sb->cpu.vendor[0] ? x->sb->cpu.vendor : "unknown", (unsigned)x->sb->cpu.family,
                 (unsigned)x->sb->cpu.model, (unsigned)x->sb->cpu.stepping);
        fact(o, "CPU", v);
        snprintf(v, sizeof v, "%" PRIu64 " bytes, %s, %s%s%s", x->sb->config.buffer_bytes,
                 x->sb->config.ring ? "ring" : "stop when full",
                 x->sb->trace.wrapped ? "wrapped" : "not wrapped",
                 x->sb->trace.stopped ? ", stopped" : "", x->sb->config.tsc ? ", TSC packets" : "");
        fact(o, "buffer", v);
        unsigned loaded = 0;
        for (uint32_t i = 0; i < x->sb->nimages; i++)
            loaded += (x->sb->images[i].flags & SIDEBAND_IMG_WHILE) != 0;
        snprintf(v, sizeof v, "%u recorded (%u loaded while tracing)", (unsigned)x->sb->nimages,
                 loaded);
        fact(o, "images", v);
    }
    snprintf(v, sizeof v, "%" PRIu64 " bytes on %u CPU%s", x->trace_bytes, x->ncpus,
             x->ncpus == 1 ? "" : "s");
    fact(o, "trace", v);
    snprintf(v, sizeof v, "%" PRIu64 " instruction%s, %" PRIu64 " call%s", x->insns,
             PLURAL(x->insns), x->calls, PLURAL(x->calls));
    fact(o, "decoded", v);
    if (x->has_time) {
        uint64_t span = x->tsc_last - x->tsc_first;
        if (x->tsc_hz)
            snprintf(v, sizeof v, "%" PRIu64 " TSC ticks = %.3f ms (TSC at %.3f MHz)", span,
                     (double)span * 1e3 / (double)x->tsc_hz, (double)x->tsc_hz / 1e6);
        else
            snprintf(v, sizeof v, "%" PRIu64 " TSC ticks (TSC frequency unknown)", span);
    } else {
        snprintf(v, sizeof v, "no timing packets");
    }
    fact(o, "time span", v);
    snprintf(v, sizeof v,
             "%" PRIu64 " error%s, %" PRIu64 " overflow%s, %" PRIu64 " disable%s, %" PRIu64
             " enable%s",
             x->errors, PLURAL(x->errors), x->overflows, PLURAL(x->overflows), x->disables,
             PLURAL(x->disables), x->enables, PLURAL(x->enables));
    fact(o, "errors and gaps", v);
    fputs("</table></section>\n", o);
}

static void images(struct export *x)
{
    FILE *o = x->out;
    if (!x->img || !x->names)
        return;
    fputs("<section id=\"images\"><h2>Time per image</h2><table>\n<tr><th>image</th>"
          "<th class=\"n\">instructions</th><th class=\"n\">%</th>",
          o);
    if (x->has_time)
        fputs("<th class=\"n\">ticks</th><th class=\"n\">%</th>", o);
    fputs("<th></th></tr>\n", o);
    uint64_t span = x->has_time ? x->tsc_last - x->tsc_first : 0;
    for (size_t i = 0; i <= x->names->n; i++) {
        const struct export_image_stat *is = &x->img[i];
        if (!is->ran)
            continue;
        fputs("<tr><td>", o);
        export_html_str(o, i < x->names->n ? x->names->m[i].name : "(no image)");
        fprintf(o, "</td><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.1f</td>", is->insns,
                pct(is->insns, x->insns));
        if (x->has_time)
            fprintf(o, "<td class=\"n\">%" PRIu64 "</td><td class=\"n\">%.1f</td>", is->ticks,
                    pct(is->ticks, span));
        fprintf(o, "<td><span class=\"bar\" style=\"width:%.0fpx\"></span></td></tr>\n",
                2 * pct(x->has_time ? is->ticks : is->insns, x->has_time ? span : x->insns));
    }
    fputs("</table></section>\n", o);
}

/* qsort has no context argument: the export being sorted */
static struct export *sort_ctx;

static int by_self(const void *a, const void *b)
{
    const struct export *x = sort_ctx;
    const struct export_name *p = &x->nv[*(const uint32_t *)a], *q = &x->nv[*(const uint32_t *)b];
    uint64_t u = x->weight == EXPORT_W_TICKS ? p->self_ticks : p->self_insns;
    uint64_t v = x->weight == EXPORT_W_TICKS ? q->self_ticks : q->self_insns;
    if (u != v)
        return u > v ? -1 : 1;
    return p->calls > q->calls ? -1 : p->calls < q->calls;
}

static void functions(struct export *x)
{
    FILE *o = x->out;
    struct export_stacks *st = &x->stacks;
    for (uint32_t i = 0; i < st->n; i++) {
        const struct export_node *n = &st->v[i];
        uint32_t k = export_frame_index(x, n->entry, n->kind);
        if (k == EXPORT_NONE)
            continue;
        x->nv[k].calls += n->calls;
        x->nv[k].self_insns += n->self_insns;
        x->nv[k].self_ticks += n->self_ticks;
    }
    uint32_t *ix = malloc((x->nn ? x->nn : 1) * sizeof *ix);
    if (!ix)
        return;
    for (uint32_t i = 0; i < x->nn; i++)
        ix[i] = i;
    sort_ctx = x;
    qsort(ix, x->nn, sizeof *ix, by_self);
    fprintf(o,
            "<section id=\"functions\"><h2>Functions</h2><p class=\"note\">%u functions; the first "
            "%u by "
            "self %s.</p><table>\n<tr><th class=\"n\">calls</th><th class=\"n\">self insns</th>"
            "<th class=\"n\">%%</th>%s<th>function</th></tr>\n",
            x->nn, x->nn < FUNCS_SHOWN ? x->nn : FUNCS_SHOWN,
            x->weight == EXPORT_W_TICKS ? "time" : "instructions",
            x->has_time ? "<th class=\"n\">self ticks</th>" : "");
    for (uint32_t j = 0; j < x->nn && j < FUNCS_SHOWN; j++) {
        const struct export_name *f = &x->nv[ix[j]];
        fprintf(o,
                "<tr><td class=\"n\">%" PRIu64 "</td><td class=\"n\">%" PRIu64
                "</td><td class=\"n\">%.1f</td>",
                f->kind == PTD_SUM_FN_ROOT ? 0 : f->calls, f->self_insns,
                pct(f->self_insns, x->insns));
        if (x->has_time)
            fprintf(o, "<td class=\"n\">%" PRIu64 "</td>", f->self_ticks);
        fputs("<td class=\"fn\">", o);
        export_html_str(o, f->name);
        fputs("</td></tr>\n", o);
    }
    fputs("</table></section>\n", o);
    free(ix);
}

/* The call tree as nested <details>, open near the top, children in call
 * order; nodes under 0.1% of the total are counted, not shown. */
static void tree(struct export *x, uint64_t total)
{
    FILE *o = x->out;
    struct export_stacks *st = &x->stacks;
    uint32_t shown = 0, hidden = 0;
    fputs("<section id=\"tree\"><h2>Call tree</h2><p class=\"note\">calls, inclusive and self "
          "instructions, function; nodes under 0.1% are left out.</p>\n",
          o);
    uint32_t *stack = malloc((st->n + 1) * sizeof *stack);
    uint8_t *closing = malloc(st->n + 1);
    if (!stack || !closing) {
        free(stack);
        free(closing);
        fputs("</section>\n", o);
        return;
    }
    for (uint32_t r = 0; r < st->n; r++) {
        if (st->v[r].parent != EXPORT_NONE)
            continue;
        uint32_t top = 0;
        stack[top] = r;
        closing[top++] = 0;
        while (top) {
            uint32_t i = stack[--top];
            if (closing[top]) {
                fputs("</details>\n", o);
                continue;
            }
            const struct export_node *n = &st->v[i];
            if (n->incl_insns * 1000 < total || shown >= TREE_MAX_NODES) {
                hidden++;
                continue;
            }
            shown++;
            fprintf(o, "<details%s><summary>%8" PRIu64 " %12" PRIu64 " %10" PRIu64 "  ",
                    n->depth < 3 ? " open" : "", n->calls, n->incl_insns, n->self_insns);
            export_html_str(o, export_frame_name(x, n->entry, n->kind));
            fputs("</summary>\n", o);
            stack[top] = i;
            closing[top++] = 1;
            uint32_t nch = 0;
            for (uint32_t c = n->child; c != EXPORT_NONE; c = st->v[c].sibling)
                nch++;
            uint32_t k = 0;
            for (uint32_t c = n->child; c != EXPORT_NONE; c = st->v[c].sibling, k++) {
                stack[top + nch - 1 - k] = c;
                closing[top + nch - 1 - k] = 0;
            }
            top += nch;
        }
    }
    if (hidden)
        fprintf(o, "<p class=\"note\">%u small nodes not shown.</p>\n", hidden);
    fputs("</section>\n", o);
    free(stack);
    free(closing);
}

static void errors(struct export *x)
{
    FILE *o = x->out;
    fprintf(o,
            "<section id=\"errors\"><h2>Errors and gaps</h2><p>%" PRIu64 " error%s, %" PRIu64
            " overflow%s, %" PRIu64 " disable%s, %" PRIu64 " enable%s.</p>\n",
            x->errors, PLURAL(x->errors), x->overflows, PLURAL(x->overflows), x->disables,
            PLURAL(x->disables), x->enables, PLURAL(x->enables));
    if (x->nmarks) {
        fputs("<table><tr><th>cpu</th><th>what</th><th class=\"n\">trace offset</th><th>where</th>"
              "<th class=\"n\">after insns</th></tr>\n",
              o);
        for (uint32_t i = 0; i < x->nmarks; i++) {
            const struct export_mark *m = &x->marks[i];
            const char *what = m->kind == PTD_SUM_TR_ERROR ? ptd_errstr(m->code)
                               : m->kind == PTD_SUM_TR_OVERFLOW
                                   ? "overflow: the CPU lost trace here"
                               : m->kind == PTD_SUM_TR_ENABLE ? "tracing enabled"
                                                              : "tracing disabled";
            char where[256] = "";
            if (m->ip &&
                (!x->names || !names_format(x->names, m->ip, NAMES_F_LINE, where, sizeof where)))
                snprintf(where, sizeof where, "0x%" PRIx64, m->ip);
            fprintf(o, "<tr><td>%u</td><td>%s", (unsigned)m->cpu,
                    m->kind == PTD_SUM_TR_ERROR ? "error: " : "");
            export_html_str(o, what);
            fprintf(o, "</td><td class=\"n\">0x%" PRIx64 "</td><td>", m->offset);
            export_html_str(o, where);
            fprintf(o, "</td><td class=\"n\">%" PRIu64 "</td></tr>\n", m->insns);
        }
        fputs("</table>\n", o);
        if (x->errors + x->overflows + x->enables + x->disables > x->nmarks)
            fprintf(o, "<p class=\"note\">The first %u are listed.</p>\n", x->nmarks);
    }
    fputs("</section>\n", o);
}

int export_html_write(struct export *x)
{
    FILE *o = x->out;
    uint64_t total = 0;
    export_stacks_totals(&x->stacks);
    for (uint32_t i = 0; i < x->stacks.n; i++)
        if (x->stacks.v[i].parent == EXPORT_NONE)
            total += incl(x, &x->stacks.v[i]);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ptboot report: ",
          o);
    export_html_str(o, x->title ? x->title : "capture");
    fprintf(o, "</title>\n<style>%s</style></head>\n<body>\n<h1>ptboot report: ", style);
    export_html_str(o, x->title ? x->title : "capture");
    fputs("</h1>\n", o);
    facts(x);
    fprintf(
        o,
        "<section id=\"flamegraph\"><h2>Flame graph</h2><p class=\"note\">Call stacks top-down, "
        "width by %s (%" PRIu64
        " in all); click a frame to zoom in, the top one to zoom out.</p>\n",
        x->weight == EXPORT_W_TICKS ? "TSC ticks" : "instructions", total);
    flame(x, total);
    fputs("</section>\n", o);
    images(x);
    functions(x);
    tree(x, x->insns);
    errors(x);
    if (x->summary_text) {
        fputs("<section id=\"summary\"><h2>Decode summary</h2><pre>", o);
        export_html_str(o, x->summary_text);
        fputs("</pre></section>\n", o);
    }
    fprintf(o, "<script>\n%s</script>\n</body></html>\n", script);
    return 0;
}
