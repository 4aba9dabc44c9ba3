/*
 * check_emit.c — suite "emit": emit_c (src/emit_*.c) for each target: no
 * .tx name reaches the C source unmangled, the C compiles, every loop nest
 * is a kernel of its own, each target gets the declarations it needs and
 * no others, and every runtime symbol comes from runtime/symbols.def.
 */
#include <math.h>
#include <unistd.h>

#include "unit.h"
#include "runtime.h"
#include "emit.h"

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

/* The C that the pipeline emits for TEXT for target T at LEVEL, every dim
   known (5, 6, 7, 8, ...); at least MIN_ERRS run-time errors in its table. */
static char *emit_with(const char *text, const tx_target *T, int level, int min_errs)
{
    pipe_t p;
    pipe_ok(&p, text, UPTO_SEMA);
    int64_t dims[8] = {5, 6, 7, 8, 5, 6, 7, 8};
    pipeline_options o = {.output = PIPE_C, .target = T, .opt_level = level, .dim_values = dims,
                          .fn_name = "prog"};
    pipeline_result r;
    ck_assert_msg(pipeline_run(p.S, p.a, &o, &r) == TX_OK, "%s", r.diag.out.p ? r.diag.out.p : "");
    ck_assert_ptr_nonnull(r.c.p);
    ck_assert_int_ge(r.nerrs, min_errs);
    char *s = strdup(r.c.p);
    pipeline_result_free(&r);
    pipe_free(&p);
    return s;
}

static char *emit_for(const char *text, const tx_target *T, int level)
{
    return emit_with(text, T, level, 0);
}

static char *emit_program(const char *text, int jit)
{
    return emit_with(text, jit ? &target_jit_tcc : &target_c99_blas, 2, 1);
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


/* Programs with every kind of loop nest: fused elementwise chains,
   reductions, scans, a permuting store, a slice, a sparse map. */
static const char *kernel_programs[] = {
    "in X[n,m];\nout P[n,m], s[n];\n"
    "let mx(\"i\") = reduce(max, X(\"i,j\"));\n"
    "P(\"i,j\") = exp(X(\"i,j\") - mx(\"i\"));\n"
    "s(\"i\") = P(\"i,j\");\n",
    "in A[n,m];\nout B[m,n], c[n,m];\nB(\"j,i\") = A(\"i,j\") * 2;\nc(\"i,j\") = scan(+, A(\"i,j\"), \"j\");\n",
    "in A[n,n];\nout B[2,2];\nB(\"i,j\") = slice(A(\"i,j\"), [1, 1], [3, 3]);\n",
    "in A[n,m], x[m];\nsparse L : \"i\" -> \"j\";\nout y[n];\ny(\"i\") = A(\"i,j\") * x(\"j\");\n",
    "in A[n,m], X[a,b,d];\nout c[m], M[a,d], p[m];\nc(\"j\") = A(\"i,j\");\nM(\"i,k\") = X(\"i,j,k\");\n"
    "p(\"j\") = reduce(*, A(\"i,j\"));\n",
};

/* The text of the function starting at SIG in C (up to its closing
   brace at the start of a line). */
static char *function_text(const char *c, const char *sig)
{
    const char *a = strstr(c, sig);
    ck_assert_msg(a != NULL, "no '%s' in:\n%.3000s", sig, c);
    const char *b = strstr(a, "\n}\n");
    ck_assert_ptr_nonnull(b);
    return strndup(a, (size_t)(b - a + 3));
}

static int count_of(const char *s, const char *w)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, w)) != NULL; p += strlen(w))
        n++;
    return n;
}

START_TEST(emit_loop_nests_are_kernels)
{
    const tx_target *targets[] = {&target_jit_tcc, &target_jit_cc, &target_c99_blas, &target_c99};
    for (size_t t = 0; t < sizeof targets / sizeof *targets; t++)
        for (size_t i = 0; i < sizeof kernel_programs / sizeof *kernel_programs; i++) {
            char *c = emit_for(kernel_programs[i], targets[t], 2);
            char *prog = function_text(c, targets[t]->entry == TX_ENTRY_ARGV ? "int tx_entry(" : "int prog(");
            /* the program function sequences kernels: it has no loop of its own */
            ck_assert_msg(strstr(prog, "for (") == NULL, "target %s, program %zu: a loop in the program function:\n%.3000s",
                          targets[t]->name, i, c);
            int nk = count_of(c, "static int tx_k");
            ck_assert_msg(nk >= 1, "no kernel in:\n%.3000s", c);
            /* each called once, from the program or from its row group's kernel */
            ck_assert_int_eq(count_of(prog, "(&tx_k, 0, ") + count_of(c, "(&tx_a->tx_a"), nk);
            /* each kernel loads exactly the members of its record */
            for (int k = 0; k < nk; k++) {
                char sig[64], rec[64];
                snprintf(sig, sizeof sig, "static int tx_k%d(", k);
                snprintf(rec, sizeof rec, "} tx_k%d_args;", k);
                char *fn = function_text(c, sig);
                const char *end = strstr(c, rec);
                ck_assert_ptr_nonnull(end);
                const char *start = end;
                while (start > c && strncmp(start, "typedef struct {", 16) != 0)
                    start--;
                int fields = 0;
                for (const char *p = start; p < end; p++)
                    fields += *p == ';';
                if (strstr(fn, "tx_a->tx_tile")) /* a row group: a record of its kernels' records, and the tile */
                    ck_assert_int_eq(count_of(fn, "(&tx_a->tx_a") + count_of(fn, "(&tx_c"), fields - 1);
                else
                    ck_assert_int_eq(count_of(fn, " = tx_a->"), fields);
                /* a loop, or rows handed whole to a primitive (tx_p_red_rows,
                   tx_p_scan, a copy's tx_p_copy_rows_f64) */
                ck_assert_msg(strstr(fn, "for (") || strstr(fn, "tx_p_red_rows(tx_r1 - tx_r0, ") ||
                                  strstr(fn, "tx_p_scan(tx_r1 - tx_r0, ") ||
                                  strstr(fn, "tx_p_copy_rows_f64(tx_r1 - tx_r0, "),
                              "kernel %d:\n%s", k, fn);
                free(fn);
            }
            free(prog);
            free(c);
        }
}
END_TEST

/* Whether a kernel runs on threads weighs its iterations by the
   functions they compute (emit_kernel.c's iteration_weight): 64x256
   tanhs or powers 2.5 (16384 iterations of weight 9) go to the pool,
   the same number of products and sums (weight 1, x^3 included), or
   2x256 tanhs, do not; the OpenMP
   test at run time carries the same weights. */
START_TEST(emit_threads_weigh_functions)
{
#define WEIGH_PROG(N, EXPR) "dim n = " N ", m = 256;\nin X[n,m], b[m];\nout Y[n,m];\nY(\"i,j\") = " EXPR ";\n"
    static const struct {
        const char *text;
        int pool;
        const char *omp_work;
    } cases[] = {
        {WEIGH_PROG("64", "tanh(X(\"i,j\") + b(\"j\"))"), 1, "(0.0 + 9.0 * "},
        {WEIGH_PROG("64", "exp(X(\"i,j\")) * sin(X(\"i,j\"))"), 1, "(0.0 + 17.0 * "},
        {WEIGH_PROG("64", "X(\"i,j\") * 2 + b(\"j\")"), 0, "(0.0 + 1.0 * "},
        {WEIGH_PROG("2", "tanh(X(\"i,j\") + b(\"j\"))"), 0, NULL},
        {WEIGH_PROG("64", "X(\"i,j\")^3 + b(\"j\")^0.5"), 0, "(0.0 + 1.0 * "}, /* products, a hoisted root */
        {WEIGH_PROG("64", "X(\"i,j\")^2.5"), 1, "(0.0 + 9.0 * "},
    };
#undef WEIGH_PROG
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].text, &target_jit_tcc, 2);
        ck_assert_msg((strstr(c, "tx_rt_parallel") != NULL) == cases[i].pool, "case %zu: pool %d in:\n%.4000s", i,
                      cases[i].pool, c);
        free(c);
        if (cases[i].omp_work) {
            c = emit_for(cases[i].text, &target_c99, 2);
            ck_assert_msg(strstr(c, cases[i].omp_work) != NULL, "case %zu: no '%s' in:\n%.4000s", i,
                          cases[i].omp_work, c);
            free(c);
        }
    }
}
END_TEST

/* The rule of powers computed by products, which every emitter of powers
   and the threads' weights share: integers from -8 to 8 only, an exponent
   outside int's range (or NaN) answered without converting it to int. */
START_TEST(emit_pow_products_rule)
{
    static const double yes[] = {0, 1, -1, 2, 3, 8, -8};
    static const double no[] = {0.5, 2.5, -0.25, 9, -9, 1e300, -1e300, 3e9, -3e9, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        ck_assert_msg(emit_pow_by_products(yes[i]), "%g", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        ck_assert_msg(!emit_pow_by_products(no[i]), "%g", no[i]);
}
END_TEST

/* A row softmax whose result P is declared IO ("out" or "inout"). */
#define SOFTMAX_ROWS(IO)                                                      \
    "in X[n,m];\n" IO " P[n,m];\n"                                            \
    "let E(\"i,j\") = exp(X(\"i,j\") - reduce(max, X(\"i,k\")));\n"             \
    "P(\"i,j\") = E(\"i,j\") / reduce(+, E(\"i,k\"));\n"

static const tx_target *const row_targets[] = {&target_jit_tcc, &target_jit_cc, &target_c99_blas, &target_c99};

START_TEST(emit_row_alias)
{
    /* the softmax with an out P: E's rows are kept in P's (pass_fuse.c),
       so no kernel addresses E, none is row-local, and the exp, the sum
       and the quotient address P at its own rows; with P inout, or a
       second reader of E after P's store, E keeps its own memory */
    for (size_t t = 0; t < sizeof row_targets / sizeof *row_targets; t++) {
        char *c = emit_for(SOFTMAX_ROWS("out"), row_targets[t], 2);
        ck_assert_int_eq(count_of(c, "static int tx_k"), 5);
        ck_assert_int_eq(count_of(c, "t_E["), 0);
        ck_assert_int_eq(count_of(c, ".tx_rbase = tx_lo;"), 0);
        for (int k = 1; k < 4; k++) {
            char name[32];
            snprintf(name, sizeof name, "static int tx_k%d(", k);
            char *fn = function_text(c, name);
            ck_assert_msg(count_of(fn, "t_P[(l_i)*") >= 1, "target %s, kernel %d:\n%s", row_targets[t]->name, k,
                          fn);
            free(fn);
        }
        free(c);
    }
    /* a later reader of E that is itself such a store: E lives in its output */
    char *c = emit_for("in X[n,m];\nout P[n,m], Q[n,m];\n"
                       "let E(\"i,j\") = exp(X(\"i,j\") - reduce(max, X(\"i,k\")));\n"
                       "P(\"i,j\") = E(\"i,j\") / reduce(+, E(\"i,k\"));\nQ(\"i,j\") = E(\"i,j\") * 2;\n",
                       &target_c99, 2);
    ck_assert_msg(count_of(c, "t_E[") == 0 && count_of(c, "t_Q[(l_i)*") >= 3, "%s", c);
    free(c);
    const char *kept[] = {
        SOFTMAX_ROWS("inout"),
        "in X[n,m];\nout P[n,m];\n" /* P's store reads E at another element of the row */
        "let E(\"i,j\") = exp(X(\"i,j\") - reduce(max, X(\"i,k\")));\n"
        "P(\"i,j\") = E(\"i,j\") / reduce(+, E(\"i,k\")) + E(\"i,0\");\n",
    };
    for (size_t i = 0; i < sizeof kept / sizeof *kept; i++) {
        c = emit_for(kept[i], &target_c99, 2);
        ck_assert_msg(count_of(c, "t_E[") >= 1, "program %zu:\n%s", i, c);
        free(c);
    }
}
END_TEST

START_TEST(emit_row_groups)
{
    /* a row softmax: max, exp, sum and divide are one row group, one
       kernel calling the four in order over each tile of rows, called
       once from the program over the rows; E is row-local (pass_fuse.c):
       the three kernels that write and read it get a copy of their record
       saying where this call's tile rows lie (tx_rbase), and address it
       at l_i + tx_rs (P is inout here: an out P would hold E's rows,
       emit_row_alias below) */
    const tx_target *const *targets = row_targets;
    for (size_t t = 0; t < sizeof row_targets / sizeof *row_targets; t++) {
        char *c = emit_for(SOFTMAX_ROWS("inout"), targets[t], 2);
        ck_assert_int_eq(count_of(c, "static int tx_k"), 5);
        char *grp = function_text(c, "static int tx_k4(");
        const char *at = grp;
        for (int k = 0; k < 4; k++) { /* in statement order, each once */
            char call[64];
            if (k == 0)
                snprintf(call, sizeof call, "tx_k%d(&tx_a->tx_a%d, tx_r, tx_re)", k, k);
            else
                snprintf(call, sizeof call, "tx_k%d(&tx_c%d, tx_r, tx_re)", k, k);
            at = strstr(at, call);
            ck_assert_msg(at != NULL, "target %s: no %s in order in:\n%s", targets[t]->name, call, grp);
        }
        ck_assert_int_eq(count_of(grp, ".tx_rbase = tx_lo;"), 3);
        for (int k = 0; k < 4; k++) {
            char name[32];
            snprintf(name, sizeof name, "static int tx_k%d(", k);
            char *fn = function_text(c, name);
            /* the sum (kernel 2) is one tx_p_red_rows over the tile's rows
               of E: E's row at the tile's first row and at the next (the
               step between rows) */
            int want = k == 0 ? 0 : k == 2 ? 2 : 1;
            ck_assert_int_eq(count_of(fn, "t_E[((l_i + tx_rs))"), want);
            free(fn);
        }
        char *prog = function_text(c, targets[t]->entry == TX_ENTRY_ARGV ? "int tx_entry(" : "int prog(");
        ck_assert_int_eq(count_of(prog, "(&tx_k, 0, "), 1);
        ck_assert_ptr_nonnull(strstr(prog, "tx_k4_args tx_k = {{"));
        free(prog);
        free(grp);
        free(c);
    }
}
END_TEST

START_TEST(emit_triangular_solve)
{
    /* solve() with a cholesky factor, or its (conjugate) transpose through a
       let, or qr's R (the gradient of qr solves with it), is one triangular
       solve (tx_la_trsolve, the 1 for upper); any
       other matrix, and a factor updated after it was stored, take LU */
    static const struct {
        const char *src, *want;
    } cases[] = {
        {"in A[n,n], b[n];\nout x[n];\nlet L(\"i,j\") = cholesky(A(\"i,j\"));\nx(\"j\") = solve(L(\"i,j\"), b(\"i\"));\n",
         "tx_la_trsolve_d(5, 1, 0, "},
        {"in A[n,n], b[n];\nout x[n];\nlet L(\"i,j\") = cholesky(A(\"i,j\"));\nlet U(\"i,j\") = L(\"j,i\");\n"
         "x(\"j\") = solve(U(\"i,j\"), b(\"i\"));\n", "tx_la_trsolve_d(5, 1, 1, "},
        {"in c128 A[n,n], b[n];\nout c128 x[n];\nlet L(\"i,j\") = cholesky(A(\"i,j\"));\n"
         "let U(\"i,j\") = conj(L(\"j,i\"));\nx(\"j\") = solve(U(\"i,j\"), b(\"i\"));\n", "tx_la_trsolve_z(5, 1, 1, "},
        {"in A[n,n];\ntmp Q[n,n], R[n,n];\nout s, g[n,n];\n(Q(\"i,k\"), R(\"k,j\")) = qr(A(\"i,j\"));\n"
         "s = R(\"i,i\")^2;\ng(\"i,j\") = grad(s, A(\"i,j\"));\n", "tx_la_trsolve_d(5, 5, 1, "},
        {"in A[n,n], b[n];\nout x[n];\nx(\"j\") = solve(A(\"i,j\"), b(\"i\"));\n", "tx_la_solve_d("},
        {"in A[n,n], b[n];\nout x[n];\ntmp L[n,n];\nL(\"i,j\") = cholesky(A(\"i,j\"));\nL(\"i,j\") += A(\"i,j\");\n"
         "x(\"j\") = solve(L(\"i,j\"), b(\"i\"));\n", "tx_la_solve_d("},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].src, &target_jit_tcc, 2);
        ck_assert_msg(strstr(c, cases[i].want) != NULL, "case %zu: no %s in the emitted C", i, cases[i].want);
        free(c);
    }
}
END_TEST

START_TEST(emit_streamed_stores)
{
    /* an elementwise '=' into an out or inout tensor may stream (a flag
       decided when the code runs, and the kernel's fence): where its top
       operation writes the target, with the streaming note set around
       that call (1), else through the scratch block and tx_p_stream_f64
       or tx_pf_stream (2: the statement reads its target); a let's
       buffer, a '+=' and an output whose memory holds a row group's
       row-local rows (the softmax's) do not (0). Where rows are short
       (these dims are 5 to 8), the flat blocks of whole rows stream
       each block's span, from its scratch block (tx_fd). */
    static const struct {
        const char *src;
        int streams;
    } cases[] = {
        {"in X[n,m];\nout Y[n,m];\nY(\"i,j\") = X(\"i,j\")^3;\n", 1},
        {"in f32 X[n,m];\nout f32 Y[n,m];\nY(\"i,j\") = max(X(\"i,j\"), 0.0);\n", 1},
        {"in X[n,m];\ninout Y[n,m];\nY(\"i,j\") = Y(\"i,j\") * 0.5 + X(\"i,j\");\n", 2},
        {"in X[n,m];\ninout Y[n,m];\nY(\"i,j\") += X(\"i,j\")^3;\n", 0},
        {"in X[n,n];\nout s;\nlet T(\"i,j\") = exp(X(\"i,j\"));\ns = T(\"i,j\") * T(\"j,i\");\n", 0},
        {"in X[n,m];\nout P[n,m];\nlet E(\"i,j\") = exp(X(\"i,j\") - reduce(max, X(\"i,k\")));\n"
         "P(\"i,j\") = E(\"i,j\") / reduce(+, E(\"i,k\"));\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].src, &target_jit_tcc, 2);
        /* (a flat block of short rows streams its span whole: tx_fd) */
        int flat = count_of(c, "tx_p_stream_f64(tx_bn, (tx_blk + 0 * TX_BLOCK), tx_fd);");
        int copies = count_of(c, "tx_p_stream_f64(tx_bn") - flat > 0 || strstr(c, "tx_pf_stream(tx_bn") != NULL;
        ck_assert_msg(flat == (strstr(c, "tx_fs == ") != NULL && cases[i].streams > 0), "case %zu: flat %d", i, flat);
        int noted = count_of(c, "tx_p_nt_note(tx_p0, tx_bn * ") + count_of(c, "tx_p_nt_note(tx_q0, tx_bn * ");
        ck_assert_msg(noted == count_of(c, "tx_p_nt_note(0, 0);"), "case %zu: every note is cleared", i);
        int streams = noted ? 1 : copies ? 2 : 0;
        ck_assert_msg(streams == cases[i].streams && !(noted && copies), "case %zu: streams %d", i, streams);
        ck_assert_msg((strstr(c, ">= (double)TX_STREAM_BYTES;") != NULL) == (cases[i].streams > 0), "case %zu", i);
        ck_assert_msg((strstr(c, "tx_p_stream_fence();") != NULL) == (cases[i].streams > 0), "case %zu", i);
        free(c);
    }
}
END_TEST

START_TEST(emit_streamed_multi_step)
{
    /* a top operation of several steps into a target that may stream:
       only its last step writes the target, while the note is set; the
       steps before it go to a scratch block (each later step read back
       from memory what the one before had streamed there). A + B * C is
       one step (tx_p_mul_add). */
    static const char *const srcs[] = {
        "in A[n,m], B[n,m], C[n,m];\nout Y[n,m];\nY(\"i,j\") = A(\"i,j\") + B(\"i,j\") - C(\"i,j\");\n",
        "in A[n,m], B[n,m];\nout Y[n,m];\nY(\"i,j\") = 0.5 * A(\"i,j\") * B(\"i,j\");\n",
        "in A[n,m], B[n,m], C[n,m];\nout Y[n,m];\nY(\"i,j\") = A(\"i,j\") + B(\"i,j\") * C(\"i,j\");\n",
        "in A[n,m], B[n,m], C[n,m], D[n,m];\nout Y[n,m];\n"
        "Y(\"i,j\") = A(\"i,j\") - B(\"i,j\") + C(\"i,j\") * 2 + D(\"i,j\");\n",
        "in A[n,m], B[n,m];\nout Y[n,m];\nY(\"i,j\") = 3 / A(\"i,j\") * B(\"i,j\");\n",
        "in X[n,m];\nout Y[n,m];\n"
        "Y(\"i,j\") = 0.5 * X(\"i,j\") * (1 + tanh(0.79788 * (X(\"i,j\") + 0.044715 * X(\"i,j\")^3)));\n",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof *srcs; i++) {
        char *c = emit_for(srcs[i], &target_jit_tcc, 2);
        const char *note = strstr(c, "tx_p_nt_note(tx_p");
        ck_assert_msg(note != NULL, "case %zu: the target streams in place:\n%s", i, c);
        char name[32];
        ck_assert_int_eq(sscanf(note, "tx_p_nt_note(%31[^,]", name), 1);
        const char *from = strchr(note, ';'), *end = strstr(from, "tx_p_nt_note(0, 0);");
        ck_assert_ptr_nonnull(end);
        char *region = strndup(from, (size_t)(end - from));
        ck_assert_msg(count_of(region, name) == 1, "case %zu: %s read or written more than once:\n%s", i, name, region);
        free(region);
        free(c);
    }
}
END_TEST

START_TEST(emit_pairwise_squares)
{
    /* a sum over k, known to be 16 or more, of the square of a sum of two
       tensors at unit stride along k, stepping along the result's last
       label: one tx_p_red_sq_aff_rows call for the rows (the other
       term's stride 0 where it does not step); under 16, or unknown, the
       nest as before */
    static const struct {
        const char *src;
        int rows;
    } cases[] = {
        {"dim d = 64;\nin P[n,d], Q[m,d];\nout D[n,m];\nD(\"i,j\") = (P(\"i,k\") - Q(\"j,k\"))^2;\n", 1},
        {"dim d = 40;\nin X[n,d], Y[n,d];\nout e[n];\ne(\"i\") = (X(\"i,k\") - 2 * Y(\"i,k\"))^2;\n", 1},
        {"dim d = 10;\nin P[n,d], Q[m,d];\nout D[n,m];\nD(\"i,j\") = (P(\"i,k\") - Q(\"j,k\"))^2;\n", 0},
        {"in P[n,d], Q[m,d];\nout D[n,m];\nD(\"i,j\") = (P(\"i,k\") - Q(\"j,k\"))^2;\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].src, &target_jit_tcc, 2);
        const char *t = strstr(c, "tx_p_red_sq_aff_rows(tx_r1 - tx_r0, ");
        ck_assert_msg((t != NULL) == cases[i].rows, "case %zu:\n%s", i, c);
        ck_assert_msg(!t || strstr(c, "tx_acc = tx_p_red_sq_aff(") == NULL, "case %zu: a call a pair as well", i);
        free(c);
    }
}
END_TEST

START_TEST(emit_flat_transposed)
{
    /* short rows (under 64, known) with an operand read transposed: flat
       blocks of whole rows, the operand's rows copied in by
       tx_p_tile_next_f64, the next plane asked for along the label of
       the loop around (its stride; 0 where there is none), no panels */
    static const struct {
        const char *src, *next;
    } cases[] = {
        {"in T[a,b,o,o];\nout R[a,b,o,o];\nR(\"a,b,i,j\") = T(\"a,b,i,j\") - T(\"a,b,j,i\");\n", "(7*7)"},
        {"in A[n,m], B[m,n];\nout Y[n,m];\nY(\"i,j\") = A(\"i,j\") + B(\"j,i\");\n", "0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].src, &target_jit_tcc, 2);
        const char *t = strstr(c, "tx_p_tile_next_f64(tx_rn, ");
        ck_assert_msg(t != NULL, "case %zu:\n%s", i, c);
        char want[64];
        snprintf(want, sizeof want, ", %s, (tx_blk + 0 * TX_BLOCK)", cases[i].next);
        const char *e = strchr(t, ';');
        ck_assert_msg(e && strstr(t, want) && strstr(t, want) < e, "case %zu: %.*s", i, (int)(e ? e - t : 40), t);
        ck_assert_msg(strstr(c, "tx_it += 8") == NULL, "case %zu: panels", i);
        free(c);
    }
    /* a permuting copy of such planes, large enough to stream: the same
       flat blocks; smaller, tiles (emit_dense.c copy_tiled) */
    for (int big = 0; big < 2; big++) {
        char src[160];
        snprintf(src, sizeof src, "dim v = %d, o = 21;\nin T[v,v,o,o];\nout R[v,v,o,o];\nR(\"a,b,i,j\") = T(\"b,a,j,i\");\n",
                 big ? 100 : 20);
        char *c = emit_for(src, &target_jit_tcc, 2);
        ck_assert_msg((strstr(c, "tx_p_tile_next_f64(tx_rn, 21, ") != NULL) == big, "big %d:\n%s", big, c);
        ck_assert_msg((strstr(c, "copy in tiles") != NULL) == !big, "big %d", big);
        free(c);
    }
}
END_TEST

START_TEST(emit_f32_blocks)
{
    /* f32 values stored as f32 (tx(5) ELEMENT TYPES: every operation
       rounded to float): float blocks (tx_pf_*, one pass per operation,
       or one tx_p_*_f32 form for a scale and shift), the last writing the
       target itself (no store of a block); an f64 operand: the double
       blocks (tx_p_*), the last writing the target directly (into an f32
       one through its typed form) */
    static const struct {
        const char *src;
        int f32;
    } cases[] = {
        {"in f32 X[n,m];\nout f32 P[n,m];\nP(\"i,j\") = exp(X(\"i,j\") - reduce(max, X(\"i,k\")));\n", 1},
        {"in f32 X[n,m], v[m];\nout f32 P[n,m];\nP(\"i,j\") = X(\"i,j\") / v(\"j\");\n", 1},
        {"in f32 X[n,m], v[m];\nout f32 P[n,m];\nP(\"i,j\") = tanh(X(\"i,j\") + v(\"j\"));\n", 1},
        {"in f32 X[n,m], v[m];\nout f32 P[n,m];\nP(\"i,j\") = X(\"i,j\") * 0.1 - v(\"j\");\n", 1},
        {"in f32 X[n,m];\nin v[m];\nout f32 P[n,m];\nP(\"i,j\") = X(\"i,j\") / v(\"j\");\n", 0},
        {"in f32 X[n,m], v[m];\nout P[n,m];\nP(\"i,j\") = X(\"i,j\") / v(\"j\");\n", 0},
        {"in f32 X[n,m], g[m], b[m];\nout f32 P[n,m];\nP(\"i,j\") = (X(\"i,j\") - 1.5) * g(\"j\") + b(\"j\");\n",
         1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *c = emit_for(cases[i].src, &target_jit_tcc, 2);
        char *k = function_text(c, "static int tx_k0(");
        if (strstr(k, "tx_acc") || strstr(k, "tx_p_redf_rows(")) { /* case 0: the max first */
            free(k);
            k = function_text(c, "static int tx_k1(");
        }
        int pf = strstr(k, "tx_pf_bin(tx_bn") != NULL || strstr(k, "tx_pf_map(tx_bn") != NULL ||
                 strstr(k, "tx_pf_map_bin(tx_bn") != NULL || strstr(k, "tx_p_mul_aff_add_f32(tx_bn") != NULL;
        ck_assert_msg(pf == cases[i].f32, "case %zu:\n%s", i, k);
        /* exp(x - m), tanh(x + v): the function of the sum in one call */
        ck_assert_msg((strstr(k, "tx_pf_map_bin(tx_bn") != NULL) == (i == 0 || i == 2), "case %zu:\n%s", i, k);
        /* X * 0.1 - v: two roundings, two passes */
        ck_assert_int_eq(count_of(k, "tx_pf_bin(tx_bn"), i == 3 ? 2 : i == 1);
        /* (X - c) * g + b: one pass rounding each step (tx_p_mul_aff_add_f32) */
        ck_assert_msg((strstr(k, "tx_p_mul_aff_add_f32(tx_bn") != NULL) == (i == 6), "case %zu:\n%s", i, k);
        ck_assert_msg(strstr(k, "tx_pf_store(tx_bn") == NULL && strstr(k, "tx_p_store_f64(tx_bn") == NULL, "case %zu:\n%s",
                      i, k);
        /* an f64 operand (case 4): the double forms' typed ones write the
           f32 target, reading X as floats, v the double blocks */
        ck_assert_msg(strstr(k, "tx_p_store_f32(tx_bn") == NULL, "case %zu:\n%s", i, k);
        /* (the target, its block noted where the store is large enough to
           stream: tx(5)) */
        ck_assert_msg((strstr(k, "float *tx_p0 = &t_P[") != NULL) == (i == 4), "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "tx_p_nt_note(tx_p0, tx_bn * 4);") != NULL) == (i == 4), "case %zu:\n%s", i, k);
        ck_assert_msg(strstr(k, "_ff(tx_bn") == NULL, "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "tx_p_div_df(tx_bn") != NULL) == (i == 4), "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "float *tx_q0 = &t_P[") != NULL) == cases[i].f32, "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "tx_p_nt_note(tx_q0, tx_bn * 4);") != NULL) == cases[i].f32, "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "double *tx_p0 = &t_P[") != NULL) == (i == 5), "case %zu:\n%s", i, k);
        ck_assert_msg((strstr(k, "tx_p_nt_note(tx_p0, tx_bn * 8);") != NULL) == (i == 5), "case %zu:\n%s", i, k);
        free(k);
        free(c);
    }
}
END_TEST

START_TEST(emit_blocks_compare)
{
    /* comparisons and where() run block by block (tx_p_cmp, tx_p_where),
       not element by element; with a number, the number is not spread
       over a block (tx_p_cmps, tx_p_where_s; 0 < X is X > 0), and where()
       of a comparison with a number is one pass (tx_p_where_cmps) */
    const char *src = "in X[n,m], v[m];\nout R[n,m], M[n,m], W[n,m], Q[n,m], N[n,m];\n"
                      "R(\"i,j\") = where(0 < X(\"i,j\"), X(\"i,j\"), 0);\n"
                      "M(\"i,j\") = (X(\"i,j\") <= v(\"j\")) * 2;\n"
                      "W(\"i,j\") = where(X(\"i,j\") > v(\"j\"), X(\"i,j\"), v(\"j\"));\n"
                      "Q(\"i,j\") = where(X(\"i,j\") > v(\"j\"), 1, X(\"i,j\"));\n"
                      "N(\"i,j\") = (X(\"i,j\") >= 0.5) * 3;\n";
    char *c = emit_for(src, &target_c99, 2);
    ck_assert_msg(strstr(c, "tx_p_where_cmps(tx_bn, 2,") != NULL, "%s", c); /* 0 < X: X > 0 */
    ck_assert_msg(strstr(c, "tx_p_where_s(tx_bn") != NULL, "%s", c);
    ck_assert_msg(strstr(c, "tx_p_cmps(tx_bn, 3,") != NULL, "%s", c);
    ck_assert_msg(strstr(c, "tx_p_where(tx_bn") != NULL, "%s", c);
    ck_assert_msg(strstr(c, "tx_p_cmp(tx_bn, 2,") != NULL, "%s", c); /* > */
    ck_assert_msg(strstr(c, "tx_p_cmp(tx_bn, 1,") != NULL, "%s", c); /* <= */
    ck_assert_msg(strstr(c, "tx_p_fill(tx_bn") == NULL, "%s", c);
    free(c);
}
END_TEST

START_TEST(emit_kernel_ranges)
{
    /* a loop over an output label takes the kernel's range; a scalar
       result or a loop that follows a sparse map does not */
    char *c = emit_for(kernel_programs[0], &target_c99_blas, 2);
    ck_assert_ptr_nonnull(strstr(c, "l_i = tx_lo; l_i < tx_hi; l_i++"));
    ck_assert_ptr_nonnull(strstr(c, "(&tx_k, 0, d_n)"));
    free(c);
    c = emit_for("in x[n];\nout s;\ns = x(\"i\");\n", &target_c99, 2);
    ck_assert_ptr_nonnull(strstr(c, "(&tx_k, 0, 1)"));
    ck_assert_ptr_nonnull(strstr(c, "(void)tx_lo;"));
    free(c);
    c = emit_for(kernel_programs[3], &target_jit_tcc, 2);
    ck_assert_ptr_null(strstr(c, "tx_lo; l_"));
    free(c);
    /* a one-dimensional blocked kernel counts its range in blocks */
    c = emit_for("in x[n];\nout y[n];\ny(\"i\") = exp(x(\"i\")) + 1;\n", &target_jit_tcc, 2);
    ck_assert_ptr_nonnull(strstr(c, "tx_ib = tx_lo; tx_ib < tx_hi"));
    ck_assert_ptr_nonnull(strstr(c, "(&tx_k, 0, (5 + TX_BLOCK - 1) / TX_BLOCK)"));
    free(c);
}
END_TEST

START_TEST(emit_reduce_loop_order)
{
    /* ij->j: the row of j in blocks (the kernel's range over j's
       blocks), each block zeroed, then every row i of A added to the
       range's spans of up to sixteen blocks by one tx_p_add_rows each
       (eight rows per pass); ij->i sums the range's rows of A, j (unit
       stride) innermost, in one tx_p_red_rows */
    char *c = emit_for("in A[n,m];\nout c[m], r[n];\nc(\"j\") = A(\"i,j\");\nr(\"i\") = A(\"i,j\");\n",
                       &target_c99, 2);
    char *k0 = function_text(c, "static int tx_k0(");
    const char *fill = strstr(k0, "tx_p_fill(tx_bn, 0.0, &tx_v");
    const char *row = fill ? strstr(fill, "for (int64_t tx_i = tx_lo * TX_BLOCK; tx_i < (tx_hi * TX_BLOCK < d_m ? "
                                          "tx_hi * TX_BLOCK : d_m); tx_i += 16 * TX_BLOCK) {") : NULL;
    const char *add = row ? strstr(row, "tx_p_add_rows(tx_bn, d_n, &t_A[(l_i)*d_m + l_j], (d_m), &tx_v") : NULL;
    ck_assert_msg(fill && row && add && strstr(row, "const int64_t l_i = 0;") &&
                      !strstr(k0, "for (int64_t l_i = 0; l_i < d_n; l_i++)"),
                  "ij->j not as 'zero the row; for spans of j { row += every row of A[.., j..] }':\n%s", k0);
    ck_assert_ptr_null(strstr(k0, "tx_acc"));
    char *r = NULL;
    for (int k = 1; k < count_of(c, "static int tx_k") && !r; k++) {
        char sig[32];
        snprintf(sig, sizeof sig, "static int tx_k%d(", k);
        char *f = function_text(c, sig);
        if (strstr(f, "tx_r0 = tx_lo, tx_r1 = tx_hi"))
            r = f;
        else
            free(f);
    }
    ck_assert_msg(r && strstr(r, "const int64_t l_i = tx_r0;") &&
                      strstr(r, "tx_p_red_rows(tx_r1 - tx_r0, d_m, 0, tx_s, tx_is, tx_d, tx_id);"),
                  "ij->i not as 'the range's rows summed by tx_p_red_rows':\n%.3000s", c);
    free(r);
    free(k0);
    free(c);
    /* a short row (known extent below a block's worth): scalar, same order */
    c = emit_for("in A[n,m];\nout c[m];\nc(\"j\") = 3 * A(\"i,j\");\n", &target_jit_tcc, 2);
    k0 = function_text(c, "static int tx_k0(");
    const char *outer = strstr(k0, "for (int64_t l_i = 0; l_i < 5; l_i++)");
    ck_assert_msg(outer && strstr(outer, "l_j = tx_lo; l_j < tx_hi; l_j++) {") && strstr(outer, "] += (double)t_A["),
                  "%s", k0);
    free(k0);
    free(c);
}
END_TEST

START_TEST(emit_targets_declare_what_they_use)
{
    const char *mm = "in A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n";
    char *jit = emit_for(mm, &target_jit_tcc, 2);
    char *cb = emit_for(mm, &target_c99_blas, 2);
    char *c0 = emit_for(mm, &target_c99, 2);
    /* the JIT sees no headers: prototypes from the table */
    ck_assert_ptr_null(strstr(jit, "#include"));
    ck_assert_ptr_nonnull(strstr(jit, "void cblas_dgemm(int, int, int"));
    ck_assert_ptr_nonnull(strstr(jit, "int tx_entry(void *const *tx_args)"));
    /* standalone C includes headers and names its function */
    ck_assert_ptr_nonnull(strstr(cb, "#include <cblas.h>"));
    ck_assert_ptr_null(strstr(cb, "void cblas_dgemm(int"));
    ck_assert_ptr_nonnull(strstr(cb, "const char *prog_error(int code)"));
    ck_assert_ptr_null(strstr(cb, "tx_rt_now"));
    /* without BLAS: no CBLAS at all, the product is a kernel */
    ck_assert_ptr_null(strstr(c0, "cblas"));
    ck_assert_ptr_nonnull(strstr(c0, "static int tx_k0("));
    /* a specialised target writes extents in; the others name the dims */
    ck_assert_ptr_null(strstr(jit, "d_n"));
    ck_assert_ptr_nonnull(strstr(cb, "int64_t d_n"));
    free(jit);
    free(cb);
    free(c0);
}
END_TEST

/* Is NAME defined in C (as "NAME(" after a type at the start of a line)? */
static int defined_in(const char *c, const char *name)
{
    char pat[128];
    snprintf(pat, sizeof pat, " %s(", name);
    for (const char *p = c; (p = strstr(p, pat)) != NULL; p++) {
        const char *line = p;
        while (line > c && line[-1] != '\n')
            line--;
        if (strncmp(line, "static ", 7) == 0 || strncmp(line, "int ", 4) == 0 ||
            strncmp(line, "const char *", 12) == 0)
            return 1;
    }
    return 0;
}

/* Is W called somewhere in C (W as a whole identifier, then '(')? */
static int called(const char *c, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = c; (p = strstr(p, w)) != NULL; p++)
        if (p[n] == '(' && (p == c || !id_char(p[-1], 0)))
            return 1;
    return 0;
}

START_TEST(emit_runtime_symbols_from_one_table)
{
    /* every function the JIT code calls is defined in it or registered
       from runtime/symbols.def, and declared from the same table; for the
       cc tier (TX_SYMBOLS_TABLE), a symbol of a group the loader supplies
       is a static pointer that tx_bind_runtime sets by name, and any
       other is defined in the file (pasted) or comes from a header */
    const char *progs[] = {kernel_programs[0], kernel_programs[1], kernel_programs[3],
                           "in A[n,n];\nout L[n,n];\nL(\"i,j\") = cholesky(A(\"i,j\"));\n",
                           "in A[n,k], B[k,m];\nout C[n,m];\nC(\"i,j\") = A(\"i,k\") * B(\"k,j\");\n",
                           "in A[n,m];\nout B[n,m];\nB(\"i,j\") = exp(A(\"i,j\")) * 2 + sqrt(abs(A(\"i,j\")));\n"};
    const tx_target *targets[] = {&target_jit_tcc, &target_jit_cc};
    for (size_t t = 0; t < 2; t++)
    for (size_t i = 0; i < sizeof progs / sizeof *progs; i++) {
        int table = targets[t]->symbols == TX_SYMBOLS_TABLE;
        char *c = emit_for(progs[i], targets[t], 2);
        idlist ids = {0};
        /* cc: what the generated code calls, after the pasted sources */
        const char *gen = table ? strstr(c, "\nint tx_bind_runtime(const void *(*tx_find)(const char *))\n{") : c;
        ck_assert_msg(gen != NULL, "no tx_bind_runtime in:\n%.3000s", c);
        c_identifiers(gen, &ids);
        for (int k = 0; k < ids.n; k++) {
            const char *w = ids.ids[k];
            if (!called(gen, w) || strcmp(w, "sizeof") == 0 || strcmp(w, "if") == 0 || strcmp(w, "for") == 0 ||
                strcmp(w, "while") == 0 || strcmp(w, "return") == 0 || strcmp(w, "TX_LD") == 0 ||
                strcmp(w, "void") == 0 || strcmp(w, "double") == 0 || strcmp(w, "float") == 0 ||
                strcmp(w, "tx_find") == 0)
                continue;
            int registered = 0;
            for (const tx_runtime_symbol *r = tx_runtime_symbols; r->name; r++) {
                if (strcmp(r->name, w) != 0)
                    continue;
                registered = 1;
                if (!table)
                    ck_assert_msg(strstr(c, r->prototype) != NULL, "%s is called but not declared", w);
                else if (tx_symbol_groups[r->group].loaded) {
                    char set[128];
                    snprintf(set, sizeof set, "*(const void **)&%s = tx_find(\"%s\")", w, w);
                    ck_assert_msg(strstr(c, r->pointer) && strstr(c, set), "cc: %s is not a pointer the loader "
                                  "sets:\n%.3000s", w, c);
                } else {
                    const tx_symbol_group *g = &tx_symbol_groups[r->group];
                    ck_assert_msg(g->source ? strstr(c, g->source) != NULL : g->headers && strstr(c, g->headers),
                                  "cc: %s is neither pasted in nor from an included header", w);
                }
            }
            ck_assert_msg(registered || defined_in(c, w), "%s: program %zu calls %s, which is neither defined "
                          "in the file nor in runtime/symbols.def", targets[t]->name, i, w);
        }
        id_free(&ids);
        free(c);
    }
    /* the table's primitives are what the standalone text defines: " NAME("
       or, for NAME and its typed forms NAME_fd, _ff, _df and _f32,
       TX_P_TYPED's " NAME##SFX(" */
    for (const tx_runtime_symbol *r = tx_runtime_symbols; r->name; r++) {
        ck_assert_ptr_nonnull(r->addr);
        char def[128], typed[128];
        size_t len = strlen(r->name);
        int sfx = len > 3 && (!strcmp(r->name + len - 3, "_fd") || !strcmp(r->name + len - 3, "_ff") ||
                              !strcmp(r->name + len - 3, "_df"))
                      ? 3
                  : len > 4 && !strcmp(r->name + len - 4, "_f32") ? 4
                                                                  : 0;
        snprintf(def, sizeof def, " %s(", r->name);
        snprintf(typed, sizeof typed, " %.*s##SFX(", (int)(len - sfx), r->name);
        if (r->group == TXS_PRIM)
            ck_assert_msg(strstr(tx_prims_source, def) != NULL || strstr(tx_prims_source, typed) != NULL,
                          "%s is not in prims.inc", r->name);
    }
}
END_TEST

START_TEST(emit_sparse_decodes_only_what_is_read)
{
    /* y(i) = A(i,j) x(j) over a map i -> j: A's last mode and x are
       addressed with the entry's flat index, so j is never decoded */
    char *c = emit_for(kernel_programs[3], &target_jit_tcc, 2);
    ck_assert_msg(strstr(c, "const int64_t l_j = ") == NULL, "an unread decode:\n%.3000s", c);
    ck_assert_ptr_nonnull(strstr(c, "->targets[tx_e0]"));
    free(c);
    /* here j is read on its own (a scalar per j times a matrix element
       whose last mode is not j): its decode stays */
    c = emit_for("in A[m,n], x[m];\nsparse L : \"i\" -> \"j\";\nout y[n];\ny(\"i\") = A(\"j,i\") * x(\"j\");\n",
                 &target_jit_tcc, 2);
    ck_assert_msg(strstr(c, "const int64_t l_j = ") != NULL, "a read label not decoded:\n%.3000s", c);
    free(c);
}
END_TEST

/* ------------------------------------------------------------------ */

/* The bytes of the JIT workspace of TEXT (every dim constant). */
static size_t workspace_of(const char *text)
{
    pipe_t p;
    pipe_ok(&p, text, UPTO_SEMA);
    pipeline_options o = {.output = PIPE_JIT, .target = &target_jit_tcc, .opt_level = 2};
    pipeline_result r;
    ck_assert_msg(pipeline_run(p.S, p.a, &o, &r) == TX_OK, "%s", r.diag.out.p ? r.diag.out.p : "");
    size_t ws = r.workspace;
    pipeline_result_free(&r);
    pipe_free(&p);
    return ws;
}

/* let and tmp tensors live from their first write to their last read, and
   share memory like intermediates do; a let nothing reads takes none */
START_TEST(emit_complex_on_parts)
{
    /* complex products, sums, scales, conj and quotients of vectors (a
       row group: the range in elements) and of a matrix run through the
       complex block primitives, no arithmetic helper of complex.inc nor
       scalar parts in their kernels (libtcc copies every tx_c128 a helper takes
       or returns with memmove: a product over 1e6 c128 took 14.2 ms
       through tx_c_mul, 5.8 on the parts, 2.0 in blocks); a real value
       inside is a real block made complex; a complex function is
       tx_p_cmap's (exp: 2, as tx_p_map numbers it); a sum of conj(x) * y is zdotc, reading x in
       place */
    const char *src = "dim m = 4096;\nin c128 a[n], b[n], x[m], y[m], Z[n,k]; in r[n,k];\n"
                      "out c128 C[n], D[n], s, W[n,k], X[n,k];\n"
                      "C(\"i\") = a(\"i\") * conj(b(\"i\")) + 2 * a(\"i\");\n"
                      "D(\"i\") = a(\"i\") / b(\"i\");\n"
                      "s = conj(x(\"j\")) * y(\"j\");\n"
                      "W(\"i,j\") = Z(\"i,j\") * a(\"i\") - Z(\"i,j\") / (r(\"i,j\") * r(\"i,j\") - 0.5i);\n"
                      "X(\"i,j\") = exp(Z(\"i,j\")) * 2;\n";
    char *c = emit_for(src, &target_c99_blas, 2);
    for (int k = 0; k < 3; k++) { /* the kernels of statements 1, 2 and 4 */
        char head[32];
        snprintf(head, sizeof head, "of statement %d,", k == 2 ? 4 : k + 1);
        const char *at = strstr(c, head);
        ck_assert_msg(at != NULL, "%s", c);
        char *t = function_text(at, "static int tx_k");
        ck_assert_msg(strstr(t, "tx_c_mul(") == NULL && strstr(t, "tx_c_div(") == NULL && strstr(t, "tx_c_add(") == NULL &&
                          strstr(t, "tx_c_conj(") == NULL && strstr(t, "tx_zr = ") == NULL && strstr(t, "tx_p_c") != NULL,
                      "%s", t);
        free(t);
    }
    ck_assert_msg(strstr(c, "tx_p_cconj(tx_bn, ") && strstr(c, "tx_p_cmul(tx_bn, ") && strstr(c, "tx_p_cdiv(tx_bn, ") &&
                      strstr(c, "tx_p_axpby(2 * tx_bn, 1.0, ") && strstr(c, "tx_p_cfrom(tx_bn, "),
                  "%s", c);
    char *x = function_text(strstr(c, "of statement 5,"), "static int tx_k");
    ck_assert_msg(strstr(x, "tx_p_cmap(tx_bn, 2, 0.0, ") != NULL && strstr(x, "tx_p_cexp(") == NULL, "%s", x);
    free(x);
    ck_assert_msg(strstr(c, "cblas_zdotc_sub(") != NULL, "%s", c);
    free(c);
}
END_TEST

START_TEST(emit_relayout_copy_is_one_store)
{
    /* the TTGT copies of the CCSD ring term (each operand relaid out for
       one GEMM) read each element once and store it: no 1*x+0 through a
       scratch block */
    const char *ring = "dim o = 8, v = 24;\nin A[o,o,v,v], B[o,o,v,v];\nout R[o,o,v,v];\n"
                       "R(\"i,j,a,b\") = A(\"i,k,a,c\") * B(\"k,j,c,b\");\n";
    char *c = emit_program(ring, 1);
    ck_assert_ptr_nonnull(strstr(c, "cblas_dgemm"));
    ck_assert_ptr_null(strstr(c, "tx_p_scale_add(tx_bn"));
    /* (each keeps its last mode last: rows copied as rows, emit_copy_rows) */
    ck_assert_ptr_nonnull(strstr(c, "tx_p_copy_rows_f64(tx_r1 - tx_r0, "));
    free(c);
}
END_TEST

START_TEST(emit_workspace_by_liveness)
{
    /* 16 x 16 doubles: 2048 bytes each. T dies when W is born: 2 blocks */
    const char *chain = "dim n = 16;\nin A[n,n];\nout C[n,n];\n"
                        "let T(\"i,j\") = A(\"i,k\") * A(\"k,j\");\n"
                        "let U(\"i,j\") = T(\"i,k\") * A(\"k,j\");\n"
                        "let W(\"i,j\") = U(\"i,k\") * A(\"k,j\");\n"
                        "let D(\"i,j\") = A(\"i,j\") * 2;\n"
                        "C(\"i,j\") = W(\"i,k\") * A(\"k,j\");\n";
    ck_assert_uint_eq(workspace_of(chain), 2 * 2048);
    /* the same with tmp tensors, one of them written twice: S lives until
       its second write is read, so three blocks */
    const char *tmps = "dim n = 16;\nin A[n,n];\nout C[n,n];\ntmp S[n,n], R[n,n], Q[n,n];\n"
                       "S(\"i,j\") = A(\"i,k\") * A(\"k,j\");\n"
                       "R(\"i,j\") = S(\"i,k\") * A(\"k,j\");\n"
                       "S(\"i,j\") += R(\"i,j\");\n"
                       "Q(\"i,j\") = R(\"i,k\") * A(\"k,j\");\n"
                       "C(\"i,j\") = Q(\"i,k\") * S(\"k,j\");\n";
    ck_assert_uint_eq(workspace_of(tmps), 3 * 2048);
    /* a tensor read through a view (transposed) after other statements:
       T lives beside U; V's GEMM writes C itself (C = V, then C += Tᵀ:
       pass_blas.c split_stored_sum), so V takes no block */
    const char *view = "dim n = 16;\nin A[n,n];\nout C[n,n];\n"
                       "let T(\"i,j\") = A(\"i,k\") * A(\"k,j\");\n"
                       "let U(\"i,j\") = A(\"i,k\") * A(\"j,k\");\n"
                       "let V(\"i,j\") = U(\"i,k\") * U(\"k,j\");\n"
                       "C(\"i,j\") = V(\"i,j\") + T(\"j,i\");\n";
    ck_assert_uint_eq(workspace_of(view), 2 * 2048);
    /* without the split (T read before V is added), three blocks */
    const char *view2 = "dim n = 16;\nin A[n,n];\nout C[n,n];\n"
                        "let T(\"i,j\") = A(\"i,k\") * A(\"k,j\");\n"
                        "let U(\"i,j\") = A(\"i,k\") * A(\"j,k\");\n"
                        "let V(\"i,j\") = U(\"i,k\") * U(\"k,j\");\n"
                        "C(\"i,j\") = V(\"i,j\") * T(\"j,i\");\n";
    ck_assert_uint_eq(workspace_of(view2), 3 * 2048);
}
END_TEST

Suite *suite_emit(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("emit");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, emit_names_never_raw);
    tcase_add_test(tc, emit_unicode_names);
    tcase_add_test(tc, emit_compiles);
    tcase_add_test(tc, emit_loop_nests_are_kernels);
    tcase_add_test(tc, emit_threads_weigh_functions);
    tcase_add_test(tc, emit_pow_products_rule);
    tcase_add_test(tc, emit_kernel_ranges);
    tcase_add_test(tc, emit_row_groups);
    tcase_add_test(tc, emit_row_alias);
    tcase_add_test(tc, emit_f32_blocks);
    tcase_add_test(tc, emit_streamed_stores);
    tcase_add_test(tc, emit_streamed_multi_step);
    tcase_add_test(tc, emit_flat_transposed);
    tcase_add_test(tc, emit_pairwise_squares);
    tcase_add_test(tc, emit_triangular_solve);
    tcase_add_test(tc, emit_blocks_compare);
    tcase_add_test(tc, emit_targets_declare_what_they_use);
    tcase_add_test(tc, emit_reduce_loop_order);
    tcase_add_test(tc, emit_runtime_symbols_from_one_table);
    tcase_add_test(tc, emit_sparse_decodes_only_what_is_read);
    tcase_add_test(tc, emit_workspace_by_liveness);
    tcase_add_test(tc, emit_relayout_copy_is_one_store);
    tcase_add_test(tc, emit_complex_on_parts);
    suite_add_tcase(s, tc);
    return s;
}
