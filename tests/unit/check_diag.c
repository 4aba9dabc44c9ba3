/*
 * check_diag.c — suite "diag": diagnostics of src/diag.c
 * (diag_error / diag_note / span_join / span_at).
 */
#include "unit.h"

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

Suite *suite_diag(void)
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
