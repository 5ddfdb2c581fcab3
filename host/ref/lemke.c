/* Lemke's complementary pivoting on a dense LCP w = M z + b (ref/lemke.h).
 *
 * On a copositive M the path ends at a solution or on a secondary ray
 * (ref/lemke_pyramid.c says why the pyramid's M is one).
 *
 * The method is dense: the basis inverse is kept explicitly (product-form
 * updates, refactored from scratch every max(50, n) pivots to bound the
 * drift, iterative refinement before x is read) and every pivot costs
 * O(n^2). The ratio test is Harris's, with a small feasibility band that
 * lets it pass over the tiny pivots a singular W produces, and breaks the
 * remaining ties lexicographically on the rows of the basis inverse,
 * which in exact arithmetic makes cycling impossible; a basis that
 * repeats anyway (rounding) is detected with a hash of visited bases and
 * reported as a stall rather than looping until the cap. The path also
 * stops as soon as z0 is numerically zero, since that point already
 * solves the LCP. */
#include "ref/lemke.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

/* ------------------------------------------------------------------ */
/* LCP storage                                                        */
/* ------------------------------------------------------------------ */

void clc_lemke_lcp_free(clc_lemke_lcp *L)
{
    if (!L) return;
    free(L->col_ptr);
    free(L->row);
    free(L->val);
    free(L->b);
    memset(L, 0, sizeof *L);
}

clcone_status clc_lemke_lcp_alloc(clc_lemke_lcp *L, int n, size_t nnz, clcone_error *err)
{
    memset(L, 0, sizeof *L);
    L->n = n;
    L->col_ptr = clc_calloc((size_t)n + 1, sizeof *L->col_ptr, err, "lemke: LCP columns");
    L->row = clc_calloc(nnz, sizeof *L->row, err, "lemke: LCP rows");
    L->val = clc_calloc(nnz, sizeof *L->val, err, "lemke: LCP values");
    L->b = clc_calloc((size_t)n, sizeof *L->b, err, "lemke: LCP right-hand side");
    if (!L->col_ptr || !L->row || !L->val || !L->b) {
        clc_lemke_lcp_free(L);
        return CLCONE_ENOMEM;
    }
    return CLCONE_OK;
}

clcone_status clc_lemke_lcp_from_dense(clc_lemke_lcp *L, int n,
                                          const double *M_rowmajor,
                                          const double *b, clcone_error *err)
{
    clcone_status s;
    size_t nnz = 0;
    int i, j;
    if (!L || n < 0 || (n > 0 && (!M_rowmajor || !b)))
        return clc_fail(err, CLCONE_EINVAL, "lemke: invalid dense LCP arguments");
    for (i = 0; i < n * n; ++i) nnz += M_rowmajor[i] != 0;
    s = clc_lemke_lcp_alloc(L, n, nnz, err);
    if (s != CLCONE_OK) return s;
    nnz = 0;
    for (j = 0; j < n; ++j) {
        for (i = 0; i < n; ++i) {
            double v = M_rowmajor[(size_t)i * (size_t)n + (size_t)j];
            if (v == 0) continue;
            L->row[nnz] = i;
            L->val[nnz] = v;
            ++nnz;
        }
        L->col_ptr[j + 1] = (int)nnz;
    }
    memcpy(L->b, b, (size_t)n * sizeof *b);
    return CLCONE_OK;
}

double clc_lemke_complementarity(const clc_lemke_lcp *L, const double *z)
{
    int n = L->n, i, j, k;
    double zs = 0, ws = 0, worst = 0;
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    double *mag = malloc((size_t)(n > 0 ? n : 1) * sizeof *mag);
    if (!w || !mag) {
        free(w);
        free(mag);
        return HUGE_VAL;   /* cannot certify: callers treat as violated */
    }
    for (i = 0; i < n; ++i) {
        w[i] = L->b[i];
        mag[i] = fabs(L->b[i]);
        if (fabs(z[i]) > zs) zs = fabs(z[i]);
    }
    for (j = 0; j < n; ++j) {
        if (z[j] == 0) continue;
        for (k = L->col_ptr[j]; k < L->col_ptr[j + 1]; ++k) {
            double t = L->val[k] * z[j];
            w[L->row[k]] += t;
            mag[L->row[k]] += fabs(t);
        }
    }
    for (i = 0; i < n; ++i)
        if (mag[i] > ws) ws = mag[i];
    for (i = 0; i < n; ++i) {
        double a = zs > 0 ? z[i] / zs : 0;
        double c = ws > 0 ? w[i] / ws : 0;
        double m = fabs(a < c ? a : c);
        if (!(m <= worst)) worst = m;   /* also catches NaN */
    }
    free(w);
    free(mag);
    return worst;
}

/* ------------------------------------------------------------------ */
/* Lemke's method                                                     */
/* ------------------------------------------------------------------ */

/* Variables: w_i = i, z_i = n + i, z0 = 2n. The system is
 * I w - M z - e z0 = b, with basis matrix B of the basic columns. */
typedef struct lk {
    const clc_lemke_lcp *L;
    int n;
    double *binv;   /* B^-1, n x n column-major: row i <-> basis slot i */
    double *cmax;   /* max |.| per column of binv */
    double *x;      /* basic values, x = B^-1 b */
    double *d;      /* entering column in basis coordinates */
    double *res;    /* scratch, n */
    int *basis;     /* variable in slot i */
    int *slot;      /* slot of each of the 2n+1 variables, -1 nonbasic */
    int *cand;      /* ratio-test candidates */
    int *perm;      /* row swaps of the refactorization */
    uint64_t *seen; /* visited (basis, entering) hashes; 0 = empty */
    size_t seen_cap, seen_used;
    double binv_max;
} lk;

static uint64_t mix64(uint64_t v)
{
    v += 0x9e3779b97f4a7c15ULL;
    v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ULL;
    v = (v ^ (v >> 27)) * 0x94d049bb133111ebULL;
    return v ^ (v >> 31);
}

static void lk_free(lk *s)
{
    free(s->binv);
    free(s->cmax);
    free(s->x);
    free(s->d);
    free(s->res);
    free(s->basis);
    free(s->slot);
    free(s->cand);
    free(s->perm);
    free(s->seen);
}

static void lk_update_binv_max(lk *s)
{
    int k;
    s->binv_max = 0;
    for (k = 0; k < s->n; ++k)
        if (s->cmax[k] > s->binv_max) s->binv_max = s->cmax[k];
}

/* d = B^-1 A_v; returns ||A_v||_1, the scale the rounding in d is
 * measured against. */
static double lk_ftran(lk *s, int v)
{
    const clc_lemke_lcp *L = s->L;
    int n = s->n, i, k;
    double a1 = 0;
    if (v < n) {
        memcpy(s->d, s->binv + (size_t)v * (size_t)n, (size_t)n * sizeof *s->d);
        return 1;
    }
    memset(s->d, 0, (size_t)n * sizeof *s->d);
    if (v < 2 * n) {
        for (k = L->col_ptr[v - n]; k < L->col_ptr[v - n + 1]; ++k) {
            double m = -L->val[k];
            const double *col = s->binv + (size_t)L->row[k] * (size_t)n;
            a1 += fabs(m);
            for (i = 0; i < n; ++i) s->d[i] += m * col[i];
        }
    } else {
        for (k = 0; k < n; ++k) {
            const double *col = s->binv + (size_t)k * (size_t)n;
            for (i = 0; i < n; ++i) s->d[i] -= col[i];
        }
        a1 = n;
    }
    return a1;
}

/* out += alpha * A_v (original coordinates). */
static void lk_add_col(const lk *s, int v, double alpha, double *out)
{
    const clc_lemke_lcp *L = s->L;
    int n = s->n, k;
    if (v < n) {
        out[v] += alpha;
    } else if (v < 2 * n) {
        for (k = L->col_ptr[v - n]; k < L->col_ptr[v - n + 1]; ++k)
            out[L->row[k]] -= alpha * L->val[k];
    } else {
        for (k = 0; k < n; ++k) out[k] -= alpha;
    }
}

/* x += B^-1 (b - B x): one step of iterative refinement, which recovers
 * the digits the product-form updates lost as long as B^-1 is roughly
 * right. Returns max |b - B x| before the step. */
static double lk_refine(lk *s)
{
    int n = s->n, i, k;
    double rmax = 0;
    memcpy(s->res, s->L->b, (size_t)n * sizeof *s->res);
    for (k = 0; k < n; ++k)
        if (s->x[k] != 0) lk_add_col(s, s->basis[k], -s->x[k], s->res);
    for (k = 0; k < n; ++k) {
        const double *col = s->binv + (size_t)k * (size_t)n;
        double rk = s->res[k];
        if (fabs(rk) > rmax) rmax = fabs(rk);
        if (rk == 0) continue;
        for (i = 0; i < n; ++i) s->x[i] += col[i] * rk;
    }
    return rmax;
}

/* Inverts the current basis from scratch (Gauss-Jordan with partial
 * pivoting, in place) and recomputes x. Returns 0 if B is singular. */
static int lk_refactor(lk *s)
{
    int n = s->n, i, j, k;
    double *A = s->binv, *f = s->res;
    memset(A, 0, (size_t)n * (size_t)n * sizeof *A);
    for (k = 0; k < n; ++k) lk_add_col(s, s->basis[k], 1.0, A + (size_t)k * (size_t)n);
    for (k = 0; k < n; ++k) {
        double *ck = A + (size_t)k * (size_t)n, big = 0, piv, inv, cscale = 0;
        int pr = k;
        for (i = 0; i < n; ++i)
            if (fabs(ck[i]) > cscale) cscale = fabs(ck[i]);
        for (i = k; i < n; ++i)
            if (fabs(ck[i]) > big) { big = fabs(ck[i]); pr = i; }
        if (!(big > 64 * DBL_EPSILON * cscale) || !isfinite(big)) return 0;
        s->perm[k] = pr;
        if (pr != k) {
            for (j = 0; j < n; ++j) {
                double *cj = A + (size_t)j * (size_t)n, t = cj[k];
                cj[k] = cj[pr];
                cj[pr] = t;
            }
        }
        piv = ck[k];
        inv = 1 / piv;
        memcpy(f, ck, (size_t)n * sizeof *f);
        f[k] = 0;
        for (i = 0; i < n; ++i) ck[i] = 0;
        ck[k] = 1;
        for (j = 0; j < n; ++j) {
            double *cj = A + (size_t)j * (size_t)n, akj = cj[k] * inv;
            cj[k] = akj;
            if (akj == 0) continue;
            for (i = 0; i < n; ++i) cj[i] -= f[i] * akj;
        }
    }
    /* The row swaps made this (P B)^-1; B^-1 = (P B)^-1 P undoes them as
     * column swaps in reverse order. */
    for (k = n - 1; k >= 0; --k) {
        int pr = s->perm[k];
        if (pr != k) {
            double *ca = A + (size_t)k * (size_t)n, *cb = A + (size_t)pr * (size_t)n;
            for (i = 0; i < n; ++i) {
                double t = ca[i];
                ca[i] = cb[i];
                cb[i] = t;
            }
        }
    }
    for (k = 0; k < n; ++k) {
        const double *col = A + (size_t)k * (size_t)n;
        double m = 0;
        for (i = 0; i < n; ++i)
            if (fabs(col[i]) > m) m = fabs(col[i]);
        s->cmax[k] = m;
    }
    lk_update_binv_max(s);
    memset(s->x, 0, (size_t)n * sizeof *s->x);
    for (k = 0; k < n; ++k) {
        const double *col = A + (size_t)k * (size_t)n;
        double bk = s->L->b[k];
        if (bk == 0) continue;
        for (i = 0; i < n; ++i) s->x[i] += col[i] * bk;
    }
    lk_refine(s);
    for (i = 0; i < n; ++i)
        if (s->x[i] < 0) s->x[i] = 0;
    return 1;
}

/* Pivot on slot r with entering variable v, d = B^-1 A_v already set. */
static void lk_pivot(lk *s, int r, int v)
{
    int n = s->n, i, k;
    double dr = s->d[r], t = s->x[r] / dr;
    for (i = 0; i < n; ++i) {
        s->x[i] -= s->d[i] * t;
        /* The ratio test's bands leave negatives of at most LK_FEAS max x. */
        if (s->x[i] < 0) s->x[i] = 0;
    }
    s->x[r] = t;
    for (k = 0; k < n; ++k) {
        double *col = s->binv + (size_t)k * (size_t)n, tk = col[r], m = 0;
        if (tk == 0) continue;
        tk /= dr;
        for (i = 0; i < n; ++i) {
            col[i] -= s->d[i] * tk;
            if (fabs(col[i]) > m) m = fabs(col[i]);
        }
        col[r] = tk;
        if (fabs(tk) > m) m = fabs(tk);
        s->cmax[k] = m;
    }
    lk_update_binv_max(s);
    s->slot[s->basis[r]] = -1;
    s->basis[r] = v;
    s->slot[v] = r;
}

/* Feasibility band of the ratio test, relative to max x: a step may
 * leave a basic variable this far below zero (it is then set to 0).
 * Measured on the shared problems: without the band, rank-deficient W
 * (Capsules, BoxesStack) drive the path through pivots of 1e-7 against
 * columns of 1e4, the basis inverse grows to 1e9 and the path ends on a
 * spurious ray; with it every one of them solves. */
#define LK_FEAS 1e-11
/* Relative band within which ratios count as tied. */
#define LK_TIE 1e-11
/* Pivots smaller than this fraction of the largest admissible one are
 * passed over. */
#define LK_PIVOT_FRACTION 0.1

static double lk_xmax(const lk *s)
{
    double m = 0;
    int i;
    for (i = 0; i < s->n; ++i)
        if (s->x[i] > m) m = s->x[i];
    return m;
}

/* Minimum-ratio test on d. Returns the leaving slot, or -1 when no entry
 * of d is positive beyond rounding (secondary ray).
 *
 * Harris's two passes pick the step: the largest step that keeps every
 * basic variable above -LK_FEAS * max x bounds the admissible rows, and
 * among those only pivots within LK_PIVOT_FRACTION of the largest stay in
 * play, so that a tiny pivot (rounding in a singular W) never enters the
 * basis inverse when a sound one is available. Among the remaining rows
 * the minimum ratio is taken, ties broken lexicographically. */
static int lk_ratio(lk *s, double a1)
{
    int n = s->n, i, k, nc = 0, m, best = -1, z0slot = s->slot[2 * n];
    double dmax = 0, xmax = lk_xmax(s), tol, delta, theta_h = HUGE_VAL, theta, cdmax = 0;
    for (i = 0; i < n; ++i)
        if (fabs(s->d[i]) > dmax) dmax = fabs(s->d[i]);
    /* An entry is a usable pivot when it stands out both from the column
     * itself and from the rounding that B^-1 A_v can carry. */
    tol = 1e-12 * dmax;
    if (100 * DBL_EPSILON * s->binv_max * a1 > tol) tol = 100 * DBL_EPSILON * s->binv_max * a1;
    delta = LK_FEAS * xmax;
    for (i = 0; i < n; ++i)
        if (s->d[i] > tol) {
            double th = (s->x[i] + delta) / s->d[i];
            if (th < theta_h) theta_h = th;
        }
    if (theta_h == HUGE_VAL) return -1;
    for (i = 0; i < n; ++i)
        if (s->d[i] > tol && s->x[i] / s->d[i] <= theta_h) {
            if (i == z0slot) return z0slot;   /* z0 can leave: solved */
            s->cand[nc++] = i;
            if (s->d[i] > cdmax) cdmax = s->d[i];
        }
    theta = HUGE_VAL;
    for (i = 0, m = 0; i < nc; ++i) {
        int c = s->cand[i];
        if (s->d[c] < LK_PIVOT_FRACTION * cdmax) continue;
        s->cand[m++] = c;
        if (s->x[c] / s->d[c] < theta) theta = s->x[c] / s->d[c];
    }
    /* Ties: rows that the step would also bring to (numerically) zero. */
    for (i = 0, nc = 0; i < m; ++i) {
        int c = s->cand[i];
        if (s->x[c] - theta * s->d[c] <= LK_TIE * xmax) s->cand[nc++] = c;
    }
    /* Lexicographic rule on the rows of B^-1 scaled by 1/d_i: in exact
     * arithmetic the rows of [x, B^-1] stay lexicographically positive,
     * so no basis repeats. */
    for (k = 0; k < n && nc > 1; ++k) {
        const double *col = s->binv + (size_t)k * (size_t)n;
        double vmin = HUGE_VAL;
        for (i = 0; i < nc; ++i) {
            double v = col[s->cand[i]] / s->d[s->cand[i]];
            if (v < vmin) vmin = v;
        }
        for (i = 0, m = 0; i < nc; ++i) {
            int c = s->cand[i];
            if (col[c] - vmin * s->d[c] <= LK_TIE * s->cmax[k]) s->cand[m++] = c;
        }
        nc = m;
    }
    /* Still tied within rounding: the largest pivot is the safest. */
    for (i = 0; i < nc; ++i)
        if (best < 0 || s->d[s->cand[i]] > s->d[best]) best = s->cand[i];
    return best;
}

/* Records (basis, entering); returns 1 if it was seen before. */
static int lk_seen(lk *s, uint64_t h)
{
    size_t i, mask;
    if (!s->seen) return 0;
    if (h == 0) h = 1;
    mask = s->seen_cap - 1;
    for (i = (size_t)(h & mask);; i = (i + 1) & mask) {
        if (s->seen[i] == h) return 1;
        if (s->seen[i] == 0) break;
    }
    /* A full table only stops the detection, never the solve. */
    if (2 * (s->seen_used + 1) > s->seen_cap) return 0;
    s->seen[i] = h;
    s->seen_used++;
    return 0;
}

/* Allocates s's workspace for L and puts it at the basis of slacks
 * (w = b); *h receives that basis's hash. */
static clcone_status lk_start(lk *s, const clc_lemke_lcp *L, int max_pivots, uint64_t *h, clcone_error *err)
{
    int i, n = L->n;
    s->L = L;
    s->n = n;
    s->binv = clc_calloc((size_t)n * (size_t)n, sizeof *s->binv, err, "lemke: basis inverse");
    s->cmax = clc_calloc((size_t)n, sizeof *s->cmax, err, "lemke: workspace");
    s->x = clc_calloc((size_t)n, sizeof *s->x, err, "lemke: workspace");
    s->d = clc_calloc((size_t)n, sizeof *s->d, err, "lemke: workspace");
    s->res = clc_calloc((size_t)n, sizeof *s->res, err, "lemke: workspace");
    s->basis = clc_calloc((size_t)n, sizeof *s->basis, err, "lemke: workspace");
    s->slot = clc_calloc(2 * (size_t)n + 1, sizeof *s->slot, err, "lemke: workspace");
    s->cand = clc_calloc((size_t)n, sizeof *s->cand, err, "lemke: workspace");
    s->perm = clc_calloc((size_t)n, sizeof *s->perm, err, "lemke: workspace");
    if (!s->binv || !s->cmax || !s->x || !s->d || !s->res || !s->basis || !s->slot || !s->cand
        || !s->perm)
        return CLCONE_ENOMEM;
    /* Room for every pivot up to the cap (bounded): the path of Lemke's
     * method never revisits a basis, so a revisit means rounding made it
     * cycle. */
    s->seen_cap = 64;
    while (s->seen_cap < 2 * (size_t)max_pivots + 2 && s->seen_cap < ((size_t)1 << 22))
        s->seen_cap <<= 1;
    s->seen = calloc(s->seen_cap, sizeof *s->seen);   /* optional: detection only */
    *h = 0;
    for (i = 0; i < n; ++i) {
        s->binv[(size_t)i * (size_t)n + (size_t)i] = 1;
        s->cmax[i] = 1;
        s->x[i] = L->b[i];
        s->basis[i] = i;
        s->slot[i] = i;
        *h ^= mix64((uint64_t)i);
    }
    for (i = n; i <= 2 * n; ++i) s->slot[i] = -1;
    s->binv_max = 1;
    return CLCONE_OK;
}

/* The complementary path from the basis of slacks (hash h) until z0
 * leaves or is numerically zero, a ray, a cap or a stall (info). */
static void lk_path(lk *s, int max_pivots, double max_seconds, double t0, uint64_t h, clc_lemke_info *info)
{
    const clc_lemke_lcp *L = s->L;
    int n = s->n, i, r, enter, refac_every = n < 50 ? 50 : n, since_refac = 0;

    /* First pivot: z0 enters at the most negative b_i, which makes every
     * x nonnegative. Among equal b_i the lexicographic rule on [b, I]
     * picks the highest index. */
    r = 0;
    for (i = 1; i < n; ++i)
        if (L->b[i] <= L->b[r]) r = i;
    lk_ftran(s, 2 * n);
    h ^= mix64((uint64_t)r) ^ mix64((uint64_t)(2 * n));
    lk_pivot(s, r, 2 * n);
    info->pivots = 1;
    enter = n + r;   /* the complement of w_r, which just left */

    for (;;) {
        int leave;
        double a1;
        if (info->pivots >= max_pivots) {
            info->outcome = CLCONE_LEMKE_CAP;
            break;
        }
        if (max_seconds > 0 && (info->pivots & 15) == 0
            && clc_now_ms() - t0 > 1e3 * max_seconds) {
            info->outcome = CLCONE_LEMKE_TIME;
            break;
        }
        if (lk_seen(s, h ^ mix64((uint64_t)enter + 0x5bd1e995ULL * 7919ULL))) {
            info->outcome = CLCONE_LEMKE_STALL;
            snprintf(info->detail, sizeof info->detail,
                     "basis repeated after %d pivots", info->pivots);
            break;
        }
        a1 = lk_ftran(s, enter);
        r = lk_ratio(s, a1);
        if (r < 0) {
            info->outcome = CLCONE_LEMKE_RAY;
            break;
        }
        if (!isfinite(s->d[r]) || !isfinite(s->x[r])) {
            info->outcome = CLCONE_LEMKE_STALL;
            snprintf(info->detail, sizeof info->detail,
                     "non-finite pivot after %d pivots", info->pivots);
            break;
        }
        leave = s->basis[r];
        if (s->x[r] == 0) info->degenerate++;
        h ^= mix64((uint64_t)leave) ^ mix64((uint64_t)enter);
        lk_pivot(s, r, enter);
        info->pivots++;
        if (leave == 2 * n || s->x[s->slot[2 * n]] <= LK_FEAS * lk_xmax(s)) {
            info->outcome = CLCONE_LEMKE_SOLVED;
            break;
        }
        enter = leave < n ? leave + n : leave - n;
        if (++since_refac >= refac_every) {
            since_refac = 0;
            info->refactors++;
            if (!lk_refactor(s)) {
                info->outcome = CLCONE_LEMKE_STALL;
                snprintf(info->detail, sizeof info->detail,
                         "basis numerically singular after %d pivots", info->pivots);
                break;
            }
        }
    }
}

/* Reads z (and info->z0) off the basis where the path stopped. */
static void lk_read(lk *s, double *z, clc_lemke_info *info)
{
    int i, n = s->n;
    /* The basis is exact even where x drifted: refinement brings x back
     * to working precision (while it keeps helping) before it is read. */
    {
        double prev = lk_refine(s), cur;
        for (i = 0; i < 6; ++i) {
            cur = lk_refine(s);
            if (!(cur < 0.5 * prev)) break;
            prev = cur;
        }
    }
    /* An almost-complementary point with z0 = 0 solves the LCP, whatever
     * stopped the path: rounding can leave z0 basic at zero or hide the
     * last pivot behind a spurious ray. */
    if (info->outcome != CLCONE_LEMKE_SOLVED && s->slot[2 * n] >= 0
        && s->x[s->slot[2 * n]] <= LK_FEAS * lk_xmax(s)) {
        info->outcome = CLCONE_LEMKE_SOLVED;
        info->detail[0] = 0;
    }
    for (i = 0; i < n; ++i) {
        int v = s->basis[i];
        double xv = s->x[i] > 0 ? s->x[i] : 0;
        if (v >= n && v < 2 * n) z[v - n] = xv;
        else if (v == 2 * n) info->z0 = xv;
    }
}

clcone_status clc_lemke_solve(const clc_lemke_lcp *L, int max_pivots,
                                 double max_seconds, double *z,
                                 clc_lemke_info *info, clcone_error *err)
{
    lk s;
    int n, i;
    uint64_t h;
    double t0 = clc_now_ms();
    clcone_status st;

    if (!L || !z || !info || L->n < 0 || !L->col_ptr || !L->b || max_pivots < 0)
        return clc_fail(err, CLCONE_EINVAL, "lemke: invalid arguments");
    memset(info, 0, sizeof *info);
    memset(&s, 0, sizeof s);
    n = L->n;
    memset(z, 0, (size_t)n * sizeof *z);
    for (i = 0; i < n; ++i)
        if (!isfinite(L->b[i]))
            return clc_fail(err, CLCONE_EINVAL, "lemke: b[%d] is not finite", i);
    for (i = 0; i < L->col_ptr[n]; ++i)
        if (!isfinite(L->val[i]))
            return clc_fail(err, CLCONE_EINVAL, "lemke: M(%d, .) is not finite", L->row[i]);
    for (i = 0; i < n && L->b[i] >= 0; ++i) {}
    if (i == n) {
        info->outcome = CLCONE_LEMKE_SOLVED;   /* z = 0, w = b >= 0 */
        return CLCONE_OK;
    }
    if (max_pivots == 0) {
        info->outcome = CLCONE_LEMKE_CAP;
        return CLCONE_OK;
    }
    st = lk_start(&s, L, max_pivots, &h, err);
    if (st == CLCONE_OK) {
        lk_path(&s, max_pivots, max_seconds, t0, h, info);
        lk_read(&s, z, info);
    }
    lk_free(&s);
    return st;
}
