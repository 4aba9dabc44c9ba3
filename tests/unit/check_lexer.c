/*
 * check_lexer.c — suite "lexer": the lexer of grammar/lexer.re
 * (lex_init / lex_next / lex_label / lex_keyword / lex_kind_name).
 */
#include "unit.h"
#include "parser.h"

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

/* ------------------------------------------------------------------ */

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

    /* imaginary literals: i right after a number; "2 i" and "2in" are not */
    lex_all(&L, "2i 0.5i .5i 1e-3i 2 i 2in imag", 30);
    ck_tok(&L, 0, TK_IMAGNUM, "2i");
    ck_tok(&L, 1, TK_IMAGNUM, "0.5i");
    ck_tok(&L, 2, TK_IMAGNUM, ".5i");
    ck_tok(&L, 3, TK_IMAGNUM, "1e-3i");
    ck_tok(&L, 4, TK_NUMBER, "2");
    ck_tok(&L, 5, TK_IDENT, "i");
    ck_tok(&L, 6, TK_IMAGNUM, "2i");
    ck_tok(&L, 7, TK_IDENT, "n");
    ck_tok(&L, 8, TK_IMAG, "imag");
    ck_assert_str_eq(lex_kind_name(TK_IMAGNUM), "imaginary number");
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
    {"in A[n];\n\t\xce\xbb = B ? 2;", 21, 9, 2, 8, "unexpected character '?'"},
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

Suite *suite_lexer(void)
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
