/* A primal-dual interior point method for ccp (and soft, a ccp on W + R)
 * on the reference (ref/reference.h; why and where: docs/solvers.md).
 *
 * ccp is the cone QP min 1/2 r'Wr + q'r over r in K_mu. With y = D^-1 r,
 * D = diag(1, mu, mu) a contact, it is min 1/2 y'Py + c'y over the standard
 * second-order cone, P = D W D and c = D q, whose multiplier z = D u lies in
 * the same (self-dual) cone. Each step solves the Newton system of the
 * perturbed complementarity y o z = sigma mu e in Nesterov-Todd scaling,
 * (P + Lambda) dy = rhs with Lambda block-diagonal and positive definite,
 * by a sparse Cholesky factor (CHOLMOD) whose pattern is W's: the ordering
 * is computed once a solve, the numbers every step. Mehrotra's predictor
 * and corrector choose sigma, Gondzio's correctors lengthen the steps
 * where the factor is dear. The factor is of W's symmetric part; where
 * W is not symmetric (most Siconos files, to 1e-5-4e-4) the steps are
 * refined on W itself.
 *
 * Unlike sweeps, the number of steps hardly depends on the problem's
 * conditioning: 27 steps reach 1e-8 on a 3,000-contact pile where ACGS
 * stalls near 1e-5 (docs/measured.md). It cannot start from a given r
 * (an interior method starts inside the cone), so it serves problems too
 * large for the dense Newton, where the hybrid's warm start matters least. */
#include "core/internal.h"
#include "core/parallel.h"
#include "ref/reference.h"

#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The step's share of the way to the cone's boundary. */
#define IPM_STEP_BACK 0.99
/* Steps without a better error, or with a step this short, end the solve: the rounding floor. */
#define IPM_STALL_STEPS 8
#define IPM_MIN_STEP 1e-10
/* The reasons a step fails, and the asymmetry past which a stall's reason names it. */
enum { IPM_NOT_PD = 1, IPM_AT_BOUNDARY };
#define IPM_SYMMETRIC 1e-12
/* Refinements of a step where P is not symmetric: the factor of its symmetric part is their preconditioner. */
#define IPM_REFINE_ASYMMETRIC 4
/* A proximal term on P / dbar's diagonal. Where W is singular the
 * optimal set can be unbounded along its null space, and the central
 * path runs off along it: the 3,000-contact pile's answer had ||r|| 295
 * where ACGS's has 19.5 (a relative error measure by ||r|| flatters such
 * an answer). 1e-10 bounds it (26.8; 38 steps, not 41) and moves the
 * answer by 1e-10 of W's diagonal times r, far below any tol. Where no
 * bounded solution exists at all, r grows as 1 / IPM_PROXIMAL instead of
 * without bound (docs/measured.md). */
#define IPM_PROXIMAL 1e-10
/* The hybrid's price of the method: the steps it takes on piles (27 to
 * 1e-8 on 3,000 contacts, 33 on 10,200, docs/measured.md), each priced
 * at its factor's flops over a sweep's (3,000 contacts: a step 35 ms, a
 * sweep 0.23 ms, at a flop ratio of 151; 10,200: 178 and 1.44 ms at
 * about 290, where the larger factor's BLAS runs faster). */
#define IPM_EXPECTED_STEPS 30
#define IPM_FLOP_PRICE 1
/* Gondzio's centrality correctors after Mehrotra's (Colombo and Gondzio,
 * Comput. Optim. Appl. 41, 2008): each a solve with the step's factor,
 * about 1% of the factorization on the piles. Mehrotra's steps there
 * stop at 20-70% of the way to the boundary, held by a few cones far off
 * the central path; two correctors took the 3,000-contact pile from 38
 * steps to 27 and the 10,200-contact one from 45 to 33 (docs/measured.md).
 * A corrector aims at a step IPM_REACH_GROWTH a + IPM_REACH_STEP, pulls
 * each cone's complementarity eigenvalues there into [IPM_CENTRAL_LO,
 * IPM_CENTRAL_HI] times sigma mu, and is kept where its step is longer by
 * IPM_CORRECTOR_GAIN. They run where the factorization costs at least
 * IPM_CORRECTOR_PAYS of a direction's solves (about 40 on the piles, 0.5-3
 * on the Siconos files, where they cost more time than their steps save). */
#define IPM_CORRECTORS 2
#define IPM_CORRECTOR_PAYS 4
#define IPM_REACH_GROWTH 1.5
#define IPM_REACH_STEP 0.2
#define IPM_CENTRAL_LO 0.1
#define IPM_CENTRAL_HI 10.0
#define IPM_CORRECTOR_GAIN 1.01

typedef struct ipm {
    const clcone_problem *p;
    int c0, n, m;
    double dbar, cs;        /* P's mean diagonal and c's largest entry: P / dbar, c / cs are solved */
    double asym;            /* max |P - P'| / max |P| */
    double sweeps;          /* the hybrid's price, in sweeps (clc_ref_ipm_sweeps) */
    int correctors;         /* centrality correctors a step (correct_centrality) */
    int broke;              /* why the last step failed: IPM_NOT_PD, IPM_AT_BOUNDARY (0: it did not) */
    double *d;              /* m: D's diagonal */
    double *c;              /* m: c / cs */
    double *pv, *pa;        /* P / dbar's symmetric and antisymmetric parts, lower triangles in K's pattern */
    double *y, *z, *rd, *lam, *wb, *eta, *x, *rhs, *kd, *dy, *dz, *dya, *dza, *t2, *rc, *best;
    cholmod_common cm;
    cholmod_sparse *K;
    cholmod_factor *L;
    cholmod_dense *b;
} ipm;

/* x o y of the cone's Jordan algebra, 3 components. */
static void jprod(const double *x, const double *y, double *out)
{
    out[0] = x[0] * y[0] + x[1] * y[1] + x[2] * y[2];
    out[1] = x[0] * y[1] + y[0] * x[1];
    out[2] = x[0] * y[2] + y[0] * x[2];
}

/* out with l o out = r (l inside the cone). */
static void jsolve(const double *l, const double *r, double *out)
{
    double det = l[0] * l[0] - l[1] * l[1] - l[2] * l[2];
    out[0] = (l[0] * r[0] - l[1] * r[1] - l[2] * r[2]) / det;
    out[1] = (r[1] - out[0] * l[1]) / l[0];
    out[2] = (r[2] - out[0] * l[2]) / l[0];
}

/* The Nesterov-Todd scaling W = eta [w0 w1'; w1 I + w1 w1'/(1 + w0)] of one
 * cone from its y and z, w normalised (w0^2 - |w1|^2 = 1); W z = W^-1 y. */
/* sqrt(x0^2 - |x1|^2), factored so that a point near the boundary keeps its digits; 0 outside. */
static double cone_norm(const double *x)
{
    double t = hypot(x[1], x[2]), d = (x[0] - t) * (x[0] + t);
    return d > 0 && isfinite(d) ? sqrt(d) : 0;
}

/* 0 when y or z has left its cone's interior to rounding. */
static int nt_point(const double *y, const double *z, double *w, double *eta)
{
    double ny = cone_norm(y), nz = cone_norm(z), ys[3], zs[3], g;
    if (!(ny > 0 && nz > 0)) return 0;
    for (int a = 0; a < 3; ++a) {
        ys[a] = y[a] / ny;
        zs[a] = z[a] / nz;
    }
    g = sqrt(0.5 * (1 + ys[0] * zs[0] + ys[1] * zs[1] + ys[2] * zs[2]));
    w[0] = (ys[0] + zs[0]) / (2 * g);
    w[1] = (ys[1] - zs[1]) / (2 * g);
    w[2] = (ys[2] - zs[2]) / (2 * g);
    *eta = sqrt(ny / nz);
    return 1;
}

/* out = W v (inv: W^-1 v) of one cone. */
static void nt_mul(const double *w, double eta, int inv, const double *v, double *out)
{
    double s = inv ? -1 : 1, f = inv ? 1 / eta : eta, w1v = w[1] * v[1] + w[2] * v[2];
    double t = s * v[0] + w1v / (1 + w[0]);
    out[0] = f * (w[0] * v[0] + s * w1v);
    out[1] = f * (v[1] + t * w[1]);
    out[2] = f * (v[2] + t * w[2]);
}

/* The largest a <= 1 with x + a dx inside the cone (x inside it). */
static double cone_step(const double *x, const double *dx)
{
    double a = dx[0] * dx[0] - dx[1] * dx[1] - dx[2] * dx[2];
    double b = 2 * (x[0] * dx[0] - x[1] * dx[1] - x[2] * dx[2]);
    double c = x[0] * x[0] - x[1] * x[1] - x[2] * x[2], disc = b * b - 4 * a * c, best = 1;
    if (dx[0] < 0) best = fmin(best, -x[0] / dx[0]);
    if (disc >= 0) {
        double qq = -0.5 * (b + copysign(sqrt(disc), b));
        double r1 = a != 0 ? qq / a : INFINITY, r2 = qq != 0 ? c / qq : INFINITY;
        if (r1 > 0) best = fmin(best, r1);
        if (r2 > 0) best = fmin(best, r2);
    }
    return best;
}

/* out = (P / dbar) v from its symmetric and antisymmetric parts' lower triangles in K's pattern. */
static void p_mul(const ipm *S, const double *v, double *out)
{
    const int *cp = S->K->p, *ri = S->K->i;
    memset(out, 0, (size_t)S->m * sizeof *out);
    for (int j = 0; j < S->m; ++j)
        for (int k = cp[j]; k < cp[j + 1]; ++k) {
            int i = ri[k];
            out[i] += (S->pv[k] + S->pa[k]) * v[j];
            if (i != j) out[j] += (S->pv[k] - S->pa[k]) * v[i];
        }
}

/* K's pattern: W's stored blocks either way round, lower triangle, by
 * contact columns j: the diagonal block's rows, then each partner i > j's
 * three rows in ascending order. part lists the partners, start[j] where
 * j's begin. */
typedef struct pattern {
    int *start, *part;
} pattern;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Each contact's partners, sorted and once each. */
static clcone_status pattern_make(const ipm *S, pattern *pt, clcone_error *err)
{
    const clcone_problem *p = S->p;
    int n = S->n, nb = p->row_ptr[S->c0 + n] - p->row_ptr[S->c0], *fill, u = 0;
    if (!(pt->start = clc_calloc((size_t)n + 1, sizeof(int), err, "interior point pattern"))
        || !(pt->part = clc_calloc((size_t)nb + 1, sizeof(int), err, "interior point pattern"))
        || !(fill = clc_calloc((size_t)n + 1, sizeof(int), err, "interior point pattern")))
        return CLCONE_ENOMEM;
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < n; ++i)
            for (int k = p->row_ptr[S->c0 + i]; k < p->row_ptr[S->c0 + i + 1]; ++k) {
                int j = p->col[k] - S->c0, lo = i < j ? i : j;
                if (j == i || j < 0 || j >= n) continue;
                if (pass == 0) ++pt->start[lo + 1];
                else pt->part[fill[lo]++] = i < j ? j : i;
            }
        if (pass == 1) break;
        for (int j = 0; j < n; ++j) pt->start[j + 1] += pt->start[j];
        memcpy(fill, pt->start, ((size_t)n + 1) * sizeof *fill);
    }
    for (int j = 0; j < n; ++j) { /* sort each list, keep each partner once, compact */
        int a = pt->start[j], e = pt->start[j + 1], first = u;
        qsort(pt->part + a, (size_t)(e - a), sizeof *pt->part, cmp_int);
        for (int k = a; k < e; ++k)
            if (k == a || pt->part[k] != pt->part[k - 1]) pt->part[u++] = pt->part[k];
        pt->start[j] = first;
    }
    pt->start[n] = u;
    free(fill);
    return CLCONE_OK;
}

/* The position in K->x of entry (3 hi + a, 3 lo + b), hi >= lo contacts (a >= b when hi == lo). */
static int k_pos(const ipm *S, const pattern *pt, int hi, int lo, int a, int b)
{
    const int *cp = S->K->p;
    const int *first = pt->part + pt->start[lo], *at;
    if (hi == lo) return cp[3 * lo + b] + a - b;
    at = bsearch(&hi, first, (size_t)(pt->start[lo + 1] - pt->start[lo]), sizeof *first, cmp_int);
    return cp[3 * lo + b] + 3 - b + 3 * (int)(at - first) + a;
}

/* K's pattern and P / dbar's values in it, D, c and the scales. */
static clcone_status system_make(ipm *S, clcone_error *err)
{
    const clcone_problem *p = S->p;
    pattern pt = {NULL, NULL};
    clcone_status s = pattern_make(S, &pt, err);
    int nnz, *cp, *ri;
    double dsum = 0, amax = 0, pmax = 0;
    if (s) goto done;
    for (int i = 0; i < S->n; ++i) {
        int c = S->c0 + i;
        S->d[3 * i] = 1;
        S->d[3 * i + 1] = S->d[3 * i + 2] = p->mu[c];
    }
    nnz = 6 * S->n + 9 * pt.start[S->n];
    if (!(S->K = cholmod_allocate_sparse((size_t)S->m, (size_t)S->m, (size_t)nnz, 1, 1, -1, CHOLMOD_REAL, &S->cm))
        || !(S->pv = clc_calloc((size_t)nnz, sizeof *S->pv, err, "interior point matrix"))
        || !(S->pa = clc_calloc((size_t)nnz, sizeof *S->pa, err, "interior point matrix"))) {
        s = S->K ? CLCONE_ENOMEM : clc_fail(err, CLCONE_ENOMEM, "interior point matrix of %d entries", nnz);
        goto done;
    }
    cp = S->K->p;
    ri = S->K->i;
    cp[0] = 0;
    for (int j = 0; j < S->n; ++j)
        for (int b = 0; b < 3; ++b) {
            int at = cp[3 * j + b];
            for (int a = b; a < 3; ++a) ri[at++] = 3 * j + a;
            for (int k = pt.start[j]; k < pt.start[j + 1]; ++k)
                for (int a = 0; a < 3; ++a) ri[at++] = 3 * pt.part[k] + a;
            cp[3 * j + b + 1] = at;
        }
    for (int i = 0; i < S->n; ++i) {
        for (int k = p->row_ptr[S->c0 + i]; k < p->row_ptr[S->c0 + i + 1]; ++k)
            if (p->col[k] == S->c0 + i)
                for (int a = 0; a < 3; ++a) dsum += S->d[3 * i + a] * S->d[3 * i + a] * p->blocks[9 * k + 4 * a];
    }
    S->dbar = dsum > 0 && isfinite(dsum) ? dsum / S->m : 1;
    for (int i = 0; i < S->n; ++i)
        for (int k = p->row_ptr[S->c0 + i]; k < p->row_ptr[S->c0 + i + 1]; ++k) {
            int j = p->col[k] - S->c0;
            if (j < 0 || j >= S->n) continue;
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b) {
                    int r = 3 * i + a, col = 3 * j + b, hi = i > j || (i == j && a >= b);
                    double v = S->d[r] * p->blocks[9 * k + 3 * a + b] * S->d[col] / S->dbar;
                    int at = hi ? k_pos(S, &pt, i, j, a, b) : k_pos(S, &pt, j, i, b, a);
                    S->pv[at] += r == col ? v : 0.5 * v;
                    if (r != col) S->pa[at] += hi ? 0.5 * v : -0.5 * v;
                }
        }
    for (int j = 0; j < S->m; ++j) S->pv[cp[j]] += IPM_PROXIMAL;
    for (int k = 0; k < nnz; ++k) {
        amax = fmax(amax, fabs(S->pa[k]));
        pmax = fmax(pmax, fabs(S->pv[k]));
    }
    S->asym = pmax > 0 ? amax / pmax : 0;
done:
    free(pt.start);
    free(pt.part);
    return s;
}

/* The Newton system's matrix P / dbar + W^-2, factored; 0 when it is not positive definite to rounding. */
static int factor(ipm *S)
{
    double *kx = S->K->x;
    const int *cp = S->K->p;
    int ok, super = S->L->is_super;
    memcpy(kx, S->pv, (size_t)S->K->nzmax * sizeof *kx);
    for (int i = 0; i < S->n; ++i) {
        const double *w = S->wb + 3 * i;
        double col[3][3], e[3], t[3];
        for (int b = 0; b < 3; ++b) { /* W^-2 column b = W^-1 (W^-1 e_b) */
            e[0] = e[1] = e[2] = 0;
            e[b] = 1;
            nt_mul(w, S->eta[i], 1, e, t);
            nt_mul(w, S->eta[i], 1, t, col[b]);
        }
        for (int b = 0; b < 3; ++b)
            for (int a = b; a < 3; ++a) kx[cp[3 * i + b] + a - b] += col[b][a];
    }
    clc_blas_begin(super);
    ok = cholmod_factorize(S->K, S->L, &S->cm) && S->cm.status == CHOLMOD_OK;
    clc_blas_end(super);
    return ok;
}

/* out = K^-1 in by the factor; 0 when CHOLMOD fails (out of memory). */
static int chol_solve(ipm *S, const double *in, double *out)
{
    cholmod_dense *sol;
    memcpy(S->b->x, in, (size_t)S->m * sizeof *in);
    clc_blas_begin(S->L->is_super);
    sol = cholmod_solve(CHOLMOD_A, S->L, S->b, &S->cm);
    clc_blas_end(S->L->is_super);
    if (!sol) return 0;
    memcpy(out, sol->x, (size_t)S->m * sizeof *out);
    cholmod_free_dense(&sol, &S->cm);
    return 1;
}

static int refinements(const ipm *S)
{
    return S->asym > IPM_SYMMETRIC ? IPM_REFINE_ASYMMETRIC : 1;
}

/* The step (dy, dz) for the complementarity right side rc (3 a cone):
 * W dz + W^-1 dy = lam \ rc. The factor's solve is refined on its
 * residual with P itself: once where P is symmetric (near the end the
 * scaling's entries span some 1e13), more where the factor is of P's
 * symmetric part only. */
static clcone_status direction(ipm *S, const double *rc, double *dy, double *dz, clcone_error *err)
{
    for (int i = 0; i < S->n; ++i) {
        jsolve(S->lam + 3 * i, rc + 3 * i, S->x + 3 * i);
        nt_mul(S->wb + 3 * i, S->eta[i], 1, S->x + 3 * i, S->rhs + 3 * i);
    }
    for (int k = 0; k < S->m; ++k) S->rhs[k] -= S->rd[k];
    if (!chol_solve(S, S->rhs, dy)) goto failed;
    for (int pass = 0; pass < refinements(S); ++pass) {
        p_mul(S, dy, S->kd);
        for (int i = 0; i < S->n; ++i) {
            double t[3], u[3];
            nt_mul(S->wb + 3 * i, S->eta[i], 1, dy + 3 * i, t);
            nt_mul(S->wb + 3 * i, S->eta[i], 1, t, u);
            for (int a = 0; a < 3; ++a) S->kd[3 * i + a] = S->rhs[3 * i + a] - S->kd[3 * i + a] - u[a];
        }
        if (!chol_solve(S, S->kd, S->kd)) goto failed;
        for (int k = 0; k < S->m; ++k) dy[k] += S->kd[k];
    }
    for (int i = 0; i < S->n; ++i) {
        double t[3];
        nt_mul(S->wb + 3 * i, S->eta[i], 1, dy + 3 * i, t);
        for (int a = 0; a < 3; ++a) t[a] = S->x[3 * i + a] - t[a];
        nt_mul(S->wb + 3 * i, S->eta[i], 1, t, dz + 3 * i);
    }
    return CLCONE_OK;
failed:
    return clc_fail(err, CLCONE_ENOMEM, "interior point: CHOLMOD's solve failed (status %d)", S->cm.status);
}

/* The largest step, at most 1, that keeps y + a dy and z + a dz in their cones. */
static double max_step(const ipm *S, const double *dy, const double *dz)
{
    double a = 1;
    for (int i = 0; i < S->n; ++i) {
        a = fmin(a, cone_step(S->y + 3 * i, dy + 3 * i));
        a = fmin(a, cone_step(S->z + 3 * i, dz + 3 * i));
    }
    return a;
}

/* Cone i's centrality correction: the Jordan product of its scaled y and
 * z a step `reach` along (dy, dz), whose two eigenvalues are brought into
 * [IPM_CENTRAL_LO, IPM_CENTRAL_HI] times target (a large one lowered by at
 * most IPM_CENTRAL_HI target), less the product, into out. */
static void centrality_term(const ipm *S, int i, double reach, double target, double *out)
{
    double u[3], v[3], ys[3], zs[3], pr[3], n1, d[2], lo = IPM_CENTRAL_LO * target, hi = IPM_CENTRAL_HI * target;
    nt_mul(S->wb + 3 * i, S->eta[i], 1, S->dy + 3 * i, u);
    nt_mul(S->wb + 3 * i, S->eta[i], 0, S->dz + 3 * i, v);
    for (int a = 0; a < 3; ++a) {
        ys[a] = S->lam[3 * i + a] + reach * u[a];
        zs[a] = S->lam[3 * i + a] + reach * v[a];
    }
    jprod(ys, zs, pr);
    n1 = hypot(pr[1], pr[2]);
    for (int k = 0; k < 2; ++k) {
        double l = k ? pr[0] - n1 : pr[0] + n1;
        d[k] = l < lo ? lo - l : l > hi ? fmax(hi - l, -hi) : 0;
    }
    out[0] = 0.5 * (d[0] + d[1]);
    out[1] = n1 > 0 ? 0.5 * (d[0] - d[1]) * pr[1] / n1 : 0;
    out[2] = n1 > 0 ? 0.5 * (d[0] - d[1]) * pr[2] / n1 : 0;
}

static void swap_arrays(double **a, double **b)
{
    double *t = *a;
    *a = *b;
    *b = t;
}

/* Up to S->correctors centrality correctors of the direction (dy, dz)
 * for right side t2, whose step to the boundary is *a; dya, dza and rc
 * are free. A kept one becomes the direction, its right side t2. */
static clcone_status correct_centrality(ipm *S, double target, double *a, clcone_error *err)
{
    for (int k = 0; k < S->correctors && *a < 1; ++k) {
        double reach = fmin(1, IPM_REACH_GROWTH * *a + IPM_REACH_STEP), longer;
        clcone_status s;
        for (int i = 0; i < S->n; ++i) centrality_term(S, i, reach, target, S->rc + 3 * i);
        for (int j = 0; j < S->m; ++j) S->rc[j] += S->t2[j];
        if ((s = direction(S, S->rc, S->dya, S->dza, err))) return s;
        longer = max_step(S, S->dya, S->dza);
        if (!(longer >= IPM_CORRECTOR_GAIN * *a)) break;
        swap_arrays(&S->dy, &S->dya);
        swap_arrays(&S->dz, &S->dza);
        swap_arrays(&S->t2, &S->rc);
        *a = longer;
    }
    return CLCONE_OK;
}

/* One predictor-corrector step from (y, z) with rd current; *alpha the step taken, 0 with S->broke set. */
static clcone_status ipm_step(ipm *S, double gap, double *alpha, clcone_error *err)
{
    clcone_status s;
    double a, gap_a = 0, sigma;
    *alpha = 0;
    for (int i = 0; i < S->n; ++i) {
        if (!nt_point(S->y + 3 * i, S->z + 3 * i, S->wb + 3 * i, S->eta + i)) {
            S->broke = IPM_AT_BOUNDARY;
            return CLCONE_OK;
        }
        nt_mul(S->wb + 3 * i, S->eta[i], 0, S->z + 3 * i, S->lam + 3 * i);
    }
    if (!factor(S)) {
        S->broke = IPM_NOT_PD;
        return CLCONE_OK;
    }
    for (int i = 0; i < S->n; ++i) { /* predictor: sigma 0 */
        jprod(S->lam + 3 * i, S->lam + 3 * i, S->t2 + 3 * i);
        for (int k = 0; k < 3; ++k) S->t2[3 * i + k] = -S->t2[3 * i + k];
    }
    if ((s = direction(S, S->t2, S->dya, S->dza, err))) return s;
    a = max_step(S, S->dya, S->dza);
    for (int k = 0; k < S->m; ++k) gap_a += (S->y[k] + a * S->dya[k]) * (S->z[k] + a * S->dza[k]);
    sigma = pow(fmax(gap_a, 0) / gap, 3);
    for (int i = 0; i < S->n; ++i) { /* corrector: Mehrotra's second-order term and sigma mu e */
        double u[3], v[3], uv[3];
        nt_mul(S->wb + 3 * i, S->eta[i], 1, S->dya + 3 * i, u);
        nt_mul(S->wb + 3 * i, S->eta[i], 0, S->dza + 3 * i, v);
        jprod(u, v, uv);
        for (int k = 0; k < 3; ++k) S->t2[3 * i + k] -= uv[k];
        S->t2[3 * i] += sigma * gap / S->n;
    }
    if ((s = direction(S, S->t2, S->dy, S->dz, err))) return s;
    a = max_step(S, S->dy, S->dz);
    if ((s = correct_centrality(S, sigma * gap / S->n, &a, err))) return s;
    a = fmin(1, IPM_STEP_BACK * a);
    for (int k = 0; k < S->m; ++k) {
        S->y[k] += a * S->dy[k];
        S->z[k] += a * S->dz[k];
    }
    *alpha = a;
    return CLCONE_OK;
}

static void ipm_free(ipm *S)
{
    double **arrays[] = {&S->d, &S->c, &S->pv, &S->pa, &S->y, &S->z, &S->rd, &S->lam, &S->wb, &S->eta, &S->x,
                         &S->rhs, &S->kd, &S->dy, &S->dz, &S->dya, &S->dza, &S->t2, &S->rc, &S->best};
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; ++k) free(*arrays[k]);
    cholmod_free_factor(&S->L, &S->cm);
    cholmod_free_sparse(&S->K, &S->cm);
    cholmod_free_dense(&S->b, &S->cm);
    cholmod_finish(&S->cm);
}

/* Arrays, K with P's values, and the symbolic factor; CHOLMOD never prints (the library does not). */
static clcone_status ipm_alloc(ipm *S, clcone_error *err)
{
    size_t m = (size_t)S->m;
    double **arrays[] = {&S->d, &S->c, &S->y, &S->z, &S->rd, &S->lam, &S->wb, &S->x,
                         &S->rhs, &S->kd, &S->dy, &S->dz, &S->dya, &S->dza, &S->t2, &S->rc, &S->best};
    clcone_status s;
    for (size_t k = 0; k < sizeof arrays / sizeof *arrays; ++k)
        if (!(*arrays[k] = clc_calloc(m, sizeof(double), err, "interior point vectors"))) return CLCONE_ENOMEM;
    if (!(S->eta = clc_calloc((size_t)S->n, sizeof(double), err, "interior point scaling"))) return CLCONE_ENOMEM;
    if ((s = system_make(S, err))) return s;
    if (!(S->b = cholmod_allocate_dense(m, 1, m, CHOLMOD_REAL, &S->cm)) || !(S->L = cholmod_analyze(S->K, &S->cm)))
        return clc_fail(err, CLCONE_ENOMEM, "interior point: CHOLMOD's analysis of %zu unknowns failed (status %d)",
                        m, S->cm.status);
    return CLCONE_OK;
}

/* r's range from the scaled iterate y: r = (cs / dbar) D y. */
static void iterate_to_r(const ipm *S, double *r)
{
    for (int k = 0; k < S->m; ++k) r[3 * S->c0 + k] = S->cs / S->dbar * S->d[k] * S->y[k];
}

/* rd = (P / dbar) y + c - z; returns y'z. */
static double residual(ipm *S)
{
    double gap = 0;
    p_mul(S, S->y, S->rd);
    for (int k = 0; k < S->m; ++k) {
        S->rd[k] += S->c[k] - S->z[k];
        gap += S->y[k] * S->z[k];
    }
    return gap;
}

/* Iteration it0 of the solve (clock t0) is the given r, kept if it is the
 * best; the method's own start is the cone's centre e in both y and z,
 * which the scales make fit every problem. */
clcone_status clc_ref_ipm_run(ipm *S, const clcone_problem *p, const clcone_options *o, double *r, int it0,
                              double t0, clcone_prob_result *out, clcone_error *err)
{
    int c1 = S->c0 + S->n, prob = clc_ref_problem_of(p, S->c0), own_it = it0 + 1;
    double best_e = INFINITY, own_e = INFINITY, alpha = 1, step_ms = 0, cmax = 0;
    clcone_status s = CLCONE_OK;
    S->p = p; /* S's W, this q */
    for (int i = 0; i < S->m; ++i) cmax = fmax(cmax, fabs(S->d[i] * p->q[3 * S->c0 + i]));
    S->cs = cmax > 0 ? cmax : 1;
    for (int i = 0; i < S->m; ++i) S->c[i] = S->d[i] * p->q[3 * S->c0 + i] / S->cs;
    for (int k = 0; k < S->m; ++k)
        if (!isfinite(r[3 * S->c0 + k])) r[3 * S->c0 + k] = 0;
    S->broke = 0;
    for (int k = 0; k < S->m; ++k) S->y[k] = S->z[k] = k % 3 == 0; /* e, whatever an earlier run left */
    out->status = CLCONE_CONVERGED; /* the stopping rule sets it */
    for (int it = it0;; ++it) {
        double e = clcone_error_of(p, o, r, S->c0, c1), elapsed = clc_now_ms() - t0;
        if (it > it0 && e < own_e) { /* the method's own progress, which the start does not judge */
            own_e = e;
            own_it = it;
        }
        if (e < best_e) {
            best_e = e;
            memcpy(S->best, r + 3 * S->c0, (size_t)S->m * sizeof *r);
        }
        out->time_ms = elapsed;
        if (it > it0) clc_history_add(o->history, prob, it, elapsed, e);
        if (o->progress) o->progress(o->progress_user, prob, it, e);
        if (clc_stop_rule(o, it, e, elapsed, out)) break;
        if (it - own_it >= IPM_STALL_STEPS || alpha < IPM_MIN_STEP) {
            static const char *const why[] = {"no step has lowered the error since step %d",
                                               "its Newton matrix is not positive definite after step %d",
                                               "an iterate reached a cone's boundary to rounding after step %d"};
            int len = snprintf(out->reason, sizeof out->reason, "the interior point stops at error %.3g: ", best_e);
            snprintf(out->reason + len, sizeof out->reason - (size_t)len, why[S->broke],
                     S->broke ? it - it0 : own_it - it0);
            if (S->asym > IPM_SYMMETRIC)
                snprintf(out->reason + strlen(out->reason), sizeof out->reason - strlen(out->reason),
                         "; W is not symmetric (relative asymmetry %.1e), and ipm's factor is of its symmetric part",
                         S->asym);
            out->status = CLCONE_FAILED;
            break;
        }
        /* CHOLMOD's factorization cannot be cut short: 4.3 s a step on a 60,000-contact pile */
        if (clc_step_passes_cap(o, it, elapsed, step_ms, out)) break;
        step_ms = clc_now_ms();
        if ((s = ipm_step(S, residual(S), &alpha, err))) break;
        step_ms = clc_now_ms() - step_ms;
        iterate_to_r(S, r);
    }
    if (out->status != CLCONE_CONVERGED || s) {
        memcpy(r + 3 * S->c0, S->best, (size_t)S->m * sizeof *r);
        out->error = best_e;
    }
    return s;
}

clcone_status clc_ref_ipm_prepare(const clcone_problem *p, int c0, int c1, ipm **out, clcone_error *err)
{
    ipm *S;
    clcone_status s;
    *out = NULL;
    for (int c = c0; c < c1; ++c)
        if (!(p->mu[c] > 0))
            return clc_fail(err, CLCONE_ENOTSUP,
                            "ipm needs friction at every contact: contact %d has mu %g (its cone has no interior)",
                            c, p->mu[c]);
    if (!(S = clc_calloc(1, sizeof *S, err, "interior point"))) return CLCONE_ENOMEM;
    S->p = p;
    S->c0 = c0;
    S->n = c1 - c0;
    S->m = 3 * S->n;
    cholmod_start(&S->cm);
    S->cm.print = 0;
    if ((s = ipm_alloc(S, err))) {
        clc_ref_ipm_release(S);
        return s;
    }
    /* priced now: a run points S->p at its own q's problem, which may not outlive it */
    S->sweeps = IPM_EXPECTED_STEPS * IPM_FLOP_PRICE * S->cm.fl / (81.0 * (p->row_ptr[c1] - p->row_ptr[c0]) + 1);
    /* a solve is 4 flops an entry of L (both triangles), once and once a refinement */
    S->correctors = S->cm.fl >= IPM_CORRECTOR_PAYS * 4 * S->cm.lnz * (1 + refinements(S)) ? IPM_CORRECTORS : 0;
    *out = S;
    return CLCONE_OK;
}

void clc_ref_ipm_release(ipm *S)
{
    if (!S) return;
    ipm_free(S);
    free(S);
}

void clc_ref_ipm_trim(ipm *S)
{
    /* the symbolic factor keeps its kind: supernodal or simplicial, as analysed */
    if (S) cholmod_change_factor(CHOLMOD_PATTERN, S->L->is_ll, S->L->is_super, 1, 1, S->L, &S->cm);
}

double clc_ref_ipm_sweeps(const ipm *S)
{
    return S->sweeps;
}

clcone_status clc_ref_ipm(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                          clcone_prob_result *out, clcone_error *err)
{
    ipm *S;
    double t0 = clc_now_ms();
    clcone_status s = clc_ref_ipm_prepare(p, c0, c1, &S, err);
    if (!s) s = clc_ref_ipm_run(S, p, o, r, 0, t0, out, err);
    clc_ref_ipm_release(S);
    return s;
}
