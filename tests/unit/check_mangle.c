/*
 * check_mangle.c — suite "mangle": mangle_name of src/emit.c: injective,
 * [A-Za-z0-9_], never a leading digit.
 */
#include "unit.h"

static char *mangled(const char *prefix, const char *name)
{
    tx_buf b = {0};
    mangle_name(&b, prefix, name);
    ck_assert_int_eq(b.oom, 0);
    char *s = strdup(b.p ? b.p : "");
    buf_free(&b);
    return s;
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

Suite *suite_mangle(void)
{
    Suite *s = suite_create("mangle");
    TCase *tc = tcase_create("mangle");
    tcase_add_test(tc, mangle_tricky_names);
    tcase_add_test(tc, mangle_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
