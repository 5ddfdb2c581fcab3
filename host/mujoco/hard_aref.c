/* Exact Coulomb's reference accelerations (mujoco/hard_aref.h).
 *
 * With R = 0 a contact row asks W r + q = 0 of a contact that sticks, so
 * q = J qacc_smooth - aref must lie in J's range wherever several contacts
 * hold one body: four contacts under a foot are twelve rows on six dofs.
 * J qacc_smooth and the damping part of MuJoCo's a_ref (-b J qvel) do;
 * the stiffness part, -k imp (pos - margin), with an impedance that
 * changes with each contact's depth, and contact positions that are not
 * exactly affine in the bodies' pose, do not. What is left outside the
 * range (4e-8 of ||q|| on the humanoid's feet, 2-7% on the mesh piles of
 * bench/models) is asked of accelerations no motion gives: the exact
 * answer then lifts a contact off (a foot on three of its four points, a
 * choice the data leave to rounding), and the solvers crawl toward it:
 * 5 s of Newton with rescue sweeps for 8 contacts, the brick wall's 840
 * contacts 2.8e-6 after 20 s (docs/measured.md). Dropping that part, the
 * least-squares fit of q by J v, keeps every motion the contacts can
 * make and gives the sticking answer: 0.06 ms and 0.23 s on those two. */
#define _POSIX_C_SOURCE 200809L
#include "mujoco/hard_aref.h"
#include "mujoco/mj_common.h"
#include "core/internal.h"
#include "core/parallel.h"

#include <cholmod.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Exact Coulomb's contacts rest this fraction of their solimp width
 * (MuJoCo's length scale of a contact: 1 mm by default, so 100 um) inside
 * MuJoCo's inclusion margin. MuJoCo's a_ref = -b v - k imp (pos - margin)
 * aims the contact's distance at the margin, and a contact at or past it
 * is dropped (no rows). A soft contact rests deeper, where its force
 * needs the depth; with R = 0 the depth goes to 0 and the contact flickers
 * out and back, a step without force at a time: the pinched capsule of
 * bench/models/pinch.xml slipped from 0.12 s on and fell out at 0.6 s.
 * That capsule held for 20 s at depths from 1e-3 widths up (fell at
 * 1e-4); the dominos' coulomb steps converged at 1e-3, 3e-3, 3e-2 and
 * 0.1, but eight stalled just above 1e-8 at 1e-2 (a singular W). */
#define COULOMB_DEPTH_WIDTHS 0.1

/* The scaled normal equations' shift, S J'J S + beta I (unit diagonal):
 * a direction J reaches with a scaled singular value below ~1e-5 counts
 * as one it does not; three solves (the later ones on the residual) leave
 * (beta / (sigma^2 + beta))^3 of a reached direction's part, 1e-12 at
 * sigma^2 = 1e-6, while the shift keeps the factor positive definite
 * where J'J is singular (a sphere's spin about its contact normal). */
#define REACH_SHIFT 1e-10
#define REACH_SOLVES 3

static int contact_row(const mjData *d, int i)
{
    return d->efc_type[i] >= mjCNSTR_CONTACT_FRICTIONLESS;
}

/* a_ref of the rows whose position is a contact's distance (a normal or
 * frictionless row; an elliptic contact's friction rows have none) aimed
 * at that depth instead: - k imp depth. */
static void aim_depth(mjData *d)
{
    for (int i = 0; i < d->nefc; ++i) {
        const mjContact *c = contact_row(d, i) ? &d->contact[d->efc_id[i]] : NULL;
        if (c && (d->efc_type[i] != mjCNSTR_CONTACT_ELLIPTIC || i == c->efc_address))
            d->efc_aref[i] -= d->efc_KBIP[4 * i] * d->efc_KBIP[4 * i + 2] * COULOMB_DEPTH_WIDTHS * c->solimp[2];
    }
}

/* Components of the trees that contact rows join with at most this many
 * dofs are fitted dense, the rest together by CHOLMOD: a humanoid's 27
 * dofs a component, CHOLMOD's analysis and workspaces each step cost more
 * than the fit (CHOLMOD alone on 100 humanoids: 14% of a coulomb run,
 * more than the solve). */
#define REACH_DENSE_MAX 48

/* The contact rows' J' scaled, as CSC over places (dofs): column k is row
 * rows[k] of J at place loc[dof] (the dof itself where loc is NULL),
 * times s of the place, s = diag(J'J)^-1/2 over these rows (0 where no
 * row reaches). u: the fit's unknown (v = S u), y: a right side. */
typedef struct reach {
    int nplace, nrow;
    const int *rows;
    int *Ap, *Ai;
    double *Ax, *s, *u, *y;
} reach;

static void reach_build(const mjModel *m, const mjData *d, reach *R, const int *loc)
{
    int nnz = 0;
    memset(R->s, 0, (size_t)R->nplace * sizeof *R->s);
    for (int k = 0; k < R->nrow; ++k) {
        clc_mj_jrow J = clc_mj_row(m, d, R->rows[k]);
        R->Ap[k] = nnz;
        for (int a = 0; a < J.n; ++a)
            if (J.val[a] != 0) {
                int x = loc ? loc[clc_mj_col(J, a)] : clc_mj_col(J, a);
                R->Ai[nnz] = x;
                R->Ax[nnz++] = J.val[a];
                R->s[x] += J.val[a] * J.val[a];
            }
    }
    R->Ap[R->nrow] = nnz;
    for (int x = 0; x < R->nplace; ++x) R->s[x] = R->s[x] > 0 ? 1 / sqrt(R->s[x]) : 0;
    for (int e = 0; e < nnz; ++e) R->Ax[e] *= R->s[R->Ai[e]];
}

/* q - Jc v on row k: Jc v = A'u. */
static double reach_residual(const reach *R, const double *q, int k)
{
    double res = q[R->rows[k]];
    for (int e = R->Ap[k]; e < R->Ap[k + 1]; ++e) res -= R->Ax[e] * R->u[R->Ai[e]];
    return res;
}

/* (A A' + beta I) u = A q by `solve` (y in, the correction out; 0: it
 * failed) from u = 0, each later solve on the last residual; then aref
 * += q - Jc v on the rows. 0 where a solve failed (aref unchanged). */
static int reach_fit(const reach *R, mjData *d, const double *q, int (*solve)(void *, double *), void *ctx)
{
    memset(R->u, 0, (size_t)R->nplace * sizeof *R->u);
    for (int pass = 0; pass < REACH_SOLVES; ++pass) {
        memset(R->y, 0, (size_t)R->nplace * sizeof *R->y);
        for (int k = 0; k < R->nrow; ++k) {
            double res = reach_residual(R, q, k);
            for (int e = R->Ap[k]; e < R->Ap[k + 1]; ++e) R->y[R->Ai[e]] += R->Ax[e] * res;
        }
        if (!solve(ctx, R->y)) return 0;
        for (int x = 0; x < R->nplace; ++x) R->u[x] += R->y[x];
    }
    for (int k = 0; k < R->nrow; ++k) d->efc_aref[R->rows[k]] += reach_residual(R, q, k);
    return 1;
}

/* Dense: L (n x n, lower) the Cholesky factor of A A' + beta I. */
typedef struct dense_fit {
    int n;
    double *L;
} dense_fit;

static int dense_factor(const reach *R, dense_fit *F)
{
    int n = R->nplace;
    double *L = F->L;
    F->n = n;
    memset(L, 0, (size_t)n * (size_t)n * sizeof *L);
    for (int k = 0; k < R->nrow; ++k)
        for (int e = R->Ap[k]; e < R->Ap[k + 1]; ++e)
            for (int f = R->Ap[k]; f < R->Ap[k + 1]; ++f) L[(size_t)R->Ai[e] * n + R->Ai[f]] += R->Ax[e] * R->Ax[f];
    for (int j = 0; j < n; ++j) {
        double djj = L[(size_t)j * n + j] + REACH_SHIFT;
        for (int c = 0; c < j; ++c) djj -= L[(size_t)j * n + c] * L[(size_t)j * n + c];
        if (!(djj > 0)) return 0;
        L[(size_t)j * n + j] = sqrt(djj);
        for (int i = j + 1; i < n; ++i) {
            double x = L[(size_t)i * n + j];
            for (int c = 0; c < j; ++c) x -= L[(size_t)i * n + c] * L[(size_t)j * n + c];
            L[(size_t)i * n + j] = x / L[(size_t)j * n + j];
        }
    }
    return 1;
}

static int dense_solve(void *ctx, double *y)
{
    const dense_fit *F = ctx;
    int n = F->n;
    for (int i = 0; i < n; ++i) {
        for (int c = 0; c < i; ++c) y[i] -= F->L[(size_t)i * n + c] * y[c];
        y[i] /= F->L[(size_t)i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        for (int c = i + 1; c < n; ++c) y[i] -= F->L[(size_t)c * n + i] * y[c];
        y[i] /= F->L[(size_t)i * n + i];
    }
    return 1;
}

/* Sparse: CHOLMOD's factor of A A' + beta I. */
typedef struct sparse_fit {
    cholmod_factor *L;
    cholmod_dense *b;
    cholmod_common *cm;
} sparse_fit;

static int sparse_solve(void *ctx, double *y)
{
    sparse_fit *F = ctx;
    cholmod_dense *x;
    memcpy(F->b->x, y, F->b->nrow * sizeof *y);
    if (!(x = cholmod_solve(CHOLMOD_A, F->L, F->b, F->cm))) return 0;
    memcpy(y, x->x, F->b->nrow * sizeof *y);
    cholmod_free_dense(&x, F->cm);
    return 1;
}

/* R's fit by CHOLMOD; 0 where it ran out of memory. */
static int sparse_reach(const reach *R, mjData *d, const double *q)
{
    cholmod_common cm;
    cholmod_sparse A;
    sparse_fit F = {NULL, NULL, &cm};
    double beta[2] = {REACH_SHIFT, 0};
    int super, ok;
    memset(&A, 0, sizeof A);
    A.nrow = (size_t)R->nplace;
    A.ncol = (size_t)R->nrow;
    A.nzmax = (size_t)R->Ap[R->nrow];
    A.p = R->Ap;
    A.i = R->Ai;
    A.x = R->Ax;
    A.itype = CHOLMOD_INT;
    A.xtype = CHOLMOD_REAL;
    A.dtype = CHOLMOD_DOUBLE;
    A.sorted = A.packed = 1;
    cholmod_start(&cm);
    cm.print = 0;
    F.L = cholmod_analyze(&A, &cm);
    F.b = cholmod_zeros(A.nrow, 1, CHOLMOD_REAL, &cm);
    super = F.L && F.L->is_super;
    clc_blas_begin(super);
    ok = F.L && F.b && cholmod_factorize_p(&A, beta, NULL, 0, F.L, &cm) && cm.status == CHOLMOD_OK;
    /* a fit that fails leaves MuJoCo's a_ref: the problem as MuJoCo
     * poses it, harder, not wrong */
    if (ok) reach_fit(R, d, q, sparse_solve, &F);
    clc_blas_end(super);
    ok = cm.status != CHOLMOD_OUT_OF_MEMORY;
    cholmod_free_factor(&F.L, &cm);
    cholmod_free_dense(&F.b, &cm);
    cholmod_finish(&cm);
    return ok;
}

static int root(int *up, int t)
{
    while (up[t] != t) t = up[t] = up[up[t]];
    return t;
}

/* Items 0 .. n-1 by key (0 .. nc-1; -1: none): key c's at out[start[c]
 * .. start[c + 1]), in order. */
static void bucket(int n, const int *key, int nc, int *start, int *out)
{
    memset(start, 0, ((size_t)nc + 1) * sizeof *start);
    for (int i = 0; i < n; ++i)
        if (key[i] >= 0) ++start[key[i] + 1];
    for (int c = 0; c < nc; ++c) start[c + 1] += start[c];
    for (int i = 0; i < n; ++i)
        if (key[i] >= 0) out[start[key[i]]++] = i;
    for (int c = nc; c > 0; --c) start[c] = start[c - 1];
    start[0] = 0;
}

/* The components of the trees that contact rows join: rowc[i] row i's
 * (-1: not a contact row, or one with a zero J, which no motion reaches
 * at all), treec[t] tree t's (-1: no contact row on it); their number. */
static int components(const mjModel *m, const mjData *d, int *up, int *rowc, int *treec)
{
    int nt = (int)m->ntree, nc = 0;
    for (int t = 0; t < nt; ++t) up[t] = t, treec[t] = -1;
    for (int i = 0; i < d->nefc; ++i) {
        clc_mj_jrow J = clc_mj_row(m, d, i);
        rowc[i] = -1;
        for (int a = 0; contact_row(d, i) && a < J.n; ++a) {
            int t;
            if (J.val[a] == 0) continue;
            t = root(up, m->dof_treeid[clc_mj_col(J, a)]);
            if (rowc[i] < 0) rowc[i] = t;
            else if (t != root(up, rowc[i])) up[t] = root(up, rowc[i]);
        }
    }
    for (int i = 0; i < d->nefc; ++i) {
        int t;
        if (rowc[i] < 0) continue;
        t = root(up, rowc[i]);
        if (treec[t] < 0) treec[t] = nc++;
        rowc[i] = treec[t];
    }
    for (int t = 0; t < nt; ++t) treec[t] = treec[root(up, t)];
    return nc;
}

/* Work space: per tree, per row, per dof, J's contact nonzeros. */
typedef struct reach_work {
    int *up, *treec, *ts, *trees, *rowc, *rs, *rows, *big, *loc, *Ap, *Ai;
    double *Ax, *s, *u, *y, *q, *L;
} reach_work;

static void work_free(reach_work *w)
{
    int **ints[] = {&w->up, &w->treec, &w->ts, &w->trees, &w->rowc, &w->rs, &w->rows, &w->big, &w->loc, &w->Ap,
                    &w->Ai};
    double **reals[] = {&w->Ax, &w->s, &w->u, &w->y, &w->q, &w->L};
    for (size_t k = 0; k < sizeof ints / sizeof *ints; ++k) free(*ints[k]);
    for (size_t k = 0; k < sizeof reals / sizeof *reals; ++k) free(*reals[k]);
}

static clcone_status work_alloc(reach_work *w, size_t nt, size_t nefc, size_t nv, size_t nnz, clcone_error *err)
{
    size_t dense = (size_t)REACH_DENSE_MAX * REACH_DENSE_MAX;
    memset(w, 0, sizeof *w);
    if ((w->up = clc_calloc(nt + 1, sizeof(int), err, "tree components"))
        && (w->treec = clc_calloc(nt + 1, sizeof(int), err, "tree components"))
        && (w->ts = clc_calloc(nt + 2, sizeof(int), err, "component trees"))
        && (w->trees = clc_calloc(nt + 1, sizeof(int), err, "component trees"))
        && (w->rowc = clc_calloc(nefc, sizeof(int), err, "row components"))
        && (w->rs = clc_calloc(nefc + 2, sizeof(int), err, "component rows"))
        && (w->rows = clc_calloc(nefc, sizeof(int), err, "component rows"))
        && (w->big = clc_calloc(nefc, sizeof(int), err, "rows fitted sparse"))
        && (w->loc = clc_calloc(nv + 1, sizeof(int), err, "dof places"))
        && (w->Ap = clc_calloc(nefc + 1, sizeof(int), err, "J's contact rows"))
        && (w->Ai = clc_calloc(nnz, sizeof(int), err, "J's contact rows"))
        && (w->Ax = clc_calloc(nnz, sizeof(double), err, "J's contact rows"))
        && (w->s = clc_calloc(nv + 1, sizeof(double), err, "J's column scales"))
        && (w->u = clc_calloc(nv + 1, sizeof(double), err, "the fit of q"))
        && (w->y = clc_calloc(nv + 1, sizeof(double), err, "the fit's right side"))
        && (w->q = clc_calloc(nefc, sizeof(double), err, "J qacc_smooth - aref"))
        && (w->L = clc_calloc(dense, sizeof(double), err, "a component's factor")))
        return CLCONE_OK;
    work_free(w);
    return CLCONE_ENOMEM;
}

clcone_status clc_mj_hard_aref(const mjModel *m, mjData *d, const char *label, clcone_error *err)
{
    int nefc = d->nefc, nv = (int)m->nv, nt = (int)m->ntree, nnz = 0, nc, nbig = 0;
    reach_work w;
    clcone_status st = CLCONE_OK;
    aim_depth(d);
    for (int i = 0; i < nefc; ++i) {
        clc_mj_jrow J = clc_mj_row(m, d, i);
        for (int a = 0; contact_row(d, i) && a < J.n; ++a) nnz += J.val[a] != 0;
    }
    if (nnz == 0) return CLCONE_OK;
    if ((st = work_alloc(&w, (size_t)nt, (size_t)nefc, (size_t)nv, (size_t)nnz, err))) {
        clc_error_prefix(err, "%s", label);
        return st;
    }
    nc = components(m, d, w.up, w.rowc, w.treec);
    bucket(nefc, w.rowc, nc, w.rs, w.rows);
    bucket(nt, w.treec, nc, w.ts, w.trees);
    mj_mulJacVec(m, d, w.q, d->qacc_smooth);
    for (int i = 0; i < nefc; ++i) w.q[i] -= d->efc_aref[i];
    for (int c = 0; c < nc; ++c) {
        reach R = {0, w.rs[c + 1] - w.rs[c], w.rows + w.rs[c], w.Ap, w.Ai, w.Ax, w.s, w.u, w.y};
        dense_fit F = {0, w.L};
        for (int k = w.ts[c]; k < w.ts[c + 1]; ++k)
            for (int x = 0; x < m->tree_dofnum[w.trees[k]]; ++x) w.loc[m->tree_dofadr[w.trees[k]] + x] = R.nplace++;
        if (R.nplace > REACH_DENSE_MAX) {
            memcpy(w.big + nbig, R.rows, (size_t)R.nrow * sizeof *R.rows);
            nbig += R.nrow;
            continue;
        }
        reach_build(m, d, &R, w.loc);
        if (dense_factor(&R, &F)) reach_fit(&R, d, w.q, dense_solve, &F);
    }
    if (nbig) {
        reach R = {nv, nbig, w.big, w.Ap, w.Ai, w.Ax, w.s, w.u, w.y};
        reach_build(m, d, &R, NULL);
        if (!sparse_reach(&R, d, w.q))
            st = clc_fail(err, CLCONE_ENOMEM, "%s: out of memory for the factor of J'J", label);
    }
    work_free(&w);
    return st;
}
