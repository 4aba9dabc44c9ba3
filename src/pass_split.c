/*
 * pass_split.c — a reduction to a scalar over several labels, split into
 * the reductions of its rows and the reduction of those.
 *
 *     s = reduce(op, f(i, j, ...))   becomes   t("i") = reduce(op, f(i, j, ...)) over j, ...
 *                                              s = reduce(op, t("i"))
 *
 * where i is the first summed label in the order of the operands' modes
 * (the outermost loop of the nest, the rows of the first operand). The
 * rows are a nest over an output label, which the pool runs on threads
 * (a kernel's range); a scalar nest runs on one thread. The vector of
 * row results is folded by the fixed chunks of a contiguous reduction
 * (tx_rt_reduce / tx_p_red_chunked). Which values split depends on the
 * program alone, never on sizes or the thread count, so the library, the
 * cc tier and the standalone file compute the same bits on any number of
 * threads: each row folded in order from the identity, then the rows'
 * results in their chunks (tx(5)). A sum of exp(X) over 2000x2000, a
 * mean squared error, the trace of a product A("i,j") * B("j,i") thus use
 * every core where they used one.
 *
 * Not split: BLAS calls (a dot product), complex values, sparse loops,
 * and a plain reduction of one f64 tensor in memory (already shared in
 * chunks when contiguous). The cost is a vector of one double per row,
 * written once and read once.
 */
#include "tx.h"

/* The first label of V's operands (in the order of their modes) that V
   sums, and its extent; -1 if none. */
static int first_summed(const g_value *v, tx_extent *ext)
{
    for (int i = 0; i < v->nin; i++)
        for (int m = 0; m < v->in[i]->rank; m++)
            if (ls_has(&v->summed, v->in[i]->label[m])) {
                *ext = v->in[i]->ext[m];
                return v->in[i]->label[m];
            }
    return -1;
}

/* A plain reduction of one operand that the emitter reads from memory as
   f64 (an input, a stored tensor, a value computed by a nest or a call
   of its own, an elementwise value that others read too): folded from
   memory in chunks already. */
static int plain_f64_read(const g_value *v)
{
    if (v->nin != 1 || (v->op == OP_CONTRACT && v->coef_in[0] != 1))
        return 0;
    const g_value *x = v->in[0];
    return x->dt == DT_F64 && !(graph_is_elementwise(x) && x->nuses == 1);
}

static int splits(const g_value *v)
{
    if (v->dead || v->rank != 0 || v->blas || v->nmaps || dt_complex(v->dt) ||
        (v->op != OP_CONTRACT && v->op != OP_REDUCE))
        return 0;
    if (v->op == OP_REDUCE && v->red != RED_ADD && v->red != RED_MUL && v->red != RED_MAX && v->red != RED_MIN)
        return 0;
    for (int i = 0; i < v->nin; i++)
        if (dt_complex(v->in[i]->dt) || v->in[i]->nmaps)
            return 0;
    return ls_count(v->summed) >= 2 && !plain_f64_read(v);
}

void pass_split(graph *g)
{
    int changed = 0;
    for (int k = 0; k < g->n; k++) {
        g_value *v = g->v[k];
        if (!splits(v))
            continue;
        tx_extent ext;
        int row = first_summed(v, &ext);
        if (row < 0)
            continue;
        /* the rows: V's operands and operation, summed over all but ROW */
        g_value *rows = graph_value_new(g, v->op, v->nin, v->stmt, v->span);
        for (int i = 0; i < v->nin; i++)
            graph_set_operand(rows, i, v->in[i], v->coef_in[i]);
        rows->dt = v->dt == DT_F32 ? DT_F64 : v->dt; /* an f32 sum still rounded once, at the end */
        rows->red = v->red;
        rows->summed = v->summed;
        ls_del(&rows->summed, row);
        graph_set_modes(rows, 1, &row, &ext);
        graph_insert_before(g, v, rows);
        /* V: the same reduction (its scale kept) of the rows' results */
        double one = 1;
        graph_set_operands(g, v, 1, &rows, &one);
        labelset s = {{0}};
        ls_add(&s, row);
        v->summed = s;
        changed = 1;
    }
    if (changed)
        graph_renumber(g);
}
