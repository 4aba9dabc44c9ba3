/*
 * emit_sparse.c - loop nests that follow sparse maps (tx(5) section 7).
 */
#include <stdio.h>
#include <string.h>

#include "emit.h"

typedef struct {
    labelset placed;  /* labels bound by enclosing loops */
    int handled[8];   /* per v->maps: followed by an entry loop or tested */
    int nloop;        /* entry loops opened so far (for unique names) */
} sparse_state;

/* Is the decode of target label I of entry loop E needed? Every one is,
   the first time a kernel is emitted; the second time, only those the
   first found read (every other access went through the flat target
   index, and libtcc would still divide for an unused decode). */
static int decode_needed(emitter *E, int e, int i)
{
    return E->k.decode_pass != 2 || e >= KERNEL_MAX_ENTRY_LOOPS || E->k.decode_used[e][i];
}

/* An entry loop closes: the first emission learns whether the body read
   its decoded labels. */
static void entry_loop_closed(emitter *E, const entry_ctx *en)
{
    if (E->k.decode_pass != 1 || en->id >= KERNEL_MAX_ENTRY_LOOPS)
        return;
    for (int i = 0; i < en->ndst; i++)
        E->k.decode_used[en->id][i] = E->label_refs[en->dst[i]] > en->refs_at_decode[i];
}

/* Maps whose labels are now all bound, by other loops than their own
   entry loop: skip the iteration unless the map holds the pair. */
static void emit_map_tests(emitter *E, const g_value *v, int *depth, sparse_state *st)
{
    for (int k = 0; k < v->nmaps; k++) {
        if (st->handled[k] || !graph_map_covers(E->g, v->maps[k], st->placed))
            continue;
        put(E, "%*sif (!", 4 * *depth, "");
        put_map_has(E, v->maps[k]);
        put(E, ") continue;\n");
        st->handled[k] = 1;
    }
}

/* Opens loops over LABELS (extents EXT) for V: a map's target labels are
   visited through its entries once its source labels are bound; a map
   whose labels all end up bound by plain loops becomes a membership test.
   Every loop opens a brace; returns how many to close. */
static int open_loops_sparse(emitter *E, const g_value *v, const int *labels, const tx_extent *ext, int n,
                             int *depth, sparse_state *st)
{
    int pending[TX_MAX_LABELS], np = 0, braces = 0;
    for (int i = 0; i < n; i++)
        pending[np++] = i;
    while (np > 0) {
        int done = 0;
        for (int k = 0; k < v->nmaps && !done; k++) {
            const sym *m = SP(E)->maps[v->maps[k]];
            if (st->handled[k])
                continue;
            int ok = 1;
            for (int i = 0; i < m->nsrc; i++)
                ok &= ls_has(&st->placed, m->src[i]);
            for (int i = 0; ok && i < m->ndst; i++) {
                int in = 0;
                for (int j = 0; j < np; j++)
                    in |= labels[pending[j]] == m->dst[i];
                ok = in;
            }
            if (!ok)
                continue;
            /* for (each entry of the map for the current source tuple) */
            int e = st->nloop++;
            put(E, "%*sfor (int64_t tx_e%d = ", 4 * *depth, "", e);
            put_map(E, v->maps[k]);
            put(E, "->offsets[");
            put_map_index(E, m, 0);
            put(E, "]; tx_e%d < ", e);
            put_map(E, v->maps[k]);
            put(E, "->offsets[");
            put_map_index(E, m, 0);
            put(E, " + 1]; tx_e%d++) {\n", e);
            (*depth)++;
            braces++;
            put(E, "%*sconst int64_t tx_t%d = ", 4 * *depth, "", e);
            put_map(E, v->maps[k]);
            put(E, "->targets[tx_e%d];\n", e);
            if (E->nentries < 16) {
                E->entries[E->nentries].id = e;
                E->entries[E->nentries].ndst = m->ndst;
                E->entries[E->nentries].dst = m->dst;
                E->entries[E->nentries].ext = m->dst_ext;
                E->entries[E->nentries++].depth = *depth;
            }
            entry_ctx *ent = E->nentries > 0 && E->entries[E->nentries - 1].id == e ? &E->entries[E->nentries - 1]
                                                                                     : NULL;
            for (int i = 0; i < m->ndst; i++) { /* decode the target tuple, if anything reads it */
                if (decode_needed(E, e, i)) {
                    put(E, "%*sconst int64_t ", 4 * *depth, "");
                    put_label(E, m->dst[i]);
                    put(E, " = (tx_t%d", e);
                    for (int j = i + 1; j < m->ndst; j++) {
                        put(E, " / ");
                        put_extent(E, m->dst_ext[j]);
                    }
                    put(E, ")");
                    if (i > 0) {
                        put(E, " %% ");
                        put_extent(E, m->dst_ext[i]);
                    }
                    put(E, ";\n");
                }
                if (ent)
                    ent->refs_at_decode[i] = E->label_refs[m->dst[i]];
                ls_add(&st->placed, m->dst[i]);
                for (int j = 0; j < np; j++)
                    if (labels[pending[j]] == m->dst[i]) {
                        pending[j] = pending[--np];
                        break;
                    }
            }
            st->handled[k] = 1;
            done = 1;
        }
        if (done) {
            emit_map_tests(E, v, depth, st);
            continue;
        }
        /* a plain loop: preferably over a label no waiting map targets */
        int pick = 0;
        for (int j = 0; j < np; j++) {
            int targeted = 0;
            for (int k = 0; k < v->nmaps; k++)
                if (!st->handled[k])
                    for (int i = 0; i < SP(E)->maps[v->maps[k]]->ndst; i++)
                        targeted |= SP(E)->maps[v->maps[k]]->dst[i] == labels[pending[j]];
            if (!targeted) {
                pick = j;
                break;
            }
        }
        int idx = pending[pick];
        pending[pick] = pending[--np];
        put_loop_head(E, labels[idx], ext[idx], *depth, 1);
        (*depth)++;
        braces++;
        ls_add(&st->placed, labels[idx]);
        emit_map_tests(E, v, depth, st);
    }
    return braces;
}

static void close_braces(emitter *E, int n, int *depth)
{
    for (int i = 0; i < n; i++) {
        (*depth)--;
        put(E, "%*s}\n", 4 * *depth, "");
        while (E->nentries > 0 && E->entries[E->nentries - 1].depth > *depth)
            entry_loop_closed(E, &E->entries[--E->nentries]);
    }
}

/* Code zeroing the buffer of VALUE, or variable VAR if VALUE is NULL
   (extents EXT, element type T): entries no map reaches. */
static void emit_zero(emitter *E, const g_value *value, int var, const tx_extent *ext, int rank, dtype t)
{
    emit_use(E, TXS_PRIM);
    put(E, "    tx_rt_zero(");
    if (value)
        put_value(E, value);
    else
        put_var(E, var);
    if (!value) /* zeroed as one block of memory */
        emit_need_contiguous(E, var);
    put(E, ", (int64_t)sizeof(%s)", ctype(t));
    for (int i = 0; i < rank; i++) {
        put(E, " * ");
        put_extent(E, ext[i]);
    }
    put(E, ");\n");
}

/* A value whose loops some sparse map restricts: plain scalar loops that
   follow the maps; the buffer is zeroed first, so entries no map reaches
   read as zero. */
void emit_compute_sparse(emitter *E, const g_value *v)
{
    int depth = 2, nsum = 0, summed[TX_MAX_LABELS];
    tx_extent sext[TX_MAX_LABELS];
    if (v->op == OP_CONTRACT || v->op == OP_REDUCE)
        nsum = labels_in(v, v->summed, summed, sext);
    emit_use(E, TXS_PRIM);
    put(E, "    { /* %%%d: follows sparse maps */\n", v->id);
    emit_zero(E, v, -1, v->ext, v->rank, v->dt);
    sparse_state st;
    memset(&st, 0, sizeof st);
    if (v->op == OP_CONTRACT) {
        /* the buffer starts at zero, so the products can be added in in
           any loop order: one nest over output and summed labels, in the
           order the maps favour (sources, then their entries, then the
           rest innermost, contiguous) */
        int all[TX_MAX_LABELS], na = 0;
        tx_extent aext[TX_MAX_LABELS];
        for (int i = 0; i < v->rank; i++) {
            all[na] = v->label[i];
            aext[na++] = v->ext[i];
        }
        for (int i = 0; i < nsum; i++) {
            all[na] = summed[i];
            aext[na++] = sext[i];
        }
        /* the last output label, if no map involves it, runs innermost in
           blocks through the primitives: C[i,:] += A[i,k] * B[k,:] */
        int L = v->rank ? v->label[v->rank - 1] : -1;
        for (int k = 0; L >= 0 && k < v->nmaps; k++) {
            const sym *m = SP(E)->maps[v->maps[k]];
            for (int i = 0; i < m->nsrc; i++)
                L = m->src[i] == L ? -1 : L;
            for (int i = 0; L >= 0 && i < m->ndst; i++)
                L = m->dst[i] == L ? -1 : L;
        }
        g_value root = *v;
        int need = 0;
        emit_summand(v, &root);
        root.coef = v->coef; /* scaled in the product here */
        root.nmaps = 0;
        if (L >= 0 && blk_supported(&root, &need)) {
            int outer[TX_MAX_LABELS], no = 0;
            tx_extent oext[TX_MAX_LABELS];
            for (int i = 0; i < na; i++)
                if (all[i] != L) {
                    outer[no] = all[i];
                    oext[no++] = aext[i];
                }
            int b = open_loops_sparse(E, v, outer, oext, no, &depth, &st);
            put_block_loop_head(E, L, v->ext[v->rank - 1], depth);
            depth++;
            blk_state B = {.depth = depth, .label = L};
            blk_op r = blk_eval(E, &B, &root);
            put(E, "%*stx_p_store_f%s(tx_bn, ", 4 * depth, "", v->dt == DT_F32 ? "32" : "64");
            put_op(E, r);
            put(E, ", &");
            put_value_at(E, v);
            put(E, ", 1, 1);\n");
            depth--;
            put(E, "%*s}\n", 4 * depth, "");
            close_braces(E, b, &depth);
            put(E, "    }\n");
            return;
        }
        int b = open_loops_sparse(E, v, all, aext, na, &depth, &st);
        if (dt_complex(v->dt)) {
            tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
            put_value_at(E, v);
            const char *lhs = emit_capture_end(E, saved);
            saved = emit_capture_begin(E, &scratch);
            put_elementwise(E, v); /* the scaled product */
            put_assign_c(E, depth, lhs, v->dt, '+', emit_capture_end(E, saved));
            close_braces(E, b, &depth);
            put(E, "    }\n");
            return;
        }
        put(E, "%*s", 4 * depth, "");
        put_value_at(E, v);
        put(E, " += ");
        if (v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_product(E, v);
        put(E, ";\n");
        close_braces(E, b, &depth);
        put(E, "    }\n");
        return;
    }
    int b1 = open_loops_sparse(E, v, v->label, v->ext, v->rank, &depth, &st);
    int reduces = (v->op == OP_CONTRACT && nsum) || v->op == OP_REDUCE;
    int cx = dt_complex(v->dt);
    put(E, "%*s%s tx_acc = %s%s%s;\n%*sint64_t tx_cnt = 0;\n", 4 * depth, "", cx ? "tx_c128" : "double",
        cx ? "{" : "", v->op == OP_REDUCE ? reduce_init(v->red) : "0.0", cx ? ", 0.0}" : "", 4 * depth, "");
    int d2 = depth, b2 = 0;
    if (reduces)
        b2 = open_loops_sparse(E, v, summed, sext, nsum, &d2, &st);
    put(E, "%*stx_cnt++;\n%*s", 4 * d2, "", 4 * d2, "");
    if (cx && v->op == OP_REDUCE)
        put_reduce_update_c(E, v->red, v->in[0]);
    else if (cx && reduces)
        put_contract_update_c(E, v);
    else if (cx) {
        g_value root = *v; /* the scale goes on at the store */
        root.coef = 1;
        put(E, "tx_acc = ");
        put_elementwise(E, &root);
    } else if (v->op == OP_REDUCE)
        put_reduce_update(E, v->red, v->in[0]);
    else if (reduces) {
        put(E, "tx_acc += ");
        put_product(E, v);
    } else {
        put(E, "tx_acc = ");
        if (v->op == OP_CONTRACT && v->coef != 1) {
            num_literal(E->out, v->coef);
            put(E, " * ");
        }
        put_elementwise(E, v);
    }
    put(E, ";\n");
    close_braces(E, b2, &d2);
    if (cx) {
        tx_buf scratch, *saved = emit_capture_begin(E, &scratch);
        put_value_at(E, v);
        const char *lhs = emit_capture_end(E, saved);
        saved = emit_capture_begin(E, &scratch);
        put(E, "tx_c_where((double)tx_cnt, ");
        if (v->op == OP_CONTRACT && v->coef != 1) {
            put(E, "tx_c_scale(");
            num_literal(E->out, v->coef);
            put(E, ", tx_acc)");
        } else
            put(E, "tx_acc");
        put(E, ", tx_c_r(0.0))");
        put_assign_c(E, depth, lhs, v->dt, '=', emit_capture_end(E, saved));
        close_braces(E, b1, &depth);
        put(E, "    }\n");
        return;
    }
    put(E, "%*s", 4 * depth, "");
    put_value_at(E, v);
    put(E, " = (%s)(", ctype(v->dt));
    if (reduces && v->op == OP_CONTRACT && v->coef != 1) {
        num_literal(E->out, v->coef);
        put(E, " * ");
    }
    /* an output no map entry reaches is zero (not the identity of max) */
    put(E, "tx_cnt ? tx_acc : 0.0);\n");
    close_braces(E, b1, &depth);
    put(E, "    }\n");
}

/* A store whose loops a sparse map restricts ('=' zeroes the tensor
   first: entries no map reaches are written as zero). */
void emit_store_sparse(emitter *E, const g_value *s)
{
    sym *var = SP(E)->vars[s->var];
    int depth = 2;
    emit_use(E, TXS_PRIM);
    put(E, "    { /* %%%d: follows sparse maps */\n", s->id);
    if (s->store_op == '=')
        emit_zero(E, NULL, s->var, s->ext, s->rank, var->dt);
    sparse_state st;
    memset(&st, 0, sizeof st);
    int b = open_loops_sparse(E, s, s->store_label, s->ext, s->rank, &depth, &st);
    if (dt_complex(var->dt)) {
        put_store_c(E, s, var->dt, depth);
        close_braces(E, b, &depth);
        put(E, "    }\n");
        return;
    }
    put(E, "%*s", 4 * depth, "");
    put_var_at(E, s->var, s->store_label, s->ext, s->rank);
    put(E, " %s (%s)", s->store_op == '=' ? "=" : s->store_op == '+' ? "+=" : "-=", ctype(var->dt));
    put_access(E, s->in[0]);
    put(E, ";\n");
    close_braces(E, b, &depth);
    put(E, "    }\n");
}
