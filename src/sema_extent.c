/*
 * sema_extent.c - extent arithmetic for the semantic pass: an extent is a
 * dim, a constant, or a derived extent (a linear form in dims, or the min
 * of two extents) interned in sema_program.derived; how extents print,
 * evaluate, add and compare, and the equalities and bounds left for run
 * time (sema_program.checks) when only the dims' values can decide.
 */
#include <stdio.h>
#include <string.h>

#include "sema.h"

void sema_describe_extent(sema_program *S, tx_extent e, char *buf, size_t n)
{
    tx_buf b = {0};
    sema_extent_print(S, e, &b);
    if (e.dim >= 0)
        snprintf(buf, n, "'%s'", b.p ? b.p : "?");
    else
        snprintf(buf, n, "%s", b.p ? b.p : "?");
    buf_free(&b);
}

/* ---- derived extents ---- */

void sema_extent_print(const sema_program *S, tx_extent e, tx_buf *o)
{
    if (e.dim >= 0) {
        buf_puts(o, S->dims[e.dim]->name);
        return;
    }
    if (e.dim != EXT_DERIVED) {
        buf_printf(o, "%lld", (long long)e.value);
        return;
    }
    const dext *d = &S->derived[e.value];
    if (d->kind == 1) {
        buf_puts(o, "min(");
        sema_extent_print(S, d->a, o);
        buf_puts(o, ", ");
        sema_extent_print(S, d->b, o);
        buf_puts(o, ")");
        return;
    }
    int any = 0;
    for (int i = 0; i < d->nterm; i++) {
        int64_t c = d->coef[i];
        if (any || c < 0)
            buf_puts(o, c < 0 ? (any ? " - " : "-") : " + ");
        if (c != 1 && c != -1)
            buf_printf(o, "%lld*", (long long)(c < 0 ? -c : c));
        buf_puts(o, S->dims[d->dim[i]]->name);
        any = 1;
    }
    if (d->c || !any)
        buf_printf(o, any ? (d->c < 0 ? " - %lld" : " + %lld") : "%lld", (long long)(any && d->c < 0 ? -d->c : d->c));
}

int64_t sema_extent_eval(const sema_program *S, tx_extent e, const int64_t *dim_values)
{
    if (e.dim >= 0)
        return dim_values ? dim_values[S->dims[e.dim]->index] : -1;
    if (e.dim != EXT_DERIVED)
        return e.value;
    const dext *d = &S->derived[e.value];
    if (d->kind == 1) {
        int64_t a = sema_extent_eval(S, d->a, dim_values), b = sema_extent_eval(S, d->b, dim_values);
        return a < 0 || b < 0 ? -1 : a < b ? a : b;
    }
    int64_t v = d->c;
    for (int i = 0; i < d->nterm; i++) {
        int64_t x = dim_values ? dim_values[S->dims[d->dim[i]]->index] : -1;
        if (x < 0)
            return -1;
        v += d->coef[i] * x;
    }
    return v;
}

/* Interns D; returns the extent it denotes (a plain dim or constant when
   it reduces to one). */
static tx_extent derived(sema_program *S, dext d)
{
    if (d.kind == 0) {
        int n = 0;
        for (int i = 0; i < d.nterm; i++)
            if (d.coef[i]) {
                d.dim[n] = d.dim[i];
                d.coef[n++] = d.coef[i];
            }
        d.nterm = n;
        if (n == 0)
            return (tx_extent){-1, d.c < 0 ? 0 : d.c};
        if (n == 1 && d.coef[0] == 1 && d.c == 0)
            return (tx_extent){d.dim[0], 0};
    }
    for (int i = 0; i < S->nderived; i++) {
        dext *o = &S->derived[i];
        if (o->kind == d.kind && o->c == d.c && o->nterm == d.nterm &&
            memcmp(o->dim, d.dim, sizeof(int) * (size_t)d.nterm) == 0 &&
            memcmp(o->coef, d.coef, sizeof(int64_t) * (size_t)d.nterm) == 0 &&
            (d.kind == 0 || (ext_eq(o->a, d.a) && ext_eq(o->b, d.b))))
            return (tx_extent){EXT_DERIVED, i};
    }
    if ((S->nderived & (S->nderived - 1)) == 0) {
        int cap = S->nderived ? 2 * S->nderived : 4;
        dext *v = arena_alloc(S->arena, sizeof(dext) * (size_t)cap);
        if (S->nderived)
            memcpy(v, S->derived, sizeof(dext) * (size_t)S->nderived);
        S->derived = v;
    }
    S->derived[S->nderived] = d;
    return (tx_extent){EXT_DERIVED, S->nderived++};
}

/* E as a linear form; -1 if it is a min(). */
static int as_linear(sema_program *S, tx_extent e, dext *out)
{
    memset(out, 0, sizeof *out);
    if (e.dim >= 0) {
        out->nterm = 1;
        out->dim[0] = e.dim;
        out->coef[0] = 1;
        return 0;
    }
    if (e.dim != EXT_DERIVED) {
        out->c = e.value;
        return 0;
    }
    *out = S->derived[e.value];
    return out->kind == 0 ? 0 : -1;
}

/* A + sign * B, as an extent; (tx_extent){-3} if it cannot be formed. */
tx_extent sema_ext_add(sema_program *S, tx_extent a, tx_extent b, int sign)
{
    dext x, y;
    if (as_linear(S, a, &x) < 0 || as_linear(S, b, &y) < 0)
        return (tx_extent){-3, 0};
    x.c += sign * y.c;
    for (int j = 0; j < y.nterm; j++) {
        int found = 0;
        for (int i = 0; i < x.nterm; i++)
            if (x.dim[i] == y.dim[j]) {
                x.coef[i] += sign * y.coef[j];
                found = 1;
            }
        if (!found) {
            if (x.nterm == 4)
                return (tx_extent){-3, 0};
            x.dim[x.nterm] = y.dim[j];
            x.coef[x.nterm++] = sign * y.coef[j];
        }
    }
    return derived(S, x);
}

tx_extent sema_ext_scale(sema_program *S, tx_extent a, int64_t k)
{
    dext x;
    if (as_linear(S, a, &x) < 0)
        return (tx_extent){-3, 0};
    x.c *= k;
    for (int i = 0; i < x.nterm; i++)
        x.coef[i] *= k;
    return derived(S, x);
}

tx_extent sema_ext_min(sema_program *S, tx_extent a, tx_extent b)
{
    if (ext_eq(a, b))
        return a;
    if (a.dim == -1 && b.dim == -1)
        return a.value < b.value ? a : b;
    dext d = {.kind = 1, .a = a, .b = b};
    return derived(S, d);
}

/* Requires A == B (KIND 0) or A <= B (KIND 1) at run time; MSG says why. */
void sema_runtime_check(sema_program *S, int kind, tx_extent a, tx_extent b, const char *msg)
{
    if ((S->nchecks & (S->nchecks - 1)) == 0) {
        int cap = S->nchecks ? 2 * S->nchecks : 4;
        ext_check *v = arena_alloc(S->arena, sizeof(ext_check) * (size_t)cap);
        if (S->nchecks)
            memcpy(v, S->checks, sizeof(ext_check) * (size_t)S->nchecks);
        S->checks = v;
    }
    ext_check *c = &S->checks[S->nchecks++];
    c->a = a;
    c->b = b;
    c->kind = kind;
    c->msg = msg;
}

/* Are A and B equal for sure (1), different for sure (0), or only known at
   run time (-1: one is derived from symbolic dims)? */
int sema_ext_same(sema_program *S, tx_extent a, tx_extent b)
{
    if (ext_eq(a, b))
        return 1;
    if (a.dim != EXT_DERIVED && b.dim != EXT_DERIVED)
        return 0;
    int64_t x = sema_extent_eval(S, a, NULL), y = sema_extent_eval(S, b, NULL);
    if (x >= 0 && y >= 0)
        return x == y;
    return -1;
}
