/*
 * parser.y — the grammar of the .tx language (tx(5)), for Lemon.
 *
 * Every action is one call into cst.c. The parser stops at the first
 * syntax error (YYNOERRORRECOVERY); the error message names what was found
 * and what the grammar expected there. The stack is fixed (TX_MAX_DEPTH),
 * so absurdly deep nesting is an error, never a C stack overflow.
 */
%name txParse
%token_prefix TK_
%token_type {tx_token}
%extra_context {cst_program *P}
%default_type {cst_node *}
%type args {cst_list *}
%type exprlist {cst_list *}
%type extlist {cst_list *}
%type target {cst_target *}
%type targetlist {cst_list *}
%type iokw {tx_token}
%type dtype {tx_token}
%type fn {tx_token}
%type minmax {tx_token}
%stack_size 1000
/* = TX_MAX_NESTING */

%include {
#define NDEBUG 1
#define YYNOERRORRECOVERY 1
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "tx.h"
static void parse_syntax_error(cst_program *P, int major, const tx_token *tok,
                               const int *expected, int nexpected);
static void parse_stack_overflow(cst_program *P);
}

%syntax_error {
    /* Work out which tokens the parser would have accepted here, by
       simulating the reductions each candidate would trigger. */
    int expected[128], nexpected = 0;
    YYACTIONTYPE st[YYSTACKDEPTH + 2];
    int depth = (int)(yypParser->yytos - yypParser->yystack);
    for (int t = 0; t < YYNTOKEN && nexpected < 128; t++) {
        int sp = depth;
        for (int i = 0; i <= depth; i++)
            st[i] = yypParser->yystack[i].stateno;
        for (;;) {
            YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)t, st[sp]);
            if (act >= YY_MIN_REDUCE && act <= YY_MAX_REDUCE) {
                int r = act - YY_MIN_REDUCE;
                sp += yyRuleInfoNRhs[r];
                if (sp < 0)
                    break;
                st[sp + 1] = yy_find_reduce_action(st[sp], yyRuleInfoLhs[r]);
                sp++;
                continue;
            }
            if (act != YY_ERROR_ACTION && act != YY_NO_ACTION)
                expected[nexpected++] = t;
            break;
        }
    }
    parse_syntax_error(P, yymajor, &TOKEN, expected, nexpected);
}

%stack_overflow { parse_stack_overflow(P); }

%token IDENT NUMBER IMAGNUM STRING.
%token DIM IN OUT INOUT TMP LET SPARSE F32 F64 C64 C128.
%token CHOLESKY INV POW SOLVE EIGH QR SVD SLICE EXP LOG SQRT ABS SIN COS TANH
       CONJ REAL IMAG WHERE MAX MIN REDUCE GRAD SCAN SCANR.
%token LPAREN RPAREN LBRACKET RBRACKET COMMA SEMI COLON EQ PLUSEQ MINUSEQ STAREQ SLASHEQ ARROW.

%nonassoc LT LE GT GE EQEQ NE.
%left PLUS MINUS.
%left STAR SLASH.
%right UMINUS.
%right CARET.

program ::= stmts.
stmts ::= .
stmts ::= stmts stmt.

stmt ::= decl SEMI.
stmt ::= assign SEMI.

/* ---- declarations ---- */
decl ::= DIM dimlist.
dimlist ::= dimitem.
dimlist ::= dimlist COMMA dimitem.
dimitem ::= IDENT(N).                  { cst_decl_dim(P, &N, NULL); }
dimitem ::= IDENT(N) EQ NUMBER(V).     { cst_decl_dim(P, &N, &V); }

decl ::= declhead tensorlist.
declhead ::= iokw(K) dtype(T).         { cst_decl_begin(P, &K, &T); }
iokw(A) ::= IN|OUT|INOUT|TMP(K).       { A = K; }
dtype(A) ::= .                         { memset(&A, 0, sizeof A); }
dtype(A) ::= F32|F64|C64|C128(T).               { A = T; }
tensorlist ::= tensoritem.
tensorlist ::= tensorlist COMMA tensoritem.
tensoritem ::= IDENT(N).               { cst_decl_tensor(P, &N, NULL, &N); }
tensoritem ::= IDENT(N) LBRACKET extlist(E) RBRACKET(R).
                                       { cst_decl_tensor(P, &N, E, &R); }
extlist(A) ::= extent(X).              { A = cst_list_new(P, X); }
extlist(A) ::= extlist(L) COMMA extent(X). { A = cst_list_add(P, L, X); }
extent(A) ::= IDENT|NUMBER(T).         { A = cst_extent(P, &T); }
/* a dim expression: o+v, 2*n-1, (n+1)*2 */
extent(A) ::= extent(X) PLUS extent(Y).  { A = cst_binary(P, CST_ADD, X, Y); }
extent(A) ::= extent(X) MINUS extent(Y). { A = cst_binary(P, CST_SUB, X, Y); }
extent(A) ::= extent(X) STAR extent(Y).  { A = cst_binary(P, CST_MUL, X, Y); }
extent(A) ::= LPAREN(L) extent(X) RPAREN(R). { A = cst_paren(P, &L, X, &R); }

decl ::= SPARSE(K) IDENT(N) COLON STRING(S) ARROW STRING(D).
                                       { cst_decl_sparse(P, &K, &N, &S, &D); }

/* ---- assignments ---- */
assign ::= target(T) EQ|PLUSEQ|MINUSEQ|STAREQ|SLASHEQ(OP) expr(E).  { cst_assign(P, T, &OP, E); }
assign ::= LET(K) IDENT(N) EQ expr(E).               { cst_let(P, &K, &N, E); }
assign ::= LET(K) IDENT(N) LPAREN STRING(S) RPAREN EQ expr(E).
                                                     { cst_let_tensor(P, &K, &N, &S, E); }
assign ::= LPAREN(L) targetlist(T) RPAREN EQ expr(E). { cst_assign_multi(P, &L, T, E); }

target(A) ::= IDENT(N).                              { A = cst_target_new(P, &N, NULL, &N); }
target(A) ::= IDENT(N) LPAREN STRING(S) RPAREN(R).   { A = cst_target_new(P, &N, &S, &R); }
targetlist(A) ::= target(T).                         { A = cst_targets_new(P, T); }
targetlist(A) ::= targetlist(L) COMMA target(T).     { A = cst_targets_add(P, L, T); }

/* ---- expressions ---- */
expr(A) ::= expr(X) LT|LE|GT|GE|EQEQ|NE(OP) expr(Y). { A = cst_compare(P, &OP, X, Y); }
expr(A) ::= expr(X) PLUS expr(Y).      { A = cst_binary(P, CST_ADD, X, Y); }
expr(A) ::= expr(X) MINUS expr(Y).     { A = cst_binary(P, CST_SUB, X, Y); }
expr(A) ::= expr(X) STAR expr(Y).      { A = cst_binary(P, CST_MUL, X, Y); }
expr(A) ::= expr(X) SLASH expr(Y).     { A = cst_binary(P, CST_DIV, X, Y); }
expr(A) ::= expr(X) CARET expr(Y).     { A = cst_binary(P, CST_POW, X, Y); }
expr(A) ::= MINUS(OP) expr(X). [UMINUS] { A = cst_unary(P, CST_NEG, &OP, X); }
expr(A) ::= LPAREN(L) expr(X) RPAREN(R). { A = cst_paren(P, &L, X, &R); }
expr(A) ::= NUMBER(T).                 { A = cst_num(P, &T); }
expr(A) ::= IMAGNUM(T).                { A = cst_imag(P, &T); }
expr(A) ::= IDENT(T).                  { A = cst_name(P, &T); }
expr(A) ::= IDENT(N) LPAREN STRING(S) RPAREN(R).
                                       { A = cst_ref(P, &N, &S, &R); }
expr(A) ::= fn(F) LPAREN args(L) RPAREN(R). { A = cst_call(P, &F, L, &R); }

fn(A) ::= CHOLESKY|INV|POW|SOLVE|EIGH|QR|SVD|SLICE|EXP|LOG|SQRT|ABS|SIN|COS|TANH|CONJ|REAL|IMAG|WHERE|REDUCE|GRAD|SCAN|SCANR(T).
                                       { A = T; }
fn(A) ::= minmax(T).                   { A = T; }
/* max and min are both functions, max(x, y), and operators, reduce(max, x) */
minmax(A) ::= MAX|MIN(T).              { A = T; }
args(A) ::= arg(X).                    { A = cst_list_new(P, X); }
args(A) ::= args(L) COMMA arg(X).      { A = cst_list_add(P, L, X); }
arg(A) ::= expr(X).                    { A = X; }
arg(A) ::= STRING(S).                  { A = cst_arg_str(P, &S); }
arg(A) ::= PLUS|STAR|SLASH(T).         { A = cst_arg_op(P, &T); } /* / only to say it is not a reduce operator */
arg(A) ::= minmax(T).                  { A = cst_arg_op(P, &T); }
arg(A) ::= LBRACKET(L) exprlist(X) RBRACKET(R). { A = cst_arg_list(P, &L, X, &R); }
exprlist(A) ::= expr(X).               { A = cst_list_new(P, X); }
exprlist(A) ::= exprlist(L) COMMA expr(X). { A = cst_list_add(P, L, X); }

%code {
static int expects(const int *expected, int n, int kind)
{
    for (int i = 0; i < n; i++)
        if (expected[i] == kind)
            return 1;
    return 0;
}

/* The span just after token T (for "missing ';'"). */
static tx_span after(const tx_token *t)
{
    tx_span s = t->span;
    for (uint32_t i = 0; i < t->n; i++)
        if (((unsigned char)t->z[i] & 0xC0) != 0x80)
            s.col++;
    s.off += t->n;
    s.len = 0;
    return s;
}

static void parse_syntax_error(cst_program *P, int major, const tx_token *tok,
                               const int *expected, int nexpected)
{
    if (P->failed)
        return;
    P->failed = 1;
    const tx_token *prev = &P->prev_token, *prev2 = &P->prev2_token;
    int shown = tok->n > 40 ? 40 : (int)tok->n;
    /* the common mistakes, said plainly */
    if ((major == TK_F32 || major == TK_F64 || major == TK_C64 || major == TK_C128) && expects(expected, nexpected, TK_IDENT)) {
        diag_error(P->diag, tok->span, "the element type is written once, right after in/out/inout/tmp, "
                   "and applies to the whole list; declare %.*s tensors in a declaration of their own",
                   shown, tok->z);
        return;
    }
    if (major >= TK_DIM && major <= TK_SCANR && expects(expected, nexpected, TK_IDENT)) {
        diag_error(P->diag, tok->span, "'%.*s' is a keyword and cannot be used as a name", shown, tok->z);
        return;
    }
    if (expects(expected, nexpected, TK_SEMI) && prev->kind && tok->span.line > prev->span.line) {
        diag_error(P->diag, after(prev), "missing ';' at the end of the statement");
        return;
    }
    if (major == TK_COMMA && prev->kind == TK_MINUS && prev2->kind == TK_LPAREN) {
        diag_error(P->diag, prev->span, "'-' is not a reduce or scan operator; use + * max or min");
        return;
    }
    if (prev->kind == TK_LPAREN && prev2->kind == TK_IDENT && nexpected == 1 && expected[0] == TK_STRING) {
        diag_error(P->diag, prev2->span, "unknown function '%.*s'; a tensor is indexed with a string, "
                   "as %.*s(\"i,j\")", (int)prev2->n, prev2->z, (int)prev2->n, prev2->z);
        return;
    }
    /* the comparison operators go without saying where + and - are listed */
    int shown_kinds[128], nshown = 0;
    for (int i = 0; i < nexpected; i++)
        if (!(expected[i] >= TK_LT && expected[i] <= TK_NE && expects(expected, nexpected, TK_PLUS)))
            shown_kinds[nshown++] = expected[i];
    expected = shown_kinds;
    nexpected = nshown;
    tx_buf what = {0};
    if (expects(expected, nexpected, TK_IDENT) && expects(expected, nexpected, TK_NUMBER) &&
        expects(expected, nexpected, TK_LPAREN) && nexpected > 6)
        buf_puts(&what, "; expected an expression");
    else if (nexpected > 0 && nexpected <= 6) {
        buf_puts(&what, "; expected ");
        for (int i = 0; i < nexpected; i++) {
            if (i)
                buf_puts(&what, i + 1 == nexpected ? " or " : ", ");
            buf_puts(&what, lex_kind_name(expected[i]));
        }
    }
    if (major == 0)
        diag_error(P->diag, tok->span, "unexpected end of input%s", what.p ? what.p : " in the middle of a statement");
    else if (major == TK_IDENT || major == TK_NUMBER || major == TK_STRING)
        diag_error(P->diag, tok->span, "unexpected %s '%.*s'%s", lex_kind_name(major), shown, tok->z,
                   what.p ? what.p : "");
    else if (major >= TK_DIM && major <= TK_SCANR)
        diag_error(P->diag, tok->span, "unexpected keyword '%.*s'%s", shown, tok->z, what.p ? what.p : "");
    else
        diag_error(P->diag, tok->span, "unexpected %s%s", lex_kind_name(major), what.p ? what.p : "");
    buf_free(&what);
    if (expects(expected, nexpected, TK_RPAREN) && P->nopen > 0)
        diag_note(P->diag, P->open_paren[P->nopen - 1], "to match this '('");
}

static void parse_stack_overflow(cst_program *P)
{
    if (P->failed)
        return;
    P->failed = 1;
    diag_error(P->diag, P->last_token.span,
               "expression nested too deeply (the parser keeps at most %d nested parts)", TX_MAX_NESTING);
}

static int is_name(int kind) { return kind == TK_IDENT || (kind >= TK_DIM && kind <= TK_SCANR); }

/* Keywords are contextual (tx(5), LEXICAL RULES): the kind of keyword
   token T, given the kind of the token before it (PREV, as classified) and
   of the two after it (NEXT, NEXT2); TK_IDENT where it is a name.
   - A declaration keyword (in out inout tmp dim let sparse) opens a
     declaration only at the start of a statement and before a name.
   - f32, f64, c64 and c128 are element types only right after in/out/inout/tmp and
     before a name.
   - A function name is the function only before '(' that does not open an
     index string (exp("i") indexes a tensor called exp); max and min are
     also the operators of reduce and scan: reduce(max, x). */
static int contextual_kind(const tx_token *t, int prev2, int prev, int next, int next2)
{
    switch (t->kind) {
    case TK_DIM: case TK_IN: case TK_OUT: case TK_INOUT: case TK_TMP: case TK_LET: case TK_SPARSE:
        return prev == TK_SEMI && is_name(next) ? t->kind : TK_IDENT;
    case TK_F32: case TK_F64: case TK_C64: case TK_C128:
        /* (after ',' only to say that the type is written once per declaration) */
        return (prev == TK_IN || prev == TK_OUT || prev == TK_INOUT || prev == TK_TMP || prev == TK_COMMA) &&
                       is_name(next) ? t->kind : TK_IDENT;
    case TK_MAX: case TK_MIN:
        if ((prev2 == TK_REDUCE || prev2 == TK_SCAN || prev2 == TK_SCANR) && prev == TK_LPAREN)
            return t->kind;
        /* fall through */
    default:
        if (t->kind < TK_DIM || t->kind > TK_SCANR)
            return t->kind;
        return next == TK_LPAREN && next2 != TK_STRING ? t->kind : TK_IDENT;
    }
}

cst_program *parse_program(const tx_source *src, tx_arena *a, tx_diag *d)
{
    cst_program *P = arena_alloc(a, sizeof *P);
    if (!P)
        return NULL;
    P->arena = a;
    P->diag = d;
    P->src = src;
    yyParser parser;
    txParseInit(&parser, P);
    tx_lexer lx;
    lex_init(&lx, src, d);
    /* up to two tokens of look-ahead after a keyword, which is contextual */
    tx_token look[2];
    int nlook = 0, prev_kind = TK_SEMI, prev2_kind = 0;
    tx_token t;
    int kind;
    do {
        if (nlook > 0) {
            t = look[0];
            look[0] = look[1];
            nlook--;
        } else if (lex_next(&lx, &t) < 0)
            t.kind = -1;
        kind = t.kind;
        if (kind < 0) {
            P->failed = 1;
            break;
        }
        for (; kind >= TK_DIM && kind <= TK_SCANR && nlook < 2; nlook++) {
            if (nlook > 0 && look[nlook - 1].kind <= 0)
                break; /* nothing after the end or an error */
            if (lex_next(&lx, &look[nlook]) < 0)
                look[nlook].kind = -1;
        }
        kind = t.kind = contextual_kind(&t, prev2_kind, prev_kind, nlook > 0 ? look[0].kind : 0,
                                        nlook > 1 ? look[1].kind : 0);
        prev2_kind = prev_kind;
        prev_kind = kind;
        P->prev2_token = P->prev_token;
        P->prev_token = P->last_token;
        P->last_token = t;
        txParse(&parser, kind, t);
        if (kind == TK_LPAREN && P->nopen < TX_MAX_DEPTH)
            P->open_paren[P->nopen++] = t.span;
        else if (kind == TK_RPAREN && P->nopen > 0)
            P->nopen--;
    } while (kind != 0 && !P->failed);
    txParseFinalize(&parser);
    return P->failed || d->nerrors ? NULL : P;
}
}
