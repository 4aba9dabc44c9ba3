/*
 * check_unit.c — unit tests of the compiler's phases, one suite per
 * module, calling the internal functions of tx.h directly.
 *
 *   lexer   lex_init / lex_next / lex_label / lex_keyword / lex_kind_name
 *   diag    diag_error / diag_note / span_join / span_at
 *   cst     parse_program: the let DAG, index-string splitting, syntax errors
 *   sema    sema_check: symbols, dims, parameter order, label extents, errors
 *   graph   lower_program + graph_check (and corrupted graphs)
 *   mangle  mangle_name: injective, [A-Za-z0-9_], never a leading digit
 *   emit    emit_c: no .tx name reaches the C source unmangled
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tx.h"
#include "parser.h"

/* ------------------------------------------------------------------ */
/* helpers                                                            */

#define MAXTOK 128

typedef struct {
    tx_source src;
    tx_diag diag;
    tx_token t[MAXTOK];
    int n;    /* tokens read, including the final one (kind 0 or -1) */
    int last; /* kind of the final token: 0 or -1 */
} lexed;

/* Lexes TEXT[0..LEN) completely into L (which must stay where it is: the
   diagnostics point at L->src). */
static void lex_all(lexed *L, const char *text, size_t len)
{
    memset(L, 0, sizeof *L);
    L->src.name = "t.tx";
    L->src.text = text;
    L->src.len = len;
    L->diag.src = &L->src;
    tx_lexer lx;
    lex_init(&lx, &L->src, &L->diag);
    for (;;) {
        ck_assert_int_lt(L->n, MAXTOK);
        int k = lex_next(&lx, &L->t[L->n]);
        L->n++;
        if (k <= 0) {
            L->last = k;
            return;
        }
        ck_assert_int_eq(k, L->t[L->n - 1].kind);
    }
}

static void lex_free(lexed *L)
{
    buf_free(&L->diag.out);
}

static const char *diag_text(const tx_diag *d)
{
    return d->out.p ? d->out.p : "";
}

/* Asserts that token I of L has kind K and text S. */
static void ck_tok_at(const lexed *L, int i, int k, const char *s, int line)
{
    ck_assert_msg(i < L->n, "line %d: token %d missing", line, i);
    const tx_token *t = &L->t[i];
    ck_assert_msg(t->kind == k && t->n == strlen(s) && memcmp(t->z, s, t->n) == 0,
                  "line %d: token %d is kind %d '%.*s', want kind %d '%s'", line, i, t->kind, (int)t->n,
                  t->z ? t->z : "", k, s);
}
#define ck_tok(L, i, k, s) ck_tok_at((L), (i), (k), (s), __LINE__)

static void ck_pos_at(const lexed *L, int i, unsigned ln, unsigned cl, int line)
{
    ck_assert_msg(L->t[i].span.line == ln && L->t[i].span.col == cl, "line %d: token %d at %u:%u, want %u:%u",
                  line, i, L->t[i].span.line, L->t[i].span.col, ln, cl);
}
#define ck_pos(L, i, ln, cl) ck_pos_at((L), (i), (ln), (cl), __LINE__)

/* The whole front end (and optionally lowering) over one program. */
typedef struct {
    tx_arena *a;
    tx_source src;
    tx_diag diag;
    cst_program *cst;
    sema_program *S;
    graph *g;
} pipe_t;

enum { UPTO_PARSE = 1, UPTO_SEMA = 2, UPTO_LOWER = 3 };

/* Runs the phases up to UPTO over TEXT; returns 0 if each succeeded. */
static int pipe_run(pipe_t *p, const char *text, int upto)
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
    p->g = lower_program(p->S, p->a, &p->diag);
    return p->g && p->diag.nerrors == 0 ? 0 : -1;
}

static void pipe_free(pipe_t *p)
{
    arena_free(p->a);
    buf_free(&p->diag.out);
}

/* Runs the phases and fails the test with the diagnostics if any failed. */
static void pipe_ok(pipe_t *p, const char *text, int upto)
{
    int r = pipe_run(p, text, upto);
    ck_assert_msg(r == 0, "program failed:\n%s\n--- diagnostics:\n%s", text, diag_text(&p->diag));
}

static int label_id(const cst_program *P, const char *name)
{
    for (int i = 0; i < P->nlabel_names; i++)
        if (strcmp(P->label_names[i], name) == 0)
            return i;
    return -1;
}

/* The assignment-like statement number K (0-based) among STMT_ASSIGN,
   STMT_LET, STMT_LET_TENSOR. */
static cst_stmt *nth_stmt(cst_program *P, stmt_kind kind, int k)
{
    for (cst_stmt *s = P->first; s; s = s->next)
        if (s->kind == kind && k-- == 0)
            return s;
    return NULL;
}

static int count_ops(const graph *g, op_kind op)
{
    int n = 0;
    for (int i = 0; i < g->n; i++)
        n += g->v[i]->op == op && !g->v[i]->dead;
    return n;
}

static g_value *nth_op(const graph *g, op_kind op, int k)
{
    for (int i = 0; i < g->n; i++)
        if (g->v[i]->op == op && !g->v[i]->dead && k-- == 0)
            return g->v[i];
    return NULL;
}

static labelset set_of(int a, int b)
{
    labelset s = {{0}};
    if (a >= 0)
        ls_add(&s, a);
    if (b >= 0)
        ls_add(&s, b);
    return s;
}

/* ------------------------------------------------------------------ */
/* lexer                                                              */

START_TEST(lex_punctuation)
{
    static const char src[] = "( ) [ ] , ; : = += -= -> + - * / ^";
    static const int kinds[] = {TK_LPAREN, TK_RPAREN, TK_LBRACKET, TK_RBRACKET, TK_COMMA, TK_SEMI,
                                TK_COLON, TK_EQ, TK_PLUSEQ, TK_MINUSEQ, TK_ARROW, TK_PLUS, TK_MINUS,
                                TK_STAR, TK_SLASH, TK_CARET};
    static const char *texts[] = {"(", ")", "[", "]", ",", ";", ":", "=", "+=", "-=", "->", "+", "-",
                                  "*", "/", "^"};
    lexed L;
    lex_all(&L, src, strlen(src));
    int n = (int)(sizeof kinds / sizeof kinds[0]);
    ck_assert_int_eq(L.last, 0);
    ck_assert_int_eq(L.n, n + 1);
    uint32_t off = 0;
    for (int i = 0; i < n; i++) {
        ck_tok(&L, i, kinds[i], texts[i]);
        ck_assert_uint_eq(L.t[i].span.off, off);
        ck_assert_uint_eq(L.t[i].span.col, off + 1);
        off += (uint32_t)strlen(texts[i]) + 1;
    }
    ck_assert_int_eq(L.diag.nerrors, 0);
    lex_free(&L);
}
END_TEST

START_TEST(lex_compound_operators)
{
    /* '+=' is one token, '+ =' two; '->' one, '- >' is an error at '>' */
    static const char src[] = "a+=b a + =b c-=d e->f g-1 h--i";
    lexed L;
    lex_all(&L, src, strlen(src));
    ck_assert_int_eq(L.last, 0);
    int i = 0;
    ck_tok(&L, i++, TK_IDENT, "a");
    ck_tok(&L, i++, TK_PLUSEQ, "+=");
    ck_tok(&L, i++, TK_IDENT, "b");
    ck_tok(&L, i++, TK_IDENT, "a");
    ck_tok(&L, i++, TK_PLUS, "+");
    ck_tok(&L, i++, TK_EQ, "=");
    ck_tok(&L, i++, TK_IDENT, "b");
    ck_tok(&L, i++, TK_IDENT, "c");
    ck_tok(&L, i++, TK_MINUSEQ, "-=");
    ck_tok(&L, i++, TK_IDENT, "d");
    ck_tok(&L, i++, TK_IDENT, "e");
    ck_tok(&L, i++, TK_ARROW, "->");
    ck_tok(&L, i++, TK_IDENT, "f");
    ck_tok(&L, i++, TK_IDENT, "g");
    ck_tok(&L, i++, TK_MINUS, "-");
    ck_tok(&L, i++, TK_NUMBER, "1");
    ck_tok(&L, i++, TK_IDENT, "h");
    ck_tok(&L, i++, TK_MINUS, "-");
    ck_tok(&L, i++, TK_MINUS, "-");
    ck_tok(&L, i++, TK_IDENT, "i");
    ck_assert_int_eq(L.t[i].kind, 0);
    lex_free(&L);
}
END_TEST

START_TEST(lex_keywords_and_names)
{
    static const struct { const char *w; int k; } kw[] = {
        {"in", TK_IN}, {"out", TK_OUT}, {"inout", TK_INOUT}, {"tmp", TK_TMP}, {"dim", TK_DIM},
        {"let", TK_LET}, {"sparse", TK_SPARSE}, {"f32", TK_F32}, {"f64", TK_F64},
        {"cholesky", TK_CHOLESKY}, {"inv", TK_INV}, {"pow", TK_POW}, {"solve", TK_SOLVE},
        {"eigh", TK_EIGH}, {"qr", TK_QR}, {"svd", TK_SVD}, {"slice", TK_SLICE}, {"exp", TK_EXP},
        {"log", TK_LOG}, {"sqrt", TK_SQRT}, {"abs", TK_ABS}, {"sin", TK_SIN}, {"cos", TK_COS},
        {"tanh", TK_TANH}, {"max", TK_MAX}, {"min", TK_MIN}, {"reduce", TK_REDUCE},
        {"scan", TK_SCAN}, {"scanr", TK_SCANR},
    };
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; i++) {
        lexed L;
        lex_all(&L, kw[i].w, strlen(kw[i].w));
        ck_assert_int_eq(L.n, 2);
        ck_tok(&L, 0, kw[i].k, kw[i].w);
        ck_assert_int_eq(lex_keyword(kw[i].w, strlen(kw[i].w)), kw[i].k);
        /* the kind's name for messages is the keyword itself */
        ck_assert_str_eq(lex_kind_name(kw[i].k), kw[i].w);
        lex_free(&L);
    }
    /* near misses are names */
    static const char *names[] = {"inx", "In", "IN", "in2", "_in", "outs", "di", "dims", "f16",
                                  "f3", "let_", "expo", "maxi", "_", "__x9", "x1y2"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        lexed L;
        lex_all(&L, names[i], strlen(names[i]));
        ck_assert_int_eq(L.n, 2);
        ck_tok(&L, 0, TK_IDENT, names[i]);
        ck_assert_int_eq(lex_keyword(names[i], strlen(names[i])), 0);
        lex_free(&L);
    }
    /* lex_keyword looks at exactly N bytes */
    ck_assert_int_eq(lex_keyword("inout", 2), TK_IN);
    ck_assert_int_eq(lex_keyword("inout", 4), 0);
    ck_assert_int_eq(lex_keyword("", 0), 0);
}
END_TEST

START_TEST(lex_kind_names)
{
    ck_assert_str_eq(lex_kind_name(0), "end of input");
    ck_assert_str_eq(lex_kind_name(TK_IDENT), "name");
    ck_assert_str_eq(lex_kind_name(TK_NUMBER), "number");
    ck_assert_str_eq(lex_kind_name(TK_STRING), "index string");
    ck_assert_str_eq(lex_kind_name(TK_SEMI), "';'");
    ck_assert_str_eq(lex_kind_name(TK_ARROW), "'->'");
    ck_assert_str_eq(lex_kind_name(TK_PLUSEQ), "'+='");
    ck_assert_str_eq(lex_kind_name(TK_RBRACKET), "']'");
}
END_TEST

START_TEST(lex_numbers)
{
    static const char src[] = "2 0.5 1e-3 .5 2.5e1 3. 1E+2 007 6.02e23";
    static const char *want[] = {"2", "0.5", "1e-3", ".5", "2.5e1", "3.", "1E+2", "007", "6.02e23"};
    lexed L;
    lex_all(&L, src, strlen(src));
    int n = (int)(sizeof want / sizeof want[0]);
    ck_assert_int_eq(L.last, 0);
    ck_assert_int_eq(L.n, n + 1);
    for (int i = 0; i < n; i++)
        ck_tok(&L, i, TK_NUMBER, want[i]);
    lex_free(&L);

    /* an exponent needs digits: "1e" is the number 1 then the name e */
    lex_all(&L, "1e x.5 2e+", 10);
    ck_tok(&L, 0, TK_NUMBER, "1");
    ck_tok(&L, 1, TK_IDENT, "e");
    ck_tok(&L, 2, TK_IDENT, "x");
    ck_tok(&L, 3, TK_NUMBER, ".5");
    ck_tok(&L, 4, TK_NUMBER, "2");
    ck_tok(&L, 5, TK_IDENT, "e");
    ck_tok(&L, 6, TK_PLUS, "+");
    ck_assert_int_eq(L.t[7].kind, 0);
    lex_free(&L);

    /* a number then a name with no space: "2x" */
    lex_all(&L, "2x", 2);
    ck_tok(&L, 0, TK_NUMBER, "2");
    ck_tok(&L, 1, TK_IDENT, "x");
    lex_free(&L);
}
END_TEST

START_TEST(lex_index_strings)
{
    static const char src[] = "A(\"i,j,k\") s(\"\") B(\" mu , 3 \")";
    lexed L;
    lex_all(&L, src, strlen(src));
    ck_assert_int_eq(L.last, 0);
    ck_tok(&L, 0, TK_IDENT, "A");
    ck_tok(&L, 1, TK_LPAREN, "(");
    ck_tok(&L, 2, TK_STRING, "\"i,j,k\"");
    ck_tok(&L, 3, TK_RPAREN, ")");
    ck_tok(&L, 4, TK_IDENT, "s");
    ck_tok(&L, 6, TK_STRING, "\"\"");
    ck_tok(&L, 8, TK_IDENT, "B");
    ck_tok(&L, 10, TK_STRING, "\" mu , 3 \"");
    ck_pos(&L, 10, 1, 20);
    ck_assert_int_eq(L.n, 13);
    lex_free(&L);

    /* '#' and '//' inside a string are not comments */
    lex_all(&L, "\"a#b//c\" x", 10);
    ck_tok(&L, 0, TK_STRING, "\"a#b//c\"");
    ck_tok(&L, 1, TK_IDENT, "x");
    ck_assert_int_eq(L.t[2].kind, 0);
    lex_free(&L);
}
END_TEST

START_TEST(lex_comments)
{
    static const char src[] = "# header\nA # trailing \"not a string\n// slashes ( ;\nB// glued\n"
                              "x / y // after a slash\nC # the last line has no newline";
    lexed L;
    lex_all(&L, src, strlen(src));
    ck_assert_int_eq(L.last, 0);
    ck_assert_int_eq(L.n, 7);
    ck_tok(&L, 0, TK_IDENT, "A");
    ck_pos(&L, 0, 2, 1);
    ck_tok(&L, 1, TK_IDENT, "B");
    ck_pos(&L, 1, 4, 1);
    ck_tok(&L, 2, TK_IDENT, "x");
    ck_pos(&L, 2, 5, 1);
    ck_tok(&L, 3, TK_SLASH, "/");
    ck_pos(&L, 3, 5, 3);
    ck_tok(&L, 4, TK_IDENT, "y");
    ck_tok(&L, 5, TK_IDENT, "C");
    ck_pos(&L, 5, 6, 1);
    ck_assert_int_eq(L.t[6].kind, 0);
    ck_assert_int_eq(L.diag.nerrors, 0);
    lex_free(&L);

    /* a '//' comment that ends the file */
    lex_all(&L, "a;//", 4);
    ck_assert_int_eq(L.n, 3);
    ck_tok(&L, 0, TK_IDENT, "a");
    ck_tok(&L, 1, TK_SEMI, ";");
    ck_assert_int_eq(L.last, 0);
    lex_free(&L);

    /* a source that is only a comment, and an empty source */
    lex_all(&L, "#", 1);
    ck_assert_int_eq(L.n, 1);
    ck_assert_int_eq(L.last, 0);
    lex_free(&L);
    lex_all(&L, "", 0);
    ck_assert_int_eq(L.n, 1);
    ck_assert_int_eq(L.last, 0);
    ck_pos(&L, 0, 1, 1);
    lex_free(&L);
}
END_TEST

START_TEST(lex_lines_and_columns)
{
    /* columns count characters: 'λ' is 2 bytes, 'δ' 2, '变' 3 bytes */
    static const char src[] = "ab cd\n  \xce\xbb x\n\t\"i\" \xce\xb4\xce\xb4=\xe5\x8f\x98 ;\r\nz";
    lexed L;
    lex_all(&L, src, sizeof src - 1);
    ck_assert_int_eq(L.last, 0);
    ck_tok(&L, 0, TK_IDENT, "ab");
    ck_pos(&L, 0, 1, 1);
    ck_assert_uint_eq(L.t[0].span.off, 0);
    ck_tok(&L, 1, TK_IDENT, "cd");
    ck_pos(&L, 1, 1, 4);
    ck_tok(&L, 2, TK_IDENT, "\xce\xbb");
    ck_pos(&L, 2, 2, 3);
    ck_assert_uint_eq(L.t[2].span.off, 8);
    ck_assert_uint_eq(L.t[2].span.len, 2);
    ck_tok(&L, 3, TK_IDENT, "x");
    ck_pos(&L, 3, 2, 5); /* after a 2-byte letter: column 5, byte 6 of the line */
    ck_assert_uint_eq(L.t[3].span.off, 11);
    ck_tok(&L, 4, TK_STRING, "\"i\"");
    ck_pos(&L, 4, 3, 2); /* a tab is one column */
    ck_tok(&L, 5, TK_IDENT, "\xce\xb4\xce\xb4");
    ck_pos(&L, 5, 3, 6);
    ck_tok(&L, 6, TK_EQ, "=");
    ck_pos(&L, 6, 3, 8);
    ck_tok(&L, 7, TK_IDENT, "\xe5\x8f\x98");
    ck_pos(&L, 7, 3, 9);
    ck_tok(&L, 8, TK_SEMI, ";");
    ck_pos(&L, 8, 3, 11);
    ck_tok(&L, 9, TK_IDENT, "z"); /* CRLF ends a line */
    ck_pos(&L, 9, 4, 1);
    ck_assert_int_eq(L.t[10].kind, 0);
    lex_free(&L);
}
END_TEST

START_TEST(lex_unicode_names)
{
    static const char src[] = "\xce\xbb \xce\x94x \xc3\xa9 x\xce\xbb" "2 _\xce\xbb \xc3\xa9t\xc3\xa9 \xce\x9b";
    static const char *want[] = {"\xce\xbb", "\xce\x94x", "\xc3\xa9", "x\xce\xbb" "2", "_\xce\xbb",
                                 "\xc3\xa9t\xc3\xa9", "\xce\x9b"};
    lexed L;
    lex_all(&L, src, strlen(src));
    ck_assert_int_eq(L.last, 0);
    int n = (int)(sizeof want / sizeof want[0]);
    ck_assert_int_eq(L.n, n + 1);
    for (int i = 0; i < n; i++)
        ck_tok(&L, i, TK_IDENT, want[i]);
    ck_pos(&L, 1, 1, 3);
    ck_pos(&L, 2, 1, 6);
    ck_assert_int_eq(L.diag.nerrors, 0);
    lex_free(&L);
}
END_TEST

START_TEST(lex_long_name)
{
    char buf[TX_MAX_NAME + 2];
    memset(buf, 'a', sizeof buf);
    buf[TX_MAX_NAME] = 0;
    lexed L;
    lex_all(&L, buf, TX_MAX_NAME); /* at the limit: fine */
    ck_assert_int_eq(L.last, 0);
    ck_assert_int_eq(L.t[0].kind, TK_IDENT);
    ck_assert_uint_eq(L.t[0].n, TX_MAX_NAME);
    lex_free(&L);
    buf[TX_MAX_NAME] = 'a';
    buf[TX_MAX_NAME + 1] = 0;
    lex_all(&L, buf, TX_MAX_NAME + 1); /* one byte over */
    ck_assert_int_eq(L.last, -1);
    ck_assert_int_eq(L.diag.nerrors, 1);
    ck_assert_ptr_nonnull(strstr(diag_text(&L.diag), "t.tx:1:1: error: "));
    ck_assert_ptr_nonnull(strstr(diag_text(&L.diag), "limit"));
    lex_free(&L);
}
END_TEST

/* One lexical error: SRC (LEN bytes), the tokens before it, the position
   and a phrase of the message. */
static const struct {
    const char *src;
    size_t len;
    int ntok_before;
    unsigned line, col;
    const char *phrase;
} lex_errors[] = {
    {"ab\0c", 4, 1, 1, 3, "NUL byte"},
    {"x\n \xff y", 6, 1, 2, 2, "invalid UTF-8 byte 0xFF"},
    {"\xce\xbb \xc3", 4, 1, 1, 3, "invalid UTF-8"},            /* truncated sequence */
    {"a \xc0\x80", 4, 1, 1, 3, "invalid UTF-8"},               /* overlong NUL */
    {"a \xed\xa0\x80", 5, 1, 1, 3, "invalid UTF-8"},           /* a surrogate */
    {"a \xf8\x88\x80\x80\x80", 7, 1, 1, 3, "invalid UTF-8"},   /* 5-byte form */
    {"C = A @ B;", 10, 3, 1, 7, "unexpected character '@'"},
    {"x = $;", 6, 2, 1, 5, "unexpected character '$'"},
    {"A(\"i,j) = 1;", 12, 2, 1, 3, "unterminated index string"},
    {"A(\"i,\nj\")", 9, 2, 1, 3, "unterminated index string"},
    {"\xce\xbb \xe2\x86\x92 y", 8, 1, 1, 3, "unexpected character '\xe2\x86\x92'"},
    {"a\x01", 2, 1, 1, 2, "control character 0x01"},
    {"in A[n];\n\t\xce\xbb = B > 2;", 21, 9, 2, 8, "unexpected character '>'"},
};

START_TEST(lex_error_cases)
{
    lexed L;
    lex_all(&L, lex_errors[_i].src, lex_errors[_i].len);
    ck_assert_msg(L.last == -1, "case %d: no error", _i);
    ck_assert_int_eq(L.n, lex_errors[_i].ntok_before + 1);
    ck_assert_int_eq(L.diag.nerrors, 1);
    char want[64];
    snprintf(want, sizeof want, "t.tx:%u:%u: error: ", lex_errors[_i].line, lex_errors[_i].col);
    const char *out = diag_text(&L.diag);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "case %d: want '%s...', got:\n%s", _i, want, out);
    ck_assert_msg(strstr(out, lex_errors[_i].phrase) != NULL, "case %d: no '%s' in:\n%s", _i,
                  lex_errors[_i].phrase, out);
    /* the error token's own span is the culprit's position */
    ck_pos(&L, L.n - 1, lex_errors[_i].line, lex_errors[_i].col);
    lex_free(&L);
}
END_TEST

START_TEST(lex_labels)
{
    size_t len = 99;
    ck_assert_int_eq(lex_label("i", 1, &len), 1);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(lex_label("mu,nu", 5, &len), 1);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(lex_label("mu,nu", 1, &len), 1); /* only N bytes are looked at */
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(lex_label("12,j", 4, &len), 2);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(lex_label("0", 1, &len), 2);
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(lex_label("\xce\xbb" "1 ", 4, &len), 1);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(lex_label("_x", 2, &len), 1);
    ck_assert_uint_eq(len, 2);
    ck_assert_int_eq(lex_label("3a", 2, &len), 2); /* the integer, then the caller sees 'a' */
    ck_assert_uint_eq(len, 1);
    ck_assert_int_eq(lex_label("", 0, &len), 0);
    ck_assert_int_eq(lex_label(",i", 2, &len), 0);
    ck_assert_int_eq(lex_label("-1", 2, &len), 0);
    ck_assert_int_eq(lex_label(" i", 2, &len), 0);
    ck_assert_int_eq(lex_label("\xe2\x86\x92", 3, &len), 0);
    ck_assert_int_eq(lex_label("\xff", 1, &len), 0);
}
END_TEST

START_TEST(lex_respects_length)
{
    /* the source is src->text[0 .. src->len), not NUL-terminated: bytes
       after len are not part of it */
    lexed L;
    /* an exactly-sized heap buffer: nothing past its end is read (run
       under valgrind or ASan to see an over-read) */
    char *buf = malloc(2);
    ck_assert_ptr_nonnull(buf);
    memcpy(buf, "ab", 2);
    lex_all(&L, buf, 2);
    int n = L.n, k0 = L.t[0].kind;
    uint32_t len0 = L.t[0].n;
    lex_free(&L);
    free(buf);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(k0, TK_IDENT);
    ck_assert_uint_eq(len0, 2);

    lex_all(&L, "ab;", 1);
    ck_assert_int_eq(L.n, 2);
    ck_tok(&L, 0, TK_IDENT, "a");
    lex_free(&L);
    lex_all(&L, "1.5", 1);
    ck_tok(&L, 0, TK_NUMBER, "1");
    lex_free(&L);
    lex_all(&L, "+=", 1);
    ck_tok(&L, 0, TK_PLUS, "+");
    lex_free(&L);
    lex_all(&L, "x # comment", 3);
    ck_assert_int_eq(L.n, 2);
    ck_assert_int_eq(L.last, 0);
    lex_free(&L);

}
END_TEST

START_TEST(lex_end_token)
{
    lexed L;
    lex_all(&L, "a\nbc  ", 6);
    ck_assert_int_eq(L.n, 3);
    ck_assert_int_eq(L.t[2].kind, 0);
    ck_assert_uint_eq(L.t[2].span.off, 6);
    ck_assert_uint_eq(L.t[2].span.len, 0);
    ck_pos(&L, 2, 2, 5);
    lex_free(&L);
}
END_TEST

/* ------------------------------------------------------------------ */
/* diag                                                               */

START_TEST(diag_format)
{
    static const char text[] = "dim n;\nin A[n], B[m];\n";
    tx_source src = {"prog.tx", text, sizeof text - 1};
    tx_diag d = {.src = &src};
    diag_error(&d, span_at(&src, 16, 4), "bad %s %d", "thing", 7);
    ck_assert_str_eq(d.out.p, "prog.tx:2:10: error: bad thing 7\n"
                              "    in A[n], B[m];\n"
                              "             ^~~~\n");
    ck_assert_int_eq(d.nerrors, 1);
    /* a note does not count as an error; a zero-length span is one caret */
    diag_note(&d, span_at(&src, 4, 0), "declared here");
    ck_assert_str_eq(d.out.p, "prog.tx:2:10: error: bad thing 7\n"
                              "    in A[n], B[m];\n"
                              "             ^~~~\n"
                              "prog.tx:1:5: note: declared here\n"
                              "    dim n;\n"
                              "        ^\n");
    ck_assert_int_eq(d.nerrors, 1);
    buf_free(&d.out);
}
END_TEST

START_TEST(diag_no_location)
{
    tx_source src = {NULL, "x", 1};
    tx_diag d = {.src = &src};
    tx_span none = {0, 0, 0, 0};
    diag_error(&d, none, "internal");
    ck_assert_str_eq(d.out.p, "<input>: error: internal\n");
    ck_assert_int_eq(d.nerrors, 1);
    buf_free(&d.out);
}
END_TEST

START_TEST(diag_caret_tabs_utf8)
{
    /* line 2: TAB, 'λ'(2 bytes), '=', '变'(3 bytes), ' ', 'x', ... */
    static const char text[] = "first\n\t\xce\xbb=\xe5\x8f\x98 xy+z\n";
    tx_source src = {"u.tx", text, sizeof text - 1};
    tx_diag d = {.src = &src};
    uint32_t off = (uint32_t)(strchr(text, 'x') - text);
    tx_span s = span_at(&src, off, 2);
    ck_assert_uint_eq(s.line, 2);
    ck_assert_uint_eq(s.col, 6); /* TAB λ = 变 ' ' then x */
    diag_error(&d, s, "here");
    /* the caret line repeats the tab and puts one space per character */
    ck_assert_str_eq(d.out.p, "u.tx:2:6: error: here\n"
                              "    \t\xce\xbb=\xe5\x8f\x98 xy+z\n"
                              "    \t    ^~\n");
    buf_free(&d.out);

    /* a span over multi-byte characters gets one '~' per character */
    memset(&d, 0, sizeof d);
    d.src = &src;
    s = span_at(&src, 7, 6); /* "λ=变" */
    ck_assert_uint_eq(s.col, 2);
    diag_error(&d, s, "wide");
    ck_assert_str_eq(d.out.p, "u.tx:2:2: error: wide\n"
                              "    \t\xce\xbb=\xe5\x8f\x98 xy+z\n"
                              "    \t^~~\n");
    buf_free(&d.out);
}
END_TEST

START_TEST(diag_span_at)
{
    static const char text[] = "ab\n\xce\xbb\xce\xbb cd\n\nxyz";
    tx_source src = {"s.tx", text, sizeof text - 1};
    tx_span s = span_at(&src, 0, 2);
    ck_assert_uint_eq(s.off, 0);
    ck_assert_uint_eq(s.len, 2);
    ck_assert_uint_eq(s.line, 1);
    ck_assert_uint_eq(s.col, 1);
    s = span_at(&src, 2, 1); /* the newline itself is on line 1 */
    ck_assert_uint_eq(s.line, 1);
    ck_assert_uint_eq(s.col, 3);
    s = span_at(&src, 8, 2); /* "cd" after two 2-byte letters and a space */
    ck_assert_uint_eq(s.line, 2);
    ck_assert_uint_eq(s.col, 4);
    s = span_at(&src, 11, 0); /* the empty line 3 */
    ck_assert_uint_eq(s.line, 3);
    ck_assert_uint_eq(s.col, 1);
    s = span_at(&src, 13, 1); /* 'y' */
    ck_assert_uint_eq(s.line, 4);
    ck_assert_uint_eq(s.col, 2);
    ck_assert_uint_eq(s.off, 13);
    ck_assert_uint_eq(s.len, 1);
    s = span_at(&src, (uint32_t)src.len, 0); /* end of input */
    ck_assert_uint_eq(s.line, 4);
    ck_assert_uint_eq(s.col, 4);
}
END_TEST

START_TEST(diag_span_join)
{
    tx_span a = {4, 2, 1, 5}, b = {10, 3, 1, 11};
    tx_span j = span_join(a, b);
    ck_assert_uint_eq(j.off, 4);
    ck_assert_uint_eq(j.len, 9);
    ck_assert_uint_eq(j.line, 1);
    ck_assert_uint_eq(j.col, 5);
    /* adjacent and zero-length spans */
    j = span_join((tx_span){4, 2, 1, 5}, (tx_span){6, 0, 1, 7});
    ck_assert_uint_eq(j.off, 4);
    ck_assert_uint_eq(j.len, 2);
    j = span_join(a, a);
    ck_assert_uint_eq(j.len, 2);
    /* across lines: the position stays A's */
    tx_span d = {20, 1, 3, 2};
    j = span_join(a, d);
    ck_assert_uint_eq(j.len, 17);
    ck_assert_uint_eq(j.line, 1);
    ck_assert_uint_eq(j.col, 5);
}
END_TEST

START_TEST(diag_printable_line)
{
    /* control bytes and invalid UTF-8 in the shown line become '?', so a
       diagnostic is always printable, valid UTF-8 text (diag.c) */
    static const char text[] = "a\x01 b \xff c \xce\xbb d";
    tx_source src = {"p.tx", text, sizeof text - 1};
    tx_diag d = {.src = &src};
    uint32_t off = (uint32_t)(strchr(text, 'd') - text);
    diag_error(&d, span_at(&src, off, 1), "x");
    const char *nl = strchr(d.out.p, '\n');
    ck_assert_ptr_nonnull(nl);
    ck_assert_msg(strncmp(nl + 1, "    a? b ? c \xce\xbb d\n", 18) == 0, "shown line: %s", nl + 1);
    buf_free(&d.out);
}
END_TEST

/* ------------------------------------------------------------------ */
/* parse + CST                                                        */

/* The CST_LET node a use of a bare let reaches: the node itself, or the
   node a use node points at. */
static cst_node *let_target(cst_node *n)
{
    if (n->kind == CST_LET)
        return n;
    if (n->kind == CST_LETUSE)
        return n->a;
    return NULL;
}

START_TEST(cst_let_is_one_node)
{
    static const char text[] = "in A[n], b[n];\n"
                               "out B[n], C[n];\n"
                               "let x = A(\"i\") * b(\"i\");\n"
                               "B(\"i\") = x;\n"
                               "C(\"i\") = 2 * x + (x);\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    ck_assert_int_eq(p.cst->nstmts, 7); /* one per declared tensor */
    cst_stmt *let = nth_stmt(p.cst, STMT_LET, 0);
    ck_assert_ptr_nonnull(let);
    cst_node *x = let->expr;
    ck_assert_int_eq(x->kind, CST_LET);
    ck_assert_int_eq(x->a->kind, CST_MUL);
    ck_assert_int_eq(x->a->a->kind, CST_REF);
    ck_assert_uint_eq(let->span.line, 3);
    cst_stmt *sb = nth_stmt(p.cst, STMT_ASSIGN, 0), *sc = nth_stmt(p.cst, STMT_ASSIGN, 1);
    ck_assert_ptr_nonnull(sb);
    ck_assert_ptr_nonnull(sc);
    /* B("i") = x: the right side reaches the let node itself */
    ck_assert_ptr_eq(let_target(sb->expr), x);
    /* C("i") = 2 * x + (x): both uses reach the same node, parentheses too */
    ck_assert_int_eq(sc->expr->kind, CST_ADD);
    ck_assert_int_eq(sc->expr->a->kind, CST_MUL);
    ck_assert_int_eq(sc->expr->a->a->kind, CST_NUM);
    ck_assert_ptr_eq(let_target(sc->expr->a->b), x);
    ck_assert_ptr_eq(let_target(sc->expr->b), x);
    /* a use keeps its own location (for diagnostics) */
    ck_assert_uint_eq(sb->expr->span.line, 4);
    ck_assert_uint_eq(sb->expr->span.col, 10);
    ck_assert_uint_eq(sc->expr->a->b->span.line, 5);
    ck_assert_uint_eq(sc->expr->a->b->span.col, 14);
    /* a name that is not a let is a CST_NAME node of its own */
    pipe_free(&p);

    pipe_ok(&p, "in s; out t, u; t = s; u = s;", UPTO_PARSE);
    cst_node *n1 = nth_stmt(p.cst, STMT_ASSIGN, 0)->expr, *n2 = nth_stmt(p.cst, STMT_ASSIGN, 1)->expr;
    ck_assert_int_eq(n1->kind, CST_NAME);
    ck_assert_int_eq(n2->kind, CST_NAME);
    ck_assert_ptr_ne(n1, n2);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_statement_kinds)
{
    static const char text[] = "dim n, b = 16;\n"
                               "in f32 A[n, b], s;\n"
                               "out C[n];\n"
                               "let T(\"i,j\") = A(\"i,j\");\n"
                               "C(\"i\") -= T(\"i,j\") ^ 2;\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    cst_stmt *s = p.cst->first;
    ck_assert_int_eq(s->kind, STMT_DIM);
    ck_assert_int_eq(s->value.kind, 0);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_DIM);
    ck_assert_int_eq(s->value.kind, TK_NUMBER);
    ck_assert_int_eq((int)s->value.n, 2);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_TENSOR);
    ck_assert_int_eq(s->io, TK_IN);
    ck_assert_int_eq(s->dtype_tok, TK_F32);
    ck_assert_int_eq(s->extents.n, 2);
    s = s->next; /* 's': the dtype carries over inside one declaration */
    ck_assert_int_eq(s->kind, STMT_TENSOR);
    ck_assert_int_eq(s->dtype_tok, TK_F32);
    ck_assert_int_eq(s->extents.n, 0);
    s = s->next;
    ck_assert_int_eq(s->io, TK_OUT);
    ck_assert_int_eq(s->dtype_tok, 0);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_LET_TENSOR);
    ck_assert_int_eq(s->targets[0].nlabels, 2);
    s = s->next;
    ck_assert_int_eq(s->kind, STMT_ASSIGN);
    ck_assert_int_eq(s->op, TK_MINUSEQ);
    ck_assert_int_eq(s->expr->kind, CST_POW);
    ck_assert_ptr_null(s->next);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_precedence)
{
    /* -a^2*b + c/d - e  ==  ((-(a^2))*b + c/d) - e */
    pipe_t p;
    pipe_ok(&p, "x = -a^2*b + c/d - e;", UPTO_PARSE);
    cst_node *e = p.cst->first->expr;
    ck_assert_int_eq(e->kind, CST_SUB);
    ck_assert_int_eq(e->b->kind, CST_NAME);
    ck_assert_int_eq(e->a->kind, CST_ADD);
    cst_node *m = e->a->a;
    ck_assert_int_eq(m->kind, CST_MUL);
    ck_assert_int_eq(m->a->kind, CST_NEG);
    ck_assert_int_eq(m->a->a->kind, CST_POW);
    ck_assert_int_eq(e->a->b->kind, CST_DIV);
    pipe_free(&p);
    /* '^' is right-associative: a^2^3 == a^(2^3) */
    pipe_ok(&p, "x = a^2^3;", UPTO_PARSE);
    e = p.cst->first->expr;
    ck_assert_int_eq(e->kind, CST_POW);
    ck_assert_int_eq(e->a->kind, CST_NAME);
    ck_assert_int_eq(e->b->kind, CST_POW);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_label_splitting)
{
    /* col: X=1 '='=3 A=5 '('=6 '"'=7 mu=9 nu=13 0=16 12=19 λ=23 */
    static const char text[] = "X = A(\" mu ,nu,0, 12 ,\xce\xbb \") * B(\"nu,mu\") * s(\"\") * t(\"  \");";
    pipe_t p;
    pipe_ok(&p, text, UPTO_PARSE);
    ck_assert_int_eq(p.cst->nlabel_names, 3);
    ck_assert_str_eq(p.cst->label_names[0], "mu");
    ck_assert_str_eq(p.cst->label_names[1], "nu");
    ck_assert_str_eq(p.cst->label_names[2], "\xce\xbb");
    cst_node *e = p.cst->first->expr; /* ((A * B) * s) * t */
    cst_node *t = e->b, *s = e->a->b, *b = e->a->a->b, *a = e->a->a->a;
    ck_assert_int_eq(a->kind, CST_REF);
    ck_assert_int_eq(a->nlabels, 5);
    ck_assert_int_eq(a->labels[0].label, 0);
    ck_assert_uint_eq(a->labels[0].span.col, 9);
    ck_assert_uint_eq(a->labels[0].span.off, 8);
    ck_assert_uint_eq(a->labels[0].span.len, 2);
    ck_assert_int_eq(a->labels[1].label, 1);
    ck_assert_uint_eq(a->labels[1].span.col, 13);
    ck_assert_int_eq(a->labels[2].label, -1);
    ck_assert_int_eq(a->labels[2].chip, 0);
    ck_assert_uint_eq(a->labels[2].span.col, 16);
    ck_assert_int_eq(a->labels[3].label, -1);
    ck_assert_int_eq(a->labels[3].chip, 12);
    ck_assert_uint_eq(a->labels[3].span.col, 19);
    ck_assert_uint_eq(a->labels[3].span.len, 2);
    ck_assert_int_eq(a->labels[4].label, 2);
    ck_assert_uint_eq(a->labels[4].span.col, 23);
    ck_assert_uint_eq(a->labels[4].span.off, 22);
    ck_assert_uint_eq(a->labels[4].span.len, 2);
    /* the same names are the same ids in another string */
    ck_assert_int_eq(b->nlabels, 2);
    ck_assert_int_eq(b->labels[0].label, 1);
    ck_assert_int_eq(b->labels[1].label, 0);
    /* "" and "  " are the empty label list */
    ck_assert_int_eq(s->kind, CST_REF);
    ck_assert_int_eq(s->nlabels, 0);
    ck_assert_int_eq(t->nlabels, 0);
    /* a target's labels are split too */
    pipe_free(&p);
    pipe_ok(&p, "C(\"j , i\") = 1;", UPTO_PARSE);
    cst_target *tg = &p.cst->first->targets[0];
    ck_assert_int_eq(tg->has_idx, 1);
    ck_assert_int_eq(tg->nlabels, 2);
    ck_assert_str_eq(p.cst->label_names[tg->labels[0].label], "j");
    ck_assert_str_eq(p.cst->label_names[tg->labels[1].label], "i");
    ck_assert_uint_eq(tg->labels[1].span.col, 8);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_big_chip)
{
    pipe_t p;
    pipe_ok(&p, "x = A(\"1000000000000000000\");", UPTO_PARSE);
    ck_assert_int_eq(p.cst->first->expr->labels[0].chip, INT64_C(1000000000000000000));
    pipe_free(&p);
    ck_assert_int_eq(pipe_run(&p, "x = A(\"99999999999999999999\");", UPTO_PARSE), -1);
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "t.tx:1:8: error: "));
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "too large"));
    pipe_free(&p);
}
END_TEST

/* Syntax errors: the program, the position and phrases of the message. */
static const struct {
    const char *src;
    unsigned line, col;
    const char *phrase1, *phrase2;
} parse_errors[] = {
    {"in A[n;", 1, 7, "expected ']' or ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i\"", 3, 15, "unexpected end of input", "expected ')'"},
    {"in A[n];\nout C[n];\nC(\"i\") A(\"i\");", 3, 8, "unexpected name 'A'", "expected '=', '+=' or '-='"},
    {"dim n = ;", 1, 9, "unexpected ';'", "expected number"},
    {"let = 3;", 1, 5, "unexpected '='", "expected name"},
    {"in in[n];", 1, 4, "'in'", NULL},
    {"sparse L : \"i\" \"j\";", 1, 16, "unexpected index string", "expected '->'"},
    {"out C;\nC = (1 + 2;", 2, 11, "unexpected ';'", "expected ')'"},
    {"out C;\nC = 1 2;", 2, 7, "unexpected number '2'", "expected ';'"},
    {"in A[n] B;", 1, 9, "unexpected name 'B'", "expected"},
    {"in A[n];\nout C[n];\nC(\"i,,j\") = A(\"i\");", 3, 6, "empty label", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i j\");", 3, 15, "expected ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"i,\");", 3, 14, "trailing ','", NULL},
    {"in A[n];\nout C[n];\nC(\"i\") = A(\"-1\");", 3, 13, "'-1' is not a label", NULL},
    {"in A[2.5];", 1, 6, "an extent is a dim name or a non-negative integer", NULL},
};

START_TEST(cst_parse_errors)
{
    pipe_t p;
    int r = pipe_run(&p, parse_errors[_i].src, UPTO_PARSE);
    ck_assert_msg(r == -1, "case %d parsed", _i);
    ck_assert_ptr_null(p.cst);
    ck_assert_int_ge(p.diag.nerrors, 1);
    const char *out = diag_text(&p.diag);
    char want[64];
    snprintf(want, sizeof want, "t.tx:%u:%u: error: ", parse_errors[_i].line, parse_errors[_i].col);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "case %d: want '%s', got:\n%s", _i, want, out);
    const char *eol = strchr(out, '\n');
    size_t first = eol ? (size_t)(eol - out) : strlen(out);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)first, out);
    ck_assert_msg(strstr(line, parse_errors[_i].phrase1), "case %d: no '%s' in '%s'", _i,
                  parse_errors[_i].phrase1, line);
    if (parse_errors[_i].phrase2)
        ck_assert_msg(strstr(line, parse_errors[_i].phrase2), "case %d: no '%s' in '%s'", _i,
                      parse_errors[_i].phrase2, line);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_one_syntax_error)
{
    /* the parser stops at the first syntax error: one diagnostic */
    pipe_t p;
    ck_assert_int_eq(pipe_run(&p, "in A[n;\nout ;\nC = = ;", UPTO_PARSE), -1);
    ck_assert_int_eq(p.diag.nerrors, 1);
    pipe_free(&p);
}
END_TEST

START_TEST(cst_deep_nesting)
{
    /* absurd nesting is an error, never a crash */
    size_t depth = 5000;
    char *text = malloc(depth * 2 + 32);
    ck_assert_ptr_nonnull(text);
    strcpy(text, "out x; x = ");
    size_t n = strlen(text);
    for (size_t i = 0; i < depth; i++)
        text[n++] = '(';
    text[n++] = '1';
    for (size_t i = 0; i < depth; i++)
        text[n++] = ')';
    text[n++] = ';';
    text[n] = 0;
    pipe_t p;
    ck_assert_int_eq(pipe_run(&p, text, UPTO_PARSE), -1);
    ck_assert_ptr_nonnull(strstr(diag_text(&p.diag), "nested too deeply"));
    pipe_free(&p);
    free(text);
}
END_TEST

/* ------------------------------------------------------------------ */
/* sema                                                               */

START_TEST(sema_symbols)
{
    static const char text[] = "dim b = 16;\n"
                               "in A[n,k], B[k,m];\n"
                               "in f32 x[b];\n"
                               "out C[n,m];\n"
                               "inout S;\n"
                               "tmp T[n];\n"
                               "let y = A(\"i,k\") * B(\"k,j\");\n"
                               "C(\"i,j\") = y;\n"
                               "T(\"i\") = C(\"i,j\");\n"
                               "S = T(\"i\") + x(\"q\");\n"
                               "let U(\"i\") = T(\"i\");\n";
    pipe_t p;
    pipe_ok(&p, text, UPTO_SEMA);
    sema_program *S = p.S;
    sym *s;

    s = sema_lookup(S, "b");
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(s->kind, SYM_DIM);
    ck_assert_int_eq(s->is_const, 1);
    ck_assert_int_eq(s->value, 16);
    for (int i = 0; i < 3; i++) {
        const char *nm = (const char *[]){"n", "k", "m"}[i];
        s = sema_lookup(S, nm);
        ck_assert_ptr_nonnull(s);
        ck_assert_int_eq(s->kind, SYM_DIM);
        ck_assert_int_eq(s->is_const, 0);
        ck_assert_int_eq(s->index, i); /* index among symbolic dims */
    }
    /* every dim, constant or not, in order of first appearance */
    ck_assert_int_eq(S->ndims, 4);
    ck_assert_str_eq(S->dims[0]->name, "b");
    ck_assert_str_eq(S->dims[1]->name, "n");
    ck_assert_str_eq(S->dims[2]->name, "k");
    ck_assert_str_eq(S->dims[3]->name, "m");
    ck_assert_int_eq(S->nsym_dims, 3);
    ck_assert_str_eq(S->sym_dims[0]->name, "n");
    ck_assert_str_eq(S->sym_dims[1]->name, "k");
    ck_assert_str_eq(S->sym_dims[2]->name, "m");

    s = sema_lookup(S, "A");
    ck_assert_int_eq(s->kind, SYM_TENSOR);
    ck_assert_int_eq(s->io, IO_IN);
    ck_assert_int_eq(s->dt, DT_F64);
    ck_assert_int_eq(s->rank, 2);
    ck_assert_int_ge(s->ext[0].dim, 0);
    ck_assert_str_eq(S->dims[s->ext[0].dim]->name, "n");
    ck_assert_str_eq(S->dims[s->ext[1].dim]->name, "k");
    s = sema_lookup(S, "x");
    ck_assert_int_eq(s->dt, DT_F32);
    ck_assert_int_eq(s->ext[0].dim, -1); /* a constant dim is a constant extent */
    ck_assert_int_eq(s->ext[0].value, 16);
    ck_assert_int_eq(sema_lookup(S, "C")->io, IO_OUT);
    s = sema_lookup(S, "S");
    ck_assert_int_eq(s->io, IO_INOUT);
    ck_assert_int_eq(s->rank, 0);
    s = sema_lookup(S, "T");
    ck_assert_int_eq(s->io, IO_TMP);
    ck_assert_int_eq(s->index, -1);
    ck_assert_int_eq(sema_lookup(S, "y")->kind, SYM_LET);
    s = sema_lookup(S, "U");
    ck_assert_int_eq(s->kind, SYM_LET_TENSOR);
    ck_assert_int_eq(s->rank, 1);
    ck_assert_str_eq(S->dims[s->ext[0].dim]->name, "n"); /* inferred */
    ck_assert_ptr_null(sema_lookup(S, "i"));             /* labels are not names */
    ck_assert_ptr_null(sema_lookup(S, "nope"));

    /* parameters: in/out/inout in declaration order, tmp and lets excluded */
    ck_assert_int_eq(S->ntensors, 5);
    const char *order[] = {"A", "B", "x", "C", "S"};
    for (int i = 0; i < 5; i++) {
        ck_assert_str_eq(S->tensors[i]->name, order[i]);
        ck_assert_int_eq(S->tensors[i]->index, i);
    }
    ck_assert_int_eq(S->nvars, 7); /* + T and U */
    for (int i = 0; i < S->nvars; i++)
        ck_assert_int_eq(S->vars[i]->var, i);
    ck_assert_int_eq(S->nassign, 4); /* C, T, S, U; a bare let is not a statement that runs */
    pipe_free(&p);
}
END_TEST

START_TEST(sema_implicit_dims_order)
{
    pipe_t p;
    pipe_ok(&p, "in A[z, a7], B[a7, q];\ndim w, c = 3;\nout C[z, q, w];\n"
                "C(\"i,j,l\") = 1;\n", UPTO_SEMA);
    const char *want[] = {"z", "a7", "q", "w"};
    ck_assert_int_eq(p.S->nsym_dims, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_str_eq(p.S->sym_dims[i]->name, want[i]);
        ck_assert_int_eq(p.S->sym_dims[i]->index, i);
    }
    ck_assert_int_eq(p.S->ndims, 5);
    ck_assert_str_eq(p.S->dims[4]->name, "c");
    pipe_free(&p);
}
END_TEST

START_TEST(sema_param_order)
{
    pipe_t p;
    pipe_ok(&p, "tmp T0; in a; out z; tmp T1[n]; inout m; in f32 b[n]; out y[3];\n"
                "T0 = a; z = T0; T1(\"i\") = b(\"i\"); m += T1(\"i\"); y(\"i\") = 1; \n", UPTO_SEMA);
    const char *want[] = {"a", "z", "m", "b", "y"};
    ck_assert_int_eq(p.S->ntensors, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_str_eq(p.S->tensors[i]->name, want[i]);
    ck_assert_int_eq(sema_lookup(p.S, "T0")->index, -1);
    ck_assert_int_eq(sema_lookup(p.S, "T1")->index, -1);
    pipe_free(&p);
}
END_TEST

START_TEST(sema_label_extents)
{
    pipe_t p;
    pipe_ok(&p, "dim b = 5;\nin A[n,k], B[k,m], x[b];\nout C[n,m], y[b];\n"
                "C(\"i,j\") = A(\"i,k\") * B(\"k,j\");\ny(\"k\") = x(\"k\");\n", UPTO_SEMA);
    cst_program *P = p.cst;
    int li = label_id(P, "i"), lj = label_id(P, "j"), lk = label_id(P, "k");
    ck_assert_int_ge(li, 0);
    ck_assert_int_ge(lj, 0);
    ck_assert_int_ge(lk, 0);
    cst_stmt *st = nth_stmt(P, STMT_ASSIGN, 0);
    ck_assert_int_eq(st->index, 0);
    ck_assert(ls_has(&st->lab_bound, li) && ls_has(&st->lab_bound, lj) && ls_has(&st->lab_bound, lk));
    ck_assert_str_eq(p.S->dims[st->lab_ext[li].dim]->name, "n");
    ck_assert_str_eq(p.S->dims[st->lab_ext[lj].dim]->name, "m");
    ck_assert_str_eq(p.S->dims[st->lab_ext[lk].dim]->name, "k");
    ck_assert(ls_eq(st->target_ls, set_of(li, lj)));
    /* the same label in another statement has its own extent */
    st = nth_stmt(P, STMT_ASSIGN, 1);
    ck_assert_int_eq(st->index, 1);
    ck_assert(ls_has(&st->lab_bound, lk));
    ck_assert(!ls_has(&st->lab_bound, li));
    ck_assert_int_eq(st->lab_ext[lk].dim, -1);
    ck_assert_int_eq(st->lab_ext[lk].value, 5);
    ck_assert(ls_eq(st->target_ls, set_of(lk, -1)));
    pipe_free(&p);
}
END_TEST

START_TEST(sema_subtree_labels)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,n], v[n]; out w[n];\nw(\"i\") = A(\"i,j\") * v(\"j\") + 2 * v(\"i\");\n", UPTO_SEMA);
    cst_node *e = nth_stmt(p.cst, STMT_ASSIGN, 0)->expr;
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j");
    ck_assert(ls_eq(e->ls, set_of(li, lj)));
    ck_assert(ls_eq(e->a->ls, set_of(li, lj)));
    ck_assert(ls_eq(e->b->ls, set_of(li, -1)));
    ck_assert_int_eq(e->b->a->is_number, 1);
    ck_assert_int_eq(e->is_number, 0);
    pipe_free(&p);
}
END_TEST

/* Programs sema (or the parser's actions) must reject: a phrase of the
   first diagnostic and its position. */
static const struct {
    const char *src;
    unsigned line, col;
    const char *phrase;
} sema_errors[] = {
    /* 0 */ {"out C[n];\nC(\"i\") = X(\"i\");", 2, 10, "unknown tensor 'X'"},
    {"in A[n]; in A[n];", 1, 13, "'A' is already declared"},
    {"in A[n,k], B[m,k];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");", 3, 26,
     "bound to two different extents"},
    {"in A[n,m]; out C[n];\nC(\"i\") = A(\"i\");", 2, 12, "'A' has 2 modes but is indexed with 1 label"},
    {"in A[n]; out C[n,n];\nC(\"i\") = A(\"i\");", 2, 3, "'C' has 2 modes but is indexed with 1 label"},
    /* 5 */ {"in A[n]; A(\"i\") = 1;", 1, 10, "cannot write to 'A'"},
    {"out C[n]; out D[n];\nD(\"i\") = C(\"i\");", 2, 10, "'C' is read before it is written"},
    {"in A[n]; tmp T[n]; out C[n];\nC(\"i\") = T(\"i\");", 2, 10, "'T' is read before it is written"},
    {"out C[n];\nC(\"i\") += 1;", 2, 8, "not been written"},
    {"in A[n]; tmp T[n]; out C[n];\nT(\"i\") -= A(\"i\");\nC(\"i\") = T(\"i\");", 2, 8, "not been written"},
    /* 10 */ {"in A[n]; out C[n,n];\nC(\"i,j\") = A(\"i\");", 2, 6,
              "label 'j' of the target does not appear on the right-hand side"},
    {"in A[n,n]; out C[n,n];\nC(\"i,i\") = A(\"i,i\");", 2, 6, "label 'i' is repeated in the target"},
    {"in A[4]; out c;\nc = A(\"4\");", 2, 8, "out of range"},
    {"in A[n]; out C[n];\nC(\"1\") = A(\"1\");", 2, 4, "an integer label cannot be written to"},
    {"dim n; out C[n];\nC(\"i\") = n(\"i\");", 2, 10, "'n' is a dim, not a tensor"},
    /* 15 */ {"in A[n]; out C[A];", 1, 16, "not a dim"},
    {"in A[n]; out C[n]; out D[n];\nC(\"i\") = A(\"i\");", 1, 24, "output 'D' is never written"},
    {"sparse L : \"i\" -> \"j\";", 1, 8, "applies to no statement"},
    {"in A[n], B[n]; out C[n];\nC(\"i\") = A(\"i\") ^ B(\"i\");", 2, 19, "the exponent of '^' must be a number"},
    {"in A[n,n]; out c;\nc = A;", 2, 5, "'A' has 2 modes"},
    /* 20 */ {"in A[n]; out C[m];\nC(\"i\") = A(\"i\");", 2, 4, "label 'i' has extent 'n'"},
    {"in A[n]; out C[n];\nC = A(\"i\");", 2, 1, "'C' has 1 mode"},
    {"out c;\nc = y;", 2, 5, "unknown name 'y'"},
    {"in A[n,m]; out d[n];\nd(\"i\") = A(\"i,i\");", 2, 15, "bound to two different extents"},
    {"in A[n]; out C[n];\nlet T(\"i\") = A(\"i\");\nC(\"i\") = T(\"i,j\");", 3, 12, "has 1 mode but is indexed with 2"},
    /* 25 */ {"dim n; in n[3];", 1, 11, "'n' is already declared"},
    {"dim n = 2.5;", 1, 9, "non-negative integer"},
    {"in A[n]; out C[n];\nlet x = A(\"i\");\nlet x = A(\"i\");\nC(\"i\") = x;", 3, 5, "'x' is already declared"},
    {"in A[3]; out C[3];\nC(\"i\") = A(\"i\") + A(\"3\");", 2, 22, "out of range"},
    {"in A[n]; out C[n];\nC(\"i\") = A(\"i\") * B(\"i\");", 2, 19, "unknown tensor 'B'"},
    /* columns count characters: multi-byte labels and a leading tab */
    {"in A[n]; out C[n,n];\nC(\"\xce\xbb,\xce\xbc\") = A(\"\xce\xbb\");", 2, 6,
     "of the target does not appear on the right-hand side"},
    {"in A[n]; out C[n];\n\tC(\"i\") = B(\"i\");", 2, 11, "unknown tensor 'B'"},
    {"in \xce\xbb[n], B[m]; out C[n];\nC(\"i\") = \xce\xbb(\"i\") * B(\"i\");", 2, 22,
     "bound to two different extents"},
    /* 30: the culprit of a stale let is its use, not the whole statement */
    {"inout S[n]; out C[n];\nlet x = S(\"i\");\nS(\"i\") = 1;\nC(\"i\") = x;", 4, 10,
     "let 'x' is used after 'S'"},
};

START_TEST(sema_error_cases)
{
    pipe_t p;
    int r = pipe_run(&p, sema_errors[_i].src, UPTO_SEMA);
    ck_assert_msg(r == -1, "case %d was accepted:\n%s", _i, sema_errors[_i].src);
    ck_assert_ptr_null(p.S);
    const char *out = diag_text(&p.diag);
    char want[64];
    snprintf(want, sizeof want, "t.tx:%u:%u: error: ", sema_errors[_i].line, sema_errors[_i].col);
    ck_assert_msg(strncmp(out, want, strlen(want)) == 0, "case %d: want '%s', got:\n%s", _i, want, out);
    const char *eol = strchr(out, '\n');
    char line[512];
    snprintf(line, sizeof line, "%.*s", eol ? (int)(eol - out) : (int)strlen(out), out);
    ck_assert_msg(strstr(line, sema_errors[_i].phrase), "case %d: no '%s' in '%s'", _i,
                  sema_errors[_i].phrase, line);
    pipe_free(&p);
}
END_TEST

START_TEST(sema_accepts)
{
    /* programs the contract allows: each must pass sema */
    static const char *ok[] = {
        "in A[n,n]; out t;\nt = A(\"i,i\");",                                  /* trace */
        "in A[n,m]; out At[m,n];\nAt(\"j,i\") = A(\"i,j\");",                   /* transpose */
        "in A[n,m], b[m]; out C[n,m];\nC(\"i,j\") = A(\"i,j\") + b(\"j\");",    /* broadcast */
        "out C[n,m];\nC(\"i,j\") = 0;",                                         /* fill */
        "in A[n,m], x[m]; out r[m];\nr(\"j\") = A(\"3,j\") * x(\"j\");",        /* chip */
        "inout S[n]; in A[n,m];\nS(\"i\") += A(\"i,j\");",                      /* accumulate */
        "in s; out t;\nt = s(\"\") * 2;",                                       /* s("") */
        "in A[n]; out C[n];\nC(\"i\") = A(\"i\");\nC(\"i\") += C(\"i\") ^ 2;",  /* += after = */
        "in A[n,k]; out C[n];\nlet T(\"a,b\") = A(\"a,b\");\nC(\"i\") = T(\"i,j\");", /* let renamed */
        "dim k = 2; in A[k,k]; out c;\nc = A(\"1,1\");",                        /* chip in range */
        "in \xce\xbb[n]; out \xce\x94x[n];\n\xce\x94x(\"\xce\xbc\") = \xce\xbb(\"\xce\xbc\");",
        "in A[n]; out k;\nk = A(\"k\");", /* a label and a name are unrelated */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        pipe_t p;
        int r = pipe_run(&p, ok[i], UPTO_SEMA);
        ck_assert_msg(r == 0, "program %zu rejected:\n%s\n%s", i, ok[i], diag_text(&p.diag));
        pipe_free(&p);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* graph                                                              */

START_TEST(graph_matmul)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j"), lk = label_id(p.cst, "k");
    ck_assert_int_eq(count_ops(p.g, OP_INPUT), 2);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1);
    ck_assert_int_eq(count_ops(p.g, OP_STORE), 1);
    g_value *c = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(c->nin, 2);
    ck_assert(ls_eq(c->summed, set_of(lk, -1)));
    ck_assert_int_eq(c->rank, 2);
    ck_assert_int_eq(c->label[0], li); /* the target's order */
    ck_assert_int_eq(c->label[1], lj);
    ck_assert_double_eq(c->coef, 1);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(c->in[i]->op, OP_INDEX);
        ck_assert_double_eq(c->coef_in[i], 1);
    }
    ck_assert_str_eq(p.S->vars[c->in[0]->in[0]->var]->name, "A");
    ck_assert_str_eq(p.S->vars[c->in[1]->in[0]->var]->name, "B");
    g_value *s = nth_op(p.g, OP_STORE, 0);
    ck_assert_ptr_eq(s->in[0], c);
    ck_assert_int_eq(s->store_op, '=');
    ck_assert_str_eq(p.S->vars[s->var]->name, "C");
    ck_assert_int_eq(s->store_label[0], li);
    ck_assert_int_eq(s->store_label[1], lj);
    ck_assert_int_eq(s->stmt, 0);
    /* ids are positions; operands come first */
    for (int k = 0; k < p.g->n; k++) {
        ck_assert_int_eq(p.g->v[k]->id, k);
        for (int i = 0; i < p.g->v[k]->nin; i++)
            ck_assert_int_lt(p.g->v[k]->in[i]->id, k);
    }
    /* the listing */
    tx_buf b = {0};
    graph_print(p.g, &b, 0);
    ck_assert_ptr_nonnull(b.p);
    char want[64];
    snprintf(want, sizeof want, "= contract %%%d * %%%d over k", c->in[0]->id, c->in[1]->id);
    ck_assert_msg(strstr(b.p, want) != NULL, "no '%s' in:\n%s", want, b.p);
    ck_assert_ptr_nonnull(strstr(b.p, "store C(\"i,j\") ="));
    buf_free(&b);
    graph_print(p.g, &b, 1);
    ck_assert_int_eq(strncmp(b.p, "digraph", 7), 0);
    ck_assert_ptr_nonnull(strstr(b.p, "->"));
    ck_assert_str_eq(b.p + b.len - 2, "}\n");
    buf_free(&b);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_three_way)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,q], B[q,m], d[q];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\") * d(\"k\");",
            UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1);
    g_value *c = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(c->nin, 3);
    ck_assert(ls_eq(c->summed, set_of(label_id(p.cst, "k"), -1)));
    ck_assert_int_eq(c->rank, 2);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_let_shared)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,q], B[q,m];\nout C[n,m], D[n,m];\nlet x = A(\"i,k\") * B(\"k,j\");\n"
                "C(\"i,j\") = x;\nD(\"i,j\") = x + 1;\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    ck_assert_int_eq(count_ops(p.g, OP_CONTRACT), 1); /* computed once */
    g_value *x = nth_op(p.g, OP_CONTRACT, 0);
    ck_assert_int_eq(x->nuses, 2);
    int users = 0;
    for (int k = 0; k < p.g->n; k++)
        for (int i = 0; i < p.g->v[k]->nin; i++)
            users += p.g->v[k]->in[i] == x;
    ck_assert_int_eq(users, 2);
    ck_assert_int_eq(count_ops(p.g, OP_ADD), 1);
    ck_assert_int_eq(count_ops(p.g, OP_STORE), 2);
    pipe_free(&p);
}
END_TEST

START_TEST(graph_other_ops)
{
    pipe_t p;
    /* broadcast add, trace, accumulation, scaling */
    pipe_ok(&p, "in A[n,m], b[m], Q[n,n]; inout S[n]; out C[n,m], t;\n"
                "C(\"i,j\") = A(\"i,j\") + b(\"j\");\n"
                "t = Q(\"i,i\");\n"
                "S(\"i\") += 3 * A(\"i,j\");\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "%s", msg);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j");
    g_value *add = nth_op(p.g, OP_ADD, 0);
    ck_assert_ptr_nonnull(add);
    ck_assert_int_eq(add->nin, 2);
    ck_assert_int_eq(add->rank, 2);
    ck_assert_int_eq(add->label[0], li);
    ck_assert_int_eq(add->label[1], lj);
    ck_assert_int_eq(add->in[1]->rank, 1);
    ck_assert_int_eq(add->in[1]->label[0], lj);
    /* the trace: an index with one label i (the diagonal), summed to a scalar */
    g_value *tr = NULL;
    for (int k = 0; k < p.g->n; k++) {
        g_value *v = p.g->v[k];
        if (v->op == OP_CONTRACT && v->rank == 0)
            tr = v;
    }
    ck_assert_ptr_nonnull(tr);
    ck_assert(ls_eq(tr->summed, set_of(li, -1)));
    ck_assert_int_eq(tr->in[0]->op, OP_INDEX);
    ck_assert_int_eq(tr->in[0]->rank, 1);
    ck_assert_int_eq(tr->in[0]->idx_label[0], li);
    ck_assert_int_eq(tr->in[0]->idx_label[1], li);
    /* += : a store with the previous value as its second operand */
    g_value *acc = NULL;
    for (int k = 0; k < p.g->n; k++)
        if (p.g->v[k]->op == OP_STORE && p.g->v[k]->store_op == '+')
            acc = p.g->v[k];
    ck_assert_ptr_nonnull(acc);
    ck_assert_int_eq(acc->nin, 2);
    ck_assert_int_eq(acc->in[1]->op, OP_INPUT);
    ck_assert_int_eq(acc->in[1]->var, acc->var);
    ck_assert_double_eq(acc->in[0]->coef, 3);
    pipe_free(&p);
}
END_TEST

/* Lowers matmul and applies corruption WHICH; graph_check must fail. */
static void corrupt_and_check(int which, const char *phrase)
{
    pipe_t p;
    pipe_ok(&p, "in A[n,k], B[k,m];\ninout S[n];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n"
                "S(\"z\") += A(\"z,k\");\n", UPTO_LOWER);
    char msg[256] = "";
    ck_assert_msg(graph_check(p.g, msg, sizeof msg) == 0, "valid graph rejected: %s", msg);
    int lz = label_id(p.cst, "z");
    ck_assert_int_ge(lz, 0);
    graph *g = p.g;
    g_value *c = nth_op(g, OP_CONTRACT, 0);
    g_value *st = nth_op(g, OP_STORE, 0);
    int li = label_id(p.cst, "i"), lj = label_id(p.cst, "j"), lk = label_id(p.cst, "k");
    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(st);
    ck_assert_int_eq(c->rank, 2);
    switch (which) {
    case 0: /* an operand defined after its user */
        c->in[0] = st;
        break;
    case 1: /* two values swapped: the contraction before its operands */
    {
        int a = c->in[0]->id, b = c->id;
        g->v[a] = c;
        g->v[b] = c->in[0];
        g->v[a]->id = a;
        g->v[b]->id = b;
        break;
    }
    case 2: /* summed set missing k */
        c->summed = set_of(-1, -1);
        break;
    case 3: /* summed set with an output label as well */
        c->summed = set_of(lk, li);
        break;
    case 4: /* a duplicate label */
        c->label[1] = c->label[0];
        c->ext[1] = c->ext[0];
        break;
    case 5: /* a store of a label the target lacks */
        st->store_label[1] = lk;
        break;
    case 6: /* an exponent other than ±1 */
        c->coef_in[1] = 2;
        break;
    case 7: /* an output label no operand has */
        c->label[1] = lz;
        break;
    case 8: /* an id that is not the position */
        c->id = 0;
        break;
    case 9: /* a label with two extents */
        c->ext[0] = (tx_extent){-1, 7};
        break;
    case 10: /* accumulation without the previous value */
    {
        g_value *acc = NULL;
        for (int k = 0; k < g->n; k++)
            if (g->v[k]->op == OP_STORE && g->v[k]->store_op == '+')
                acc = g->v[k];
        ck_assert_ptr_nonnull(acc);
        acc->nin = 1;
        break;
    }
    case 11: /* a variable value with labelled modes */
        g->v[0]->label[0] = li;
        break;
    }
    (void)lj;
    msg[0] = 0;
    ck_assert_msg(graph_check(g, msg, sizeof msg) == -1, "corruption %d not detected", which);
    ck_assert_msg(msg[0] != 0, "corruption %d: no message", which);
    if (phrase)
        ck_assert_msg(strstr(msg, phrase) != NULL, "corruption %d: no '%s' in '%s'", which, phrase, msg);
    pipe_free(&p);
}

START_TEST(graph_check_corrupt)
{
    static const char *phrases[] = {
        "not an earlier value", NULL, "summed", "summed", "twice", "lacks", "exponent",
        "comes from no operand", "id", "extents", "accumulation", "labelled",
    };
    corrupt_and_check(_i, phrases[_i]);
}
END_TEST

START_TEST(graph_check_empty)
{
    pipe_t p;
    pipe_ok(&p, "", UPTO_LOWER);
    char msg[64] = "x";
    ck_assert_int_eq(graph_check(p.g, msg, sizeof msg), 0);
    ck_assert_int_eq(p.g->n, 0);
    pipe_free(&p);
}
END_TEST

/* ------------------------------------------------------------------ */
/* mangle_name                                                        */

static char *mangled(const char *prefix, const char *name)
{
    tx_buf b = {0};
    mangle_name(&b, prefix, name);
    ck_assert_int_eq(b.oom, 0);
    char *s = strdup(b.p ? b.p : "");
    buf_free(&b);
    return s;
}

static int is_c_ident(const char *s)
{
    if (!*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static const char *c_keywords[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "_Bool", "_Complex", "_Imaginary", "main", NULL};

START_TEST(mangle_tricky_names)
{
    static const char *names[] = {
        "a_b", "a__b", "a", "_b", "ab", "a_", "_a", "__", "_", "a_5f", "a_2d", "a___b",
        "\xce\xbb", "\xce\x9b", "\xce\xbb\xce\xbb", "x\xce\xbb", "x\xce\xbc", "_ce_bb", "_ce", "ce_bb",
        "\xc3\xa9", "e\xcc\x81", "e_cc_81", "int", "main", "free", "printf", "tx_v1", "t_x", "x9",
        "9", "_9", "A", "a_B", "a_b_", "_ce__bb",
    };
    size_t n = sizeof names / sizeof names[0];
    const char *prefixes[] = {"t_", "d_", "l_"};
    for (size_t q = 0; q < 3; q++) {
        char **m = calloc(n, sizeof *m);
        for (size_t i = 0; i < n; i++) {
            m[i] = mangled(prefixes[q], names[i]);
            ck_assert_msg(is_c_ident(m[i]), "'%s' -> '%s' is not an identifier", names[i], m[i]);
            ck_assert_int_eq(strncmp(m[i], prefixes[q], 2), 0);
            for (int k = 0; c_keywords[k]; k++)
                ck_assert_str_ne(m[i], c_keywords[k]);
        }
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < i; j++)
                ck_assert_msg(strcmp(m[i], m[j]) != 0, "'%s' and '%s' both mangle to '%s'", names[i],
                              names[j], m[i]);
        for (size_t i = 0; i < n; i++)
            free(m[i]);
        free(m);
    }
    /* the documented scheme */
    char *s = mangled("t_", "a_b");
    ck_assert_str_eq(s, "t_a__b");
    free(s);
    s = mangled("t_", "\xce\xbb");
    ck_assert_str_eq(s, "t__ce_bb");
    free(s);
    /* two names that differ only in one non-ASCII byte differ after mangling */
    char *a = mangled("l_", "\xce\xbb"), *b = mangled("l_", "\xce\x9b");
    ck_assert_str_ne(a, b);
    free(a);
    free(b);
    /* the prefixes keep dims, tensors and labels apart */
    a = mangled("t_", "n");
    b = mangled("d_", "n");
    ck_assert_str_ne(a, b);
    free(a);
    free(b);
}
END_TEST

/* Inverts mangle_name's scheme; returns 0 if TEXT is not a valid output. */
static int unmangle(const char *text, const char *prefix, char *out, size_t cap)
{
    size_t pl = strlen(prefix), n = 0;
    if (strncmp(text, prefix, pl) != 0)
        return 0;
    for (const char *p = text + pl; *p; p++) {
        if (n + 1 >= cap)
            return 0;
        if (*p != '_') {
            out[n++] = *p;
            continue;
        }
        if (p[1] == '_') {
            out[n++] = '_';
            p++;
            continue;
        }
        const char *hex = "0123456789abcdef";
        const char *h1 = p[1] ? strchr(hex, p[1]) : NULL, *h2 = h1 && p[2] ? strchr(hex, p[2]) : NULL;
        if (!h1 || !h2)
            return 0;
        out[n++] = (char)((h1 - hex) * 16 + (h2 - hex));
        p += 2;
    }
    out[n] = 0;
    return 1;
}

START_TEST(mangle_round_trip)
{
    /* every byte string round-trips, so mangling is injective */
    unsigned seed = 12345;
    for (int iter = 0; iter < 3000; iter++) {
        char name[24], back[128];
        int len = 1 + (int)(seed % 20);
        for (int i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            int r = (int)((seed >> 16) % 6);
            /* bias towards the interesting bytes: '_', hex digits, high bytes */
            name[i] = r == 0 ? '_' : r == 1 ? "0123456789abcdef"[(seed >> 8) & 15]
                    : r == 2 ? (char)(0x80 + ((seed >> 9) & 0x7f)) : (char)(1 + ((seed >> 9) % 255));
        }
        name[len] = 0;
        seed = seed * 1103515245u + 12345u;
        char *m = mangled("t_", name);
        ck_assert_msg(is_c_ident(m), "not an identifier: %s", m);
        ck_assert_msg(unmangle(m, "t_", back, sizeof back), "cannot decode %s", m);
        ck_assert_msg(strcmp(back, name) == 0, "round trip failed for %s", m);
        free(m);
    }
}
END_TEST

/* ------------------------------------------------------------------ */
/* emit                                                               */

/* Counts identifier tokens equal to WORD in C source SRC, skipping
   comments, string and character literals and preprocessor lines' header
   names; fails if any word of FORBID appears at all. */
typedef struct {
    char **ids;
    int n, cap;
} idlist;

static void id_add(idlist *l, const char *s, size_t n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->ids = realloc(l->ids, sizeof(char *) * (size_t)l->cap);
    }
    l->ids[l->n] = malloc(n + 1);
    memcpy(l->ids[l->n], s, n);
    l->ids[l->n][n] = 0;
    l->n++;
}

static void id_free(idlist *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->ids[i]);
    free(l->ids);
}

static int id_char(char c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (!first && c >= '0' && c <= '9');
}

/* A tiny C tokenizer: collects every identifier outside comments and
   string/char literals (and numbers: 1e5, 0x1f are not identifiers). */
static void c_identifiers(const char *s, idlist *out)
{
    size_t i = 0, n = strlen(s);
    while (i < n) {
        char c = s[i];
        if (c == '/' && s[i + 1] == '*') {
            const char *e = strstr(s + i + 2, "*/");
            ck_assert_msg(e != NULL, "unterminated comment in emitted C");
            i = (size_t)(e - s) + 2;
        } else if (c == '/' && s[i + 1] == '/') {
            while (i < n && s[i] != '\n')
                i++;
        } else if (c == '"' || c == '\'') {
            i++;
            while (i < n && s[i] != c) {
                ck_assert_msg(s[i] != '\n', "newline inside a literal in emitted C");
                i += s[i] == '\\' ? 2 : 1;
            }
            i++;
        } else if (c == '#' && (i == 0 || s[i - 1] == '\n')) {
            /* #include <stdint.h>: the header name is not an identifier */
            if (strncmp(s + i, "#include", 8) == 0) {
                while (i < n && s[i] != '\n')
                    i++;
            } else
                i++;
        } else if (c >= '0' && c <= '9') {
            while (i < n && (id_char(s[i], 0) || s[i] == '.' ||
                             ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' || s[i - 1] == 'E'))))
                i++;
        } else if (id_char(c, 1)) {
            size_t j = i;
            while (j < n && id_char(s[j], 0))
                j++;
            id_add(out, s + i, j - i);
            i = j;
        } else
            i++;
    }
}

static int id_count(const idlist *l, const char *w)
{
    int k = 0;
    for (int i = 0; i < l->n; i++)
        k += strcmp(l->ids[i], w) == 0;
    return k;
}

/* The same program twice: once with names that are C keywords and library
   functions, once with harmless names. */
#define EMIT_PROG(T1, T2, T3, T4, D, L1, L2)                                                 \
    "in " T1 "[" D ", 3], " T2 "[3];\n"                                                      \
    "out " T3 "[" D "];\n"                                                                   \
    "inout " T4 ";\n"                                                                        \
    T3 "(\"" L1 "\") = " T1 "(\"" L1 "," L2 "\") * " T2 "(\"" L2 "\");\n"                    \
    T4 " += " T3 "(\"" L1 "\") ^ 2 + " T1 "(\"0,2\");\n"

static char *emit_program(const char *text, int jit)
{
    pipe_t p;
    pipe_ok(&p, text, UPTO_LOWER);
    char msg[256];
    ck_assert_msg(opt_run(p.g, 2, msg, sizeof msg) == 0, "%s", msg);
    int64_t dims[4] = {5, 5, 5, 5};
    emit_options o = {.fn_name = "prog", .dim_values = dims};
    tx_buf out = {0};
    emit_error *errs = NULL;
    int nerrs = 0;
    ck_assert_int_eq(emit_c(p.g, jit ? &target_jit_tcc : &target_c99_blas, &o, &out, &errs, &nerrs), 0);
    ck_assert_ptr_nonnull(out.p);
    ck_assert_int_ge(nerrs, 1);
    char *s = strdup(out.p);
    buf_free(&out);
    pipe_free(&p);
    return s;
}

START_TEST(emit_names_never_raw)
{
    static const char *words[] = {"int", "main", "free", "printf", "double", "for", "if", "malloc", NULL};
    const char *bad = EMIT_PROG("int", "main", "free", "printf", "double", "for", "if");
    const char *good = EMIT_PROG("ta", "tb", "tc", "td", "dd", "la", "lb");
    for (int jit = 0; jit < 2; jit++) {
        char *cb = emit_program(bad, jit), *cg = emit_program(good, jit);
        idlist ib = {0}, ig = {0};
        c_identifiers(cb, &ib);
        c_identifiers(cg, &ig);
        ck_assert_int_gt(ib.n, 20);
        /* no identifier in the C comes from the .tx names unmangled: each of
           the words occurs exactly as often as in the harmless program,
           where it can only be C syntax or the runtime's own use */
        for (int w = 0; words[w]; w++)
            ck_assert_msg(id_count(&ib, words[w]) == id_count(&ig, words[w]),
                          "%s flavour: '%s' occurs %d times, %d in the harmless program\n%s",
                          jit ? "JIT" : "standalone", words[w], id_count(&ib, words[w]),
                          id_count(&ig, words[w]), cb);
        ck_assert_int_eq(id_count(&ib, "main"), 0);
        ck_assert_int_eq(id_count(&ib, "printf"), 0);
        /* and the mangled forms are there */
        ck_assert_int_gt(id_count(&ib, "t_int"), 0);
        ck_assert_int_gt(id_count(&ib, "t_main"), 0);
        ck_assert_int_gt(id_count(&ib, "t_free"), 0);
        ck_assert_int_gt(id_count(&ib, "t_printf"), 0);
        ck_assert_int_gt(id_count(&ib, "l_for"), 0);
        if (!jit)
            ck_assert_int_gt(id_count(&ib, "d_double"), 0);
        /* the error table names the tensors inside string literals only */
        if (!jit)
            ck_assert_ptr_nonnull(strstr(cb, "'int'"));
        /* every identifier is plain ASCII C */
        for (int i = 0; i < ib.n; i++)
            ck_assert_msg(is_c_ident(ib.ids[i]), "bad identifier %s", ib.ids[i]);
        id_free(&ib);
        id_free(&ig);
        free(cb);
        free(cg);
    }
}
END_TEST

START_TEST(emit_unicode_names)
{
    /* names that differ only in non-ASCII letters become distinct C names */
    const char *text = "in \xce\xbb[n], \xce\x9b[n];\nout \xc3\xa9[n];\n"
                       "\xc3\xa9(\"\xce\xbc\") = \xce\xbb(\"\xce\xbc\") * \xce\x9b(\"\xce\xbc\");\n";
    char *c = emit_program(text, 0);
    idlist ids = {0};
    c_identifiers(c, &ids);
    ck_assert_int_gt(id_count(&ids, "t__ce_bb"), 0);
    ck_assert_int_gt(id_count(&ids, "t__ce_9b"), 0);
    ck_assert_int_gt(id_count(&ids, "t__c3_a9"), 0);
    ck_assert_int_gt(id_count(&ids, "l__ce_bc"), 0);
    /* outside comments the C is plain ASCII (names are mangled, string
       literals escaped) */
    for (const char *p = c; *p; p++) {
        if (p[0] == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            ck_assert_ptr_nonnull(e);
            p = e + 1;
            continue;
        }
        ck_assert_msg((unsigned char)*p < 0x80, "non-ASCII byte outside a comment in the emitted C: %.40s", p);
    }
    id_free(&ids);
    free(c);
}
END_TEST

START_TEST(emit_compiles)
{
    /* the program full of C names compiles as C99 with a real compiler */
    if (system("cc --version >/dev/null 2>&1") != 0)
        return; /* no C compiler here: nothing more to check */
    char *c = emit_program(EMIT_PROG("int", "main", "free", "printf", "double", "for", "if"), 0);
    char path[] = "/tmp/tx_unit_emitXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    size_t len = strlen(c);
    ck_assert_int_eq((int)write(fd, c, len), (int)len);
    close(fd);
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "cc -std=c99 -pedantic -Wall -Werror -x c -c -o /dev/null %s 2>/tmp/tx_unit_emit.err", path);
    int r = system(cmd);
    unlink(path);
    ck_assert_msg(r == 0, "the emitted C did not compile (see /tmp/tx_unit_emit.err):\n%s", c);
    free(c);
}
END_TEST

/* ------------------------------------------------------------------ */

static Suite *lexer_suite(void)
{
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("tokens");
    tcase_add_test(tc, lex_punctuation);
    tcase_add_test(tc, lex_compound_operators);
    tcase_add_test(tc, lex_keywords_and_names);
    tcase_add_test(tc, lex_kind_names);
    tcase_add_test(tc, lex_numbers);
    tcase_add_test(tc, lex_index_strings);
    tcase_add_test(tc, lex_comments);
    tcase_add_test(tc, lex_lines_and_columns);
    tcase_add_test(tc, lex_unicode_names);
    tcase_add_test(tc, lex_long_name);
    tcase_add_test(tc, lex_labels);
    tcase_add_test(tc, lex_end_token);
    tcase_add_test(tc, lex_respects_length);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_loop_test(tc, lex_error_cases, 0, (int)(sizeof lex_errors / sizeof lex_errors[0]));
    suite_add_tcase(s, tc);
    return s;
}

static Suite *diag_suite(void)
{
    Suite *s = suite_create("diag");
    TCase *tc = tcase_create("diag");
    tcase_add_test(tc, diag_format);
    tcase_add_test(tc, diag_no_location);
    tcase_add_test(tc, diag_caret_tabs_utf8);
    tcase_add_test(tc, diag_span_at);
    tcase_add_test(tc, diag_span_join);
    tcase_add_test(tc, diag_printable_line);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *cst_suite(void)
{
    Suite *s = suite_create("cst");
    TCase *tc = tcase_create("cst");
    tcase_add_test(tc, cst_let_is_one_node);
    tcase_add_test(tc, cst_statement_kinds);
    tcase_add_test(tc, cst_precedence);
    tcase_add_test(tc, cst_label_splitting);
    tcase_add_test(tc, cst_big_chip);
    tcase_add_loop_test(tc, cst_parse_errors, 0, (int)(sizeof parse_errors / sizeof parse_errors[0]));
    tcase_add_test(tc, cst_one_syntax_error);
    tcase_add_test(tc, cst_deep_nesting);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *sema_suite(void)
{
    Suite *s = suite_create("sema");
    TCase *tc = tcase_create("sema");
    tcase_add_test(tc, sema_symbols);
    tcase_add_test(tc, sema_implicit_dims_order);
    tcase_add_test(tc, sema_param_order);
    tcase_add_test(tc, sema_label_extents);
    tcase_add_test(tc, sema_subtree_labels);
    tcase_add_test(tc, sema_accepts);
    tcase_add_loop_test(tc, sema_error_cases, 0, (int)(sizeof sema_errors / sizeof sema_errors[0]));
    suite_add_tcase(s, tc);
    return s;
}

static Suite *graph_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("graph");
    tcase_add_test(tc, graph_matmul);
    tcase_add_test(tc, graph_three_way);
    tcase_add_test(tc, graph_let_shared);
    tcase_add_test(tc, graph_other_ops);
    tcase_add_test(tc, graph_check_empty);
    tcase_add_loop_test(tc, graph_check_corrupt, 0, 12);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *mangle_suite(void)
{
    Suite *s = suite_create("mangle");
    TCase *tc = tcase_create("mangle");
    tcase_add_test(tc, mangle_tricky_names);
    tcase_add_test(tc, mangle_round_trip);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *emit_suite(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("emit");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, emit_names_never_raw);
    tcase_add_test(tc, emit_unicode_names);
    tcase_add_test(tc, emit_compiles);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(lexer_suite());
    srunner_add_suite(sr, diag_suite());
    srunner_add_suite(sr, cst_suite());
    srunner_add_suite(sr, sema_suite());
    srunner_add_suite(sr, graph_suite());
    srunner_add_suite(sr, mangle_suite());
    srunner_add_suite(sr, emit_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
