/*
 * helpers.c — the helpers more than one suite uses (declared in unit.h).
 */
#include "unit.h"

const char *diag_text(const tx_diag *d)
{
    return d->out.p ? d->out.p : "";
}

/* Runs the phases up to UPTO over TEXT; returns 0 if each succeeded. */
int pipe_run(pipe_t *p, const char *text, int upto)
{
    memset(p, 0, sizeof *p);
    p->a = arena_new();
    ck_assert_ptr_nonnull(p->a);
    p->src.name = "t.tx";
    p->src.text = text;
    p->src.len = strlen(text);
    p->diag.src = &p->src;
    p->cst = parse_program(&p->src, p->a, &p->diag);
    if (!p->cst)
        return -1;
    if (upto < UPTO_SEMA)
        return 0;
    p->S = sema_check(p->cst, p->a, &p->diag);
    if (!p->S)
        return -1;
    if (upto < UPTO_LOWER)
        return 0;
    p->g = lower_program(p->S, p->a, &p->diag, NULL);
    return p->g && p->diag.nerrors == 0 ? 0 : -1;
}

void pipe_free(pipe_t *p)
{
    arena_free(p->a);
    buf_free(&p->diag.out);
}

/* Runs the phases and fails the test with the diagnostics if any failed. */
void pipe_ok(pipe_t *p, const char *text, int upto)
{
    int r = pipe_run(p, text, upto);
    ck_assert_msg(r == 0, "program failed:\n%s\n--- diagnostics:\n%s", text, diag_text(&p->diag));
}

int label_id(const cst_program *P, const char *name)
{
    for (int i = 0; i < P->nlabel_names; i++)
        if (strcmp(P->label_names[i], name) == 0)
            return i;
    return -1;
}

/* The assignment-like statement number K (0-based) among STMT_ASSIGN,
   STMT_LET, STMT_LET_TENSOR. */
cst_stmt *nth_stmt(cst_program *P, stmt_kind kind, int k)
{
    for (cst_stmt *s = P->first; s; s = s->next)
        if (s->kind == kind && k-- == 0)
            return s;
    return NULL;
}

labelset set_of(int a, int b)
{
    labelset s = {{0}};
    if (a >= 0)
        ls_add(&s, a);
    if (b >= 0)
        ls_add(&s, b);
    return s;
}

int is_c_ident(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}
