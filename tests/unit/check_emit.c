/*
 * check_emit.c — suite "emit": emit_c of src/emit.c: no .tx name reaches
 * the C source unmangled, and the C compiles.
 */
#include <unistd.h>

#include "unit.h"

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

Suite *suite_emit(void)
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
