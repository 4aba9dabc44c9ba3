/*
 * embed.c - tensorexpr inside a C program: compile a .tx program once,
 * bind the program's arrays, run it many times, rebind to new extents.
 *
 * The program fits a ridge regression: given samples X (s by f) and
 * targets y, it solves (X^T X + lambda I) w = X^T y and reports the
 * residual. Build and run it (from the repository, after `make`):
 *
 *   cc -std=c99 -Isrc examples/embed.c build/libtensorexpr.a \
 *      -ltcc -llapacke -lopenblas -lsleef -lmvec -ldl -lm -lpthread -o embed && ./embed
 *
 * or, after `make install`, with pkg-config:
 *
 *   cc -std=c99 examples/embed.c $(pkg-config --cflags --libs tensorexpr) -lm -o embed
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tensorexpr.h>

/* The same, written the way a user would: Gram matrix, regularised by
   lambda times the identity (pow(M, 0) is the identity of M's size),
   then a solve, then the residual norm. */
static const char program[] =
    "in  X[s,f], y[s], lambda;\n"
    "out w[f], res;\n"
    "let XtX(\"a,b\") = X(\"k,a\") * X(\"k,b\");\n"
    "let G(\"a,b\") = XtX(\"a,b\") + lambda * pow(XtX(\"a,b\"), 0);\n"
    "let Xty(\"a\") = X(\"k,a\") * y(\"k\");   # a call's argument sums nothing: name it first\n"
    "w(\"b\") = solve(G(\"a,b\"), Xty(\"a\"));\n"
    "res = (y(\"k\") - X(\"k,a\") * w(\"a\"))^2;\n";

static int check(tx_ctx *ctx, int status, const char *what)
{
    if (status != TX_OK) {
        fprintf(stderr, "embed: %s: %s (%s)\n", what, tx_strerror(status), tx_errmsg(ctx));
        exit(1);
    }
    return 0;
}

/* Fits N samples of the line y = 2 x0 - x1 + 0.5 (exact data) and prints
   the weights; returns the residual. */
static double fit(tx_ctx *ctx, tx_program *p, int64_t n)
{
    double *X = malloc(sizeof(double) * (size_t)n * 3), *y = malloc(sizeof(double) * (size_t)n);
    double w[3], res, lambda = 1e-9;
    for (int64_t i = 0; i < n; i++) {
        double x0 = (double)i / (double)n, x1 = sin((double)i);
        X[i * 3 + 0] = x0;
        X[i * 3 + 1] = x1;
        X[i * 3 + 2] = 1; /* the intercept */
        y[i] = 2 * x0 - x1 + 0.5;
    }
    const int64_t sx[2] = {n, 3}, sy[1] = {n}, sw[1] = {3};
    check(ctx, tx_bind(p, "X", X, 2, sx), "bind X");
    check(ctx, tx_bind(p, "y", y, 1, sy), "bind y");
    check(ctx, tx_bind(p, "lambda", &lambda, 0, NULL), "bind lambda");
    check(ctx, tx_bind(p, "w", w, 1, sw), "bind w");
    check(ctx, tx_bind(p, "res", &res, 0, NULL), "bind res");
    check(ctx, tx_run(p), "run"); /* compiles for these extents, then runs */
    double jit;
    tx_timing(p, -1, &jit, NULL);
    printf("n = %4lld: w = [%.6f %.6f %.6f], residual %.2e%s\n", (long long)n, w[0], w[1], w[2], res,
           jit > 0 ? " (compiled for this n)" : "");
    free(X);
    free(y);
    return res;
}

int main(void)
{

    tx_ctx *ctx = tx_new();
    if (!ctx)
        return 1;
    tx_program *p = tx_compile(ctx, program, strlen(program), "ridge.tx");
    if (!p) {
        fputs(tx_errmsg(ctx), stderr); /* file:line:col: error: ..., with a caret */
        return 1;
    }
    double worst = 0;
    const int64_t sizes[] = {50, 50, 400};
    for (int i = 0; i < 3; i++) {
        double r = fit(ctx, p, sizes[i]);
        worst = r > worst ? r : worst;
    }
    tx_program_free(p);
    tx_free(ctx);
    if (worst > 1e-12) {
        fprintf(stderr, "embed: the fit is off (residual %g)\n", worst);
        return 1;
    }
    printf("ok\n");
    return 0;
}
