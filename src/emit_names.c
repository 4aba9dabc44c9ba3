/*
 * emit_names.c - C names: mangling every .tx name before it reaches C, the
 * names a user may give the generated function, and C literals.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "emit.h"

int emit_name_ok(const char *s)
{
    /* C keywords, and what the headers a generated file includes declare */
    static const char *taken[] = {
        "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else",
        "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "register",
        "restrict", "return", "short", "signed", "sizeof", "static", "struct", "switch",
        "typedef", "union", "unsigned", "void", "volatile", "while", "main",
        "malloc", "calloc", "realloc", "free", "abort", "exit", "atexit", "getenv", "system", "abs",
        "labs", "div", "ldiv", "rand", "srand", "atof", "atoi", "atol", "strtod", "strtol", "qsort",
        "bsearch", "exp", "log", "sqrt", "fabs", "sin", "cos", "tan", "tanh", "sinh", "cosh", "pow",
        "floor", "ceil", "fmod", "fmax", "fmin", "log10", "log2", "exp2", "atan", "atan2", "asin",
        "acos", "round", "trunc", "hypot", "cbrt", "erf", "gamma", "NULL", "size_t", "wchar_t",
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t",
        "intptr_t", "uintptr_t", "intmax_t", "uintmax_t", NULL};
    /* math.h functions come with f and l variants (sqrtf, expl, ...) */
    static const char *math[] = {
        "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh",
        "tanh", "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb",
        "modf", "scalbn", "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma",
        "tgamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround",
        "trunc", "fmod", "remainder", "remquo", "copysign", "nan", "nextafter", "nexttoward", "fdim",
        "fmax", "fmin", "fma", "j0", "j1", "jn", "y0", "y1", "yn", "gamma", "significand", "drem",
        "exp10", "pow10", "sincos", "finite", "scalb", NULL};
    static const char *others[] = {
        "printf", "fprintf", "sprintf", "snprintf", "puts", "putchar", "fputs", "scanf", "sscanf", "fopen",
        "fclose", "fread", "fwrite", "memcpy", "memmove", "memset", "memcmp", "strlen", "strcpy", "strncpy",
        "strcmp", "strncmp", "strcat", "strchr", "strstr", "aligned_alloc", "posix_memalign", "llabs",
        "lldiv", "strtof", "strtold", "strtoll", "strtoul", "strtoull", "mblen", "mbtowc", "wctomb",
        "mbstowcs", "wcstombs", "quick_exit", "at_quick_exit", "_Exit", "errno", "assert", "alloca",
        "openblas_set_num_threads", "openblas_get_num_threads", "goto_set_num_threads", "isnan", "isinf",
        "isfinite", "isnormal", "fpclassify", "signbit", "isgreater", "isless", "isunordered", "HUGE_VAL",
        "INFINITY", "NAN", "FP_NAN", "M_PI", "M_E", "EOF", "BUFSIZ", "INT64_MAX", "INT64_MIN", "SIZE_MAX",
        "RAND_MAX", "EXIT_SUCCESS", "EXIT_FAILURE", NULL};
    for (int i = 0; s && math[i]; i++) {
        size_t n = strlen(math[i]);
        if (strncmp(s, math[i], n) == 0 && (s[n] == 0 || ((s[n] == 'f' || s[n] == 'l') && s[n + 1] == 0)))
            return 0;
    }
    for (int i = 0; s && others[i]; i++)
        if (strcmp(s, others[i]) == 0)
            return 0;
    if (!s || !*s || (*s >= '0' && *s <= '9') || *s == '_' || strncmp(s, "tx_", 3) == 0 ||
        strncmp(s, "lapack", 6) == 0 || strncmp(s, "openblas", 8) == 0 ||
        strncmp(s, "TX_", 3) == 0 || strncmp(s, "cblas_", 6) == 0 || strncmp(s, "Cblas", 5) == 0 ||
        strncmp(s, "LAPACK", 6) == 0)
        return 0;
    for (const char *p = s; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    for (int i = 0; taken[i]; i++)
        if (strcmp(s, taken[i]) == 0)
            return 0;
    return 1;
}

void mangle_name(tx_buf *out, const char *prefix, const char *name)
{
    static const char hex[] = "0123456789abcdef";
    buf_puts(out, prefix);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        unsigned c = *p;
        if (c == '_')
            buf_put(out, "__", 2);
        else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
            buf_put(out, (const char *)p, 1);
        else {
            char e[3] = {'_', hex[c >> 4], hex[c & 15]};
            buf_put(out, e, 3);
        }
    }
}

void num_literal(tx_buf *o, double x)
{
    if (isnan(x))
        buf_puts(o, "(0.0/0.0)");
    else if (isinf(x))
        buf_puts(o, x > 0 ? "(1.0/0.0)" : "(-1.0/0.0)");
    else {
        char b[64];
        snprintf(b, sizeof b, "%.17g", x);
        buf_puts(o, b);
        if (!strpbrk(b, ".eE"))
            buf_puts(o, ".0");
    }
}

/* A C string literal holding S, with everything outside printable ASCII
   (and quotes, backslashes, '?') escaped in octal. */
void string_literal(tx_buf *o, const char *s)
{
    buf_puts(o, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' && *p != '?')
            buf_put(o, (const char *)p, 1);
        else
            buf_printf(o, "\\%03o", *p);
    }
    buf_puts(o, "\"");
}
