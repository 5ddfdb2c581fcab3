/* The N-facet pyramid as a Stewart-Trinkle LCP, solved by Lemke's method
 * (ref/lemke.c): the CPU reference's direct pyramid solver.
 *
 * Per contact c, with the friction force written on the pyramid's edge
 * rays, r_t = sum_j beta_j g_j (g_j the unit vertex directions of
 * cone_pyramid_make, rho the vertex radius), and u = W r + q:
 *
 *   0 <= r_n    _|_ u_n                      >= 0
 *   0 <= beta_j _|_ lambda + g_j . u_t       >= 0   (j = 0..N-1)
 *   0 <= lambda _|_ rho r_n - sum_j beta_j   >= 0
 *
 * At a solution lambda = max_j(-g_j . u_t) = support(u_t) / rho, so r is
 * in the pyramid, u + support(u_t) e_n in its dual and the two are
 * orthogonal: exactly the zero of the pyramid natural map that
 * cone_residual_pyramid measures.
 *
 * z^T M z = (D^T z)^T W (D^T z) + rho r_n lambda >= 0 on z >= 0, so M
 * is copositive when W is PSD and Lemke's method ends at a solution or on
 * a secondary ray; Anitescu and Potra (1997) show that it solves the
 * frictional LCP of a scene (W = J M^-1 J^T, q = J v*). An arbitrary q
 * outside the range of a singular W, or an indefinite W (allowed off the
 * diagonal by clcone_problem_validate), may admit no solution: the ray
 * then says so rather than being an error of the method.
 *
 * Lemke ignores o->warm_start: a complementary pivoting path always
 * starts from z = 0 (the basis of slacks); a start r carries no basis to
 * resume from. */
#include "ref/lemke.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cone.h"
#include "core/analysis.h"
#include "core/internal.h"
#include "ref/reference.h"

/* ------------------------------------------------------------------ */
/* Pyramid LCP                                                        */
/* ------------------------------------------------------------------ */

/* Unit vertex direction g_j, at phi0 + pi/N + 2 pi j / N: the angles
 * of cone_pyramid_project's edge rays, which depend on the fit but not on
 * mu (cone_pyramid_make's phi0 is mu-free). */
static void vertex_dir(const clcone_options *o, int j, double g[2])
{
    int N = o->facets;
    double phi0 = cone_pyramid_make(N, o->fit == CLCONE_FIT_INNER, 1.0).phi0;
    double a = phi0 + CONE_PI / N + 2 * CONE_PI * j / N;
    g[0] = cos(a);
    g[1] = sin(a);
}

/* Where W's largest normal diagonal over [c0, c1) lies outside [2^-10,
 * 2^10], the power of two that brings it into [1, 2); else 1. Lemke's
 * pivot and ratio tests compare W's entries with the lambda rows' unit
 * entries and absolute floors, so a W of 1e10 or 1e-10 failed (ray
 * termination, complementarity off) where the same problem at unit
 * scale solves. Scaling W and q together leaves r as it is (u and lambda
 * scale with them), and a power of two rounds nothing; problems inside
 * the range keep their pivots bit for bit (BoxesStack1, singular W,
 * lands at 2.1e-10 in place of below 1e-10 when scaled by 2^-9). */
static double lcp_scale(const clcone_problem *p, int c0, int c1)
{
    double dmax = 0;
    int e;
    for (int c = c0; c < c1; ++c) {
        int k = clc_diag_slot(p, c);
        if (k >= 0) dmax = fmax(dmax, p->blocks[9 * (size_t)k]);
    }
    if (!(dmax > 0) || !isfinite(dmax) || (dmax >= 0x1p-10 && dmax <= 0x1p10)) return 1;
    frexp(dmax, &e);
    return ldexp(1.0, 1 - e);
}

static cone_pyramid contact_pyramid(const clcone_problem *p,
                                    const clcone_options *o, int c)
{
    return cone_pyramid_make(o->facets, o->fit == CLCONE_FIT_INNER, p->mu[c]);
}

/* Column access of W's blocks among contacts [c0, c1): block column d
 * holds the blocks (*tblk)[k] of block rows (*trow)[k] for k in
 * [(*tptr)[d], (*tptr)[d + 1]). A block coupling to a contact outside the
 * range is refused. */
static clcone_status block_columns(const clcone_problem *p, int c0, int c1, int **tptr, int **tblk, int **trow,
                                   clcone_error *err)
{
    int nc = c1 - c0, c, d, k, *cnt;
    clcone_status s = CLCONE_OK;
    cnt = clc_calloc((size_t)nc + 1, sizeof *cnt, err, "lemke: block columns");
    *tptr = clc_calloc((size_t)nc + 1, sizeof **tptr, err, "lemke: block columns");
    if (!cnt || !*tptr) { s = CLCONE_ENOMEM; goto done; }
    for (c = c0; c < c1; ++c) {
        for (k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            d = p->col[k];
            if (d < c0 || d >= c1) {
                s = clc_fail(err, CLCONE_EINVAL,
                                "lemke: block (%d, %d) of W couples contact %d with contact %d "
                                "outside the problem's range [%d, %d)",
                                c, d, c, d, c0, c1);
                goto done;
            }
            cnt[d - c0 + 1]++;
        }
    }
    for (d = 0; d < nc; ++d) (*tptr)[d + 1] = (*tptr)[d] + cnt[d + 1];
    *tblk = clc_calloc((size_t)(*tptr)[nc], sizeof **tblk, err, "lemke: block columns");
    *trow = clc_calloc((size_t)(*tptr)[nc], sizeof **trow, err, "lemke: block columns");
    if (!*tblk || !*trow) { s = CLCONE_ENOMEM; goto done; }
    for (d = 0; d < nc; ++d) cnt[d] = (*tptr)[d];
    for (c = c0; c < c1; ++c) {
        for (k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            d = p->col[k] - c0;
            (*tblk)[cnt[d]] = k;
            (*trow)[cnt[d]] = c;
            cnt[d]++;
        }
    }
done:
    free(cnt);
    return s;
}

clcone_status clc_lemke_pyramid_lcp(const clcone_problem *p,
                                       const clcone_options *o, int c0,
                                       int c1, clc_lemke_lcp *L,
                                       clcone_error *err)
{
    int N, K, nc, n, d, a, j, k;
    long long rows;
    size_t nnz, pos;
    int *tptr = NULL, *tblk = NULL, *trow = NULL;
    double *g = NULL, scale;
    clcone_status s;

    if (!p || !o || !L || c0 < 0 || c1 < c0 || c1 > p->n)
        return clc_fail(err, CLCONE_EINVAL, "lemke: invalid arguments (contacts [%d, %d))",
                           c0, c1);
    memset(L, 0, sizeof *L);
    N = o->facets;
    if (N < 3)
        return clc_fail(err, CLCONE_EINVAL, "lemke: the pyramid needs at least 3 facets (got %d)",
                           N);
    nc = c1 - c0;
    rows = ((long long)N + 2) * (long long)nc;
    if (rows > CLCONE_LEMKE_MAX_ROWS) {
        long long most = CLCONE_LEMKE_MAX_ROWS / ((long long)N + 2);
        return clc_fail(err, CLCONE_ENOTSUP,
                           "lemke: %d contacts at N = %d need a dense LCP of %lld rows, above "
                           "the limit of %d rows (Lemke is dense: at most %lld contact%s at "
                           "N = %d; %d at N = 4, %d at N = 8, %d at N = 16); use pgs or "
                           "jacobi for the pyramid",
                           nc, N, rows, CLCONE_LEMKE_MAX_ROWS, most, most == 1 ? "" : "s",
                           N, CLCONE_LEMKE_MAX_ROWS / 6, CLCONE_LEMKE_MAX_ROWS / 10,
                           CLCONE_LEMKE_MAX_ROWS / 18);
    }
    K = N + 2;
    n = (int)rows;

    g = clc_calloc(2 * (size_t)N, sizeof *g, err, "lemke: vertex directions");
    if (!g) { s = CLCONE_ENOMEM; goto done; }
    if ((s = block_columns(p, c0, c1, &tptr, &tblk, &trow, err))) goto done;

    /* Per block column: (N+1) columns of N+1 entries per block, plus the
     * lambda row entry; and the lambda column with N ones. */
    nnz = 0;
    for (d = 0; d < nc; ++d)
        nnz += (size_t)(N + 1) * ((size_t)(tptr[d + 1] - tptr[d]) * (size_t)(N + 1) + 1)
               + (size_t)N;
    s = clc_lemke_lcp_alloc(L, n, nnz, err);
    if (s != CLCONE_OK) goto done;

    for (j = 0; j < N; ++j) vertex_dir(o, j, g + 2 * j);
    scale = lcp_scale(p, c0, c1);
    pos = 0;
    for (d = 0; d < nc; ++d) {
        int od = d * K;
        double rho = contact_pyramid(p, o, c0 + d).rho;
        for (a = 0; a <= N; ++a) {
            double dv[3];
            dv[0] = a == 0 ? 1 : 0;
            dv[1] = a == 0 ? 0 : g[2 * (a - 1)];
            dv[2] = a == 0 ? 0 : g[2 * (a - 1) + 1];
            for (k = tptr[d]; k < tptr[d + 1]; ++k) {
                const double *B = p->blocks + 9 * (size_t)tblk[k];
                int oc = (trow[k] - c0) * K;
                double v[3];
                int i;
                for (i = 0; i < 3; ++i)
                    v[i] = scale * (B[3 * i] * dv[0] + B[3 * i + 1] * dv[1] + B[3 * i + 2] * dv[2]);
                L->row[pos] = oc;
                L->val[pos++] = v[0];
                for (j = 0; j < N; ++j) {
                    L->row[pos] = oc + 1 + j;
                    L->val[pos++] = g[2 * j] * v[1] + g[2 * j + 1] * v[2];
                }
            }
            L->row[pos] = od + N + 1;
            L->val[pos++] = a == 0 ? rho : -1.0;
            L->col_ptr[od + a + 1] = (int)pos;
        }
        for (j = 0; j < N; ++j) {
            L->row[pos] = od + 1 + j;
            L->val[pos++] = 1.0;
        }
        L->col_ptr[od + N + 2] = (int)pos;
    }
    for (d = 0; d < nc; ++d) {
        const double *q = p->q + 3 * (size_t)(c0 + d);
        L->b[d * K] = scale * q[0];
        for (j = 0; j < N; ++j)
            L->b[d * K + 1 + j] = scale * (g[2 * j] * q[1] + g[2 * j + 1] * q[2]);
        L->b[d * K + N + 1] = 0;
    }
    s = CLCONE_OK;
done:
    free(tptr);
    free(tblk);
    free(trow);
    free(g);
    return s;
}

void clc_lemke_pyramid_reactions(const clcone_problem *p,
                                    const clcone_options *o, int c0, int c1,
                                    const double *z, double *r)
{
    int N = o->facets, K = N + 2, c, j;
    (void)p;   /* the directions g_j do not depend on the contact */
    for (c = c0; c < c1; ++c) {
        const double *zc = z + (size_t)(c - c0) * (size_t)K;
        double t1 = 0, t2 = 0, g[2];
        for (j = 0; j < N; ++j) {
            vertex_dir(o, j, g);
            t1 += zc[1 + j] * g[0];
            t2 += zc[1 + j] * g[1];
        }
        r[3 * c] = zc[0];
        r[3 * c + 1] = t1;
        r[3 * c + 2] = t2;
    }
}

/* ------------------------------------------------------------------ */
/* The reference solver                                               */
/* ------------------------------------------------------------------ */

/* A direct method's answer is exact up to rounding: tolerances tighter
 * than this cannot be certified and are not demanded of it. */
#define LEMKE_ERROR_FLOOR 1e-12
/* Largest relative complementarity violation accepted at the end. */
#define LEMKE_LCP_TOL 1e-9

clcone_status clc_ref_lemke_pyramid(const clcone_problem *p, const clcone_options *o,
                                       int c0, int c1, double *r,
                                       clcone_prob_result *out, clcone_error *err)
{
    clc_lemke_lcp L;
    clc_lemke_info info;
    clcone_status s;
    double *z = NULL, lcp, limit;

    if (!p || !o || !r || !out)
        return clc_fail(err, CLCONE_EINVAL, "lemke: NULL argument");
    memset(out, 0, sizeof *out);
    out->status = CLCONE_FAILED;
    if (c0 < 0 || c1 < c0 || c1 > p->n) {
        snprintf(out->reason, sizeof out->reason, "invalid contact range");
        return clc_fail(err, CLCONE_EINVAL, "lemke: contact range [%d, %d) outside [0, %d)",
                           c0, c1, p->n);
    }
    if (o->model != CLCONE_MODEL_PYRAMID) {
        snprintf(out->reason, sizeof out->reason, "lemke solves the pyramid model only");
        return clc_fail(err, CLCONE_ENOTSUP,
                           "lemke: solves the pyramid model only (got model %d)",
                           (int)o->model);
    }
    if (o->max_iter < 1) {
        snprintf(out->reason, sizeof out->reason, "max_iter must be >= 1");
        return clc_fail(err, CLCONE_EINVAL, "lemke: max_iter must be >= 1 (got %d)",
                           o->max_iter);
    }
    s = clc_lemke_pyramid_lcp(p, o, c0, c1, &L, err);
    if (s != CLCONE_OK) {
        snprintf(out->reason, sizeof out->reason, "%s",
                 s == CLCONE_ENOTSUP ? "problem too large for dense Lemke"
                                     : "cannot build the pyramid LCP");
        return s;
    }
    z = clc_calloc((size_t)L.n, sizeof *z, err, "lemke: LCP unknowns");
    if (!z) {
        clc_lemke_lcp_free(&L);
        snprintf(out->reason, sizeof out->reason, "out of memory");
        return CLCONE_ENOMEM;
    }
    s = clc_lemke_solve(&L, o->max_iter, o->max_seconds, z, &info, err);
    if (s != CLCONE_OK) {
        snprintf(out->reason, sizeof out->reason, "lemke: %s", clcone_status_name(s));
        goto done;
    }
    /* Even on failure r gets the last almost-complementary point, so that
     * out->error says how far from a solution it stopped. */
    clc_lemke_pyramid_reactions(p, o, c0, c1, z, r);
    out->iters = info.pivots;
    out->error = clcone_error_of(p, o, r, c0, c1);
    switch (info.outcome) {
    case CLCONE_LEMKE_SOLVED:
        lcp = clc_lemke_complementarity(&L, z);
        limit = o->tol > LEMKE_ERROR_FLOOR ? o->tol : LEMKE_ERROR_FLOOR;
        if (!(lcp <= LEMKE_LCP_TOL)) {
            snprintf(out->reason, sizeof out->reason,
                     "solved after %d pivots but LCP complementarity is off by %.3g (relative)",
                     info.pivots, lcp);
        } else if (!(out->error <= limit)) {
            snprintf(out->reason, sizeof out->reason,
                     "solved after %d pivots but the pyramid error %.3g exceeds %.3g",
                     info.pivots, out->error, limit);
        } else {
            out->status = CLCONE_CONVERGED;
        }
        break;
    case CLCONE_LEMKE_RAY:
        snprintf(out->reason, sizeof out->reason, "ray termination after %d pivots (z0 = %.3g)",
                 info.pivots, info.z0);
        break;
    case CLCONE_LEMKE_CAP:
        snprintf(out->reason, sizeof out->reason, "pivot cap %d reached", o->max_iter);
        break;
    case CLCONE_LEMKE_STALL:
        snprintf(out->reason, sizeof out->reason, "pivot stalled (degenerate): %s",
                 info.detail);
        break;
    case CLCONE_LEMKE_TIME:
        /* Same verdict as the iterative solvers' wall-clock cap. */
        out->status = CLCONE_MAXITER;
        snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached after %d pivots",
                 o->max_seconds, info.pivots);
        break;
    }
done:
    free(z);
    clc_lemke_lcp_free(&L);
    return s;
}
