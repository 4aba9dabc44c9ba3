/*
 * lexer.re — tokens of the .tx language (tx(5) §2), for re2c.
 *
 * The input is UTF-8 with an explicit limit (re2c:eof), so a NUL byte
 * inside the source is an ordinary (invalid) byte, not the end. Tokens are
 * borrowed slices of the source with their line and column. A byte that
 * starts no token is an error token with a message saying what it is.
 */
#include <stdio.h>
#include <string.h>

#include "tx.h"
#include "parser.h"

/*!include:re2c "unicode_categories.re" */
/*!re2c
    digit = [0-9];
    exp = [eE] [+-]? digit+;
    ident = (L | "_") (L | digit | "_")*;
*/

void lex_init(tx_lexer *lx, const tx_source *src, tx_diag *diag)
{
    memset(lx, 0, sizeof *lx);
    lx->src = src;
    lx->diag = diag;
    lx->cur = (const unsigned char *)src->text;
    lx->lim = lx->cur + src->len;
    lx->line_start = lx->cur;
    lx->line = 1;
}

static const struct { const char *word; int kind; } keywords[] = {
    {"dim", TK_DIM}, {"in", TK_IN}, {"out", TK_OUT}, {"inout", TK_INOUT},
    {"tmp", TK_TMP}, {"let", TK_LET}, {"sparse", TK_SPARSE},
    {"f32", TK_F32}, {"f64", TK_F64}, {"c64", TK_C64}, {"c128", TK_C128},
    {"cholesky", TK_CHOLESKY}, {"inv", TK_INV}, {"pow", TK_POW},
    {"solve", TK_SOLVE}, {"eigh", TK_EIGH}, {"qr", TK_QR}, {"svd", TK_SVD},
    {"slice", TK_SLICE}, {"exp", TK_EXP}, {"log", TK_LOG}, {"sqrt", TK_SQRT},
    {"abs", TK_ABS}, {"sin", TK_SIN}, {"cos", TK_COS}, {"tanh", TK_TANH}, {"where", TK_WHERE},
    {"conj", TK_CONJ}, {"real", TK_REAL}, {"imag", TK_IMAG},
    {"max", TK_MAX}, {"min", TK_MIN}, {"reduce", TK_REDUCE}, {"grad", TK_GRAD},
    {"scan", TK_SCAN}, {"scanr", TK_SCANR},
};

int lex_keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, s, n) == 0)
            return keywords[i].kind;
    return 0;
}

const char *lex_kind_name(int kind)
{
    switch (kind) {
    case 0: return "end of input";
    case TK_IDENT: return "name";
    case TK_NUMBER: return "number";
    case TK_IMAGNUM: return "imaginary number";
    case TK_STRING: return "index string";
    case TK_LPAREN: return "'('";
    case TK_RPAREN: return "')'";
    case TK_LBRACKET: return "'['";
    case TK_RBRACKET: return "']'";
    case TK_COMMA: return "','";
    case TK_SEMI: return "';'";
    case TK_COLON: return "':'";
    case TK_EQ: return "'='";
    case TK_PLUSEQ: return "'+='";
    case TK_MINUSEQ: return "'-='";
    case TK_STAREQ: return "'*='";
    case TK_SLASHEQ: return "'/='";
    case TK_ARROW: return "'->'";
    case TK_PLUS: return "'+'";
    case TK_MINUS: return "'-'";
    case TK_STAR: return "'*'";
    case TK_SLASH: return "'/'";
    case TK_CARET: return "'^'";
    case TK_LT: return "'<'";
    case TK_LE: return "'<='";
    case TK_GT: return "'>'";
    case TK_GE: return "'>='";
    case TK_EQEQ: return "'=='";
    case TK_NE: return "'!='";
    }
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].kind == kind)
            return keywords[i].word;
    return "token";
}

/* Length of the valid UTF-8 sequence at P (< LIM), or 0 if invalid. */
static int utf8_len(const unsigned char *p, const unsigned char *lim, unsigned *cp)
{
    unsigned c = p[0];
    int n;
    if (c < 0x80) { *cp = c; return 1; }
    if (c >= 0xC2 && c <= 0xDF) { n = 2; c &= 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; c &= 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; c &= 0x07; }
    else return 0;
    if (lim - p < n)
        return 0;
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3F);
    }
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
        (c >= 0xD800 && c <= 0xDFFF))
        return 0;
    *cp = c;
    return n;
}

static void make_token(tx_lexer *lx, tx_token *t, int kind)
{
    t->kind = kind;
    t->z = (const char *)lx->tok;
    t->n = (uint32_t)(lx->cur - lx->tok);
    t->span.off = (uint32_t)(lx->tok - (const unsigned char *)lx->src->text);
    t->span.len = t->n;
    t->span.line = lx->line;
    uint32_t col = 1;
    for (const unsigned char *p = lx->line_start; p < lx->tok; p++)
        if ((*p & 0xC0) != 0x80)
            col++;
    t->span.col = col;
}

/* Reports the byte(s) at lx->tok that start no token. */
static int bad_char(tx_lexer *lx, tx_token *t)
{
    unsigned cp;
    lx->cur = lx->tok;
    int n = utf8_len(lx->tok, lx->lim, &cp);
    lx->cur = lx->tok + (n ? n : 1);
    make_token(lx, t, -1);
    if (n == 0)
        diag_error(lx->diag, t->span, "invalid UTF-8 byte 0x%02X in the source", lx->tok[0]);
    else if (cp == 0)
        diag_error(lx->diag, t->span, "NUL byte in the source");
    else if (cp == '"') {
        /* a closing quote further on: an invalid byte inside the string */
        const unsigned char *p = lx->tok + 1;
        while (p < lx->lim && *p != '"' && *p != '\n') {
            unsigned c2;
            int k = utf8_len(p, lx->lim, &c2);
            if (k == 0 || c2 == 0) {
                tx_span sp = t->span;
                for (const unsigned char *q = lx->tok; q < p; q++)
                    if ((*q & 0xC0) != 0x80)
                        sp.col++;
                sp.off += (uint32_t)(p - lx->tok);
                sp.len = 1;
                diag_error(lx->diag, sp, k == 0 ? "invalid UTF-8 byte 0x%02X in an index string"
                                                : "NUL byte in an index string", *p);
                return -1;
            }
            p += k;
        }
        diag_error(lx->diag, t->span, "unterminated index string (a string ends on the same line with '\"')");
    }
    else if (cp < 0x20 || cp == 0x7F)
        diag_error(lx->diag, t->span, "control character 0x%02X in the source", cp);
    else if (cp < 0x80)
        diag_error(lx->diag, t->span, "unexpected character '%c'", (int)cp);
    else
        diag_error(lx->diag, t->span, "unexpected character '%.*s' (U+%04X); only letters may be used in names",
                   n, (const char *)lx->tok, cp);
    return -1;
}

int lex_label(const char *s, size_t n, size_t *len)
{
    const unsigned char *cur = (const unsigned char *)s, *lim = cur + n, *start = cur;
    const unsigned char *YYMARKER = NULL;
    /*!re2c
        re2c:api = custom;
            re2c:api:style = free-form;
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "cur";
        re2c:define:YYLIMIT = "lim";
        re2c:define:YYMARKER = "YYMARKER";
        re2c:yyfill:enable = 0;
        re2c:eof = 0;
        re2c:flags:utf-8 = 1;
        re2c:define:YYPEEK = "(cur < lim ? *cur : 0)";
        re2c:define:YYSKIP = "++cur;";
        re2c:define:YYBACKUP = "YYMARKER = cur;";
        re2c:define:YYRESTORE = "cur = YYMARKER;";
        re2c:define:YYLESSTHAN = "lim - cur < @@{len}";

        $ { *len = 0; return 0; }
        ident { *len = (size_t)(cur - start); return 1; }
        digit+ { *len = (size_t)(cur - start); return 2; }
        * { *len = (size_t)(cur - start); return 0; }
    */
}

int lex_next(tx_lexer *lx, tx_token *t)
{
    const unsigned char *YYMARKER = NULL;
    for (;;) {
        lx->tok = lx->cur;
        /*!re2c
            re2c:api = custom;
            re2c:api:style = free-form;
            re2c:define:YYCTYPE = "unsigned char";
            re2c:define:YYCURSOR = "lx->cur";
            re2c:define:YYLIMIT = "lx->lim";
            re2c:define:YYMARKER = "YYMARKER";
            re2c:yyfill:enable = 0;
            re2c:eof = 0;
            re2c:flags:utf-8 = 1;
            re2c:define:YYPEEK = "(lx->cur < lx->lim ? *lx->cur : 0)";
            re2c:define:YYSKIP = "++lx->cur;";
            re2c:define:YYBACKUP = "YYMARKER = lx->cur;";
            re2c:define:YYRESTORE = "lx->cur = YYMARKER;";
            re2c:define:YYLESSTHAN = "lx->lim - lx->cur < @@{len}";

            $ { make_token(lx, t, 0); return 0; }
            [ \t\r\f\v]+ { continue; }
            "\n" { lx->line++; lx->line_start = lx->cur; continue; }
            ("#" | "//") [^\n\x00]* { continue; }

            ident {
                make_token(lx, t, TK_IDENT);
                int kw = lex_keyword(t->z, t->n);
                if (kw)
                    t->kind = kw;
                if (t->n > TX_MAX_NAME) {
                    diag_error(lx->diag, t->span, "name is %u bytes long; the limit is %d", t->n, TX_MAX_NAME);
                    return -1;
                }
                return t->kind;
            }
            (digit+ ("." digit*)? | "." digit+) exp? { make_token(lx, t, TK_NUMBER); return TK_NUMBER; }
            (digit+ ("." digit*)? | "." digit+) exp? "i" { make_token(lx, t, TK_IMAGNUM); return TK_IMAGNUM; }
            "\"" [^"\n\x00]* "\"" { make_token(lx, t, TK_STRING); return TK_STRING; }
            "(" { make_token(lx, t, TK_LPAREN); return TK_LPAREN; }
            ")" { make_token(lx, t, TK_RPAREN); return TK_RPAREN; }
            "[" { make_token(lx, t, TK_LBRACKET); return TK_LBRACKET; }
            "]" { make_token(lx, t, TK_RBRACKET); return TK_RBRACKET; }
            "," { make_token(lx, t, TK_COMMA); return TK_COMMA; }
            ";" { make_token(lx, t, TK_SEMI); return TK_SEMI; }
            ":" { make_token(lx, t, TK_COLON); return TK_COLON; }
            "=" { make_token(lx, t, TK_EQ); return TK_EQ; }
            "+=" { make_token(lx, t, TK_PLUSEQ); return TK_PLUSEQ; }
            "-=" { make_token(lx, t, TK_MINUSEQ); return TK_MINUSEQ; }
            "*=" { make_token(lx, t, TK_STAREQ); return TK_STAREQ; }
            "/=" { make_token(lx, t, TK_SLASHEQ); return TK_SLASHEQ; }
            "->" { make_token(lx, t, TK_ARROW); return TK_ARROW; }
            "<" { make_token(lx, t, TK_LT); return TK_LT; }
            "<=" { make_token(lx, t, TK_LE); return TK_LE; }
            ">" { make_token(lx, t, TK_GT); return TK_GT; }
            ">=" { make_token(lx, t, TK_GE); return TK_GE; }
            "==" { make_token(lx, t, TK_EQEQ); return TK_EQEQ; }
            "!=" { make_token(lx, t, TK_NE); return TK_NE; }
            "+" { make_token(lx, t, TK_PLUS); return TK_PLUS; }
            "-" { make_token(lx, t, TK_MINUS); return TK_MINUS; }
            "*" { make_token(lx, t, TK_STAR); return TK_STAR; }
            "/" { make_token(lx, t, TK_SLASH); return TK_SLASH; }
            "^" { make_token(lx, t, TK_CARET); return TK_CARET; }
            * { return bad_char(lx, t); }
        */
    }
}
