/*
 * emit_blas.c - contractions as CBLAS calls: GEMM, GEMV and DOT, batched by
 * loops over the batch labels and the labels the plan loops over (plans
 * made by pass_blas.c); calls in loops over summed labels accumulate.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

/* Position of the last mode of label group G in S (the plan made sure
   the group is consecutive there). */
static int last_of(const mode_seq *s, const int *G, int n)
{
    int last = -1;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < s->n; p++)
            if (s->label[p] == G[i] && p > last)
                last = p;
    return last;
}

/* max(1, stride): BLAS wants a leading dimension of at least 1. */
static void put_ld(emitter *E, const mode_seq *s, int p)
{
    put(E, "TX_LD(");
    put_stride(E, s, p);
    put(E, ")");
}

/* The product of the extents of the labels of G (as found in S). */
static void put_group_size(emitter *E, const mode_seq *s, const int *G, int n)
{
    if (n == 0) {
        put(E, "1");
        return;
    }
    put(E, "(int)(");
    for (int i = 0; i < n; i++) {
        if (i)
            put(E, "*");
        for (int p = 0; p < s->n; p++)
            if (s->label[p] == G[i]) {
                put_extent(E, s->ext[p]);
                break;
            }
    }
    put(E, ")");
}

/* "if (K == 0) { y = beta y } else " before a gemv whose summed size is
   K (text) and whose output has R elements INC apart (texts): BLAS
   returns at once when a dimension is 0 (OpenBLAS's and the reference
   gemv, before applying beta), which would leave y as it was where numpy
   gives zeros. beta is 0 (an '=' store, the first call of summed loops)
   or 1 (+=, -=, the later calls), so y = beta y is zeros or nothing.
   gemm applies beta when K is 0, dot returns 0: they need no guard. */
static void put_gemv_empty_sum(emitter *E, int depth, const char *x, const char *k, const char *r,
                               const char *inc)
{
    int cx = x[0] == 'z' || x[0] == 'c', d = 4 * depth;
    put(E, "if ((%s) == 0) { /* an empty sum: BLAS would leave y as it is */\n", k);
    put(E, "%*sif (%s)\n", d + 4, "", cx ? "tx_beta.re == 0 && tx_beta.im == 0" : "tx_beta == 0");
    put(E, "%*sfor (int64_t tx_q = 0; tx_q < (%s); tx_q++)\n%*s", d + 8, "", r, d + 12, "");
    if (cx)
        put(E, "tx_c[tx_q * (%s)].re = 0, tx_c[tx_q * (%s)].im = 0;\n", inc, inc);
    else
        put(E, "tx_c[tx_q * (%s)] = 0;\n", inc);
    put(E, "%*s} else\n%*s", d, "", d + 4, "");
}

/* y = M v as one gemv: M (layout SM) has the output's labels R and the
   summed labels K; the vector (layout SV) has K, its last at VK; the
   output's last R mode is at CR of SC. Row- or column-major by which of
   M's groups is contiguous. */
static void put_gemv(emitter *E, int depth, const char *x, const mode_seq *sm, const int *R, int nr, const int *K,
                     int nk, const char *mname, const char *vname, const mode_seq *sv, int vk, const mode_seq *sc,
                     int cr)
{
    int rl = last_of(sm, R, nr), kl = last_of(sm, K, nk), kunit = kl == sm->n - 1;
    tx_buf kb, rb, ib, *saved = emit_capture_begin(E, &kb);
    put_group_size(E, sm, K, nk);
    const char *k = emit_capture_end(E, saved);
    saved = emit_capture_begin(E, &rb);
    put_group_size(E, sm, R, nr);
    const char *r = emit_capture_end(E, saved);
    saved = emit_capture_begin(E, &ib);
    put_stride(E, sc, cr);
    const char *inc = emit_capture_end(E, saved);
    put_gemv_empty_sum(E, depth, x, k, r, inc);
    put(E, "cblas_%sgemv(CblasRowMajor, %s, %s, %s, %stx_alpha, %s, ", x, kunit ? "CblasNoTrans" : "CblasTrans",
        kunit ? r : k, kunit ? k : r, E->blas_ref, mname);
    put_ld(E, sm, kunit ? rl : kl);
    put(E, ", %s, ", vname);
    put_stride(E, sv, vk);
    put(E, ", %stx_beta, tx_c, %s);\n", E->blas_ref, inc);
}

/* ---- operands bound with strides (the JIT specialised on them) ----

   A matrix BLAS can read has, for each of its two label groups, modes
   that merge into one (each stride the next one's times its extent) with
   positive strides, one group of unit stride and the other's stride (the
   leading dimension) at least the unit group's size. Everything being
   known, the layout is decided here; a layout BLAS cannot read is given
   back to the caller (emit_need_contiguous), which stages the variable. */

/* The stride of mode P of S, a number (the JIT knows every extent). */
static int64_t mode_stride(emitter *E, const mode_seq *s, int p)
{
    if (s->stride)
        return s->stride[p];
    int64_t z = 1;
    for (int i = p + 1; i < s->n; i++)
        z *= emit_extent_value(E, s->ext[i]);
    return z;
}

/* Label group G of S as one mode: its size and its stride (1 when the
   size is 1). Its labels are numbered row-major in G's order in every
   operand, so each must step over the whole of the ones after it. 0 if
   they do not merge so, or a stride is not positive. */
static int group_layout(emitter *E, const mode_seq *s, const int *G, int n, int64_t *size, int64_t *stride)
{
    int64_t st[TX_MAX_MODES], ex[TX_MAX_MODES];
    int k = 0;
    *size = 1;
    for (int i = 0; i < n; i++)
        for (int p = 0; p < s->n; p++) {
            if (s->label[p] != G[i])
                continue;
            int64_t e = emit_extent_value(E, s->ext[p]);
            *size *= e;
            if (e <= 1)
                continue;
            if (k == TX_MAX_MODES)
                return 0;
            st[k] = mode_stride(E, s, p);
            ex[k++] = e;
        }
    *stride = k ? st[k - 1] : 1;
    for (int j = 0; j < k; j++)
        if (st[j] <= 0 || st[j] > 2147483647 || (j + 1 < k && st[j] != st[j + 1] * ex[j + 1]))
            return 0;
    return 1;
}

/* Matrix S with row group R and column group C: whether BLAS reads it
   as stored (*TRANS 0: columns of unit stride, *LD the rows' stride) or
   transposed (*TRANS 1), preferring the first. 0 if neither. */
static int matrix_layout(emitter *E, const mode_seq *s, const int *R, int nr, const int *C, int nc, int *trans,
                         int64_t *ld)
{
    int64_t rs, rst, cs, cst;
    if (!group_layout(E, s, R, nr, &rs, &rst) || !group_layout(E, s, C, nc, &cs, &cst))
        return 0;
    if (cst == 1 && (rs <= 1 || rst >= cs)) {
        *trans = 0;
        *ld = rs <= 1 ? (cs > 1 ? cs : 1) : rst;
        return 1;
    }
    if (rst == 1 && (cs <= 1 || cst >= rs)) {
        *trans = 1;
        *ld = cs <= 1 ? (rs > 1 ? rs : 1) : cst;
        return 1;
    }
    return 0;
}

/* The variable behind BLAS operand W, or -1 for a computed value. */
static int operand_var(const g_value *w)
{
    return w->op == OP_INDEX ? w->in[0]->var : -1;
}

/* What a dot's statement adds to tx_alpha * dot for store OP ('=', '+',
   '-') in SUMMED loops over summed labels: nothing (the dot is all), the
   old C (+= and -=), or the old C from the second call of the loops on
   (the first writes C; beta = 0 must not read C, which may hold anything,
   even NaN). */
static const char *dot_tail(int op, int summed)
{
    return op == '=' && !summed ? "" : op == '=' ? " + (tx_beta == 0 ? 0 : tx_beta * *tx_c)" : " + tx_beta * *tx_c";
}

/* The call of a plan whose operands include a strided binding: its layout
   decided from the strides, in SUMMED loops over summed labels. 0 if BLAS
   cannot read one of them (that one is then marked to be staged). */
static int put_strided_call(emitter *E, int depth, const g_value *v, const mode_seq *sa, const mode_seq *sb,
                            const mode_seq *sc, const char *x, int cvar, int summed)
{
    const blas_plan *p = v->blas;
    int ta, tb, tc, ok = 1;
    int64_t lda, ldb, ldc, size, inc[3];
    if (p->nm == 0 && p->nn == 0 && dt_complex(v->dt)) { /* zdotu_sub: its operands staged */
        emit_need_contiguous(E, operand_var(p->a));
        emit_need_contiguous(E, operand_var(p->b));
        emit_need_contiguous(E, cvar);
        return 0;
    }
    if (p->nm == 0 && p->nn == 0) { /* dot: the two vectors' strides */
        ok = group_layout(E, sa, p->k, p->nk, &size, &inc[0]);
        if (!ok)
            emit_need_contiguous(E, operand_var(p->a));
        if (!group_layout(E, sb, p->k, p->nk, &size, &inc[1])) {
            emit_need_contiguous(E, operand_var(p->b));
            ok = 0;
        }
        if (ok) /* on a distributed target, an f64 dot takes distributed operands (tx_mpi_ddot) */
            put(E, "*tx_c = (%s)(tx_alpha * %s%sdot(%s(int)%lld, tx_a, %lld, tx_b, %lld)%s);\n", ctype(v->dt),
                mpi_plan_dot_rows(E->T->distributed, v) ? "tx_mpi_" : "cblas_", x,
                mpi_plan_dot_rows(E->T->distributed, v) ? "tx_comm, " : "", (long long)size, (long long)inc[0],
                (long long)inc[1], dot_tail(p->store ? p->store->store_op : '=', summed));
        return ok;
    }
    if (p->nn == 0 || p->nm == 0) { /* gemv: y = M v */
        int mv = p->nn == 0; /* M is A (y[m] = A[m,k] x[k]) or B (y[n] = B[k,n]^T x[k]) */
        const mode_seq *sm = mv ? sa : sb, *sv = mv ? sb : sa;
        const g_value *wm = mv ? p->a : p->b, *wv = mv ? p->b : p->a;
        const int *R = mv ? p->m : p->n;
        int nr = mv ? p->nm : p->nn;
        int64_t rows, cols, ld;
        int t;
        if (!matrix_layout(E, sm, R, nr, p->k, p->nk, &t, &ld)) {
            emit_need_contiguous(E, operand_var(wm));
            ok = 0;
        }
        if (!group_layout(E, sv, p->k, p->nk, &size, &inc[0])) {
            emit_need_contiguous(E, operand_var(wv));
            ok = 0;
        }
        if (!group_layout(E, sc, R, nr, &size, &inc[1])) {
            emit_need_contiguous(E, cvar);
            ok = 0;
        }
        if (!ok)
            return 0;
        group_layout(E, sm, R, nr, &rows, &inc[2]);
        group_layout(E, sm, p->k, p->nk, &cols, &inc[2]);
        /* stored as rows x cols (t = 0) or cols x rows (t = 1) */
        if (cols == 0) {
            char r[32], inc1[32];
            snprintf(r, sizeof r, "%lld", (long long)rows);
            snprintf(inc1, sizeof inc1, "%lld", (long long)inc[1]);
            put_gemv_empty_sum(E, depth, x, "0", r, inc1);
        }
        put(E, "cblas_%sgemv(CblasRowMajor, %s, %lld, %lld, %stx_alpha, %s, %lld, %s, %lld, %stx_beta, tx_c, %lld);\n",
            x, t ? "CblasTrans" : "CblasNoTrans", (long long)(t ? cols : rows), (long long)(t ? rows : cols),
            E->blas_ref, mv ? "tx_a" : "tx_b", (long long)ld, mv ? "tx_b" : "tx_a", (long long)inc[0], E->blas_ref,
            (long long)inc[1]);
        return 1;
    }
    int64_t m, n, k;
    if (!matrix_layout(E, sa, p->m, p->nm, p->k, p->nk, &ta, &lda)) {
        emit_need_contiguous(E, operand_var(p->a));
        ok = 0;
    }
    if (!matrix_layout(E, sb, p->k, p->nk, p->n, p->nn, &tb, &ldb)) {
        emit_need_contiguous(E, operand_var(p->b));
        ok = 0;
    }
    if (!matrix_layout(E, sc, p->m, p->nm, p->n, p->nn, &tc, &ldc)) {
        emit_need_contiguous(E, cvar);
        ok = 0;
    }
    if (!ok)
        return 0;
    group_layout(E, sc, p->m, p->nm, &m, &inc[0]);
    group_layout(E, sc, p->n, p->nn, &n, &inc[0]);
    group_layout(E, sa, p->k, p->nk, &k, &inc[0]);
    if (!tc) /* C = op(A) op(B) */
        put(E, "cblas_%sgemm(CblasRowMajor, %s, %s, %lld, %lld, %lld, %stx_alpha, tx_a, %lld, tx_b, %lld, "
            "%stx_beta, tx_c, %lld);\n", x, ta ? "CblasTrans" : "CblasNoTrans", tb ? "CblasTrans" : "CblasNoTrans",
            (long long)m, (long long)n, (long long)k, E->blas_ref, (long long)lda, (long long)ldb, E->blas_ref,
            (long long)ldc);
    else /* C stored transposed: C^T = op(B)^T op(A)^T */
        put(E, "cblas_%sgemm(CblasRowMajor, %s, %s, %lld, %lld, %lld, %stx_alpha, tx_b, %lld, tx_a, %lld, "
            "%stx_beta, tx_c, %lld);\n", x, tb ? "CblasNoTrans" : "CblasTrans", ta ? "CblasNoTrans" : "CblasTrans",
            (long long)n, (long long)m, (long long)k, E->blas_ref, (long long)ldb, (long long)lda, E->blas_ref,
            (long long)ldc);
    return 1;
}

/* The way out with error CODE: a kernel's return, or the program
   function's tx_done. */
static void put_blas_fail(emitter *E, int code)
{
    if (E->k.active)
        put(E, "return %d;", code);
    else
        put(E, "{ tx_status = %d; goto tx_done; }", code);
}

int emit_blas_batched(const g_value *v)
{
    const blas_plan *p = v->blas;
    if (p->nb > 0)
        return !ls_has(&v->summed, p->batch[0]);
    for (int i = 0; i < p->nl; i++)
        if (!ls_has(&v->summed, p->loop[i]))
            return 1;
    return 0;
}

void emit_blas(emitter *E, const g_value *v)
{
    const blas_plan *p = v->blas;
    mode_seq sa, sb, sc;
    TX_ASSERT(emit_modes(E, p->a, &sa) == 0 && emit_modes(E, p->b, &sb) == 0);
    if (p->store) {
        sc.n = p->store->rank;
        for (int i = 0; i < sc.n; i++) {
            sc.label[i] = p->store->store_label[i];
            sc.ext[i] = p->store->ext[i];
        }
        sc.stride = emit_var_strides(E, p->store->var);
    } else {
        sc.n = v->rank;
        sc.stride = NULL;
        for (int i = 0; i < sc.n; i++) {
            sc.label[i] = v->label[i];
            sc.ext[i] = v->ext[i];
        }
    }
    /* complex: zgemm/cgemm, zgemv/cgemv, zdotu/cdotu (no conjugation),
       alpha and beta passed by address */
    const char *x = v->dt == DT_F32 ? "s" : v->dt == DT_F64 ? "d" : v->dt == DT_C64 ? "c" : "z";
    int cx = dt_complex(v->dt);
    E->blas_ref = cx ? "&" : "";
    const char *t = ctype(v->dt);
    int op = p->store ? p->store->store_op : '=';
    emit_use(E, TXS_BLAS);
    int depth = 2;
    put(E, "    { /* %%%d: BLAS */\n", v->id);
    /* loops: the batch labels and the looped labels the result has, then
       the looped summed ones (their calls accumulate) */
    int outer[3 * TX_MAX_MODES], no = 0, summed_loops = 0;
    tx_extent oext[3 * TX_MAX_MODES];
    for (int pass = 0; pass < 3; pass++) {
        const int *G = pass == 0 ? p->batch : p->loop;
        int n = pass == 0 ? p->nb : p->nl;
        for (int i = 0; i < n; i++) {
            int summed = ls_has(&v->summed, G[i]);
            if (pass && summed != (pass == 2))
                continue;
            summed_loops += summed;
            outer[no] = G[i];
            const mode_seq *where[3] = {&sc, &sa, &sb};
            for (int w = 0, found = 0; w < 3 && !found; w++)
                for (int m = 0; m < where[w]->n && !found; m++)
                    if (where[w]->label[m] == G[i]) {
                        oext[no] = where[w]->ext[m];
                        found = 1;
                    }
            no++;
        }
    }
    /* in a kernel (emit_blas_batched), the first loop takes its range:
       a batch or result label, whose calls write disjoint parts of C */
    open_loops(E, outer, oext, no, &depth, E->k.active && no > summed_loops);
    put(E, "%*s{\n", 4 * depth, "");
    depth++;
    /* the matrix labels sit at 0: addresses below are the blocks' corners */
    int groups[3][TX_MAX_MODES], ng[3] = {p->nm, p->nn, p->nk};
    memcpy(groups[0], p->m, sizeof groups[0]);
    memcpy(groups[1], p->n, sizeof groups[1]);
    memcpy(groups[2], p->k, sizeof groups[2]);
    for (int gi = 0; gi < 3; gi++)
        for (int i = 0; i < ng[gi]; i++) {
            put(E, "%*sconst int64_t ", 4 * depth, "");
            put_label(E, groups[gi][i]);
            put(E, " = 0;\n");
        }
    put(E, "%*sconst %s *tx_a = &", 4 * depth, "", t);
    put_access_raw(E, p->a);
    put(E, ";\n%*sconst %s *tx_b = &", 4 * depth, "", t);
    put_access_raw(E, p->b);
    put(E, ";\n%*s%s *tx_c = &", 4 * depth, "", t);
    if (p->store) {
        put_var_at(E, p->store->var, sc.label, sc.ext, sc.n);
        put(E, ";\n");
    } else {
        put_value_at(E, v);
        put(E, ";\n");
    }
    put(E, "%*sconst %s tx_alpha = %s", 4 * depth, "", t, cx ? "{" : "");
    num_literal(E->out, op == '-' ? -v->coef : v->coef);
    if (summed_loops && op == '=') { /* the first call of the sum writes C, the others add (real only:
                                         pass_blas plans no loops for complex products) */
        TX_ASSERT(!cx);
        put(E, ", tx_beta = (");
        for (int i = no - summed_loops; i < no; i++) {
            put(E, i > no - summed_loops ? " && " : "");
            put_label(E, outer[i]);
            put(E, " == 0");
        }
        put(E, ") ? 0.0 : 1.0;\n%*s(void)tx_beta;\n", 4 * depth, "");
    } else
        put(E, "%s, tx_beta = %s%s%s;\n%*s(void)tx_beta;\n", cx ? ", 0.0}" : "", cx ? "{" : "", op == '=' ? "0.0" : "1.0",
            cx ? ", 0.0}" : "", 4 * depth, "");
    /* BLAS takes int sizes: every one is at most its buffer's element count */
    const mode_seq *bufs[3] = {&sa, &sb, &sc};
    put(E, "%*sif (", 4 * depth, "");
    for (int bi = 0; bi < 3; bi++) {
        put(E, bi ? " || " : "");
        put_stride(E, bufs[bi], -1);
        put(E, " > 2147483647");
    }
    int too_large = emit_add_error(E, "a matrix is too large for BLAS (more than 2^31-1 elements)", 0);
    put(E, ") ");
    put_blas_fail(E, too_large);
    put(E, "\n");
    int am = last_of(&sa, p->m, p->nm), ak = last_of(&sa, p->k, p->nk);
    int bk = last_of(&sb, p->k, p->nk), bn = last_of(&sb, p->n, p->nn);
    int cm = last_of(&sc, p->m, p->nm), cn = last_of(&sc, p->n, p->nn);
    put(E, "%*s", 4 * depth, "");
    if (sa.stride || sb.stride || sc.stride) {
        /* when it cannot, the code is made again with the operand staged;
           a row-major operand it cannot read has a leading dimension past
           BLAS's int, which the check above has already refused */
        if (!put_strided_call(E, depth, v, &sa, &sb, &sc, x, p->store ? p->store->var : -1, summed_loops))
        {
            put_blas_fail(E, too_large);
            put(E, "\n");
        }
    } else if (p->nm == 0 && p->nn == 0 && cx) { /* the dot (conjugating its first vector: dotc), then C = alpha dot (+ C) */
        put(E, "{\n%*s%s tx_d;\n%*scblas_%sdot%s_sub(", 4 * depth + 4, "", t, 4 * depth + 4, "", x, p->conj ? "c" : "u");
        put_group_size(E, &sa, p->k, p->nk);
        put(E, p->conj == 2 ? ", tx_b, " : ", tx_a, ");
        put_stride(E, p->conj == 2 ? &sb : &sa, p->conj == 2 ? bk : ak);
        put(E, p->conj == 2 ? ", tx_a, " : ", tx_b, ");
        put_stride(E, p->conj == 2 ? &sa : &sb, p->conj == 2 ? ak : bk);
        put(E, ", &tx_d);\n");
        const char *w = v->dt == DT_C64 ? "tx_c_w" : "";
        char val[160];
        snprintf(val, sizeof val, op == '=' ? "tx_c_mul(%s(tx_alpha), %s(tx_d))" :
                 "tx_c_add(tx_c_mul(%s(tx_alpha), %s(tx_d)), %s(*tx_c))", w, w, w);
        put_assign_c(E, depth + 1, "(*tx_c)", v->dt, '=', val);
        put(E, "%*s}\n", 4 * depth, "");
    } else if (p->nm == 0 && p->nn == 0) {
        int mpi_dot = mpi_plan_dot_rows(E->T->distributed, v); /* tx_mpi_ddot takes distributed operands */
        put(E, "*tx_c = (%s)(tx_alpha * %s%sdot(%s", t, mpi_dot ? "tx_mpi_" : "cblas_", x, mpi_dot ? "tx_comm, " : "");
        put_group_size(E, &sa, p->k, p->nk);
        put(E, ", tx_a, ");
        put_stride(E, &sa, ak);
        put(E, ", tx_b, ");
        put_stride(E, &sb, bk);
        put(E, ")%s);\n", dot_tail(op, summed_loops));
    } else if (p->nn == 0) { /* y[m] = A[m x k] x[k] */
        put_gemv(E, depth, x, &sa, p->m, p->nm, p->k, p->nk, "tx_a", "tx_b", &sb, bk, &sc, cm);
    } else if (p->nm == 0) { /* y[n] = B[k x n]^T x[k] */
        put_gemv(E, depth, x, &sb, p->n, p->nn, p->k, p->nk, "tx_b", "tx_a", &sa, ak, &sc, cn);
    } else {
        int ta = ak != sa.n - 1, tb = bn != sb.n - 1;
        /* a distributed target's GEMM: cblas_dgemm's contract plus the communicator */
        put(E, "%s%sgemm(%sCblasRowMajor, %s, %s, ", E->T->distributed ? "tx_mpi_" : "cblas_", x,
            E->T->distributed ? "tx_comm, " : "", ta ? "CblasTrans" : "CblasNoTrans",
            tb ? "CblasTrans" : "CblasNoTrans");
        put_group_size(E, &sc, p->m, p->nm);
        put(E, ", ");
        put_group_size(E, &sc, p->n, p->nn);
        put(E, ", ");
        put_group_size(E, &sa, p->k, p->nk);
        put(E, ", %stx_alpha, tx_a, ", E->blas_ref);
        put_ld(E, &sa, ta ? ak : am);
        put(E, ", tx_b, ");
        put_ld(E, &sb, tb ? bn : bk);
        put(E, ", %stx_beta, tx_c, ", E->blas_ref);
        put_ld(E, &sc, cm);
        put(E, ");\n");
    }
    depth--;
    put(E, "%*s}\n    }\n", 4 * depth, "");
}
