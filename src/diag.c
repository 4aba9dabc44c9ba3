/*
 * diag.c — diagnostics in the form
 *
 *   prog.tx:3:14: error: label 'k' is bound to two extents: 'n' and 'm'
 *       C("i,j") = A("i,k") * B("k,j");
 *                                ^
 *
 * Columns count UTF-8 characters. The source line is shown with control
 * bytes and invalid UTF-8 replaced by '?', so a diagnostic is always
 * printable text.
 */
#include <stdio.h>
#include <string.h>

#include "tx.h"

static int is_cont(unsigned char c) { return (c & 0xC0) == 0x80; }

tx_span span_at(const tx_source *src, uint32_t off, uint32_t len)
{
    tx_span s = {off, len, 1, 1};
    const unsigned char *t = (const unsigned char *)src->text;
    uint32_t ls = 0;
    for (uint32_t i = 0; i < off && i < src->len; i++)
        if (t[i] == '\n') {
            s.line++;
            ls = i + 1;
        }
    for (uint32_t i = ls; i < off && i < src->len; i++)
        if (!is_cont(t[i]))
            s.col++;
    return s;
}

tx_span span_join(tx_span a, tx_span b)
{
    if (b.off + b.len > a.off)
        a.len = b.off + b.len - a.off;
    return a;
}

/* Appends the source line of SPAN and a caret line under it. */
static void show_line(tx_diag *d, tx_span span)
{
    const tx_source *src = d->src;
    if (!src || span.line == 0 || span.off > src->len)
        return;
    const unsigned char *t = (const unsigned char *)src->text;
    size_t start = span.off, end = span.off;
    while (start > 0 && t[start - 1] != '\n')
        start--;
    while (end < src->len && t[end] != '\n')
        end++;
    if (end - start > 400) /* keep a monstrous line readable */
        return;
    tx_buf *o = &d->out;
    buf_puts(o, "    ");
    for (size_t i = start; i < end; i++) {
        unsigned char c = t[i];
        if (c == '\t' || (c >= 0x20 && c < 0x7f))
            buf_put(o, (const char *)&t[i], 1);
        else if (c >= 0xC2 && c <= 0xF4) { /* copy a valid UTF-8 sequence whole */
            int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2, ok = i + (size_t)n <= end;
            for (int k = 1; ok && k < n; k++)
                ok = (t[i + (size_t)k] & 0xC0) == 0x80;
            if (ok) {
                buf_put(o, (const char *)&t[i], (size_t)n);
                i += (size_t)n - 1;
            } else
                buf_put(o, "?", 1);
        } else
            buf_put(o, "?", 1);
    }
    buf_puts(o, "\n    ");
    for (size_t i = start; i < span.off; i++)
        if (!is_cont(t[i]))
            buf_put(o, t[i] == '\t' ? "\t" : " ", 1);
    buf_put(o, "^", 1);
    size_t stop = span.off + span.len;
    if (stop > end)
        stop = end;
    int first = 1;
    for (size_t i = span.off; i < stop; i++)
        if (!is_cont(t[i])) {
            if (!first)
                buf_put(o, "~", 1);
            first = 0;
        }
    buf_puts(o, "\n");
}

static void report(tx_diag *d, tx_span span, const char *kind, const char *fmt, va_list ap)
{
    const char *file = d->src && d->src->name ? d->src->name : "<input>";
    if (span.line)
        buf_printf(&d->out, "%s:%u:%u: %s: ", file, span.line, span.col, kind);
    else
        buf_printf(&d->out, "%s: %s: ", file, kind);
    buf_vprintf(&d->out, fmt, ap);
    buf_puts(&d->out, "\n");
    show_line(d, span);
}

void diag_error(tx_diag *d, tx_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, span, "error", fmt, ap);
    va_end(ap);
    d->nerrors++;
}

void diag_note(tx_diag *d, tx_span span, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(d, span, "note", fmt, ap);
    va_end(ap);
}
