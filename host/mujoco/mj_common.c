/* What the 3-row form (mujoco/adapter.c) and the general-block form
 * (mujoco/general.c) of MuJoCo's problem share (mujoco/mj_common.h). */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/mj_common.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *clcone_mj_row_kind(int type)
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

int clcone_mj_cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

clcone_status clcone_mj_jacobian(const mjModel *m, const mjData *d, double *Jd, int **jp, int **jc, clcone_error *err)
{
    int nv = (int)m->nv, nefc = d->nefc, nnz = 0;
    if (mj_isSparse(m)) {
        for (int i = 0; i < nefc; ++i)
            for (int k = 0; k < d->efc_J_rownnz[i]; ++k) {
                int a = d->efc_J_rowadr[i] + k;
                Jd[(size_t)i * nv + d->efc_J_colind[a]] = d->efc_J[a];
            }
    } else memcpy(Jd, d->efc_J, sizeof(double) * (size_t)nefc * (size_t)nv);
    for (size_t k = 0; k < (size_t)nefc * (size_t)nv; ++k) nnz += Jd[k] != 0;
    *jp = clcone_calloc((size_t)nefc + 1, sizeof **jp, err, "MuJoCo Jacobian rows");
    *jc = clcone_calloc((size_t)nnz + 1, sizeof **jc, err, "MuJoCo Jacobian columns");
    if (!*jp || !*jc) return CLCONE_ENOMEM;
    for (int i = 0, n = 0; i < nefc; ++i) {
        for (int v = 0; v < nv; ++v)
            if (Jd[(size_t)i * nv + v] != 0) (*jc)[n++] = v;
        (*jp)[i + 1] = n;
    }
    return CLCONE_OK;
}

clcone_status clcone_mj_check_finite(const mjModel *m, const mjData *d, const double *Jd, const double *Jqs,
                                  const char *label, clcone_error *err)
{
    for (int i = 0; i < d->nefc; ++i) {
        const char *what = !isfinite(d->efc_R[i]) ? "R" : !isfinite(d->efc_aref[i]) ? "aref"
                           : !isfinite(Jqs[i])    ? "J qacc_smooth" : NULL;
        for (int v = 0; !what && v < (int)m->nv; ++v)
            if (!isfinite(Jd[(size_t)i * m->nv + v])) what = "J";
        if (what)
            return clcone_fail(err, CLCONE_EINVAL, "%s: constraint row %d (%s) has a non-finite %s", label, i,
                               clcone_mj_row_kind(d->efc_type[i]), what);
    }
    return CLCONE_OK;
}

/* Per block its trees (a mark per tree), then per tree the blocks on it. */
clcone_status clcone_mj_structure(const mjModel *m, const int *jp, const int *jc, int nb, const int *row,
                                  const int *nrow, int **row_ptr, int **col, int *nnzb, clcone_error *err)
{
    int nt = (int)m->ntree, *tp = NULL, *tb = NULL, *mark = NULL, *cols = NULL, *bt = NULL, *btp = NULL, nbt = 0;
    clcone_status s = CLCONE_ENOMEM;
    *row_ptr = *col = NULL;
    tp = clcone_calloc((size_t)nt + 2, sizeof *tp, err, "tree lists");
    mark = clcone_calloc((size_t)(nt > nb ? nt : nb) + 1, sizeof *mark, err, "marks");
    cols = clcone_calloc((size_t)nb + 1, sizeof *cols, err, "block columns");
    btp = clcone_calloc((size_t)nb + 1, sizeof *btp, err, "block trees");
    bt = clcone_calloc((size_t)jp[row[nb - 1] + nrow[nb - 1]] + 1, sizeof *bt, err, "block trees");
    if (!tp || !mark || !cols || !btp || !bt) goto out;
    for (int t = 0; t < nt; ++t) mark[t] = -1;
    for (int b = 0; b < nb; ++b) {
        for (int i = row[b]; i < row[b] + nrow[b]; ++i)
            for (int k = jp[i]; k < jp[i + 1]; ++k) {
                int t = m->dof_treeid[jc[k]];
                if (mark[t] != b) {
                    mark[t] = b;
                    bt[nbt++] = t;
                    ++tp[t + 1];
                }
            }
        btp[b + 1] = nbt;
    }
    for (int t = 0; t < nt; ++t) tp[t + 1] += tp[t];
    tb = clcone_calloc((size_t)tp[nt] + 1, sizeof *tb, err, "tree blocks");
    if (!tb) goto out;
    {
        int *fill = clcone_calloc((size_t)nt + 1, sizeof *fill, err, "tree fill");
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
                qsort(cols, (size_t)n, sizeof *cols, clcone_mj_cmp_int);
                memcpy(*col + (*row_ptr)[b], cols, sizeof *cols * (size_t)n);
                (*row_ptr)[b + 1] = (*row_ptr)[b] + n;
            }
            nnz += n;
        }
        if (pass == 0) {
            *nnzb = nnz;
            *row_ptr = clcone_calloc((size_t)nb + 1, sizeof **row_ptr, err, "A's block rows");
            *col = clcone_calloc((size_t)nnz + 1, sizeof **col, err, "A's block columns");
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

double clcone_mj_dot(const double *Jd, const double *X, const int *jp, const int *jc, size_t nv, int r, int s)
{
    double v = 0;
    for (int e = jp[r]; e < jp[r + 1]; ++e) v += Jd[r * nv + jc[e]] * X[s * nv + jc[e]];
    return v;
}

void clcone_mj_finish(const mjModel *m, mjData *d)
{
    int nv = (int)m->nv;
    mj_mulJacVec(m, d, d->efc_b, d->qacc_smooth);
    for (int i = 0; i < d->nefc; ++i) d->efc_b[i] -= d->efc_aref[i];
    mj_mulJacTVec(m, d, d->qfrc_constraint, d->efc_force);
    mj_solveM(m, d, d->qacc, d->qfrc_constraint, 1);
    for (int v = 0; v < nv; ++v) d->qacc[v] += d->qacc_smooth[v];
}

clcone_status clcone_mj_state_error(clcone_status s, const char *label, clcone_error *err)
{
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return clcone_fail(err, s, "%s: MuJoCo's problem at this state: %s", label, msg);
}
