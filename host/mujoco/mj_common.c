/* What the 3-row form (mujoco/adapter.c) and the general-block form
 * (mujoco/general.c) of MuJoCo's problem share (mujoco/mj_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/mj_common.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clc_mj_row_kind(int type)
{
    switch (type) {
    case mjCNSTR_EQUALITY: return "equality";
    case mjCNSTR_FRICTION_DOF: return "dof friction loss";
    case mjCNSTR_FRICTION_TENDON: return "tendon friction loss";
    case mjCNSTR_LIMIT_JOINT: return "joint limit";
    case mjCNSTR_LIMIT_TENDON: return "tendon limit";
    case mjCNSTR_CONTACT_FRICTIONLESS: return "frictionless contact";
    case mjCNSTR_CONTACT_PYRAMIDAL: return "pyramidal contact";
    default: return "elliptic contact";
    }
}

int clc_mj_cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* J's nonzeros, row by row, columns ascending (an insertion sort: MuJoCo's
 * sparse rows come sorted, so it only checks); a NaN is a nonzero, kept
 * for the finiteness check. */
static clcone_status sparse_rows(const mjModel *m, const mjData *d, clc_mj_rows *J, clcone_error *err)
{
    int nv = (int)m->nv, nefc = d->nefc, sparse = mj_isSparse(m), n = 0;
    size_t cap = 0;
    if (sparse)
        for (int i = 0; i < nefc; ++i) cap += (size_t)d->efc_J_rownnz[i];
    else
        for (size_t k = 0; k < (size_t)nefc * (size_t)nv; ++k) cap += d->efc_J[k] != 0;
    J->jp = clc_calloc((size_t)nefc + 1, sizeof *J->jp, err, "MuJoCo Jacobian rows");
    J->jc = clc_calloc(cap + 1, sizeof *J->jc, err, "MuJoCo Jacobian columns");
    J->jv = clc_calloc(cap + 1, sizeof *J->jv, err, "MuJoCo Jacobian values");
    if (!J->jp || !J->jc || !J->jv) return CLCONE_ENOMEM;
    for (int i = 0; i < nefc; ++i) {
        clc_mj_jrow r = clc_mj_row(m, d, i);
        int row0 = n;
        for (int k = 0; k < r.n; ++k) {
            int c = clc_mj_col(r, k), p = n++;
            double v = r.val[k];
            if (v == 0) {
                --n;
                continue;
            }
            for (; p > row0 && J->jc[p - 1] > c; --p) {
                J->jc[p] = J->jc[p - 1];
                J->jv[p] = J->jv[p - 1];
            }
            J->jc[p] = c;
            J->jv[p] = v;
        }
        J->jp[i + 1] = n;
    }
    return CLCONE_OK;
}

/* Each row's trees and where X's values on them go (*nx in all). A
 * tree's dofs are contiguous (tree_dofadr, tree_dofnum), so in a row's
 * ascending columns each tree is one run: its nonzeros, whose columns
 * become the tree's own (from its first dof). */
static clcone_status row_trees(const mjModel *m, int nefc, clc_mj_rows *J, size_t *nx, clcone_error *err)
{
    int n = 0;
    J->tp = clc_calloc((size_t)nefc + 1, sizeof *J->tp, err, "row trees");
    J->tt = clc_calloc((size_t)J->jp[nefc] + 1, sizeof *J->tt, err, "row trees");
    J->tb = clc_calloc((size_t)J->jp[nefc] + 1, sizeof *J->tb, err, "row trees");
    J->xo = clc_calloc((size_t)J->jp[nefc] + 1, sizeof *J->xo, err, "M^-1 J' offsets");
    if (!J->tp || !J->tt || !J->tb || !J->xo) return CLCONE_ENOMEM;
    *nx = 0;
    for (int i = 0; i < nefc; ++i) {
        for (int e = J->jp[i]; e < J->jp[i + 1]; ++e) {
            int t = m->dof_treeid[J->jc[e]];
            J->jc[e] -= m->tree_dofadr[t];
            if (n > J->tp[i] && J->tt[n - 1] == t) continue;
            J->tt[n] = t;
            J->tb[n] = e;
            J->xo[n++] = *nx;
            *nx += (size_t)m->tree_dofnum[t];
        }
        J->tp[i + 1] = n;
    }
    J->tb[n] = J->jp[nefc];
    return CLCONE_OK;
}

static clcone_status check_finite(const mjData *d, const clc_mj_rows *J, const char *label, clcone_error *err)
{
    for (int i = 0; i < d->nefc; ++i) {
        const char *what = !isfinite(d->efc_R[i]) ? "R" : !isfinite(d->efc_aref[i]) ? "aref"
                           : !isfinite(J->jqs[i]) ? "J qacc_smooth" : NULL;
        for (int e = J->jp[i]; !what && e < J->jp[i + 1]; ++e)
            if (!isfinite(J->jv[e])) what = "J";
        if (what)
            return clc_fail(err, CLCONE_EINVAL, "%s: constraint row %d (%s) has a non-finite %s", label, i,
                               clc_mj_row_kind(d->efc_type[i]), what);
    }
    return CLCONE_OK;
}

/* MuJoCo's mju_dotSparse: four partial sums, then the rest. */
static double dot_sparse(const double *v, const double *x, int n, const int *ind, int shift)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s;
    int i = 0;
    for (; i <= n - 4; i += 4) {
        s0 += v[i] * x[ind[i] - shift];
        s1 += v[i + 1] * x[ind[i + 1] - shift];
        s2 += v[i + 2] * x[ind[i + 2] - shift];
        s3 += v[i + 3] * x[ind[i + 3] - shift];
    }
    s = (s0 + s2) + (s1 + s3);
    for (; i < n; ++i) s += v[i] * x[ind[i] - shift];
    return s;
}

/* x <- M^-1 x on tree t's dofs (x holds those only): mj_solveLD's steps
 * and order on MuJoCo's factor L'DL, whose rows of a tree's dofs reach
 * only that tree's dofs (their ancestors). */
static void solve_tree(const mjModel *m, const mjData *d, int t, double *x)
{
    const int *nnz = m->M_rownnz, *adr = m->M_rowadr, *col = m->M_colind;
    const double *L = d->qLD;
    int a = m->tree_dofadr[t], n = m->tree_dofnum[t];
    for (int i = a + n - 1; i >= a; --i) {
        double xi = x[i - a];
        if (nnz[i] == 1 || !xi) continue;
        for (int k = adr[i]; k < adr[i] + nnz[i] - 1; ++k) x[col[k] - a] -= L[k] * xi;
    }
    for (int i = 0; i < n; ++i) x[i] *= d->qLDiagInv[a + i];
    for (int i = a; i < a + n; ++i)
        if (nnz[i] > 1) x[i - a] -= dot_sparse(L + adr[i], x, nnz[i] - 1, col + adr[i], a);
}

clcone_status clc_mj_rows_build(const mjModel *m, const mjData *d, const char *label, clc_mj_rows *J,
                                   clcone_error *err)
{
    int nefc = d->nefc;
    size_t nx;
    clcone_status s;
    memset(J, 0, sizeof *J);
    if ((s = sparse_rows(m, d, J, err)) || (s = row_trees(m, nefc, J, &nx, err))) return s;
    J->jqs = clc_calloc((size_t)nefc + 1, sizeof *J->jqs, err, "J qacc_smooth");
    J->xv = clc_calloc(nx + 1, sizeof *J->xv, err, "M^-1 J'");
    if (!J->jqs || !J->xv) return CLCONE_ENOMEM;
    mj_mulJacVec(m, d, J->jqs, d->qacc_smooth);
    if ((s = check_finite(d, J, label, err))) return s;
    for (int i = 0; i < nefc; ++i)
        for (int k = J->tp[i]; k < J->tp[i + 1]; ++k) {
            double *x = J->xv + J->xo[k];
            for (int e = J->tb[k]; e < J->tb[k + 1]; ++e) x[J->jc[e]] = J->jv[e];
            solve_tree(m, d, J->tt[k], x);
        }
    return CLCONE_OK;
}

void clc_mj_rows_free(clc_mj_rows *J)
{
    free(J->jp);
    free(J->jc);
    free(J->jv);
    free(J->tp);
    free(J->tt);
    free(J->tb);
    free(J->xo);
    free(J->xv);
    free(J->jqs);
    memset(J, 0, sizeof *J);
}

/* Per block its trees (a mark per tree), then per tree the blocks on it. */
clcone_status clc_mj_structure(const mjModel *m, const clc_mj_rows *J, int nb, const int *row,
                                  const int *nrow, int **row_ptr, int **col, int *nnzb, clcone_error *err)
{
    int nt = (int)m->ntree, *tp = NULL, *tb = NULL, *mark = NULL, *cols = NULL, *bt = NULL, *btp = NULL, nbt = 0;
    clcone_status s = CLCONE_ENOMEM;
    *row_ptr = *col = NULL;
    tp = clc_calloc((size_t)nt + 2, sizeof *tp, err, "tree lists");
    mark = clc_calloc((size_t)(nt > nb ? nt : nb) + 1, sizeof *mark, err, "marks");
    cols = clc_calloc((size_t)nb + 1, sizeof *cols, err, "block columns");
    btp = clc_calloc((size_t)nb + 1, sizeof *btp, err, "block trees");
    bt = clc_calloc((size_t)J->tp[row[nb - 1] + nrow[nb - 1]] + 1, sizeof *bt, err, "block trees");
    if (!tp || !mark || !cols || !btp || !bt) goto out;
    for (int t = 0; t < nt; ++t) mark[t] = -1;
    for (int b = 0; b < nb; ++b) {
        for (int i = row[b]; i < row[b] + nrow[b]; ++i)
            for (int k = J->tp[i]; k < J->tp[i + 1]; ++k) {
                int t = J->tt[k];
                if (mark[t] != b) {
                    mark[t] = b;
                    bt[nbt++] = t;
                    ++tp[t + 1];
                }
            }
        btp[b + 1] = nbt;
    }
    for (int t = 0; t < nt; ++t) tp[t + 1] += tp[t];
    tb = clc_calloc((size_t)tp[nt] + 1, sizeof *tb, err, "tree blocks");
    if (!tb) goto out;
    {
        int *fill = clc_calloc((size_t)nt + 1, sizeof *fill, err, "tree fill");
        if (!fill) goto out;
        for (int b = 0; b < nb; ++b)
            for (int k = btp[b]; k < btp[b + 1]; ++k) tb[tp[bt[k]] + fill[bt[k]]++] = b;
        free(fill);
    }
    /* two passes: count each block row's neighbours, then list them sorted */
    for (int pass = 0; pass < 2; ++pass) {
        int nnz = 0;
        for (int c = 0; c < nb; ++c) mark[c] = -1;
        for (int b = 0; b < nb; ++b) {
            int n = 0;
            mark[b] = b; /* the diagonal block, also for a row of J = 0 */
            cols[n++] = b;
            for (int k = btp[b]; k < btp[b + 1]; ++k)
                for (int j = tp[bt[k]]; j < tp[bt[k] + 1]; ++j)
                    if (mark[tb[j]] != b) {
                        mark[tb[j]] = b;
                        cols[n++] = tb[j];
                    }
            if (pass == 1) {
                qsort(cols, (size_t)n, sizeof *cols, clc_mj_cmp_int);
                memcpy(*col + (*row_ptr)[b], cols, sizeof *cols * (size_t)n);
                (*row_ptr)[b + 1] = (*row_ptr)[b] + n;
            }
            nnz += n;
        }
        if (pass == 0) {
            *nnzb = nnz;
            *row_ptr = clc_calloc((size_t)nb + 1, sizeof **row_ptr, err, "A's block rows");
            *col = clc_calloc((size_t)nnz + 1, sizeof **col, err, "A's block columns");
            if (!*row_ptr || !*col) goto out;
        }
    }
    s = CLCONE_OK;
out:
    if (s) {
        free(*row_ptr);
        free(*col);
        *row_ptr = *col = NULL;
    }
    free(tp);
    free(tb);
    free(mark);
    free(cols);
    free(bt);
    free(btp);
    return s;
}

/* Row s's X on tree t, or NULL when s is off t (there X is zero). */
static const double *tree_x(const clc_mj_rows *J, int s, int t)
{
    for (int k = J->tp[s]; k < J->tp[s + 1]; ++k)
        if (J->tt[k] == t) return J->xv + J->xo[k];
    return NULL;
}

double clc_mj_dot(const clc_mj_rows *J, int r, int s)
{
    double v = 0;
    for (int k = J->tp[r]; k < J->tp[r + 1]; ++k) {
        const double *x = tree_x(J, s, J->tt[k]);
        for (int e = J->tb[k]; x && e < J->tb[k + 1]; ++e) v += J->jv[e] * x[J->jc[e]];
    }
    return v;
}

clc_mj_jrow clc_mj_row(const mjModel *m, const mjData *d, int i)
{
    clc_mj_jrow r = {(int)m->nv, NULL, d->efc_J + (size_t)i * (size_t)m->nv};
    if (mj_isSparse(m)) {
        r.n = d->efc_J_rownnz[i];
        r.col = d->efc_J_colind + d->efc_J_rowadr[i];
        r.val = d->efc_J + d->efc_J_rowadr[i];
    }
    return r;
}

int clc_mj_zero_row(const mjModel *m, const mjData *d, int i)
{
    clc_mj_jrow r = clc_mj_row(m, d, i);
    for (int k = 0; k < r.n; ++k)
        if (r.val[k] != 0) return 0;
    return 1;
}

void clc_mj_finish(const mjModel *m, mjData *d)
{
    int nv = (int)m->nv;
    mj_mulJacVec(m, d, d->efc_b, d->qacc_smooth);
    for (int i = 0; i < d->nefc; ++i) d->efc_b[i] -= d->efc_aref[i];
    mj_mulJacTVec(m, d, d->qfrc_constraint, d->efc_force);
    mj_solveM(m, d, d->qacc, d->qfrc_constraint, 1);
    for (int v = 0; v < nv; ++v) d->qacc[v] += d->qacc_smooth[v];
}

clcone_status clc_mj_state_error(clcone_status s, const char *label, clcone_error *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return clc_fail(err, s, "%s: MuJoCo's problem at this state: %s", label, msg);
}
