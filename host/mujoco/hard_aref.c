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

/* Row i of J: n nonzeros at col (NULL: columns 0 .. n-1, dense J). */
typedef struct jrow {
    int n;
    const int *col;
    const double *val;
} jrow;

static jrow row_of(const mjModel *m, const mjData *d, int i)
{
    jrow r = {(int)m->nv, NULL, d->efc_J + (size_t)i * (size_t)m->nv};
    if (mj_isSparse(m)) {
        r.n = d->efc_J_rownnz[i];
        r.col = d->efc_J_colind + d->efc_J_rowadr[i];
        r.val = d->efc_J + d->efc_J_rowadr[i];
    }
    return r;
}

static int col_at(jrow r, int k)
{
    return r.col ? r.col[k] : k;
}

/* CHOLMOD's solve of (A A' + beta I) du = y, added to u: 0 where it fails. */
static int shifted_solve(cholmod_sparse *A, cholmod_factor *L, cholmod_dense *y, double *u, cholmod_common *cm)
{
    cholmod_dense *du = cholmod_solve(CHOLMOD_A, L, y, cm);
    if (!du) return 0;
    for (size_t x = 0; x < A->nrow; ++x) u[x] += ((double *)du->x)[x];
    cholmod_free_dense(&du, cm);
    return 1;
}

/* A = S Jc' (column k: contact row rows[k] of J, S = diag(Jc'Jc)^-1/2 on
 * its dofs), scaled so that the shift is relative; u with v = S u solves
 * min ||Jc v - q|| on J's reach, and aref += q - Jc v. Jc v = A' u. */
static int drop_unreached(mjData *d, cholmod_sparse *A, const int *rows, const double *q, double *u,
                          cholmod_common *cm)
{
    const int *Ap = A->p, *Ai = A->i;
    const double *Ax = A->x;
    double beta[2] = {REACH_SHIFT, 0};
    cholmod_factor *L = cholmod_analyze(A, cm);
    cholmod_dense *y = cholmod_zeros(A->nrow, 1, CHOLMOD_REAL, cm);
    int ok = L && y, super = L && L->is_super;
    clc_blas_begin(super);
    ok = ok && cholmod_factorize_p(A, beta, NULL, 0, L, cm) && cm->status == CHOLMOD_OK;
    for (int pass = 0; ok && pass < REACH_SOLVES; ++pass) {
        double *yx = y->x;
        memset(yx, 0, A->nrow * sizeof *yx);
        for (size_t k = 0; k < A->ncol; ++k) {
            double res = q[rows[k]];
            for (int e = Ap[k]; e < Ap[k + 1]; ++e) res -= Ax[e] * u[Ai[e]];
            for (int e = Ap[k]; e < Ap[k + 1]; ++e) yx[Ai[e]] += Ax[e] * res;
        }
        ok = shifted_solve(A, L, y, u, cm);
    }
    clc_blas_end(super);
    for (size_t k = 0; ok && k < A->ncol; ++k) {
        double res = q[rows[k]];
        for (int e = Ap[k]; e < Ap[k + 1]; ++e) res -= Ax[e] * u[Ai[e]];
        d->efc_aref[rows[k]] += res;
    }
    cholmod_free_factor(&L, cm);
    cholmod_free_dense(&y, cm);
    return ok;
}

clcone_status clc_mj_hard_aref(const mjModel *m, mjData *d, const char *label, clcone_error *err)
{
    int nefc = d->nefc, nv = (int)m->nv, nc = 0, nnz = 0, *rows = NULL, *Ap = NULL, *Ai = NULL;
    double *Ax = NULL, *s = NULL, *q = NULL, *u = NULL;
    clcone_status st = CLCONE_ENOMEM;
    cholmod_common cm;
    cholmod_sparse A;
    aim_depth(d);
    for (int i = 0; i < nefc; ++i) {
        jrow J = row_of(m, d, i);
        int n = 0;
        for (int a = 0; contact_row(d, i) && a < J.n; ++a) n += J.val[a] != 0;
        nc += n > 0;
        nnz += n;
    }
    if (nc == 0) return CLCONE_OK;
    if (!(rows = clc_calloc((size_t)nc, sizeof *rows, err, "contact rows"))
        || !(Ap = clc_calloc((size_t)nc + 1, sizeof *Ap, err, "J's contact rows"))
        || !(Ai = clc_calloc((size_t)nnz, sizeof *Ai, err, "J's contact rows"))
        || !(Ax = clc_calloc((size_t)nnz, sizeof *Ax, err, "J's contact rows"))
        || !(s = clc_calloc((size_t)nv, sizeof *s, err, "J's column scales"))
        || !(u = clc_calloc((size_t)nv, sizeof *u, err, "the fit of q"))
        || !(q = clc_calloc((size_t)nefc, sizeof *q, err, "J qacc_smooth - aref")))
        goto out;
    nc = nnz = 0;
    for (int i = 0; i < nefc; ++i) {
        jrow J = row_of(m, d, i);
        for (int a = 0; contact_row(d, i) && a < J.n; ++a)
            if (J.val[a] != 0) {
                Ai[nnz] = col_at(J, a);
                Ax[nnz++] = J.val[a];
                s[col_at(J, a)] += J.val[a] * J.val[a];
            }
        if (nnz > Ap[nc]) {
            rows[nc++] = i;
            Ap[nc] = nnz;
        }
    }
    for (int x = 0; x < nv; ++x) s[x] = s[x] > 0 ? 1 / sqrt(s[x]) : 0;
    for (int e = 0; e < nnz; ++e) Ax[e] *= s[Ai[e]];
    mj_mulJacVec(m, d, q, d->qacc_smooth);
    for (int i = 0; i < nefc; ++i) q[i] -= d->efc_aref[i];
    memset(&A, 0, sizeof A);
    A.nrow = (size_t)nv;
    A.ncol = (size_t)nc;
    A.nzmax = (size_t)nnz;
    A.p = Ap;
    A.i = Ai;
    A.x = Ax;
    A.itype = CHOLMOD_INT;
    A.xtype = CHOLMOD_REAL;
    A.dtype = CHOLMOD_DOUBLE;
    A.sorted = A.packed = 1;
    cholmod_start(&cm);
    cm.print = 0;
    /* a factor that fails (out of memory) leaves MuJoCo's a_ref: the
     * problem as MuJoCo poses it, harder, not wrong */
    st = drop_unreached(d, &A, rows, q, u, &cm) || cm.status != CHOLMOD_OUT_OF_MEMORY
             ? CLCONE_OK
             : clc_fail(err, CLCONE_ENOMEM, "out of memory for the factor of J'J");
    cholmod_finish(&cm);
out:
    if (st) clc_error_prefix(err, "%s", label);
    free(rows);
    free(Ap);
    free(Ai);
    free(Ax);
    free(s);
    free(u);
    free(q);
    return st;
}
