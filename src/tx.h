/*
 * tx.h — the compiler's internal header, shared by every phase.
 *
 * Pipeline (DESIGN.md §1):
 *   lex (grammar/lexer.re) → parse (grammar/parser.y, actions in cst.c)
 *   → CST (cst.c, a DAG) → sema.c → lower.c → OpGraph (graph.c)
 *   → passes (pass_*.c) → emit_*.c (for a target.c target) → jit.c;
 *   pipeline.c drives everything after sema, with one options struct,
 *   from one function.
 * Prefixes: arena_, recover_, diag_, lex_, parse_, cst_, sema_, lower_,
 * graph_, pass_, pipeline_, target_, emit_, jit_, mangle_.
 */
#ifndef TX_H
#define TX_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorexpr.h"

/* ---- limits (documented in tx(5), LIMITS) ---- */
#define TX_MAX_MODES 16        /* modes of one tensor */
#define TX_MAX_LABELS 256      /* distinct label names in one program */
#define TX_MAX_NAME 255        /* bytes of a name or label */
#define TX_MAX_DEPTH 10000     /* height of an expression tree */
#define TX_MAX_NESTING 1000    /* parser stack: nesting of parentheses and calls */
#define TX_MAX_STMTS 100000    /* statements in one program */

/* ---- recover.c: recovery points (the library never aborts) ---- */
/* Internal invariant failure: the innermost recovery point returns
   TX_ERR_INTERNAL with "internal error: C (file:line)"; with none, abort. */
#define TX_ASSERT(c) ((c) ? (void)0 : tx_assert_fail(#c, __FILE__, __LINE__))
#ifdef __GNUC__
__attribute__((noreturn))
#endif
void tx_assert_fail(const char *what, const char *file, int line);
/* Calls WORK(ARG) under a recovery point and returns its status, or
   TX_ERR_INTERNAL after an internal error in it (the message, "internal
   error: CONDITION (FILE:LINE)", in WHAT[0..WHATLEN)), or TX_ERR_NOMEM
   after an arena ran out of memory in it. WORK's state must live in ARG
   (memory the caller owns), so that the caller can free what a failed
   WORK leaves. Recovery points nest (per thread). */
int recover_run(int (*work)(void *arg), void *arg, char *what, size_t whatlen);
/* Out of memory: longjmps to the innermost recovery point; returns if there
   is none. */
void recover_oom(void);
/* A cleanup run (before the jump) if the innermost recovery point is left
   by an internal error or out of memory: for malloc'd memory a phase holds
   in locals. Push and pop in LIFO order; C lives in the caller's frame. */
typedef struct recover_cleanup {
    void (*fn)(void *arg);
    void *arg;
    struct recover_cleanup *prev;
} recover_cleanup;
void recover_push(recover_cleanup *c, void (*fn)(void *arg), void *arg);
void recover_pop(recover_cleanup *c);

/* ---- arena.c: one arena per compilation, freed in one call ---- */
typedef struct tx_arena tx_arena;
/* A new, empty arena; NULL if out of memory. */
tx_arena *arena_new(void);
/* Frees every block of A. NULL is a no-op. */
void arena_free(tx_arena *a);
/* SIZE zeroed bytes aligned for any type. When memory runs out: longjmps
   to the innermost recovery point (recover_run), or returns NULL if there
   is none. */
void *arena_alloc(tx_arena *a, size_t size);
/* A NUL-terminated copy of S[0..N). */
char *arena_strndup(tx_arena *a, const char *s, size_t n);
/* printf into arena memory. */
char *arena_printf(tx_arena *a, const char *fmt, ...);

/* ---- buf.c: growable byte buffer (malloc'd; emit and diagnostics) ---- */
typedef struct {
    char *p;
    size_t len, cap;
    int oom; /* set once an allocation failed; later appends are dropped */
} tx_buf;
/* Appends N bytes. */
void buf_put(tx_buf *b, const char *s, size_t n);
/* Inserts N bytes at byte offset POS (at most the length). */
void buf_insert(tx_buf *b, size_t pos, const char *s, size_t n);
/* Appends a NUL-terminated string. */
void buf_puts(tx_buf *b, const char *s);
/* Appends printf-formatted text. */
void buf_printf(tx_buf *b, const char *fmt, ...);
/* Appends vprintf-formatted text. */
void buf_vprintf(tx_buf *b, const char *fmt, va_list ap);
/* Releases the buffer's memory and zeroes it. */
void buf_free(tx_buf *b);

/* ---- diag.c: located diagnostics ---- */
typedef struct {
    uint32_t off, len;  /* byte offset and length in the source */
    uint32_t line, col; /* 1-based; col counts characters, not bytes */
} tx_span;

typedef struct {
    const char *name; /* file name for messages */
    const char *text; /* the source (not NUL-terminated) */
    size_t len;
} tx_source;

typedef struct {
    const tx_source *src;
    tx_buf out;   /* every diagnostic, formatted */
    int nerrors;
} tx_diag;

/* Reports an error at SPAN: "file:line:col: error: MSG", the source line
   and a caret line under the span. */
void diag_error(tx_diag *d, tx_span span, const char *fmt, ...);
/* A note attached to the previous error, at SPAN (no caret if span.len 0
   and line 0). */
void diag_note(tx_diag *d, tx_span span, const char *fmt, ...);
/* The span covering A through B (B after A in the source). */
tx_span span_join(tx_span a, tx_span b);
/* The span of bytes [off, off+len) of the source, line and column computed. */
tx_span span_at(const tx_source *src, uint32_t off, uint32_t len);

/* ---- lexer (grammar/lexer.re) ---- */
typedef struct {
    int kind;      /* TK_* from the generated parser.h, 0 at end of input */
    const char *z; /* the token's bytes in the source (borrowed) */
    uint32_t n;
    tx_span span;
} tx_token;

typedef struct {
    const tx_source *src;
    tx_diag *diag;
    const unsigned char *cur, *lim, *tok, *line_start;
    uint32_t line;
} tx_lexer;

/* Prepares LX to read SRC from the start. */
void lex_init(tx_lexer *lx, const tx_source *src, tx_diag *diag);
/* Reads the next token into *T. Returns its kind: 0 at the end of input, -1
   after reporting a lexical error (the caller stops). */
int lex_next(tx_lexer *lx, tx_token *t);
/* Classifies the label at S[0..N): returns 1 for a name, 2 for a
   non-negative integer (its length in *LEN), 0 if neither. */
int lex_label(const char *s, size_t n, size_t *len);
/* The keyword kind of identifier S[0..N), or 0. */
int lex_keyword(const char *s, size_t n);
/* Describes a token kind for messages ("';'", "identifier"). */
const char *lex_kind_name(int kind);

/* ---- labels ---- */
typedef struct { uint64_t w[TX_MAX_LABELS / 64]; } labelset;
static inline void ls_add(labelset *s, int l) { s->w[l >> 6] |= (uint64_t)1 << (l & 63); }
static inline int ls_has(const labelset *s, int l) { return (int)((s->w[l >> 6] >> (l & 63)) & 1); }
static inline void ls_del(labelset *s, int l) { s->w[l >> 6] &= ~((uint64_t)1 << (l & 63)); }
static inline labelset ls_union(labelset a, labelset b)
{ for (int i = 0; i < TX_MAX_LABELS / 64; i++) a.w[i] |= b.w[i]; return a; }
static inline labelset ls_inter(labelset a, labelset b)
{ for (int i = 0; i < TX_MAX_LABELS / 64; i++) a.w[i] &= b.w[i]; return a; }
static inline labelset ls_minus(labelset a, labelset b)
{ for (int i = 0; i < TX_MAX_LABELS / 64; i++) a.w[i] &= ~b.w[i]; return a; }
static inline int ls_empty(labelset a)
{ for (int i = 0; i < TX_MAX_LABELS / 64; i++) if (a.w[i]) return 0; return 1; }
static inline int ls_eq(labelset a, labelset b)
{ for (int i = 0; i < TX_MAX_LABELS / 64; i++) if (a.w[i] != b.w[i]) return 0; return 1; }
static inline int ls_count(labelset a)
{ int c = 0; for (int i = 0; i < TX_MAX_LABELS / 64; i++) c += __builtin_popcountll(a.w[i]); return c; }

/* An extent: a symbolic dim (dim >= 0, index into the program's dims), a
   constant (dim == -1, value), or derived (dim == -2, value indexes the
   program's derived extents: hi - lo of a slice, min(m, n) of a reduced
   QR or SVD). Derived extents are interned, so equal ones compare equal. */
typedef struct { int dim; int64_t value; } tx_extent;
#define EXT_DERIVED (-2)
static inline int ext_eq(tx_extent a, tx_extent b)
{ return a.dim == b.dim && (a.dim >= 0 || a.value == b.value); }

/* A derived extent: c + sum of coef[i] * dim[i] (kind 0), or min(a, b)
   (kind 1). */
typedef struct dext {
    int kind;
    int64_t c;
    int nterm;
    int dim[4];
    int64_t coef[4];
    tx_extent a, b;
} dext;

/* Two extents the program needs equal, which only run time can tell
   (a derived extent against a declared one); MSG says where. */
typedef struct ext_check {
    int kind;            /* 0: a == b; 1: a <= b */
    tx_extent a, b;
    const char *msg;
} ext_check;

/* The linear-algebra functions (tx(5) §6). */
/* LA_GRAD marks a grad call (tx(5) §6.1) in the CST: a call with a label
   scope of its own like the others, lowered by grad.c, never an
   OP_LINALG. LA_GAPS is only made by grad.c: from a vector w, the matrix
   w[f] - w[e] (1 on the diagonal), a run-time error if two entries are
   equal (or, with la_pow 1, if one is zero). LA_CHOLGRAD, also only
   grad.c's: from a cholesky factor L and the adjoint G of L, the lower
   triangular Phi(S + S^H), S = L^-H Phi(L^H tril(G)) L^-1 (Phi: the lower
   triangle, the diagonal halved), by level-3 BLAS (tx_la_cholgrad). */
typedef enum { LA_CHOL = 1, LA_INV, LA_POW, LA_SOLVE, LA_EIGH, LA_QR, LA_SVD, LA_SLICE, LA_GRAD, LA_GAPS, LA_CHOLGRAD } la_fn;

/* ---- symbols (filled by sema) ---- */
typedef enum { SYM_DIM = 1, SYM_TENSOR, SYM_MAP, SYM_LET, SYM_LET_TENSOR } sym_kind;
typedef enum { IO_IN = 1, IO_OUT, IO_INOUT, IO_TMP, IO_LET } io_kind;
/* Element types (tx(5) §4.2). A complex element is a (re, im) pair of
   its real type, interleaved (numpy's complex64/complex128). Every value
   computes in double (a complex one in a pair of doubles); the type says
   how it is stored. */
typedef enum { DT_F32 = 1, DT_F64 = 2, DT_C64 = 3, DT_C128 = 4 } dtype;
static inline int dt_complex(dtype t) { return t == DT_C64 || t == DT_C128; }
static inline int dt_wide(dtype t) { return t == DT_F64 || t == DT_C128; }
/* The type that holds both A and B (numpy's promotion: f64 with c64 is
   c128); 0 (a number) takes the other's. */
static inline dtype dt_join(dtype a, dtype b)
{
    if (!a || !b)
        return a ? a : b;
    int cx = dt_complex(a) || dt_complex(b), wide = dt_wide(a) || dt_wide(b);
    return cx ? (wide ? DT_C128 : DT_C64) : (wide ? DT_F64 : DT_F32);
}
/* The real type of T's parts (f32 for c64, f64 for c128). */
static inline dtype dt_real(dtype t) { return t == DT_C64 ? DT_F32 : t == DT_C128 ? DT_F64 : t; }
/* T at double precision (f64 or c128). */
static inline dtype dt_widen(dtype t) { return dt_complex(t) ? DT_C128 : DT_F64; }
/* Bytes of one element. */
static inline int dt_size(dtype t) { return t == DT_F32 ? 4 : t == DT_C128 ? 16 : 8; }
/* The .tx spelling of T. */
static inline const char *dt_name(dtype t)
{ return t == DT_F32 ? "f32" : t == DT_F64 ? "f64" : t == DT_C64 ? "c64" : "c128"; }

typedef struct cst_node cst_node;
typedef struct cst_stmt cst_stmt;

typedef struct sym {
    sym_kind kind;
    const char *name; /* NUL-terminated, UTF-8 */
    tx_span span;     /* where it was declared */
    int index;        /* dims: index in program order; tensors: parameter order or -1 */
    /* SYM_DIM */
    int is_const;
    int64_t value;
    /* SYM_TENSOR, SYM_LET_TENSOR */
    io_kind io;
    dtype dt;
    int rank;
    tx_extent ext[TX_MAX_MODES];
    int written;      /* sema: has a statement written it so far */
    int failed;       /* sema: a let whose definition had an error (reported
                         once; its uses are skipped without a message) */
    int var;          /* graph: variable index */
    int keep;         /* a hidden tmp that stays in memory: pass share does not
                         forward its store to its readers (grad.c: a max's
                         operand, which the max found again and its test read) */
    /* SYM_MAP: "src" -> "dst" labels, and their extents from the first
       statement it applies to */
    int nsrc, ndst;
    int src[TX_MAX_MODES], dst[TX_MAX_MODES];
    tx_extent src_ext[TX_MAX_MODES], dst_ext[TX_MAX_MODES];
    int map_used;
    /* SYM_LET */
    cst_node *let_node;
    cst_stmt *stmt;   /* SYM_LET, SYM_LET_TENSOR: the defining statement */
    int def_index;    /* SYM_LET: statement number of the definition */
    int last_write;   /* tensors: statement number of the latest write, -1 */
    int *reads;       /* SYM_LET: variables it reads (transitively), -1 ended */
    struct sym *next; /* hash chain */
} sym;

/* Hidden tmp tensors the compiler stores values into and reads back
   through other labels (sema_hidden_tmp); no .tx name can reach them. */
typedef struct {
    sym **v;
    int n, cap;
} hidden_tmps;

/* ---- cst.c: the concrete syntax tree, a DAG ---- */
typedef enum {
    CST_NUM = 1,   /* num */
    CST_NAME,      /* bare name: a scalar tensor (sema resolves) */
    CST_REF,       /* name("labels") */
    CST_LET,       /* a bare `let` node, one per definition */
    CST_LETUSE,    /* a use of a bare let: a = the CST_LET node (shared) */
    CST_NEG, CST_ADD, CST_SUB, CST_MUL, CST_DIV, CST_POW,
    CST_CALL,      /* fn(args) */
    CST_ARG_OP,    /* an operator argument: + * max min */
    CST_ARG_STR,   /* a label-string argument */
    CST_ARG_LIST,  /* [a, b, ...] */
    CST_EXTENT     /* an extent in a declaration: name or integer */
} cst_kind;

typedef struct {
    int n;
    cst_node **v;
} cst_list;

/* One parsed label of an index string. */
typedef struct {
    int label;     /* label id, or -1 for an integer chip */
    int64_t chip;  /* the integer when label == -1 */
    tx_span span;
} cst_label;

struct cst_node {
    cst_kind kind;
    tx_span span;
    cst_node *a, *b;
    double num;
    tx_token name;     /* CST_NAME, CST_REF, CST_LET, CST_CALL (function keyword), CST_ARG_OP */
    tx_token str;      /* CST_REF, CST_ARG_STR: the index string */
    cst_list args;     /* CST_CALL, CST_ARG_LIST */
    /* parsed index string (CST_REF): */
    int nlabels;
    cst_label *labels;
    /* sema: */
    sym *sym;          /* CST_REF, CST_NAME, CST_LET */
    labelset ls;       /* labels occurring in this subtree */
    int is_number;     /* subtree is a compile-time (real) number */
    int imag;          /* CST_NUM: an imaginary literal, num times i */
    int fn;            /* CST_CALL: sema's map_fn, or 0; CST_ARG_OP: reduce_op */
    int scan_label;    /* CST_CALL scan/scanr: the label id */
    int la;            /* CST_CALL: linear-algebra function (la_fn), or 0 */
    int call_labels[TX_MAX_MODES]; /* CST_CALL linear algebra: result labels, in order */
    int ncall_labels;
    int arg_labels[2][TX_MAX_MODES]; /* the arguments' labels in written order */
    int narg_labels[2];
    tx_extent slice_lo[TX_MAX_MODES], slice_ext[TX_MAX_MODES]; /* slice: corner and extents */
    tx_extent *scope_ext; /* CST_CALL linear algebra: label extents inside the call */
    int depth;         /* height of the subtree (bounded: TX_MAX_DEPTH) */
    /* CST_CALL grad: the hidden tmp tensors its backward sweep relabels
       adjoints through (sema_hidden_tmp), the same ones each time the
       program is lowered */
    hidden_tmps grad_tmp;
};

typedef enum {
    STMT_DIM = 1, STMT_TENSOR, STMT_SPARSE,
    STMT_ASSIGN, STMT_LET, STMT_LET_TENSOR, STMT_MULTI
} stmt_kind;

typedef struct {
    tx_token name;
    int has_idx;
    tx_token str;
    int nlabels;
    cst_label *labels;
    int *fresh;       /* a label repeated in the target (the diagonal): per mode,
                         the label itself at its first occurrence, a label of its
                         own ("i#1") at a repeat; NULL if no label repeats */
    tx_span span;
    sym *sym;
} cst_target;

struct cst_stmt {
    stmt_kind kind;
    tx_span span;
    int op;              /* STMT_ASSIGN: TK_EQ, TK_PLUSEQ, TK_MINUSEQ */
    tx_span op_span;
    int ntargets;
    cst_target *targets; /* STMT_ASSIGN, STMT_LET_TENSOR, STMT_MULTI */
    cst_node *expr;      /* right side; STMT_LET: the CST_LET node */
    /* declarations */
    tx_token name;       /* STMT_DIM, STMT_TENSOR, STMT_SPARSE */
    tx_token value;      /* STMT_DIM: constant, kind 0 if none */
    int io;              /* STMT_TENSOR: TK_IN/TK_OUT/TK_INOUT/TK_TMP */
    int dtype_tok;       /* TK_F32, TK_F64, TK_C64, TK_C128 or 0 */
    cst_list extents;    /* STMT_TENSOR */
    tx_token src_str, dst_str; /* STMT_SPARSE */
    int nmap_src, nmap_dst;
    cst_label *map_src, *map_dst;
    int nmaps;           /* sparse maps that apply to this statement (sema) */
    int *maps;           /* their indices in sema_program.maps */
    /* sema: */
    int index;           /* statement number among assignments (0-based) */
    int nlab;            /* labels bound in this statement */
    tx_extent *lab_ext;  /* per label id (nlabel_names entries) */
    tx_span *lab_span;   /* where each label was first bound */
    labelset lab_bound;
    labelset target_ls;
    int wide;            /* involves an f64 tensor: computed in f64 */
    int multi_new;       /* STMT_MULTI: the new label its left side names */
    cst_stmt *next;
};

/* The parsed program and the state its builder keeps. */
typedef struct {
    tx_arena *arena;
    tx_diag *diag;
    const tx_source *src;
    cst_stmt *first, *last;
    int nstmts;
    /* label names, interned program-wide */
    int nlabel_names;
    const char *label_names[TX_MAX_LABELS];
    /* bare lets visible so far (a chain through sym) for the DAG */
    sym *lets;
    /* parser state for declarations */
    int decl_io, decl_dtype;
    int failed; /* a syntax or limit error was reported */
    tx_token last_token, prev_token, prev2_token;
    int nopen;                /* unmatched '(' and their positions */
    tx_span open_paren[TX_MAX_DEPTH];
} cst_program;

/* Parses SRC into a CST allocated in A; errors go to D. Returns NULL if
   there were syntax errors. (grammar/parser.y) */
cst_program *parse_program(const tx_source *src, tx_arena *a, tx_diag *d);

/* Builder actions called by the grammar (cst.c); each returns arena memory. */
cst_node *cst_num(cst_program *P, const tx_token *t);
cst_node *cst_name(cst_program *P, const tx_token *t);
cst_node *cst_ref(cst_program *P, const tx_token *name, const tx_token *str, const tx_token *rparen);
/* An imaginary literal, 2.5i: a CST_NUM with imag set (not a compile-time
   real number: is_number is 0). */
cst_node *cst_imag(cst_program *P, const tx_token *t);
cst_node *cst_unary(cst_program *P, cst_kind k, const tx_token *op, cst_node *a);
cst_node *cst_binary(cst_program *P, cst_kind k, cst_node *a, cst_node *b);
cst_node *cst_paren(cst_program *P, const tx_token *l, cst_node *e, const tx_token *r);
cst_node *cst_call(cst_program *P, const tx_token *fn, cst_list *args, const tx_token *rparen);
/* X op Y for a comparison OP (< <= > >= == !=): a CST_CALL named by OP. */
cst_node *cst_compare(cst_program *P, const tx_token *op, cst_node *a, cst_node *b);
cst_node *cst_arg_op(cst_program *P, const tx_token *op);
cst_node *cst_arg_str(cst_program *P, const tx_token *s);
cst_node *cst_arg_list(cst_program *P, const tx_token *l, cst_list *items, const tx_token *r);
cst_node *cst_extent(cst_program *P, const tx_token *t);
cst_list *cst_list_new(cst_program *P, cst_node *first);
cst_list *cst_list_add(cst_program *P, cst_list *l, cst_node *n);
void cst_decl_begin(cst_program *P, const tx_token *io, const tx_token *dt);
void cst_decl_tensor(cst_program *P, const tx_token *name, cst_list *extents, const tx_token *end);
void cst_decl_dim(cst_program *P, const tx_token *name, const tx_token *value);
void cst_decl_sparse(cst_program *P, const tx_token *kw, const tx_token *name,
                     const tx_token *src, const tx_token *dst);
cst_target *cst_target_new(cst_program *P, const tx_token *name, const tx_token *str, const tx_token *rparen);
cst_list *cst_targets_new(cst_program *P, cst_target *t);
cst_list *cst_targets_add(cst_program *P, cst_list *l, cst_target *t);
void cst_assign(cst_program *P, cst_target *t, const tx_token *op, cst_node *e);
void cst_assign_multi(cst_program *P, const tx_token *lparen, cst_list *targets, cst_node *e);
void cst_let(cst_program *P, const tx_token *kw, const tx_token *name, cst_node *e);
void cst_let_tensor(cst_program *P, const tx_token *kw, const tx_token *name,
                    const tx_token *str, cst_node *e);
/* Interns label name S[0..N); returns its id or -1 when the table is full. */
int cst_label_id(cst_program *P, const char *s, size_t n);

/* ---- sema.c ---- */
typedef struct {
    cst_program *cst;
    tx_arena *arena;
    tx_diag *diag;
    sym *table[256];      /* hash of names */
    int ndims;
    sym **dims;           /* symbolic and constant dims, in order of first appearance */
    int nsym_dims;        /* symbolic dims only (parameters), in order */
    sym **sym_dims;
    int ntensors;         /* parameter tensors (in/out/inout), declaration order */
    sym **tensors;
    int nvars;            /* every tensor variable: params, tmp, let tensors */
    sym **vars;
    int nmaps;            /* sparse maps, declaration order (parameters after the tensors) */
    sym **maps;
    int nassign;          /* assignment statements */
    int nderived;         /* derived extents */
    struct dext *derived;
    int nchecks;          /* extent equalities checked at run time */
    struct ext_check *checks;
    hidden_tmps pow_tmp;  /* the powers of pow's repeated squaring (lower.c) */
} sema_program;

/* Checks the program: names, declarations, labels, extents, read/write
   rules. Returns NULL after reporting errors to D. */
sema_program *sema_check(cst_program *cst, tx_arena *a, tx_diag *d);
/* The labels of result PART of multi-output call LA (eigh, qr, svd) given
   the matrix's row and column labels R, C and the new label NW; returns
   their count. */
int sema_multi_labels(int la, int part, int r, int c, int nw, int *labels);
/* Looks a name up; NULL if not declared. */
sym *sema_lookup(sema_program *S, const char *name);
/* The K-th hidden tmp tensor of list H (element type DT, RANK modes of
   extents EXT, named TAG#N), created on first request (K is at most H's
   count): a backward sweep relabels an adjoint by storing it into one and
   reading it back through other labels (H: the grad call's), and pow
   stores the powers of its repeated squaring (H: the program's).
   Lowering asks for them in the same order every time, so each
   compilation of the program gets the same tensors. SPAN locates them. */
sym *sema_hidden_tmp(sema_program *S, hidden_tmps *h, int k, const char *tag, tx_span span, dtype dt, int rank,
                     const tx_extent *ext);
/* Appends extent E as text ("n", "16", "n - 1", "min(m, n)"). */
void sema_extent_print(const sema_program *S, tx_extent e, tx_buf *o);
/* The value of E given DIM_VALUES (per symbolic dim; NULL: none known);
   -1 if it depends on a dim not known. */
int64_t sema_extent_eval(const sema_program *S, tx_extent e, const int64_t *dim_values);

/* ---- graph.c: the OpGraph ---- */
typedef enum {
    OP_INPUT = 1, /* a tensor variable's value on entry (in, inout) */
    OP_INDEX,     /* a labelled view of a variable value: diagonal, chip, naming */
    OP_CONST,     /* a scalar number */
    OP_CONTRACT,  /* product of operands (each ^±1) times coef, summed over `summed` */
    OP_ADD,       /* sum of coef_i · operand_i, each broadcast to the output labels */
    OP_MAP,       /* elementwise function of one or two operands (broadcast) */
    OP_REDUCE,    /* operand reduced with op over `summed` (op + is OP_CONTRACT) */
    OP_SCAN,      /* inclusive prefix of the operand with op along one label */
    OP_LINALG,    /* a LAPACK-backed call: one result, or a tuple of OP_PARTs */
    OP_PART,      /* result number `part` of the OP_LINALG in[0] */
    OP_SLICE,     /* a box of in[0]: each label offset by slice_lo */
    OP_STORE      /* writes a value into a tensor variable: =, +=, -= */
} op_kind;

typedef enum {
    MAP_POW = 1, MAP_EXP, MAP_LOG, MAP_SQRT, MAP_ABS, MAP_SIN, MAP_COS, MAP_TANH,
    MAP_CONJ, MAP_REAL, MAP_IMAG, /* complex: conjugate, parts (identity, x, 0 on reals) */
    MAP_MAX, MAP_MIN, /* binary */
    MAP_LT, MAP_LE, MAP_GT, MAP_GE, MAP_EQ, MAP_NE, /* binary: 1 or 0, false with NaN but != */
    MAP_WHERE,        /* where(c, a, b): three operands */
    MAP_DIM,          /* no operand: the extent of dim fn_arg (an index into the dims), a number */
    MAP_DELTA         /* no operand: 1 where the value's labels are all equal, else 0 */
} map_fn;
/* The number of operands of an OP_MAP of function F. */
static inline int map_arity(map_fn f)
{ return f == MAP_DIM || f == MAP_DELTA ? 0 : f == MAP_WHERE ? 3 : f >= MAP_MAX ? 2 : 1; }

/* The operators of reduce and scan. */
typedef enum { RED_ADD = 1, RED_MUL, RED_MAX, RED_MIN } reduce_op;

typedef struct g_value g_value;

/* A contraction mapped to BLAS (pass_blas.c): C[batch][m][n] =
   coef * A[batch][m][k] * B[batch][k][n], each label group fused into
   one matrix dimension. Labels in LOOP are taken out of the m, n or k
   groups (where they would break a group's single stride) and looped
   around the call like batch labels; a summed one accumulates (the calls
   after the first add to C). */
typedef struct {
    int nb, nm, nn, nk, nl;
    int batch[TX_MAX_MODES], m[TX_MAX_MODES], n[TX_MAX_MODES], k[TX_MAX_MODES], loop[TX_MAX_MODES];
    g_value *a, *b;      /* the operands playing A and B (maybe swapped) */
    g_value *store;      /* non-NULL: the result goes straight into this store's tensor */
    int conj;            /* a complex dot of conj(A) (1) or conj(B) (2): zdotc/cdotc */
} blas_plan;

/* The memory layout of an addressable value: its modes in memory order,
   each a label or a fixed index (chip), row-major over EXT unless STRIDE
   says otherwise. */
typedef struct {
    int n;
    int label[TX_MAX_MODES];   /* -1 for a chip */
    int64_t chip[TX_MAX_MODES];
    tx_extent ext[TX_MAX_MODES];
    const int64_t *stride;     /* per mode, in elements (a bound tensor's strides, set by
                                  the emitter); NULL: row-major over EXT */
} mode_seq;

struct g_value {
    int id;
    op_kind op;
    dtype dt;
    int rank;
    int label[TX_MAX_MODES];    /* label ids; -1 for a variable's positional modes */
    tx_extent ext[TX_MAX_MODES];
    int nin;
    g_value **in;
    double *coef_in;            /* OP_ADD: per operand; OP_CONTRACT: exponent per operand (1 or -1) */
    double coef;                /* OP_CONST: the value; OP_CONTRACT: scale */
    double coef_im;             /* OP_CONST of a complex type: the imaginary part */
    labelset summed;            /* OP_CONTRACT */
    map_fn fn; double fn_arg;   /* OP_MAP */
    reduce_op red;              /* OP_REDUCE, OP_SCAN */
    int scan_label, scan_reverse; /* OP_SCAN */
    int inlined;                /* set by pass_fuse: computed inside its one user's loops */
    int row_group;              /* set by pass_fuse: 1 + the id of the last value of the row-tiled
                                   group V belongs to, 0 if none (see pass_fuse.c) */
    int row_ahead;              /* set by pass_fuse: a scalar inside a row group's run that reads
                                   nothing the group writes, computed before the group */
    la_fn la;                   /* OP_LINALG */
    int nout;                   /* OP_LINALG: results (1: the node itself; else OP_PARTs) */
    int part;                   /* OP_PART */
    int64_t la_pow;             /* OP_LINALG pow: the power; gaps: 1 also for zero; inv: 1 if pow made it (its error names pow) */
    tx_extent slice_lo[TX_MAX_MODES]; /* OP_SLICE: per mode of the result */
    blas_plan *blas;            /* set by pass_blas: computed by a BLAS call */
    int nmaps;                  /* sparse maps restricting this value's loops */
    int maps[8];
    int absorbed;               /* OP_STORE: its contraction (or scan) wrote the tensor directly */
    g_value *into;              /* set by pass_fuse: OP_SCAN writing the tensor of its one user, a plain
                                   store of all of it (absorbed), instead of a buffer of its own */
    /* OP_INDEX: for each mode of in[0], a label id or -1 with a chip index */
    int idx_label[TX_MAX_MODES];
    int64_t idx_chip[TX_MAX_MODES];
    tx_span chip_span[TX_MAX_MODES];
    /* OP_INPUT, OP_STORE */
    int var;                    /* variable index (sema_program.vars) */
    int store_op;               /* OP_STORE: '=', '+', '-' */
    int store_label[TX_MAX_MODES]; /* OP_STORE: label of in[0] feeding each target mode */
    /* bookkeeping */
    int stmt;                   /* statement index, -1 for program entry */
    tx_span span;
    int nuses;
    int dead;
    int in_cap;                 /* room in `in` and `coef_in` (graph_add_operand) */
    g_value *replaced_by;       /* set by graph_replace_uses */
};

/* What a graph is specialised for: the facts and permissions the passes
   consult. Given once, to graph_new (the pipeline fills it from its
   options); a zeroed one means nothing is known and BLAS is not allowed. */
typedef struct {
    const int64_t *dim_values;  /* per symbolic dim, -1 if unknown; NULL: none known */
    const double *map_density;  /* per sparse map: entries / dense size; NULL: estimated */
    int blas;                   /* passes may map contractions to BLAS */
    int distributed;            /* the code runs on MPI ranks (tensors by rows) */
} graph_spec;

typedef struct graph_pending graph_pending;

typedef struct {
    tx_arena *arena;
    sema_program *S;
    int n, cap;
    g_value **v;                /* topological order */
    const char *const *label_names;
    graph_spec spec;            /* what the graph is specialised for (copied into the arena) */
    int npending, pending_cap;  /* values graph_insert_before queued for graph_renumber */
    graph_pending *pending;
    unsigned char *row_local;   /* set by pass_fuse, per variable (NULL: none): a let or tmp tensor
                                   written and read only inside one row group, at the row (see
                                   pass_fuse.c) */
    int *row_alias;             /* with row_local, per variable: the out tensor whose memory a
                                   row-local tensor may use (pass_fuse.c), or -1 */
} graph;

/* A new, empty graph over the checked program S, specialised for SPEC
   (NULL: nothing known, no BLAS); SPEC's arrays are copied into A. */
graph *graph_new(tx_arena *a, sema_program *S, const graph_spec *spec);

/* -- building and editing values: lowering and every pass go through these.
   Use counts (nuses) are exact for the values in G's list after graph_add
   and after graph_renumber; a pass that edits the list ends with
   graph_renumber, and graph_check runs after it. */

/* A new value of kind OP with NIN operand slots (NULL, each with
   coefficient 1), scale 1, of statement STMT (-1: program entry) at SPAN;
   everything else zeroed. It is not in G's list until graph_add or
   graph_insert_before puts it there. */
g_value *graph_value_new(graph *g, op_kind op, int nin, int stmt, tx_span span);
/* Sets operand I (0 <= I < V's operand count) of V to W with coefficient
   C (OP_ADD: its factor; OP_CONTRACT: its exponent, 1 or -1; else 1).
   When V is in the list, the use counts of the old and new operand follow. */
void graph_set_operand(g_value *v, int i, g_value *w, double c);
/* Appends operand W with coefficient C to V (growing its operand arrays
   in G's arena); use counts follow as for graph_set_operand. */
void graph_add_operand(graph *g, g_value *v, g_value *w, double c);
/* Replaces all of V's operands by IN[0..N) with coefficients C[0..N)
   (C NULL: all 1); N may exceed V's operand count. Use counts follow. */
void graph_set_operands(graph *g, g_value *v, int n, g_value *const *in, const double *c);
/* Gives V the RANK modes LABEL[0..RANK), with extents EXT[0..RANK). */
void graph_set_modes(g_value *v, int rank, const int *label, const tx_extent *ext);
/* Gives V the RANK modes LABEL[0..RANK), each with the extent it has in
   FROM (which must have every one of them; FROM may be V itself). */
void graph_set_modes_like(g_value *v, int rank, const int *label, const g_value *from);
/* Appends V at the end of G's list (ids are assigned in order) and counts
   its operands' uses. Returns V. */
g_value *graph_add(graph *g, g_value *v);
/* V (labels FROM[m] for mode m) stored whole, with '=', into tensor T (of
   V's rank), appended to G's list, or queued just before BEFORE when it is
   not NULL (graph_insert_before); read back through other labels with
   graph_view. */
g_value *graph_store_whole(graph *g, g_value *v, const sym *t, const int *from, int stmt, tx_span span,
                           g_value *before);
/* The tensor stored by S (a store or an input) read through the distinct
   labels TO[m], appended to G's list, or queued before BEFORE (as
   graph_store_whole). */
g_value *graph_view(graph *g, g_value *s, const int *to, int stmt, tx_span span, g_value *before);
/* Queues new value V to go into G's list just before AT, a value in the
   list (values queued before the same AT keep their order); the next
   graph_renumber puts it there. Until then V has no id. */
void graph_insert_before(graph *g, g_value *at, g_value *v);
/* Marks V, which nothing uses, dead and releases its operands' uses;
   graph_renumber drops it from the list. */
void graph_kill(graph *g, g_value *v);
/* Makes every use of OLD a use of NW, a value earlier in the list that
   computes the same thing, and marks OLD dead. O(1): users' operand
   pointers are redirected by graph_follow_replaced (one value, for a pass
   that walks the list in order and compares operands) or by
   graph_renumber (every value). */
void graph_replace_uses(graph *g, g_value *old, g_value *nw);
/* Points each operand of V that graph_replace_uses replaced at its
   replacement. */
void graph_follow_replaced(g_value *v);
/* Makes G's list whole again after a pass edited it: redirects replaced
   operands, drops dead values, puts queued values in place, renumbers
   every value in order and recounts their uses. */
void graph_renumber(graph *g);

/* Checks every invariant of G; returns 0, or -1 with a message in MSG. */
int graph_check(const graph *g, char *msg, size_t msglen);

/* -- the cost model (the listing, the contraction order, BLAS layouts) */
/* opt_einsum's FLOP count of a contraction of NTERMS operands whose loops
   run over the labels ALL, label L having extent EXT[L], keeping OUT:
   the size of the loop nest times the multiplications per point (NTERMS
   - 1, at least 1), plus one addition per point if it sums a label. */
double graph_contract_cost(const double *ext, labelset all, labelset out, int nterms);
/* The FLOPs of contraction V (graph_contract_cost over its operands). */
double graph_contract_flops(const graph *g, const g_value *v);
/* The fraction of its dense box sparse map MAP keeps: known when the
   graph is specialised for bound maps, else taken as 0.1. */
double graph_map_density(const graph *g, int map);
/* Cost estimates of value V (opt_einsum's FLOP count for contractions,
   one per element otherwise; a complex value's in real flops: 4 per
   multiply-add, 2 per add) and of its buffer, and the FLOPs of all of G. */
double graph_value_flops(const graph *g, const g_value *v);
double graph_value_bytes(const graph *g, const g_value *v);
/* graph_value_flops of V as one product of extents, for a caller that
   needs it as a formula (the MPI target's profile, whose code is the same
   for every size): OUTER * (EXT[0] * ... * EXT[N-1] * INNER), the
   extents of its labels (a contraction's in label order, else its own
   or its operand's modes); N = 0 and OUTER 0 for a node that does none. */
typedef struct {
    double outer, inner;
    int n;
    tx_extent ext[TX_MAX_LABELS];
} flops_term;
void graph_value_flops_term(const graph *g, const g_value *v, flops_term *t);
double graph_flops(const graph *g);
/* Is V elementwise: a map, a linear combination, or a product with
   nothing summed (what pass_fuse may compute inside its user's loops)? */
int graph_is_elementwise(const g_value *v);
/* Is V a copy: a one-operand product with nothing summed, scale 1 and
   exponent 1, given a buffer of its own (a layout change, a TTGT copy)? */
int graph_is_copy(const g_value *v);
/* The number of copies in G; *BYTES (if not NULL) gets the bytes they
   move, read and write (extents estimated as for costs). */
int graph_copies(const graph *g, double *bytes);
/* Appends G as a text listing (dot = 0) or Graphviz (dot = 1) to OUT. */
void graph_print(const graph *g, tx_buf *out, int dot);
/* The name of a label id. */
const char *graph_label_name(const graph *g, int label);
/* The layout of V if it lives in memory (a view of a tensor variable, or
   a computed, non-fused value): 0 and *S filled, else -1. */
int graph_modes(const g_value *v, mode_seq *s);
/* Marks READ[var] for every tensor variable V reads through a view where
   V is computed, which for an elementwise value may be where its users
   are (fused): the views among V's operands and, through elementwise
   operands, theirs, and the tensors read as values themselves (an input
   or a store as an operand: a scalar). 0 (READ incomplete) if the
   expression is too deep. */
int graph_views_read(const g_value *v, unsigned char *read);
/* The set of V's labels (none for a variable's positional modes). */
labelset graph_value_labels(const g_value *v);
/* The labels V's loops run over (its labels, summed ones, a store's). */
labelset graph_iteration_labels(const g_value *v);
/* Does sparse map MAP restrict loops over IT (are all its labels in it)? */
int graph_map_covers(const graph *g, int map, labelset it);
/* Sets V's maps to those of MAPS[0..N) that cover its loops. */
void graph_restrict(const graph *g, g_value *v, const int *maps, int n);
/* The extent X as a number for cost models: exact when constant or known
   (JIT), else an estimate (64). */
double graph_extent_estimate(const graph *g, tx_extent x);
/* The extent X when it is known (constant, or every dim it depends on
   bound: JIT), else -1. */
int64_t graph_extent_known(const graph *g, tx_extent x);
/* V's element count (extents estimated where unknown, as for costs). */
double graph_value_elements(const graph *g, const g_value *v);
/* The listing's word for an op ("contract", "map", ...). */
const char *graph_op_name(op_kind op);
/* The .tx spelling of an elementwise function, of a reduce operator and
   of a linear-algebra function. */
const char *graph_map_name(map_fn f);
const char *graph_reduce_name(reduce_op r);
const char *graph_la_name(la_fn f);

/* ---- lower.c ---- */
/* Lowers the checked program S to an OpGraph in A, specialised for SPEC
   (graph_new). Returns NULL after reporting an error (a limit) to D. */
graph *lower_program(sema_program *S, tx_arena *a, tx_diag *d, const graph_spec *spec);

/* ---- grad.c: reverse-mode differentiation (tx(5) §6.1) ---- */
typedef struct grad_sweep grad_sweep;
/* The backward sweep of scalar S, a value of G's list: the adjoint
   (∂S/∂value) of every value S depends on, built with the builder and
   appended to G, values of statement STMT at SPAN. OWNER is the grad call
   whose hidden tmp tensors (sema_hidden_tmp) relabel adjoints. An operation
   without a rule is not an error here: only the grads that need it fail
   (grad_result). */
grad_sweep *grad_sweep_run(graph *g, g_value *s, cst_node *owner, int stmt, tx_span span);
/* ∂S/∂X for the input value of variable VAR (an in or inout tensor of
   RANK modes), as a value with labels LABELS[0..RANK) of extents EXT
   (zero if S does not depend on X), appended to the sweep's graph at
   statement STMT. NULL after reporting to D, at SPAN, an operation on the
   way from X to S that has no rule yet. */
g_value *grad_result(grad_sweep *sw, int var, int rank, const int *labels, const tx_extent *ext, tx_diag *d,
                     int stmt, tx_span span);

/* ---- pass_delta.c ---- */
/* Removes a delta's label that a contraction sums where that is a
   renaming: sum over j of x(j) * delta(j,k) is x(k) (same extents, the
   delta a factor, every operand with j readable with k). */
void pass_delta(graph *g);

/* ---- pass_cse.c ---- */
/* Merges values that compute the same thing (common subexpressions). */
void pass_cse(graph *g);
/* CSE again after the contraction order (pairwise products shared across
   statements and terms), contractions equal up to a scale shared (the
   later one a multiple of the earlier), scales on operands of products
   and sums moved into those users; then dce. */
void pass_share(graph *g);
/* Folds constant operands of contractions into their scale. */
void pass_fold(graph *g);
/* Removes values nothing uses, and stores into tmp or let tensors that
   nothing reads afterwards (an unused let is not computed). */
void pass_dce(graph *g);

/* ---- pass_order.c ---- */
/* Splits every contraction of three or more operands into pairwise ones
   in the cheapest order by the graph's cost model (exact dynamic
   programming over subsets up to 12 operands, greedy and seeded random
   greedy beyond), no intermediate over TX_MAX_MODES modes; a product with
   no such order keeps its remaining factors as one n-ary contraction. */
void pass_order(graph *g);

/* ---- pass_factor.c ---- */
/* Factors sums of pairwise products that share an operand, c1·W1·t +
   c2·W2·t + ... into (c1·W1 + c2·W2 + ...)·t, where that lowers the FLOP
   count (products used only by the sum). */
void pass_factor(graph *g);

/* ---- pass_blas.c ---- */
/* Maps pairwise contractions of GEMM, GEMV or DOT shape to BLAS calls,
   copying an operand to a GEMM-able layout only where strides cannot
   express it (TTGT), and writing straight into a stored tensor where its
   layout allows. Does nothing unless g->spec.blas allows BLAS. */
void pass_blas(graph *g);

/* ---- pass_split.c ---- */
/* Splits a reduction to a scalar over two or more labels (not a BLAS
   call, not complex, not sparse, not a plain fold of one f64 tensor in
   memory) into the reduction of each row of its first summed label, a
   vector, and the reduction of that vector: the rows run on threads. */
void pass_split(graph *g);

/* ---- pass_fuse.c ---- */
/* Marks elementwise values with one user for computation inside that
   user's loop nest (no buffer, no pass over memory). */
void pass_fuse(graph *g);

/* ---- target.c: what the generated code is for (DESIGN.md section 6) ---- */
struct jit_module;
/* How the generated file starts. */
typedef enum {
    TX_ENTRY_ARGV = 1, /* int tx_entry(void *const *args): the library's loader passes
                          tensors, maps, timing slots, workspace and a detail slot */
    TX_ENTRY_NAMED     /* the documented C function FN(dims..., tensors..., maps...)
                          and FN_error(code) (tx(5) section 8) */
} tx_entry_kind;

/* How runtime symbols are reached (runtime/symbols.def). */
typedef enum {
    TX_SYMBOLS_REGISTERED = 1, /* no headers: prototypes from the table; the loader
                                  registers every address (libtcc) */
    TX_SYMBOLS_INLINE,         /* standard headers for libc, libm, CBLAS and LAPACKE;
                                  the runtime's own primitives pasted in as static
                                  functions, so the user's compiler builds them */
    TX_SYMBOLS_TABLE           /* standard headers for libc and libm, the primitives
                                  pasted in (as INLINE); the groups that live in
                                  libtensorexpr or its libraries (tx_symbol_group
                                  .loaded: RT, BLAS, LINALG) are static function
                                  pointers that the loader fills in from the
                                  runtime table by calling the generated
                                  int tx_bind_runtime(const void *(*find)(const char *))
                                  before the first call (the cc tier: the object
                                  links against nothing of ours) */
} tx_symbol_access;

/* How kernels are run (a kernel's range splits over threads when its work
   is at least TX_PARALLEL_WORK iterations, each weighed by the functions
   it computes (emit_kernel.c), and the range has two or more). */
typedef enum {
    TX_THREADS_NONE = 1, /* each kernel called once over its whole range */
    TX_THREADS_POOL,     /* through the runtime's pool (tx_rt_parallel) */
    TX_THREADS_OPENMP    /* `#pragma omp parallel` around the call when compiled with -fopenmp */
} tx_threading;
#define TX_PARALLEL_WORK 32768

/* A target: the facts code generation consults, chosen once per
   compilation. A new target (a cc tier, MPI) is a new value, not new ifs. */
typedef struct tx_target {
    const char *name;
    tx_entry_kind entry;
    tx_symbol_access symbols;
    int specialised;     /* extents are written in as numbers (emit_options.dim_values) */
    int blas;            /* contractions may become BLAS calls, matrix functions LAPACK calls */
    unsigned dtypes;     /* element types it computes: bit (1 << dtype) */
    int workspace;       /* intermediates may live in one workspace the caller passes */
    tx_threading threads;
    int distributed;     /* 1: the function takes an MPI_Comm first (tx_comm) and runs on
                            every rank of it; every tensor is replicated; GEMM and the
                            matrix functions go to runtime/mpi.inc (PBLAS, ScaLAPACK);
                            the status is agreed on by every rank; FN_argv is emitted */
    /* PIPE_JIT: the loader that compiles the C and loads it (jit.c, jit_cc.c;
       NULL: the target's C is only text) */
    int (*load)(const char *src, size_t len, struct jit_module **out, tx_buf *err);
    const struct tx_target *fallback; /* when the loader fails, the code is emitted and
                                         loaded for this target instead (NULL: none) */
} tx_target;

/* libtcc in memory, specialised on the bound extents (the library's tx_run). */
extern const tx_target target_jit_tcc;
/* The same, compiled by the system compiler into a cached shared object
   (jit_cc.c, the cc tier): runtime symbols through a table (TX_SYMBOLS_TABLE). */
extern const tx_target target_jit_cc;
/* Standalone C99 with CBLAS and LAPACKE (txc FILE.tx). */
extern const tx_target target_c99_blas;
/* Standalone C99 needing nothing but libm (txc --no-blas). */
extern const tx_target target_c99;
/* Standalone C99 for MPI: FN(MPI_Comm, ...) with PBLAS/ScaLAPACK (txc --target mpi). */
extern const tx_target target_mpi;

/* ---- emit_*.c: C source from the OpGraph for a target ---- */
typedef struct {
    const char *fn_name;      /* the C function (TX_ENTRY_NAMED) */
    const int64_t *dim_values;/* specialised targets: the extent of each symbolic dim */
    const int64_t *const *var_strides; /* specialised targets: per variable, the strides (in
                                 elements, per mode) of the array it is bound to, written
                                 into its addresses; NULL (or a NULL entry): row-major */
    int *var_contiguous;      /* with var_strides: entry VAR is set to 1 where the code
                                 needs strided VAR row-major (a BLAS or LAPACK call that
                                 cannot read its layout); the code is then not usable */
    int timing;               /* TX_ENTRY_ARGV: record statement times */
    size_t *workspace;        /* targets with a workspace: if set, intermediates live
                                 in one workspace of *workspace bytes (args[ntensors +
                                 nmaps + 1]), planned by liveness, instead of malloc'd
                                 buffers */
    struct emit_call **calls; /* if set: *calls, *ncalls get the table of the program's
                                 calls (kernels, BLAS, LAPACK) in order; with timing,
                                 call k's seconds go to times[nassign + k] */
    int *ncalls;
    int debug_fail;           /* testing hook (TX_DEBUG_FAIL_AFTER_PASS=emit): an internal
                                 error once the code is emitted, before it is assembled */
} emit_options;

/* One call of the generated program function: a kernel (a loop nest), a
   BLAS or a LAPACK call, for profiles. */
typedef struct emit_call {
    const char *kind;   /* "loop nest", "gemm", "batched gemm", "gemv", "dot", "cholesky", ... */
    const char *what;   /* the operation it computes, as in the listing ("contract", "map", "store", ...) */
    int stmt;           /* statement index */
    unsigned line;      /* its line in the source */
    int value;          /* the graph value */
    double flops;       /* floating-point operations (the value and those fused into it) */
    double bytes;       /* bytes read and written (buffers and tensors it touches once) */
} emit_call;

/* One run-time error the generated code can return. */
typedef struct {
    int code;
    const char *msg;
    int nomem;        /* it means out of memory (TX_ERR_NOMEM), not a failed check */
} emit_error;

/* Emits C for G for target T into OUT: the runtime declarations, one
   kernel function per loop nest, and the program function that runs the
   kernels, BLAS and LAPACK calls in order. Returns 0, or -1 on out of
   memory. The error table of the generated code (codes from 1) is stored
   in *ERRS and *NERRS, in G's arena. */
int emit_c(graph *g, const tx_target *T, const emit_options *o, tx_buf *out, emit_error **errs, int *nerrs);
/* Emits the header declaring the standalone function (TX_ENTRY_NAMED). */
int emit_header(graph *g, const tx_target *T, const emit_options *o, tx_buf *out);
/* Can S name the generated C function? A C identifier that is no keyword,
   nothing the included headers declare, and not in our tx_ namespace. */
int emit_name_ok(const char *s);
/* Appends the mangled C identifier for .tx name NAME with PREFIX to OUT:
   PREFIX, then NAME with '_' doubled and every byte outside [A-Za-z0-9]
   written as _xx (hex). Injective: distinct names never collide. */
void mangle_name(tx_buf *out, const char *prefix, const char *name);

/* ---- mpi_plan.c ---- */
/* Appends to OUT, as '#' comment lines, what the MPI target does with each
   call of G on P ranks (pdgemm, ScaLAPACK or local on every rank) and the
   words each rank receives for it (a model; txc graph --target mpi). */
void mpi_plan_print(const graph *g, int p, tx_buf *out);
/* Distributed storage on the MPI target (mpi_plan.c): whether computed
   value V, or tmp/let variable VAR, may be held by rows of its leading
   modes (two modes or more, any element type); whether V's loop nest, its
   first loop over label R (the first of its result's leading modes,
   fused, emit_kernel.c), writes its result by those rows and can run on
   rows (then it runs on each rank's rows alone); whether BLAS
   call V is a GEMM of whole tensors, no batch or loop (the runtime then
   takes distributed operands as they are). */
int mpi_plan_rows_value(const g_value *v);
int mpi_plan_rows_var(const sema_program *S, int var);
/* For such a value V, or variable VAR: the most leading modes one of its
   rows may span (1: its first mode; more for a tensor whose first mode
   has too few indices for the ranks, runtime/mpi.inc tx_mpi_lead_rows
   picking how many at run time): all but the last, and never more than
   the row labels of a GEMM of whole tensors that reads or writes it;
   0 when it is never distributed. */
int mpi_plan_lead_value(const graph *g, const g_value *v);
int mpi_plan_lead_var(const graph *g, int var);
int mpi_plan_rows_kernel(const graph *g, const g_value *v, int R);
/* The reads of variable VAR (VAL NULL) or value VAL in V's loop nest
   (through the values fused into it): the labels of each one's modes (-1
   a fixed index) into LAB[r * TX_MAX_MODES + m]; how many (at most MAX),
   or -1 when there are more or one is not a view the runtime can follow
   (then the nest takes the tensor whole). */
int mpi_plan_reads(const g_value *v, int var, const g_value *val, int *lab, int max);
/* For a tensor that may be distributed: the mode D >= 1 if every read of
   it in V's nest is at row R of its first mode or has R in mode D (one D
   for all reads),
   and V does not write it: each rank then needs only the part of mode D
   in its range, which tx_mpi_cross moves (all-to-all) instead of
   gathering the whole tensor. 0 otherwise. */
int mpi_plan_rows_cross(const g_value *v, int R, int var, const g_value *val);
/* Whether V is the sum of every element of one tensor that may be
   distributed (then partial sums per rank and one exchange). */
int mpi_plan_rows_sum(const graph *g, const g_value *v);
int mpi_plan_gemm_direct(const graph *g, const g_value *v);
/* Whether matrix function V takes inputs that may be distributed as they
   are (the runtime moves them to the grid by pdgemr2d and pdtran, or
   gathers them for a call too small for the grid): f64 cholesky, inv,
   solve, eigh, qr and svd; the others are gathered around the call. */
int mpi_plan_la_rows(const g_value *v);
/* Whether BLAS call V is an f64 dot that, on a DISTRIBUTED target, takes
   operands that may be distributed as they are (tx_mpi_ddot: partial dots
   and one exchange). */
int mpi_plan_dot_rows(int distributed, const g_value *v);

/* ---- jit.c, jit_cc.c: loaders, which compile generated C and load it here ---- */
typedef int (*jit_entry)(void *const *args);
/* Code compiled and loaded in this process, whichever loader made it. */
typedef struct jit_module {
    jit_entry entry;                        /* the generated tx_entry */
    void (*release)(struct jit_module *);   /* frees the code and the module */
    void *handle;                           /* the loader's: a TCCState, a dlopen handle */
    const char *backend;                    /* "tcc" or "cc" */
    char detail[512];                       /* how it was made (tx_backend(3)) */
} jit_module;
/* Compiles C source SRC (LEN bytes) in memory with libtcc, registering
   the runtime symbols generated code uses (TX_SYMBOLS_REGISTERED).
   Returns TX_OK with the module in *OUT; TX_ERR_NOMEM when the memory
   libtcc needs is not there (libtcc is then not called), TX_ERR_JIT when
   libtcc refuses the code; a message in ERR. */
int jit_tcc_load(const char *src, size_t len, jit_module **out, tx_buf *err);
/* Compiles C source SRC (LEN bytes, TX_SYMBOLS_TABLE) with the system
   compiler ($TX_CC, else $CC, else cc; -O3 -march=native) into a shared
   object cached on disk ($XDG_CACHE_HOME/tensorexpr, else
   ~/.cache/tensorexpr; named by a hash of the source, the compiler and
   the flags), loads it and fills in its runtime table. A cached object
   is used without compiling; one that does not load or is not the one
   its name promises is rebuilt. Returns TX_OK with the module in *OUT,
   or TX_ERR_JIT (no compiler, the compilation failed, the object did not
   load) or TX_ERR_NOMEM with a message in ERR. Safe for several threads
   and processes at once. */
int jit_cc_load(const char *src, size_t len, jit_module **out, tx_buf *err);
/* The module's entry point tx_entry. */
jit_entry jit_entry_point(jit_module *m);
/* Frees the module and its code. NULL is a no-op. */
void jit_free(jit_module *m);

/* ---- pipeline.c: lowering → passes → C → JIT, driven from one place ---- */
/* How far a compilation goes. */
typedef enum {
    PIPE_GRAPH = 1, /* the optimised graph */
    PIPE_HEADER,    /* ... and the header of the target's C (TX_ENTRY_NAMED) */
    PIPE_C,         /* ... and the target's C source */
    PIPE_JIT        /* ... and that source compiled and loaded by the target's loader
                       (target_jit_tcc: libtcc; target_jit_cc: the system compiler,
                       else libtcc) */
} pipe_output;

/* Every option of a compilation. */
typedef struct {
    pipe_output output;
    const tx_target *target;    /* what the code is for, also when only the graph
                                   is wanted: its BLAS/LAPACK permission holds for
                                   the passes too (never NULL) */
    int opt_level;              /* 0: no pass; 1: the passes that need no sizes
                                   (cse, fold, dce, fuse); 2: every pass */
    const int64_t *dim_values;  /* per symbolic dim, -1 if unknown; NULL: none known
                                   (the cost model's estimates; specialised targets
                                   need every one) */
    const double *map_density;  /* per sparse map: entries / dense size; NULL: estimated */
    const int64_t *const *var_strides; /* PIPE_JIT: per variable, the strides its array is
                                   bound with (emit_options.var_strides); NULL: row-major */
    int *var_contiguous;        /* with var_strides: per variable, set to 1 where it must
                                   be row-major after all (then r->restage, and no code) */
    const char *dump_after;     /* NULL, a stage name (pipeline_stage_name) or
                                   "all": the listing after that stage, or after
                                   each, goes to DUMP under a line "# after ...";
                                   one named stage also ends the compilation there */
    int dump_dot;               /* the listings as Graphviz */
    tx_buf *dump;
    const char *fn_name;        /* emission: the C function's name (TX_ENTRY_NAMED) */
    int timing;                 /* emission: record statement times (TX_ENTRY_ARGV) */
} pipeline_options;

/* What a compilation made. Its buffers and module are the caller's to
   free, also after an internal error longjmped out of pipeline_run. */
typedef struct {
    graph *g;              /* the graph as far as the compilation went (in its arena) */
    tx_diag diag;          /* a failure's diagnostics or message (diag.out) */
    tx_buf c;              /* from PIPE_HEADER on: the text */
    emit_error *errs;      /* from PIPE_C on: the generated code's error table (arena) */
    int nerrs;
    size_t workspace;      /* PIPE_JIT: bytes of intermediates the code takes */
    emit_call *calls;      /* from PIPE_C on: the program's calls, in order (arena) */
    int ncalls;
    jit_module *jit;       /* PIPE_JIT: the compiled code (jit_free) */
    int restage;           /* PIPE_JIT with var_strides: the emitter set var_contiguous
                              entries; no code was compiled: run again with those
                              variables row-major */
} pipeline_result;

/* Compiles checked program S in arena A as O asks: lowers, runs the passes
   of O's level with graph_check after lowering and after each pass, then
   emits and JIT-compiles as far as O->output. Returns TX_OK; or, with a
   message in R->diag.out: TX_ERR_COMPILE (a limit of lowering; LAPACK
   calls for a target without BLAS), TX_ERR_ARG (O->dump_after names no
   stage, or one that does not run at this level), TX_ERR_JIT (the
   loader refused the code, and so did its fallback's), TX_ERR_NOMEM. A graph that fails its check is an
   internal error (tx_assert_fail), and so is the testing hook: the
   environment variable TX_DEBUG_FAIL_AFTER_PASS naming a stage that runs. */
int pipeline_run(sema_program *S, tx_arena *a, const pipeline_options *o, pipeline_result *r);
/* Frees R's buffers and module (not the arena) and zeroes it. */
void pipeline_result_free(pipeline_result *r);
/* The name of stage I (0: "lower", then the passes in order), NULL past
   the last. */
const char *pipeline_stage_name(int i);


#endif /* TX_H */
