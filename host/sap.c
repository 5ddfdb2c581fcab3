/* SAP model: option checks, the set-up shared by both backends, the Newton
 * loop with its line searches, and the CPU reference backend (dense
 * Cholesky of H = M + J'GJ). See host/sap.h for the API and the error
 * measure and kernels/sap_math.h for the model. */
#include "sap.h"
#include "cone.h"
#include "sap_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Set-up                                                              */
/* ------------------------------------------------------------------ */

void clcone_sap_setup_free(clcone_sap_setup *S)
{
    clcone_body_csr_free(&S->L);
    free(S->ca);
    free(S->cb);
    free(S->moving);
    free(S->frame);
    free(S->arm);
    free(S->u0);
    free(S->mu);
    free(S->R);
    free(S->mass);
    free(S->inertia);
    free(S->vstar);
    memset(S, 0, sizeof *S);
}

/* inertia = inv_inertia^-1 when inv_inertia is positive definite (the
 * relative pivot floor rejects matrices that are singular up to rounding:
 * their inverse would be a huge, meaningless inertia). */
static int invert_spd3(const double A[9], double out[9])
{
    double L[9], amax = 0;
    for (int k = 0; k < 9; ++k) {
        L[k] = 0.5 * (A[k] + A[3 * (k % 3) + k / 3]);
        amax = fmax(amax, fabs(L[k]));
    }
    if (!(amax > 0) || !sap_cholesky(3, L)) return 0;
    for (int k = 0; k < 3; ++k)
        if (L[4 * k] * L[4 * k] < 1e-12 * amax) return 0;
    for (int j = 0; j < 3; ++j) {
        double e[3] = {0, 0, 0};
        e[j] = 1;
        sap_cholesky_solve(3, L, e);
        for (int i = 0; i < 3; ++i) out[3 * i + j] = e[i];
    }
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < i; ++j) out[3 * i + j] = out[3 * j + i] = 0.5 * (out[3 * i + j] + out[3 * j + i]);
    return 1;
}

clcone_status clcone_sap_setup_build(const clcone_scene *s, double beta, clcone_sap_setup *S,
                                     clcone_error *err)
{
    int n = s->ncontacts, nb = s->nbodies;
    clcone_status st;
    memset(S, 0, sizeof *S);
    S->n = n;
    S->nb = nb;
    S->ca = clcone_calloc((size_t)n, sizeof *S->ca, err, "sap contact bodies");
    S->cb = clcone_calloc((size_t)n, sizeof *S->cb, err, "sap contact bodies");
    S->moving = clcone_calloc((size_t)nb, sizeof *S->moving, err, "sap moving flags");
    S->frame = clcone_calloc((size_t)n * 9, sizeof *S->frame, err, "sap frames");
    S->arm = clcone_calloc((size_t)n * 6, sizeof *S->arm, err, "sap lever arms");
    S->u0 = clcone_calloc((size_t)n * 3, sizeof *S->u0, err, "sap static velocities");
    S->mu = clcone_calloc((size_t)n, sizeof *S->mu, err, "sap mu");
    S->R = clcone_calloc((size_t)n * 2, sizeof *S->R, err, "sap regularisation");
    S->mass = clcone_calloc((size_t)nb, sizeof *S->mass, err, "sap masses");
    S->inertia = clcone_calloc((size_t)nb * 9, sizeof *S->inertia, err, "sap inertias");
    S->vstar = clcone_calloc((size_t)nb * 6, sizeof *S->vstar, err, "sap free velocities");
    if (!S->ca || !S->cb || !S->moving || !S->frame || !S->arm || !S->u0 || !S->mu || !S->R || !S->mass
        || !S->inertia || !S->vstar) {
        clcone_sap_setup_free(S);
        return CLCONE_ENOMEM;
    }
    for (int i = 0; i < nb; ++i) {
        const clcone_body *b = &s->bodies[i];
        memcpy(S->vstar + 6 * i, b->v, 6 * sizeof(double));
        if (clcone_body_is_static(b)) continue;
        {
            int spd = invert_spd3(b->inv_inertia, S->inertia + 9 * i);
            if (!(b->inv_mass > 0) || !spd) {
                clcone_sap_setup_free(S);
                return clcone_fail(err, CLCONE_ENOTSUP,
                                   "sap needs the mass matrix M of every moving body: body %d has inv_mass = %g "
                                   "and a %s inverse inertia (pinned or rotation-locked bodies are not "
                                   "supported; make the body static or give it a finite mass and inertia)",
                                   i, b->inv_mass, spd ? "positive definite" : "singular");
            }
        }
        S->moving[i] = 1;
        S->mass[i] = 1.0 / b->inv_mass;
        S->nmoving++;
    }
    for (int c = 0; c < n; ++c) {
        const clcone_contact *ct = &s->contacts[c];
        double Wcc[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
        S->mu[c] = ct->mu;
        clcone_contact_frame(ct->normal, S->frame + 9 * c);
        for (int side = 0; side < 2; ++side) {
            int bi = clcone_contact_body(ct, side);
            double J[18], MJ[18], sg = side == 0 ? 1.0 : -1.0, *arm = S->arm + 6 * c + 3 * side;
            int *slot = side == 0 ? &S->ca[c] : &S->cb[c];
            *slot = -1;
            if (bi < 0) continue;
            for (int k = 0; k < 3; ++k) arm[k] = ct->point[k] - s->bodies[bi].x[k];
            sap_side_jacobian(S->frame + 9 * c, arm, J);
            if (!S->moving[bi]) {
                /* a static body keeps its v: a constant contact velocity */
                sap_jac_apply_add(J, sg, s->bodies[bi].v, S->u0 + 3 * c);
                continue;
            }
            *slot = bi;
            for (int k = 0; k < 3; ++k) clcone_body_inv_mass_apply(&s->bodies[bi], J + 6 * k, MJ + 6 * k);
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    for (int k = 0; k < 6; ++k) Wcc[3 * i + j] += J[6 * i + k] * MJ[6 * j + k];
        }
        sap_regularisation(beta, Wcc, &S->R[2 * c], &S->R[2 * c + 1]);
        if (!(S->R[2 * c] > 0) || !(S->R[2 * c + 1] > 0)) {
            clcone_sap_setup_free(S);
            return clcone_fail(err, CLCONE_EINVAL, "contact %d: no moving body, W_cc = 0", c);
        }
    }
    if ((st = clcone_body_csr_build(s, &S->L, err))) {
        clcone_sap_setup_free(S);
        return st;
    }
    return CLCONE_OK;
}

/* ------------------------------------------------------------------ */
/* Newton loop and line searches (shared by both backends)             */
/* ------------------------------------------------------------------ */

/* Armijo constant and step shrink of the backtracking search. */
#define LS_ARMIJO 1e-4
#define LS_SHRINK 0.5
#define LS_MAX_TRIES 40
/* Exact search: stop when |phi'| <= LS_RTOL |phi'(0)| or the bracket is
 * this narrow relative to the step; 1e-8 leaves the Newton step's
 * quadratic convergence intact (alpha -> 1 near the solution). */
#define LS_RTOL 1e-8
#define LS_WIDTH 1e-10

/* phi'(alpha) and phi''(alpha) of phi(alpha) = l(v + alpha dv), from the
 * body terms a, b and the contact sums at alpha. */
static clcone_status ls_point(const clcone_sap_ops *ops, double a, double b, double alpha, double *dphi,
                              double *d2phi, double *dcost, clcone_error *err)
{
    double dc = 0, d1 = 0, d2 = 0;
    clcone_status s = ops->ls_eval(ops->ctx, alpha, &dc, &d1, &d2, err);
    if (s) return s;
    *dphi = a + alpha * b - d1;
    *d2phi = b + d2;
    if (dcost) *dcost = dc;
    return CLCONE_OK;
}

/* phi is convex and piecewise smooth (each contact changes regime at
 * kinks), so a Newton iteration on phi' = 0 safeguarded by a bracket
 * [lo, hi] with phi'(lo) < 0 < phi'(hi) always converges: a Newton point
 * outside the bracket is replaced by bisection. Any alpha with
 * phi'(alpha) <= 0 lies left of the minimiser, so phi(alpha) <= phi(0). */
static clcone_status ls_exact(const clcone_sap_ops *ops, double a, double b, double dphi0, double *alpha,
                              clcone_error *err)
{
    double lo = 0, hi = CLCONE_SAP_ALPHA_MAX, x = 1, dp, d2p;
    clcone_status s;
    if ((s = ls_point(ops, a, b, hi, &dp, &d2p, NULL, err))) return s;
    if (dp <= 0) {
        *alpha = hi;
        return CLCONE_OK;
    }
    for (int it = 0; it < 100; ++it) {
        double xn;
        if ((s = ls_point(ops, a, b, x, &dp, &d2p, NULL, err))) return s;
        if (fabs(dp) <= LS_RTOL * fabs(dphi0)) break;
        if (dp < 0) lo = x;
        else hi = x;
        if (hi - lo <= LS_WIDTH * hi) {
            /* converged bracket: keep its left end, a sure decrease */
            x = lo > 0 ? lo : x;
            break;
        }
        xn = d2p > 0 ? x - dp / d2p : -1;
        x = xn > lo && xn < hi ? xn : 0.5 * (lo + hi);
    }
    *alpha = x;
    return CLCONE_OK;
}

/* Armijo: the first alpha = 1, 1/2, 1/4, ... with
 * phi(alpha) - phi(0) <= c alpha phi'(0); phi(alpha) - phi(0) is summed
 * as differences (contact by contact, and alpha a + alpha^2 b / 2 for the
 * inertial term), never as the difference of two totals. */
static clcone_status ls_backtrack(const clcone_sap_ops *ops, double a, double b, double dphi0, double *alpha,
                                  int *found, clcone_error *err)
{
    double x = 1;
    *found = 0;
    for (int k = 0; k < LS_MAX_TRIES; ++k, x *= LS_SHRINK) {
        double dp, d2p, dc;
        clcone_status s = ls_point(ops, a, b, x, &dp, &d2p, &dc, err);
        if (s) return s;
        if (x * a + 0.5 * x * x * b + dc <= LS_ARMIJO * x * dphi0) {
            *found = 1;
            break;
        }
    }
    *alpha = x;
    return CLCONE_OK;
}

static double rel_error(const clcone_sap_eval *e)
{
    if (e->g2 == 0) return 0;
    return e->scale2 > 0 ? sqrt(e->g2 / e->scale2) : sqrt(e->g2);
}

clcone_status clcone_sap_newton(const clcone_sap_ops *ops, const clcone_options *o, int nv,
                                clcone_sap_params *prm, clcone_prob_result *out, clcone_error *err)
{
    double t0 = clcone_now_ms();
    int inner = 0;
    /* CG converges in at most nv steps in exact arithmetic; the cap only
     * matters in float, where it may stagnate */
    int max_inner = nv < 5000 ? 2 * nv + 50 : 10000;
    clcone_status s;
    if (prm) prm->history_len = 0;
    for (int it = 0;; ++it) {
        clcone_sap_eval ev;
        double e, a, b, dphi0, alpha = 1, tol_abs, eta;
        if ((s = ops->eval(ops->ctx, &ev, err))) return s;
        e = rel_error(&ev);
        if (prm && prm->cost_history && it < prm->history_cap) {
            prm->cost_history[it] = ev.cost;
            prm->history_len = it + 1;
        }
        out->iters = it;
        out->inner_iters = inner;
        out->error = e;
        out->cost = ev.cost;
        out->reason[0] = 0;
        if (o->progress) o->progress(o->progress_user, 0, it, e);
        if (!isfinite(e) || !isfinite(ev.cost)) {
            out->status = CLCONE_DIVERGED;
            snprintf(out->reason, sizeof out->reason, "non-finite gradient or cost after %d Newton iterations", it);
            return CLCONE_OK;
        }
        if (e <= o->tol) {
            out->status = CLCONE_CONVERGED;
            return CLCONE_OK;
        }
        if (it >= o->max_iter) {
            out->status = CLCONE_MAXITER;
            snprintf(out->reason, sizeof out->reason, "Newton iteration cap %d reached", o->max_iter);
            return CLCONE_OK;
        }
        if (o->max_seconds > 0 && clcone_now_ms() - t0 > 1e3 * o->max_seconds) {
            out->status = CLCONE_MAXITER;
            snprintf(out->reason, sizeof out->reason, "time cap %.3g s reached", o->max_seconds);
            return CLCONE_OK;
        }
        /* inexact Newton: the CG residual relative to the gradient shrinks
         * with the error (quadratic convergence), and need not go below a
         * quarter of what the stopping test asks of the gradient */
        eta = e < 0.1 ? e : 0.1;
        tol_abs = fmax(eta * sqrt(ev.g2), 0.25 * o->tol * sqrt(ev.scale2));
        if ((s = ops->direction(ops->ctx, tol_abs, max_inner, &inner, err))
            || (s = ops->ls_setup(ops->ctx, &a, &b, &dphi0, err)))
            return s;
        out->inner_iters = inner;
        if (!(dphi0 < 0)) {
            /* H is SPD, so only rounding makes the direction non-descent:
             * the precision's limit, short of the tolerance */
            out->status = CLCONE_FAILED;
            snprintf(out->reason, sizeof out->reason,
                     "Newton direction is not a descent direction at error %.3g (rounding limit)", e);
            return CLCONE_OK;
        }
        if (prm && prm->line_search == CLCONE_SAP_LS_BACKTRACK) {
            int found;
            if ((s = ls_backtrack(ops, a, b, dphi0, &alpha, &found, err))) return s;
            if (!found) {
                out->status = CLCONE_FAILED;
                snprintf(out->reason, sizeof out->reason,
                         "backtracking line search found no decrease at error %.3g", e);
                return CLCONE_OK;
            }
        } else if ((s = ls_exact(ops, a, b, dphi0, &alpha, err))) {
            return s;
        }
        if ((s = ops->step(ops->ctx, alpha, err))) return s;
    }
}

/* ------------------------------------------------------------------ */
/* CPU reference backend                                               */
/* ------------------------------------------------------------------ */

typedef struct ref_sap {
    const clcone_sap_setup *S;
    int nv;
    int *dof;                   /* nb: first unknown of a moving body, -1 */
    double *v, *u, *gamma, *G, *cost, *grad, *dv, *w, *H, *x;
} ref_sap;

static void ref_side(const clcone_sap_setup *S, int c, int side, double J[18])
{
    sap_side_jacobian(S->frame + 9 * c, S->arm + 6 * c + 3 * side, J);
}

static clcone_status ref_eval(void *vctx, clcone_sap_eval *out, clcone_error *err)
{
    ref_sap *R = vctx;
    const clcone_sap_setup *S = R->S;
    double cost = 0, t[5] = {0, 0, 0, 0, 0};
    (void)err;
    for (int c = 0; c < S->n; ++c) {
        double *u = R->u + 3 * c, J[18];
        for (int k = 0; k < 3; ++k) u[k] = S->u0[3 * c + k];
        for (int side = 0; side < 2; ++side) {
            int b = side == 0 ? S->ca[c] : S->cb[c];
            if (b < 0) continue;
            ref_side(S, c, side, J);
            sap_jac_apply_add(J, side == 0 ? 1.0 : -1.0, R->v + 6 * b, u);
        }
        sap_gamma(S->mu[c], S->R[2 * c], S->R[2 * c + 1], u, R->gamma + 3 * c, R->G + 9 * c);
        R->cost[c] = sap_contact_cost(S->R[2 * c], S->R[2 * c + 1], R->gamma + 3 * c);
        cost += R->cost[c];
    }
    for (int i = 0; i < S->nb; ++i) {
        double d[6], Md[6], Mv[6], Mvs[6], jg[6] = {0, 0, 0, 0, 0, 0}, dg[6], J[18];
        double *g = R->grad + 6 * i;
        if (!S->moving[i]) {
            memset(g, 0, 6 * sizeof *g);
            continue;
        }
        for (int k = 0; k < 6; ++k) d[k] = R->v[6 * i + k] - S->vstar[6 * i + k];
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, d, Md);
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, R->v + 6 * i, Mv);
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, S->vstar + 6 * i, Mvs);
        sap_mass_diag(S->mass[i], S->inertia + 9 * i, dg);
        for (int k = S->L.ptr[i]; k < S->L.ptr[i + 1]; ++k) {
            int c = S->L.contact[k];
            ref_side(S, c, S->L.sign[k] > 0 ? 0 : 1, J);
            sap_jac_transpose_add(J, S->L.sign[k] > 0 ? 1.0 : -1.0, R->gamma + 3 * c, jg);
        }
        for (int k = 0; k < 6; ++k) {
            g[k] = Md[k] - jg[k];
            t[0] += g[k] * g[k] / dg[k];
            t[1] += Mvs[k] * Mvs[k] / dg[k];
            t[2] += jg[k] * jg[k] / dg[k];
            t[3] += Mv[k] * Mv[k] / dg[k];
            t[4] += d[k] * Md[k];
        }
    }
    out->g2 = t[0];
    out->scale2 = fmax(t[1], fmax(t[2], t[3]));
    out->cost = 0.5 * t[4] + cost;
    return CLCONE_OK;
}

/* Exact Newton direction: H = M + sum_c J_c' G_c J_c assembled densely
 * over the moving bodies' unknowns and factored. */
static clcone_status ref_direction(void *vctx, double tol_abs, int max_inner, int *inner, clcone_error *err)
{
    ref_sap *R = vctx;
    const clcone_sap_setup *S = R->S;
    int nv = R->nv;
    double *H = R->H;
    (void)tol_abs;
    (void)max_inner;
    (void)inner;
    (void)err;
    memset(H, 0, sizeof *H * (size_t)nv * (size_t)nv);
    for (int i = 0; i < S->nb; ++i) {
        int o = R->dof[i];
        if (o < 0) continue;
        for (int k = 0; k < 3; ++k) H[(size_t)(o + k) * nv + o + k] = S->mass[i];
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) H[(size_t)(o + 3 + a) * nv + o + 3 + b] = S->inertia[9 * i + 3 * a + b];
    }
    for (int c = 0; c < S->n; ++c) {
        int bs[2] = {S->ca[c], S->cb[c]};
        double J[2][18];
        for (int side = 0; side < 2; ++side)
            if (bs[side] >= 0) ref_side(S, c, side, J[side]);
        for (int s1 = 0; s1 < 2; ++s1)
            for (int s2 = 0; s2 < 2; ++s2) {
                double P[36] = {0};
                int o1, o2;
                if (bs[s1] < 0 || bs[s2] < 0) continue;
                sap_add_jtgj(J[s1], R->G + 9 * c, J[s2], s1 == s2 ? 1.0 : -1.0, P);
                o1 = R->dof[bs[s1]];
                o2 = R->dof[bs[s2]];
                for (int a = 0; a < 6; ++a)
                    for (int b = 0; b < 6; ++b) H[(size_t)(o1 + a) * nv + o2 + b] += P[6 * a + b];
            }
    }
    for (int i = 0; i < S->nb; ++i)
        if (R->dof[i] >= 0)
            for (int k = 0; k < 6; ++k) R->x[R->dof[i] + k] = -R->grad[6 * i + k];
    if (sap_cholesky(nv, H)) {
        sap_cholesky_solve(nv, H, R->x);
    } else {
        /* M is SPD and J'GJ PSD, so only non-finite data lands here; a
         * scaled gradient step keeps the loop defined and the next
         * evaluation reports the divergence */
        for (int i = 0; i < S->nb; ++i)
            if (R->dof[i] >= 0)
                for (int k = 0; k < 6; ++k) {
                    double dg[6];
                    sap_mass_diag(S->mass[i], S->inertia + 9 * i, dg);
                    R->x[R->dof[i] + k] /= dg[k];
                }
    }
    for (int i = 0; i < S->nb; ++i)
        for (int k = 0; k < 6; ++k) R->dv[6 * i + k] = R->dof[i] >= 0 ? R->x[R->dof[i] + k] : 0;
    return CLCONE_OK;
}

static clcone_status ref_ls_setup(void *vctx, double *a, double *b, double *c, clcone_error *err)
{
    ref_sap *R = vctx;
    const clcone_sap_setup *S = R->S;
    double sa = 0, sb = 0, sc = 0;
    (void)err;
    for (int i = 0; i < S->nb; ++i) {
        double md[6];
        if (!S->moving[i]) continue;
        sap_mass_apply(S->mass[i], S->inertia + 9 * i, R->dv + 6 * i, md);
        for (int k = 0; k < 6; ++k) {
            sa += md[k] * (R->v[6 * i + k] - S->vstar[6 * i + k]);
            sb += md[k] * R->dv[6 * i + k];
            sc += R->dv[6 * i + k] * R->grad[6 * i + k];
        }
    }
    for (int ct = 0; ct < S->n; ++ct) {
        double J[18], *w = R->w + 3 * ct;
        w[0] = w[1] = w[2] = 0;
        for (int side = 0; side < 2; ++side) {
            int bi = side == 0 ? S->ca[ct] : S->cb[ct];
            if (bi < 0) continue;
            ref_side(S, ct, side, J);
            sap_jac_apply_add(J, side == 0 ? 1.0 : -1.0, R->dv + 6 * bi, w);
        }
    }
    *a = sa;
    *b = sb;
    *c = sc;
    return CLCONE_OK;
}

static clcone_status ref_ls_eval(void *vctx, double alpha, double *dcost, double *d1, double *d2,
                                 clcone_error *err)
{
    ref_sap *R = vctx;
    const clcone_sap_setup *S = R->S;
    double s0 = 0, s1 = 0, s2 = 0;
    (void)err;
    for (int c = 0; c < S->n; ++c) {
        double ua[3], g[3], G[9], gw[3], *w = R->w + 3 * c;
        for (int k = 0; k < 3; ++k) ua[k] = R->u[3 * c + k] + alpha * w[k];
        sap_gamma(S->mu[c], S->R[2 * c], S->R[2 * c + 1], ua, g, G);
        sap_mat3_apply(G, w, gw);
        s0 += sap_contact_cost(S->R[2 * c], S->R[2 * c + 1], g) - R->cost[c];
        s1 += w[0] * g[0] + w[1] * g[1] + w[2] * g[2];
        s2 += w[0] * gw[0] + w[1] * gw[1] + w[2] * gw[2];
    }
    *dcost = s0;
    *d1 = s1;
    *d2 = s2;
    return CLCONE_OK;
}

static clcone_status ref_step(void *vctx, double alpha, clcone_error *err)
{
    ref_sap *R = vctx;
    (void)err;
    for (int i = 0; i < 6 * R->S->nb; ++i) R->v[i] += alpha * R->dv[i];
    return CLCONE_OK;
}

static void ref_free(ref_sap *R)
{
    free(R->dof);
    free(R->v);
    free(R->u);
    free(R->gamma);
    free(R->G);
    free(R->cost);
    free(R->grad);
    free(R->dv);
    free(R->w);
    free(R->H);
    free(R->x);
}

static clcone_status ref_solve(const clcone_sap_setup *S, const double *v0, const clcone_options *o,
                               clcone_sap_params *prm, double *r, double *vout, clcone_prob_result *out,
                               clcone_error *err)
{
    ref_sap R;
    clcone_sap_ops ops = {&R, ref_eval, ref_direction, ref_ls_setup, ref_ls_eval, ref_step};
    size_t n = (size_t)S->n, nb = (size_t)S->nb;
    clcone_status s;
    int nv = 6 * S->nmoving;
    memset(&R, 0, sizeof R);
    R.S = S;
    R.nv = nv;
    R.dof = clcone_calloc(nb, sizeof *R.dof, err, "sap unknowns");
    R.v = clcone_calloc(6 * nb, sizeof *R.v, err, "sap velocities");
    R.u = clcone_calloc(3 * n, sizeof *R.u, err, "sap contact velocities");
    R.gamma = clcone_calloc(3 * n, sizeof *R.gamma, err, "sap impulses");
    R.G = clcone_calloc(9 * n, sizeof *R.G, err, "sap contact Hessians");
    R.cost = clcone_calloc(n, sizeof *R.cost, err, "sap contact costs");
    R.grad = clcone_calloc(6 * nb, sizeof *R.grad, err, "sap gradient");
    R.dv = clcone_calloc(6 * nb, sizeof *R.dv, err, "sap Newton step");
    R.w = clcone_calloc(3 * n, sizeof *R.w, err, "sap contact step");
    R.H = clcone_calloc((size_t)nv * (size_t)nv, sizeof *R.H, err, "sap dense Hessian");
    R.x = clcone_calloc((size_t)nv, sizeof *R.x, err, "sap Newton right-hand side");
    if (!R.dof || !R.v || !R.u || !R.gamma || !R.G || !R.cost || !R.grad || !R.dv || !R.w || !R.H || !R.x) {
        ref_free(&R);
        return CLCONE_ENOMEM;
    }
    for (int i = 0, k = 0; i < S->nb; ++i) R.dof[i] = S->moving[i] ? 6 * k++ : -1;
    memcpy(R.v, v0, sizeof *R.v * 6 * nb);
    s = clcone_sap_newton(&ops, o, nv, prm, out, err);
    if (!s) {
        memcpy(r, R.gamma, sizeof *r * 3 * n);
        if (vout) memcpy(vout, R.v, sizeof *vout * 6 * nb);
    }
    ref_free(&R);
    return s;
}

/* ------------------------------------------------------------------ */
/* Entry                                                               */
/* ------------------------------------------------------------------ */

clcone_status clcone_sap_check_options(const clcone_options *o, clcone_error *err)
{
    if (o->model != CLCONE_MODEL_SAP)
        return clcone_fail(err, CLCONE_EINVAL, "sap solve called for model %s", clcone_model_name(o->model));
    if (!isfinite(o->sap_beta) || !(o->sap_beta > 0))
        return clcone_fail(err, CLCONE_EINVAL,
                           "sap_beta must be finite and > 0 (got %g): it sets the near-rigid normal "
                           "compliance Rn = beta^2 / (4 pi^2) w (default 1)", o->sap_beta);
    if (!(o->tol >= 0) || o->max_iter < 1 || !(o->max_seconds >= 0))
        return clcone_fail(err, CLCONE_EINVAL,
                           "bad stopping options (tol=%g >= 0, max_iter=%d >= 1, max_seconds=%g >= 0 required)",
                           o->tol, o->max_iter, o->max_seconds);
    return CLCONE_OK;
}

clcone_status clcone_sap_solve_ex(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o,
                                  clcone_sap_params *prm, double *r, clcone_result *res, clcone_error *err)
{
    clcone_sap_setup S;
    clcone_status s;
    double t0 = clcone_now_ms(), *v0 = NULL;
    size_t nb;
    res->items = NULL;
    res->nprob = 0;
    if (prm) prm->history_len = 0;
    if ((s = clcone_sap_check_options(o, err)) || (s = clcone_scene_validate(sc, err))) return s;
    if (o->warm_start)
        for (int i = 0; i < 3 * sc->ncontacts; ++i)
            if (!isfinite(r[i]))
                return clcone_fail(err, CLCONE_EINVAL, "warm start r[%d] (contact %d) is not finite", i, i / 3);
    if ((s = clcone_sap_setup_build(sc, o->sap_beta, &S, err))) return s;
    if (!ctx && 6 * S.nmoving > CLCONE_SAP_REF_MAX_DOF) {
        s = clcone_fail(err, CLCONE_ENOTSUP,
                        "the sap reference factors a dense Hessian and takes at most %d velocity unknowns "
                        "(%d moving bodies); this scene has %d moving bodies: use an OpenCL device",
                        CLCONE_SAP_REF_MAX_DOF, CLCONE_SAP_REF_MAX_DOF / 6, S.nmoving);
        clcone_sap_setup_free(&S);
        return s;
    }
    nb = (size_t)sc->nbodies;
    v0 = clcone_calloc(6 * nb, sizeof *v0, err, "sap start velocities");
    if (!v0 || (s = clcone_result_init(res, 1, err))) {
        free(v0);
        clcone_sap_setup_free(&S);
        return v0 ? s : CLCONE_ENOMEM;
    }
    if (o->warm_start) clcone_scene_apply_impulses(sc, r, v0); /* static bodies get 0 */
    for (size_t i = 0; i < 6 * nb; ++i) v0[i] += S.vstar[i];
    s = ctx ? clcone_sap_device(ctx, &S, v0, o, prm, r, prm ? prm->v : NULL, &res->items[0], err)
            : ref_solve(&S, v0, o, prm, r, prm ? prm->v : NULL, &res->items[0], err);
    free(v0);
    clcone_sap_setup_free(&S);
    if (s) {
        clcone_result_free(res);
        return s;
    }
    res->time_ms = res->items[0].time_ms = clcone_now_ms() - t0;
    return CLCONE_OK;
}

clcone_status clcone_sap_solve(clcone_context *ctx, const clcone_scene *sc, const clcone_options *o, double *r,
                               clcone_result *res, clcone_error *err)
{
    return clcone_sap_solve_ex(ctx, sc, o, NULL, r, res, err);
}
