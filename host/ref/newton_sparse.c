/* Newton's Jacobian J = A + B W as a sparse matrix, on the reference.
 *
 * Why: the dense LU costs (3n)^3/3 a step and stopped at 512 contacts,
 * yet J has W's block pattern (A and B are block-diagonal), which on a
 * 600-contact pile is about 16 blocks a row. KLU (SuiteSparse, beside the
 * CHOLMOD that ipm uses) factors it, its pattern analysed once a solve
 * (AMD), its values each step, with partial pivoting (J is not
 * symmetric): at the same Newton steps, 7-12x faster than the dense LU
 * from 180 contacts up (ref/newton.c says from where it is used). J is
 * held by scalar rows, which KLU reads as J' by columns: its transposed
 * solve is then J's.
 *
 * Levenberg-Marquardt, where J is singular (W is on walls) or its step
 * does not descend, needs J'J + lambda I: CHOLMOD factors it from J'
 * itself (its A A' + beta I for an unsymmetric A), without forming J'J.
 * Conjugate gradients on it, capped at 50 steps, gave directions too
 * rough (a 576-contact wall took 60 Newton steps and 20,050 rescue
 * sweeps where the dense LM's 484-contact wall took 13 and 50), and KLU
 * on the augmented system [I -J; J' lambda I] filled in: 8.2 s on that
 * wall against CHOLMOD's 0.5 s. */
#include "ref/newton_sparse.h"
#include "core/parallel.h"

#include <amd.h>
#include <cholmod.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

clcone_status clc_jac_sparse_make(clc_jac_sparse *J, const clcone_problem *p, int c0, int c1, clcone_error *err)
{
    int n = c1 - c0, base = p->row_ptr[c0];
    size_t slots = (size_t)(p->row_ptr[c1] - base);
    memset(J, 0, sizeof *J);
    J->n = n;
    J->m = 3 * n;
    klu_defaults(&J->common);
    if (9 * slots > INT_MAX)
        return clc_fail(err, CLCONE_ENOTSUP, "sparse Newton: J has over %d entries (KLU's int indices)", INT_MAX);
    if (!(J->slot_start = clc_calloc((size_t)n + 1, sizeof *J->slot_start, err, "sparse Jacobian's rows"))
        || !(J->diag = clc_calloc((size_t)n, sizeof *J->diag, err, "sparse Jacobian's diagonal"))
        || !(J->Ap = clc_calloc((size_t)J->m + 1, sizeof *J->Ap, err, "sparse Jacobian's row pointers"))
        || !(J->Ai = clc_calloc(9 * slots, sizeof *J->Ai, err, "sparse Jacobian's columns"))
        || !(J->Ax = clc_calloc(9 * slots, sizeof *J->Ax, err, "sparse Jacobian's values"))
        || !(J->col = clc_calloc((size_t)J->m, sizeof *J->col, err, "sparse Jacobian's column norms")))
        return CLCONE_ENOMEM;
    for (int i = 0; i < n; ++i) {
        int c = c0 + i, s0 = p->row_ptr[c] - base, nb = p->row_ptr[c + 1] - p->row_ptr[c];
        J->slot_start[i] = s0;
        J->diag[i] = -1;
        for (int q = 0; q < nb; ++q) {
            int j = p->col[p->row_ptr[c] + q] - c0;
            if (j < 0 || j >= n)
                return clc_fail(err, CLCONE_EINVAL, "W block %d of contact %d couples contact %d, outside its problem",
                                p->row_ptr[c] + q, c, j + c0);
            if (j == i) J->diag[i] = s0 + q;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) J->Ai[9 * s0 + 3 * a * nb + 3 * q + b] = 3 * j + b;
        }
        /* a validated problem has every diagonal block (clcone_problem_validate) */
        if (J->diag[i] < 0) return clc_fail(err, CLCONE_EINVAL, "W has no diagonal block for contact %d", c);
        for (int a = 0; a < 3; ++a) J->Ap[3 * i + a] = 9 * s0 + 3 * a * nb;
    }
    J->slot_start[n] = (int)slots;
    J->Ap[J->m] = 9 * (int)slots;
    return CLCONE_OK;
}

void clc_jac_sparse_free(clc_jac_sparse *J)
{
    if (J->num) klu_free_numeric(&J->num, &J->common);
    if (J->sym) klu_free_symbolic(&J->sym, &J->common);
    if (J->lm) {
        cholmod_free_factor(&J->lm, &J->cm);
        cholmod_free_dense(&J->rhs, &J->cm);
    }
    if (J->cm_started) cholmod_finish(&J->cm);
    free(J->slot_start);
    free(J->diag);
    free(J->Ap);
    free(J->Ai);
    free(J->Ax);
    free(J->col);
    memset(J, 0, sizeof *J);
}

double *clc_jac_sparse_block(const clc_jac_sparse *J, int i, int s, int *stride)
{
    int s0 = J->slot_start[i];
    *stride = 3 * (J->slot_start[i + 1] - s0);
    return J->Ax + 9 * s0 + 3 * (s - s0);
}

void clc_jac_sparse_tmul(const clc_jac_sparse *J, const double *v, double *out)
{
    memset(out, 0, (size_t)J->m * sizeof *out);
    for (int row = 0; row < J->m; ++row)
        for (int k = J->Ap[row]; k < J->Ap[row + 1]; ++k) out[J->Ai[k]] += J->Ax[k] * v[row];
}

static int all_finite(const double *a, int m)
{
    for (int i = 0; i < m; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

int clc_jac_sparse_solve(clc_jac_sparse *J, const double *rhs, double *d, double tiny)
{
    if (!J->sym && !(J->sym = klu_analyze(J->m, J->Ap, J->Ai, &J->common))) return 0;
    if (J->num) klu_free_numeric(&J->num, &J->common);
    if (!(J->num = klu_factor(J->Ap, J->Ai, J->Ax, J->sym, &J->common))) return 0;
    if (!klu_rcond(J->sym, J->num, &J->common) || !(J->common.rcond > tiny)) return 0;
    for (int i = 0; i < J->m; ++i) d[i] = -rhs[i];
    return klu_tsolve(J->sym, J->num, J->m, 1, d, &J->common) && all_finite(d, J->m);
}

/* J' as CHOLMOD's unsymmetric matrix over J's own arrays (J's scalar rows are J''s columns). */
static cholmod_sparse jt_view(clc_jac_sparse *J)
{
    cholmod_sparse A;
    memset(&A, 0, sizeof A);
    A.nrow = A.ncol = (size_t)J->m;
    A.nzmax = (size_t)J->Ap[J->m];
    A.p = J->Ap;
    A.i = J->Ai;
    A.x = J->Ax;
    A.stype = 0;
    A.itype = CHOLMOD_INT;
    A.xtype = CHOLMOD_REAL;
    A.dtype = CHOLMOD_DOUBLE;
    A.packed = 1;
    return A;
}

int clc_jac_sparse_lm(clc_jac_sparse *J, const double *g, double lambda, double *d)
{
    cholmod_sparse A = jt_view(J);
    cholmod_dense *sol;
    double beta[2] = {lambda, 0};
    int super, ok;
    if (!J->cm_started) {
        cholmod_start(&J->cm);
        J->cm.print = 0;
        J->cm_started = 1;
    }
    if (!J->lm && (!(J->lm = cholmod_analyze(&A, &J->cm))
                   || !(J->rhs = cholmod_allocate_dense((size_t)J->m, 1, (size_t)J->m, CHOLMOD_REAL, &J->cm))))
        return 0;
    super = J->lm->is_super;
    clc_blas_begin(super);
    ok = cholmod_factorize_p(&A, beta, NULL, 0, J->lm, &J->cm) && J->cm.status == CHOLMOD_OK;
    for (int i = 0; ok && i < J->m; ++i) ((double *)J->rhs->x)[i] = -g[i];
    sol = ok ? cholmod_solve(CHOLMOD_A, J->lm, J->rhs, &J->cm) : NULL;
    clc_blas_end(super);
    if (!sol) return 0;
    memcpy(d, sol->x, (size_t)J->m * sizeof *d);
    cholmod_free_dense(&sol, &J->cm);
    return all_finite(d, J->m);
}

double clc_jac_sparse_normal_scale(const clc_jac_sparse *J)
{
    double *col = J->col, scale = 0;
    memset(col, 0, (size_t)J->m * sizeof *col);
    for (int k = 0; k < J->Ap[J->m]; ++k) col[J->Ai[k]] += J->Ax[k] * J->Ax[k];
    for (int i = 0; i < J->m; ++i) scale = fmax(scale, col[i]);
    return scale;
}

clcone_status clc_jac_sparse_flops(const clc_jac_sparse *J, double *multsubs, clcone_error *err)
{
    double info[AMD_INFO];
    int *perm = clc_calloc((size_t)J->m + 1, sizeof *perm, err, "AMD's ordering"), ok;
    if (!perm) return CLCONE_ENOMEM;
    ok = amd_order(J->m, J->Ap, J->Ai, perm, NULL, info);
    free(perm);
    if (ok != AMD_OK && ok != AMD_OK_BUT_JUMBLED)
        return clc_fail(err, ok == AMD_OUT_OF_MEMORY ? CLCONE_ENOMEM : CLCONE_EINVAL,
                        "AMD could not order the sparse Jacobian of %d unknowns (status %d)", J->m, ok);
    *multsubs = info[AMD_NMULTSUBS_LU];
    return CLCONE_OK;
}
