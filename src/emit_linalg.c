/*
 * emit_linalg.c - the LAPACK-backed calls (cholesky, inv, pow, solve, eigh,
 * qr, svd) and the error codes of their outcomes.
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

static void put_base(emitter *E, const g_value *w)
{
    if (w->op == OP_INDEX || w->op == OP_INPUT || w->op == OP_STORE) {
        int var = w->op == OP_INDEX ? w->in[0]->var : w->var;
        emit_need_contiguous(E, var); /* LAPACK reads row-major arrays */
        put_var(E, var);
        return;
    }
    put_value(E, w);
}

static const char *la_word(const g_value *v)
{
    static const char *w[] = {"?", "cholesky", "inv", "pow", "solve", "eigh", "qr", "svd", "slice", "grad",
                              "grad", "grad"};
    return v->la == LA_INV && v->la_pow ? "pow" : w[v->la]; /* pow's inverse (lower.c) */
}

/* Which triangle of the matrix V (rows V's first label, columns its
   second) can be nonzero, as far as the graph shows: 1 lower, 2 upper, 0
   not known. A cholesky factor is lower, qr's R upper; a transpose, conjugate or copy
   (a relabelling, a conversion) carries the triangle along, and so does a
   tensor it was stored into whole, read back as that version. */
static int triangle_of(const g_value *v, int depth)
{
    if (depth > 8 || v->rank != 2 || v->nmaps)
        return 0;
    const g_value *w = NULL;
    int t = 0, rows; /* w's triangle t, and which of w's labels are V's rows */
    switch (v->op) {
    case OP_LINALG:
        return v->la == LA_CHOL && v->nout == 1 ? 1 : 0;
    case OP_PART: /* qr's R */
        return v->in[0]->op == OP_LINALG && v->in[0]->la == LA_QR && v->part == 1 ? 2 : 0;
    case OP_MAP:
        if (v->fn != MAP_CONJ || v->nin != 1)
            return 0;
        w = v->in[0];
        break;
    case OP_CONTRACT:
        if (v->nin != 1 || v->coef != 1 || v->coef_in[0] != 1 || !ls_empty(v->summed))
            return 0;
        w = v->in[0];
        break;
    case OP_INDEX: {
        const g_value *s = v->in[0];
        if (s->op != OP_STORE || s->store_op != '=' || s->nmaps || s->rank != 2 || s->nin != 1 ||
            v->idx_label[0] < 0 || v->idx_label[1] < 0 || v->idx_label[0] == v->idx_label[1])
            return 0;
        w = s->in[0];
        if (w->rank != 2 || !(t = triangle_of(w, depth + 1)))
            return 0;
        /* the tensor's triangle, mode 0 its rows, then V's through the view */
        int mem = s->store_label[0] == w->label[0] ? t : 3 - t;
        return v->label[0] == v->idx_label[0] ? mem : 3 - mem;
    }
    default:
        return 0;
    }
    if (w->rank != 2 || !(t = triangle_of(w, depth + 1)))
        return 0;
    rows = v->label[0] == w->label[0] && v->label[1] == w->label[1] ? 0
           : v->label[0] == w->label[1] && v->label[1] == w->label[0] ? 1 : -1;
    return rows < 0 ? 0 : rows == 0 ? t : 3 - t;
}

/* A LAPACK-backed call: the arguments are contiguous and row-major (the
   lowering made sure); the results are the node's own buffer, or its
   parts'. Each outcome other than success becomes an error code whose
   message names the call and its line. */
void emit_linalg(emitter *E, const g_value *v, g_value *const *parts)
{
    const char *S_ = v->dt == DT_F32 ? "s" : v->dt == DT_F64 ? "d" : v->dt == DT_C64 ? "c" : "z";
    const g_value *a = v->in[0];
    emit_use(E, E->T->distributed ? TXS_MPI : TXS_LINALG);
    /* a distributed target's calls: linalg.inc's contract plus the communicator */
    const char *la = E->T->distributed ? "tx_mpi_la_" : "tx_la_", *comm = E->T->distributed ? "tx_comm, " : "";
    put(E, "    { /* %%%d: %s */\n        int64_t tx_detail = 0;\n        int tx_info = ", v->id, la_word(v));
    switch (v->la) {
    case LA_CHOL: case LA_INV:
        put(E, "%s%s_%s(%s", la, v->la == LA_CHOL ? "chol" : "inv", S_, comm);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", tx_v%d, &tx_detail);\n", v->id);
        break;
    case LA_GAPS: /* for a gradient (grad.c): the gaps of w, or w's weights checked */
        put(E, "tx_la_gaps_%s(", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        if (v->nin == 2)
            put_base(E, v->in[1]);
        else
            put(E, "0");
        put(E, ", %lld, tx_v%d, &tx_detail);\n", (long long)v->la_pow, v->id);
        break;
    case LA_CHOLGRAD: /* for a gradient (grad.c): the operands are whole on every rank */
        put(E, "tx_la_cholgrad_%s(", S_);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        put_base(E, v->in[1]);
        put(E, ", tx_v%d, &tx_detail);\n", v->id);
        break;
    case LA_POW:
        put(E, "%spow_%s(%s", la, S_, comm);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", %lld, tx_v%d, &tx_detail);\n", (long long)v->la_pow, v->id);
        break;
    case LA_SOLVE: {
        /* a triangular matrix (a cholesky factor): one triangular solve
           instead of an LU factorisation (not on a distributed target) */
        int tri = E->T->distributed ? 0 : triangle_of(a, 0);
        if (tri)
            put(E, "tx_la_trsolve_%s(", S_);
        else
            put(E, "%ssolve_%s(%s", la, S_, comm);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        if (v->in[1]->rank == 2)
            put_extent(E, v->in[1]->ext[1]);
        else
            put(E, "1");
        if (tri)
            put(E, ", %d", tri == 2);
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        put_base(E, v->in[1]);
        put(E, ", tx_v%d, &tx_detail);\n", v->id);
        break;
    }
    case LA_EIGH:
        put(E, "%seigh_%s(%s", la, S_, comm);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_base(E, a);
        put(E, ", ");
        if (v->nin == 2)
            put_base(E, v->in[1]);
        else
            put(E, "0");
        put(E, ", tx_v%d, tx_v%d, &tx_detail);\n", parts[0]->id, parts[1]->id);
        break;
    case LA_QR: case LA_SVD:
        put(E, "%s%s_%s(%s", la, v->la == LA_QR ? "qr" : "svd", S_, comm);
        put_extent(E, a->ext[0]);
        put(E, ", ");
        put_extent(E, a->ext[1]);
        put(E, ", ");
        put_base(E, a);
        for (int i = 0; i < v->nout; i++)
            put(E, ", tx_v%d", parts[i]->id);
        put(E, ", &tx_detail);\n");
        break;
    default:
        TX_ASSERT(!"not a linear-algebra call");
    }
    /* the outcomes, in the words of tx(5), located at the call and naming
       the tensor it factors when it reads one as it is */
    const char *file = SP(E)->cst->src->name;
    unsigned line = v->span.line, col = v->span.col;
    char w[300];
    const g_value *arg = v->nin > 0 ? v->in[0] : NULL;
    while (arg && arg->op == OP_INDEX && arg->nin == 1)
        arg = arg->in[0];
    if (arg && (arg->op == OP_INPUT || arg->op == OP_STORE) && arg->var >= 0 && v->la != LA_GAPS &&
        v->la != LA_CHOLGRAD)
        snprintf(w, sizeof w, "%s of '%.200s'", la_word(v), SP(E)->vars[arg->var]->name);
    else
        snprintf(w, sizeof w, "%s", la_word(v));
    struct { int info; const char *what; } outcomes[] = {
        {1, "matrix is not positive definite (leading minor %lld)"},
        {2, "matrix is singular (pivot %lld is zero)"},
        {3, "the decomposition did not converge"},
        {4, "the second matrix is not positive definite (leading minor %lld)"},
        {5, "an argument has a NaN or an infinity (element %lld, counting row-major from 0)"},
        {6, "the gradient through eigh or svd needs distinct (and, for svd, non-zero) values; "
            "value %lld is repeated or zero"},
        {7, "the gradient through the values of eigh or svd alone does not exist where two equal values are "
            "weighted differently; value %lld is repeated"},
        {-1, "out of memory"},
        {-2, "an extent is too large for LAPACK"},
        {0, "LAPACK failed (status %lld)"}, /* any other outcome: never taken for success */
    };
    for (size_t i = 0; i < sizeof outcomes / sizeof outcomes[0]; i++) {
        int own = v->la == LA_GAPS ? outcomes[i].info == (v->nin == 2 ? 7 : 6)
                                   : v->la != LA_CHOLGRAD && outcomes[i].info != 6 && outcomes[i].info != 7;
        if (!own && outcomes[i].info != 0 && outcomes[i].info != -1)
            continue; /* the gaps check (and the weights check) has its outcome, the others theirs
                         (cholgrad none) */
        char msg[700];
        snprintf(msg, sizeof msg, "%s:%u:%u: %s: %s", file, line, col, w, outcomes[i].what);
        int other = outcomes[i].info == 0;
        int code = emit_add_error(E, msg, outcomes[i].info == -1);
        put(E, other ? "        if (tx_info != 0) { tx_status = %d; " : "        if (tx_info == %d) { tx_status = %d; ",
            other ? code : outcomes[i].info, code);
        if (E->T->entry == TX_ENTRY_ARGV) /* the loader reads the detail */
            put(E, other ? "*tx_detailp = tx_info; " : "*tx_detailp = tx_detail; ");
        else if (E->T->distributed) /* FN_detail reads it */
            put(E, other ? "tx_mpi_detail = tx_info; " : "tx_mpi_detail = tx_detail; ");
        put(E, "goto tx_done; }\n");
    }
    put(E, "        (void)tx_detail;\n    }\n");
}
