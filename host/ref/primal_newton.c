/* MuJoCo's Newton method on its primal problem (ref/primal_newton.h),
 * after MuJoCo's engine_solver.c (its cost, line search and stopping
 * rule; docs/mujoco.md says where this differs). */
#include "ref/primal_newton.h"
#include "ref/primal_chol.h"
#include "core/internal.h"
#include "cone.h"
#include "block_sets.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* MuJoCo's mjMINVAL: a search direction shorter than this is none. */
#define PN_MINVAL 1e-15
#define CONE2 (PRIMAL_CONE_MAX * PRIMAL_CONE_MAX)

typedef struct pn {
    const clc_pproblem *p;
    pchol ch; /* the Hessian's factor */
    double *a, *Ma, *x, *f, *grad, *Mg, *s, *Mv, *tmp, *Jv, *Hc, *quad, *cq;
    int *state;
    /* J's rows again, each entry's dof as its position in the factor's
     * order, ascending: H's column j takes a row's entries from j on. A
     * dense factor's positions are the dofs: J's own arrays; a sparse
     * one's in spos and sval */
    const int *pos;
    const double *val;
    int *spos;
    double *sval;
    int *ctp, *ctr, *cte; /* J by dofs: dof i's runs ctr (each by its first row) and its entry cte (in spos) at [ctp[i], ctp[i+1]) */
    int *run; /* a run's first row: the run's end. A run: rows of the same dofs outside cones (a pyramid's edges), or a row alone */
    int *rb, *gof;        /* a row's block, a dof's group */
    int *fstate, *changed; /* the zones at the last factor; rows since changed */
    int *same;             /* a row with the same dofs as the row before */
    double *D;             /* m: 1 / R */
    double *mx;            /* M's values at the factor's mi (ref/primal_chol.h) */
    double assembly;       /* H's assembly's multiply-adds, about */
    double cost, qg[3];
    double predicted; /* the last search's decrease by its quadratic model at 0 */
} pn;

/* A point of the line search: step, cost and its first two derivatives. */
typedef struct pn_pt {
    double alpha, cost, d1, d2;
} pn_pt;

/* out = M v by M's group blocks. */
static void mul_m(const clc_pproblem *p, const double *v, double *out)
{
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        const double *B = p->M + p->moff[g];
        for (int i = 0; i < n; ++i) out[g0 + i] = clc_pchol_dot(B + (size_t)i * n, v + g0, n);
    }
}

static void mul_j(const clc_pproblem *p, const double *v, double *out)
{
    for (int i = 0; i < p->m; ++i)
        out[i] = clc_pchol_dot_at(p->jv + p->jp[i], p->jc + p->jp[i], v, p->jp[i + 1] - p->jp[i]);
}

/* The cost, forces, zones and gradient M a - M a0 - J'f at w->a (with
 * w->Ma and w->x = J a - aref current). */
static void pn_update(pn *w)
{
    const clc_pproblem *p = w->p;
    double gauss = 0;
    w->cost = clc_pproblem_update(p, w->D, w->x, w->f, w->state, w->Hc);
    for (int v = 0; v < p->nv; ++v) {
        gauss += 0.5 * (w->Ma[v] - p->f0[v]) * (w->a[v] - p->a0[v]);
        w->grad[v] = w->Ma[v] - p->f0[v];
    }
    w->qg[0] = gauss;
    w->cost += gauss;
    /* rows of the same dofs (a pyramid's edges, a cone's rows) summed
     * before one subtraction a dof, not one a row */
    for (int i = 0, i1; i < p->m; i = i1) {
        int e0 = p->jp[i], n = p->jp[i + 1] - e0;
        i1 = i + 1;
        while (i1 < p->m && w->same[i1]) ++i1;
        for (int e = 0; e < n; ++e) {
            double g = 0;
            for (int r = i; r < i1; ++r) g += p->jv[e0 + (size_t)(r - i) * n + e] * w->f[r];
            w->grad[p->jc[e0 + e]] -= g;
        }
    }
}

/* Row s's first entry in pos at position j or after. */
static int first_from(const pn *w, int s, int j)
{
    int lo = w->p->jp[s], hi = w->p->jp[s + 1];
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (w->pos[mid] < j) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* out[pos[e]] += ca va[e] + cb vb[e] for e < n. */
static inline void scatter2(double *out, const int *pos, int n, const double *va, double ca, const double *vb,
                            double cb)
{
    for (int e = 0; e < n; ++e) out[pos[e]] += ca * va[e] + cb * vb[e];
}

/* J'HcJ of the middle-zone cone that starts at row s0, its rows all of
 * the same dofs, at the column of their entries at o (their first at the
 * column's position, the others at pos). */
static void pn_cone_run(const pn *w, int s0, int o, const int *pos, int n, double *out)
{
    const clc_pproblem *p = w->p;
    int b = w->rb[s0], n2 = p->off[b + 1] - s0;
    const double *hc = w->Hc + (size_t)b * CONE2, *v[PRIMAL_CONE_MAX];
    double c[PRIMAL_CONE_MAX] = {0};
    for (int k = 0; k < n2; ++k) v[k] = w->val + p->jp[s0 + k] + o;
    for (int l = 0; l < n2; ++l)
        for (int k = 0; k < n2; ++k) c[k] += v[l][0] * hc[l * n2 + k];
    for (int e = 0; e < n; ++e) {
        double x = 0;
        for (int k = 0; k < n2; ++k) x += c[k] * v[k][e];
        out[pos[e]] += x;
    }
}

/* H's column at position j (ref/primal_chol.h): M's in the dof's tree,
 * then D J_r'J_r of each quadratic row r and J'HcJ of each middle-zone
 * cone, over the runs (pn's run) that reach the dof. */
static void pn_column(void *arg, int j, double *out)
{
    const pn *w = arg;
    const clc_pproblem *p = w->p;
    int i = w->ch.orig[j];
    for (int q = w->ch.mp[j]; q < w->ch.mp[j + 1]; ++q) out[w->ch.mi[q]] += w->mx[q];
    for (int t = w->ctp[i], t2; t < w->ctp[i + 1]; t = t2) {
        int r = w->ctr[t], e0 = w->cte[t], b = w->rb[r];
        t2 = t + 1;
        if (w->run[r] > r + 1) {
            /* rows of the same dofs (a pyramid's edges, a cone's rows):
             * the same entries from e0 on; quadratic rows scattered two
             * at a time, a middle-zone cone (whole in its run) at once */
            const int *pos = w->pos + e0;
            const double *va = NULL;
            int n = p->jp[r + 1] - e0, o = e0 - p->jp[r], a = -1;
            for (int s = r; s < w->run[r]; ++s) {
                const double *vb = w->val + p->jp[s] + o;
                if (w->state[s] != PRIMAL_QUADRATIC) {
                    if (w->state[s] == PRIMAL_CONE && s == p->off[w->rb[s]]) pn_cone_run(w, s, o, pos, n, out);
                    continue;
                }
                if (a < 0) {
                    a = s;
                    va = vb;
                    continue;
                }
                scatter2(out, pos, n, va, va[0] * w->D[a], vb, vb[0] * w->D[s]);
                a = -1;
            }
            if (a >= 0) scatter2(out, pos, n, va, va[0] * w->D[a], va, 0);
        } else if (w->state[r] == PRIMAL_QUADRATIC) {
            const double *va = w->val + e0, *vb;
            const int *pos = w->pos + e0;
            int n = p->jp[r + 1] - e0, s = t2 < w->ctp[i + 1] ? w->ctr[t2] : 0;
            double ca = va[0] * w->D[r], cb;
            if (s != r + 1 || !w->same[s] || w->state[s] != PRIMAL_QUADRATIC || w->run[s] > s + 1) {
                scatter2(out, pos, n, va, ca, va, 0);
                continue;
            }
            /* the next row, alone in its run, has the same dofs (a cone's
             * next row): both scattered at once */
            vb = w->val + w->cte[t2++];
            cb = vb[0] * w->D[s];
            scatter2(out, pos, n, va, ca, vb, cb);
        } else if (w->state[r] == PRIMAL_CONE) {
            /* the cone's rows that reach dof i follow in its list: Hc J_b
             * at i summed over them first, then each row scattered once */
            int s0 = p->off[b], n2 = p->off[b + 1] - s0;
            const double *hc = w->Hc + (size_t)b * CONE2;
            double c[PRIMAL_CONE_MAX] = {0};
            for (t2 = t; t2 < w->ctp[i + 1] && w->rb[w->ctr[t2]] == b; ++t2)
                for (int k = 0; k < n2; ++k) c[k] += w->val[w->cte[t2]] * hc[(w->ctr[t2] - s0) * n2 + k];
            for (int k = 0; k < n2; ++k)
                for (int e = first_from(w, s0 + k, j); c[k] != 0 && e < p->jp[s0 + k + 1]; ++e)
                    out[w->pos[e]] += c[k] * w->val[e];
        }
    }
}

/* H += c J_r'J_s on and below the diagonal of the dense H (column
 * jc[y] takes the entries of row r at or below it). */
static void dense_outer(const pn *w, int r, int s, double c)
{
    const clc_pproblem *p = w->p;
    for (int y = p->jp[s]; y < p->jp[s + 1]; ++y) {
        double cy = c * p->jv[y], *col = clc_pchol_dense_col(&w->ch, p->jc[y]);
        for (int x = p->jp[r]; x < p->jp[r + 1]; ++x)
            if (p->jc[x] >= p->jc[y]) col[p->jc[x]] += cy * p->jv[x];
    }
}

/* H += sum D_r J_r'J_r over rows r0..r1-1, quadratic, of the same dofs:
 * up to four rows a pass over each column (a pyramid's edges in one). */
static void dense_quad(const pn *w, int r0, int r1)
{
    const clc_pproblem *p = w->p;
    int e0 = p->jp[r0], k = p->jp[r0 + 1] - e0;
    const int *jc = p->jc + e0;
    for (int y = 0; y < k; ++y) {
        double *col = clc_pchol_dense_col(&w->ch, jc[y]);
        int r = r0;
        for (; r + 3 < r1; r += 4) {
            const double *v0 = p->jv + p->jp[r], *v1 = p->jv + p->jp[r + 1], *v2 = p->jv + p->jp[r + 2],
                         *v3 = p->jv + p->jp[r + 3];
            double c0 = w->D[r] * v0[y], c1 = w->D[r + 1] * v1[y], c2 = w->D[r + 2] * v2[y], c3 = w->D[r + 3] * v3[y];
            for (int x = y; x < k; ++x) col[jc[x]] += (c0 * v0[x] + c1 * v1[x]) + (c2 * v2[x] + c3 * v3[x]);
        }
        for (; r + 1 < r1; r += 2) {
            const double *v0 = p->jv + p->jp[r], *v1 = p->jv + p->jp[r + 1];
            double c0 = w->D[r] * v0[y], c1 = w->D[r + 1] * v1[y];
            for (int x = y; x < k; ++x) col[jc[x]] += c0 * v0[x] + c1 * v1[x];
        }
        for (; r < r1; ++r) {
            const double *v0 = p->jv + p->jp[r];
            double c0 = w->D[r] * v0[y];
            for (int x = y; x < k; ++x) col[jc[x]] += c0 * v0[x];
        }
    }
}

/* The dense H by columns, in the factor's room: M's blocks, D J_r'J_r of
 * each quadratic row, each middle-zone cone's J'HcJ. */
static void pn_dense(pn *w)
{
    const clc_pproblem *p = w->p;
    size_t nv = (size_t)p->nv;
    memset(w->ch.lx, 0, sizeof *w->ch.lx * (size_t)w->ch.lp[nv]);
    for (int g = 0; g < p->ng; ++g) {
        int g0 = p->goff[g], n = p->goff[g + 1] - g0;
        const double *B = p->M + p->moff[g];
        for (int i = 0; i < n; ++i)
            memcpy(clc_pchol_dense_col(&w->ch, g0 + i) + g0 + i, B + (size_t)i * n + i, sizeof *B * (size_t)(n - i));
    }
    for (int r = 0, r1; r < p->m; r = r1) {
        int b = w->rb[r], n = p->off[b + 1] - p->off[b];
        r1 = r + 1;
        if (w->state[r] == PRIMAL_CONE) {
            for (int k = 0; k < n; ++k)
                dense_outer(w, r, p->off[b] + k, w->Hc[(size_t)b * CONE2 + (r - p->off[b]) * n + k]);
            continue;
        }
        if (w->state[r] != PRIMAL_QUADRATIC) continue;
        while (r1 < p->m && w->state[r1] == PRIMAL_QUADRATIC && w->same[r1]) ++r1;
        dense_quad(w, r, r1);
    }
}

/* H = M + J'DJ over the quadratic rows + each middle-zone cone's J'HcJ,
 * factored (ref/primal_chol.h); CLCONE_EINVAL at a pivot that is not
 * positive. */
static clcone_status pn_factor(pn *w, clcone_error *err)
{
    memcpy(w->fstate, w->state, sizeof *w->state * (size_t)w->p->m);
    if (!w->ch.dense) return clc_pchol_factor(&w->ch, pn_column, w, err);
    pn_dense(w);
    return clc_pchol_factor(&w->ch, NULL, NULL, err);
}

/* Row r's rank-one change to the factor (sigma +1: it joins the
 * quadratic zone, -1: it leaves); 0 where the factor is spoilt. */
static int pn_row_update(pn *w, int r, int sigma)
{
    const clc_pproblem *p = w->p;
    int e0 = p->jp[r];
    return clc_pchol_update(&w->ch, sigma, w->pos + e0, w->val + e0, p->jp[r + 1] - e0, sqrt(w->D[r]));
}

/* The factor for the zones now, as MuJoCo's incremental Hessian: rank-one
 * updates by the rows that joined or left the quadratic zone since the
 * last factor, joins first; afresh where a cone is in its middle zone
 * then or now, where the updates would cost more, or where a downdate
 * fails. */
static clcone_status pn_refactor(pn *w, clcone_error *err)
{
    const clc_pproblem *p = w->p;
    double cost = 0, fresh = w->ch.cost + w->assembly;
    int n = 0, ok = 1;
    for (int r = 0; r < p->m; ++r) {
        if (w->state[r] == PRIMAL_CONE || w->fstate[r] == PRIMAL_CONE) return pn_factor(w, err);
        if ((w->state[r] == PRIMAL_QUADRATIC) == (w->fstate[r] == PRIMAL_QUADRATIC) || p->jp[r + 1] == p->jp[r])
            continue;
        if ((cost += clc_pchol_path_cost(&w->ch, w->pos[p->jp[r]])) > fresh) return pn_factor(w, err);
        w->changed[n++] = r;
    }
    for (int k = 0; k < n; ++k)
        if (w->state[w->changed[k]] == PRIMAL_QUADRATIC) pn_row_update(w, w->changed[k], 1);
    for (int k = 0; k < n && ok; ++k)
        if (w->state[w->changed[k]] != PRIMAL_QUADRATIC) ok = pn_row_update(w, w->changed[k], -1);
    if (!ok) return pn_factor(w, err);
    memcpy(w->fstate, w->state, sizeof *w->state * (size_t)p->m);
    return CLCONE_OK;
}

/* w->Mg = H^-1 grad by the factor. */
static void pn_solve(pn *w) { clc_pchol_solve(&w->ch, w->grad, w->Mg, w->tmp); }

/* The line search's polynomials along w->s: Gauss's, each row's quadratic
 * (1/2 D x^2 as c0 + c1 alpha + c2 alpha^2) and each cone's U0, V0, UU,
 * UV, VV and Dm (MuJoCo's middle-zone terms). */
static void pn_prepare(pn *w)
{
    const clc_pproblem *p = w->p;
    double sMa = 0, sf0 = 0, sMv = 0;
    mul_m(p, w->s, w->Mv);
    mul_j(p, w->s, w->Jv);
    for (int v = 0; v < p->nv; ++v) {
        sMa += w->s[v] * w->Ma[v];
        sf0 += w->s[v] * p->f0[v];
        sMv += w->s[v] * w->Mv[v];
    }
    w->qg[1] = sMa - sf0;
    w->qg[2] = 0.5 * sMv;
    for (int i = 0; i < p->m; ++i) {
        double D = w->D[i];
        w->quad[3 * i] = 0.5 * D * w->x[i] * w->x[i];
        w->quad[3 * i + 1] = D * w->x[i] * w->Jv[i];
        w->quad[3 * i + 2] = 0.5 * D * w->Jv[i] * w->Jv[i];
    }
    for (int b = 0; b < p->nb; ++b) {
        int r0 = p->off[b], n = p->off[b + 1] - r0;
        double *c = w->cq + 6 * (size_t)b, mu = p->mu[b];
        if (p->kind[b] != BLK_CONE) continue;
        c[0] = mu * w->x[r0];
        c[1] = mu * w->Jv[r0];
        c[2] = c[3] = c[4] = 0;
        for (int j = 1; j < n; ++j) {
            double u = p->bound[r0 + j] * w->x[r0 + j], v = p->bound[r0 + j] * w->Jv[r0 + j];
            c[2] += u * u;
            c[3] += u * v;
            c[4] += v * v;
        }
        c[5] = 1 / (p->R[r0] * mu * mu * (1 + mu * mu));
    }
}

static void add3(double *t, const double *q)
{
    t[0] += q[0];
    t[1] += q[1];
    t[2] += q[2];
}

/* Cone block b at step alpha: its quadratic into t, or its middle-zone
 * cost and derivatives into pt. */
static void cone_eval(const pn *w, int b, double alpha, double *t, pn_pt *pt)
{
    const clc_pproblem *p = w->p;
    const double *c = w->cq + 6 * (size_t)b;
    double mu = p->mu[b], N = c[0] + alpha * c[1], T2 = c[2] + alpha * (2 * c[3] + alpha * c[4]), T, T1, T2d, g, g1;
    int r0 = p->off[b], n = p->off[b + 1] - r0, bottom;
    T = T2 > 0 ? sqrt(T2) : 0;
    if (T2 > 0 && N >= mu * T) return;
    bottom = T2 <= 0 ? N < 0 : mu * N + T <= 0;
    if (T2 <= 0 || bottom) {
        for (int j = 0; bottom && j < n; ++j) add3(t, w->quad + 3 * (r0 + j));
        return;
    }
    T1 = (c[3] + alpha * c[4]) / T;
    T2d = c[4] / T - (c[3] + alpha * c[4]) * T1 / (T * T);
    g = N - mu * T;
    g1 = c[1] - mu * T1;
    pt->cost += 0.5 * c[5] * g * g;
    pt->d1 += c[5] * g * g1;
    pt->d2 += c[5] * (g1 * g1 - g * mu * T2d);
}

/* The cost along w->s at pt->alpha, with its first two derivatives. */
static void pn_eval(const pn *w, pn_pt *pt, int *evals)
{
    const clc_pproblem *p = w->p;
    double t[3] = {w->qg[0], w->qg[1], w->qg[2]}, al = pt->alpha;
    pt->cost = pt->d1 = pt->d2 = 0;
    for (int b = 0; b < p->nb; ++b) {
        int k = p->kind[b];
        if (k == BLK_CONE) {
            cone_eval(w, b, al, t, pt);
            continue;
        }
        for (int i = p->off[b]; i < p->off[b + 1]; ++i) {
            double x = w->x[i] + al * w->Jv[i], Rw = p->R[i] * p->bound[i], fw = p->bound[i];
            if (k == BLK_BOX && x <= -Rw) {
                const double q[3] = {fw * (-0.5 * Rw - w->x[i]), -fw * w->Jv[i], 0};
                add3(t, q);
            } else if (k == BLK_BOX && x >= Rw) {
                const double q[3] = {fw * (-0.5 * Rw + w->x[i]), fw * w->Jv[i], 0};
                add3(t, q);
            } else if (k != BLK_NONNEG || x < 0) add3(t, w->quad + 3 * i);
        }
    }
    pt->cost += al * al * t[2] + al * t[1] + t[0];
    pt->d1 += 2 * al * t[2] + t[1];
    pt->d2 += 2 * t[2];
    if (!(pt->d2 > 0)) pt->d2 = PN_MINVAL; /* convex: only by round-off */
    ++*evals;
}

/* Replaces *b by the candidate on its side of the minimum (the slope's
 * sign) with the smallest slope, and its Newton point into *next; 1 when
 * it moved. */
static int pn_bracket(const pn *w, pn_pt *b, const pn_pt *cand, pn_pt *next, int *evals)
{
    int moved = 0;
    for (int i = 0; i < 3; ++i)
        if ((b->d1 < 0 && cand[i].d1 < 0 && b->d1 < cand[i].d1) || (b->d1 > 0 && cand[i].d1 > 0 && b->d1 > cand[i].d1)) {
            *b = cand[i];
            moved = 1;
        }
    if (moved) {
        next->alpha = b->alpha - b->d1 / b->d2;
        pn_eval(w, next, evals);
    }
    return moved;
}

/* MuJoCo's exact line search along w->s: Newton steps on the cost's
 * one-dimensional restriction from 0 until the slope is under gtol or
 * changes sign, then a bracketed search with Newton points from both ends
 * and the midpoint. Returns the step (0: none that decreases the cost). */
static double pn_search(pn *w, double tol)
{
    const clc_pproblem *p = w->p;
    double snorm = 0, gtol;
    pn_pt p0 = {0, 0, 0, 0}, p1, p2 = {0, 0, 0, 0}, mid, n1, n2;
    int evals = 0, have2 = 0, dir;
    for (int v = 0; v < p->nv; ++v) snorm += w->s[v] * w->s[v];
    snorm = sqrt(snorm);
    w->predicted = 0;
    if (snorm < PN_MINVAL) return 0;
    gtol = tol * p->ls_tolerance * snorm / p->scale;
    pn_prepare(w);
    pn_eval(w, &p0, &evals);
    w->predicted = 0.5 * p0.d1 * p0.d1 / p0.d2;
    p1.alpha = -p0.d1 / p0.d2;
    pn_eval(w, &p1, &evals);
    if (p0.cost < p1.cost) p1 = p0;
    if (fabs(p1.d1) < gtol) return p1.alpha;
    dir = p1.d1 < 0 ? 1 : -1;
    while (p1.d1 * dir <= -gtol && evals < p->ls_iterations) {
        p2 = p1;
        have2 = 1;
        p1.alpha -= p1.d1 / p1.d2;
        pn_eval(w, &p1, &evals);
        if (fabs(p1.d1) < gtol) return p1.alpha;
    }
    if (evals >= p->ls_iterations || !have2) return p1.alpha;
    n2 = p1;
    n1.alpha = p1.alpha - p1.d1 / p1.d2;
    pn_eval(w, &n1, &evals);
    while (evals < p->ls_iterations) {
        pn_pt cand[3];
        int best = -1, m1, m2;
        mid.alpha = 0.5 * (p1.alpha + p2.alpha);
        pn_eval(w, &mid, &evals);
        cand[0] = n1;
        cand[1] = n2;
        cand[2] = mid;
        for (int i = 0; i < 3; ++i)
            if (fabs(cand[i].d1) < gtol && (best < 0 || cand[i].cost < cand[best].cost)) best = i;
        if (best >= 0) return cand[best].alpha;
        m1 = pn_bracket(w, &p1, cand, &n1, &evals);
        m2 = pn_bracket(w, &p2, cand, &n2, &evals);
        if (!m1 && !m2) return mid.alpha;
    }
    if (p1.cost <= p2.cost && p1.cost < p0.cost) return p1.alpha;
    if (p2.cost <= p1.cost && p2.cost < p0.cost) return p2.alpha;
    return 0;
}

static void pn_free(pn *w)
{
    free(w->Ma);
    free(w->spos);
    clc_pchol_free(&w->ch);
}

/* Whether row r may share a run: a cone's rows only where they all have
 * the same dofs (a cone is whole in one run or its rows each alone). */
static int pn_joins(const pn *w, int r)
{
    const clc_pproblem *p = w->p;
    int b = w->rb[r];
    if (p->kind[b] != BLK_CONE) return 1;
    for (int s = p->off[b] + 1; s < p->off[b + 1]; ++s)
        if (!w->same[s]) return 0;
    return 1;
}

/* J by dofs (ctp, ctr, cte), a run of rows listed once, and its rows by
 * positions (spos, sval): a counting sort of the runs' first rows'
 * entries, the dofs taken in position order, each run's other rows
 * beside its first. */
static void pn_by_dofs(pn *w)
{
    const clc_pproblem *p = w->p;
    int *fill = w->gof; /* a row's fill (m ints) until the groups */
    for (int r = 0, r1; r < p->m; r = r1) {
        r1 = r + 1;
        if (pn_joins(w, r))
            while (r1 < p->m && w->same[r1] && pn_joins(w, r1)) ++r1;
        w->run[r] = r1;
        fill[r] = p->jp[r];
        for (int e = p->jp[r]; e < p->jp[r + 1]; ++e) ++w->ctp[p->jc[e] + 1];
    }
    for (int v = 0; v < p->nv; ++v) w->ctp[v + 1] += w->ctp[v];
    for (int r = 0; r < p->m; r = w->run[r])
        for (int e = p->jp[r]; e < p->jp[r + 1]; ++e) {
            int t = w->ctp[p->jc[e]]++;
            w->ctr[t] = r;
            w->cte[t] = e;
        }
    for (int v = p->nv; v > 0; --v) w->ctp[v] = w->ctp[v - 1];
    w->ctp[0] = 0;
    /* a run's other rows in its first's order, entry by entry */
    for (int j = 0; j < p->nv; ++j) {
        int i = w->ch.orig[j];
        for (int t = w->ctp[i]; t < w->ctp[i + 1]; ++t) {
            int r = w->ctr[t], e = fill[r]++, k = e - p->jp[r], o = w->cte[t] - p->jp[r];
            w->spos[e] = j;
            w->sval[e] = p->jv[w->cte[t]];
            w->cte[t] = e;
            for (int s = r + 1; s < w->run[r]; ++s) {
                w->spos[p->jp[s] + k] = j;
                w->sval[p->jp[s] + k] = p->jv[p->jp[s] + o];
            }
        }
    }
}

/* M's values where the factor's pattern has M (mx). */
static void pn_m_columns(pn *w)
{
    const clc_pproblem *p = w->p;
    const pchol *c = &w->ch;
    for (int j = 0; j < p->nv; ++j) {
        int i = c->orig[j], g = w->gof[i], g0 = p->goff[g], n = p->goff[g + 1] - g0;
        for (int q = c->mp[j]; q < c->mp[j + 1]; ++q) w->mx[q] = p->M[p->moff[g] + (size_t)(i - g0) * n + c->orig[c->mi[q]] - g0];
    }
}

static clcone_status pn_init(pn *w, const clc_pproblem *p, double *a, double *f, int *state, clcone_error *err)
{
    size_t nv = (size_t)p->nv, m = (size_t)p->m, nb = (size_t)p->nb, nnz = (size_t)p->jp[p->m];
    clcone_status s;
    memset(w, 0, sizeof *w);
    w->p = p;
    w->a = a;
    w->f = f;
    w->state = state;
    /* every array here and below written before it is read, but the
     * counts of J by dofs and same[0]: not zeroed (zeroing them all was
     * 2-4% of a solve of Stonehenge) */
    w->spos = clc_malloc(3 * nnz + 2 * nv + 5 * m + 2, sizeof *w->spos, err, "the Jacobian by dofs");
    if (!w->spos) return CLCONE_ENOMEM;
    w->ctp = w->spos + nnz;
    w->ctr = w->ctp + nv + 1;
    w->cte = w->ctr + nnz;
    w->rb = w->cte + nnz;
    w->gof = w->rb + m;
    w->fstate = w->gof + nv;
    w->changed = w->fstate + m;
    w->same = w->changed + m;
    w->run = w->same + m;
    memset(w->ctp, 0, sizeof *w->ctp * (nv + 1));
    w->same[0] = 0;
    for (int r = 1; r < p->m; ++r) w->same[r] = clc_pproblem_same_dofs(p, r - 1, r);
    if ((s = clc_pchol_init(&w->ch, p, clc_pchol_dense_pays(p), w->same, err))) {
        free(w->spos);
        return s;
    }
    /* the reals in one allocation (a small island's solve is a few
     * microseconds): 6 dof vectors, 5 row vectors, a block's room for a
     * cone's Hessian whatever its kind (written for cones only before it
     * is read), J by positions, D, M's values in the factor's pattern */
    w->Ma = clc_malloc(6 * nv + 5 * m + nb * (CONE2 + 6) + nnz + m + (size_t)w->ch.mp[p->nv] + 1, sizeof *w->Ma,
                       err, "Newton's vectors");
    if (!w->Ma) {
        pn_free(w);
        return CLCONE_ENOMEM;
    }
    w->x = w->Ma + 6 * nv;
    w->Hc = w->x + 5 * m;
    w->sval = w->Hc + nb * (CONE2 + 6);
    w->D = w->sval + nnz;
    w->mx = w->D + m;
    for (size_t r = 0; r < m; ++r) {
        double k = p->jp[r + 1] - p->jp[r];
        w->assembly += 0.5 * k * (k + 1);
        w->D[r] = 1 / p->R[r];
    }
    for (int b = 0; b < p->nb; ++b)
        for (int r = p->off[b]; r < p->off[b + 1]; ++r) w->rb[r] = b;
    w->pos = w->spos;
    w->val = w->sval;
    if (w->ch.dense) { /* positions are dofs: J's own rows */
        w->pos = p->jc;
        w->val = p->jv;
    } else {
        pn_by_dofs(w);
        for (int g = 0; g < p->ng; ++g)
            for (int v = p->goff[g]; v < p->goff[g + 1]; ++v) w->gof[v] = g;
        pn_m_columns(w);
    }
    w->grad = w->Ma + nv;
    w->Mg = w->grad + nv;
    w->s = w->Mg + nv;
    w->Mv = w->s + nv;
    w->tmp = w->Mv + nv;
    w->Jv = w->x + m;
    w->quad = w->Jv + m;
    w->cq = w->Hc + nb * CONE2;
    return CLCONE_OK;
}

/* w->a and w->Ma = M a set: x = J a - aref, and the update there. */
static void pn_at(pn *w)
{
    mul_j(w->p, w->a, w->x);
    for (int i = 0; i < w->p->m; ++i) w->x[i] -= w->p->aref[i];
    pn_update(w);
}

/* At a0, whose M a0 the problem holds (f0). */
static void pn_at_a0(pn *w)
{
    size_t n = sizeof *w->a * (size_t)w->p->nv;
    memcpy(w->a, w->p->a0, n);
    memcpy(w->Ma, w->p->f0, n);
    pn_at(w);
}

/* MuJoCo's warm start: a or a0, a unless it costs more (a0 first: it
 * needs no M a, and the warm start, mostly taken, is then current). */
static void pn_start(pn *w, int warm)
{
    double cold;
    if (!warm) {
        pn_at_a0(w);
        return;
    }
    memcpy(w->Mv, w->a, sizeof *w->a * (size_t)w->p->nv); /* Mv is free until the first search */
    pn_at_a0(w);
    cold = w->cost;
    memcpy(w->a, w->Mv, sizeof *w->a * (size_t)w->p->nv);
    mul_m(w->p, w->a, w->Ma);
    pn_at(w);
    if (w->cost > cold) pn_at_a0(w);
}

clcone_status clc_ref_primal_newton(const clc_pproblem *p, const clcone_options *o, double *a, double *f,
                                       int *state, clcone_prob_result *res, clcone_error *err)
{
    double t0 = clc_now_ms(), gradient = 0;
    clcone_status s;
    pn w;
    memset(res, 0, sizeof *res);
    if ((s = clc_pproblem_soft_only(p, err)) || (s = pn_init(&w, p, a, f, state, err))) return s;
    pn_start(&w, o->warm_start);
    if ((s = pn_factor(&w, err))) goto out;
    pn_solve(&w);
    for (int it = 1;; ++it) {
        double alpha, old = w.cost, impr;
        for (int v = 0; v < p->nv; ++v) w.s[v] = -w.Mg[v];
        alpha = pn_search(&w, o->tol);
        if (alpha == 0) { /* no decrease along Newton's direction: done */
            /* converged where the gradient, or the decrease the step's own
             * quadratic model promised, is within tol (MuJoCo's rule on the
             * improvement): below rounding no step shows a decrease; failed
             * where the model promised more */
            double predicted = p->scale * w.predicted;
            for (int v = 0; v < p->nv; ++v) gradient += w.grad[v] * w.grad[v];
            gradient = p->scale * sqrt(gradient);
            if (!clc_stop_rule(o, it - 1, fmin(gradient, predicted), clc_now_ms() - t0, res)) {
                res->status = CLCONE_FAILED;
                snprintf(res->reason, sizeof res->reason,
                         "the line search found no decrease at scaled gradient %.3g (%.3g promised)", gradient, predicted);
            }
            break;
        }
        for (int v = 0; v < p->nv; ++v) {
            w.a[v] += alpha * w.s[v];
            w.Ma[v] += alpha * w.Mv[v];
        }
        for (int i = 0; i < p->m; ++i) w.x[i] += alpha * w.Jv[i];
        pn_update(&w);
        gradient = 0;
        for (int v = 0; v < p->nv; ++v) gradient += w.grad[v] * w.grad[v];
        gradient = p->scale * sqrt(gradient);
        impr = p->scale * (old - w.cost);
        if (clc_stop_rule(o, it, impr < gradient ? fmax(impr, 0) : gradient, clc_now_ms() - t0, res)) break;
        /* the next direction's Hessian only once the rule goes on: the
         * stop reads the gradient, not H^-1 grad (one factor in two of
         * a solve that stops after its first step) */
        if ((s = pn_refactor(&w, err))) goto out;
        pn_solve(&w);
    }
    res->cost = w.cost;
out:
    res->time_ms = clc_now_ms() - t0;
    pn_free(&w);
    return s;
}
