/* SAP model: the set-up both backends start from and the Newton loop with
 * its line searches that drives either backend through clc_sap_ops.
 * See core/sap.h for the API and the error measure and kernels/sap_math.h
 * for the model. */
#include "core/sap.h"
#include "cone.h"
#include "jacobian.h"
#include "sap_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Set-up                                                              */
/* ------------------------------------------------------------------ */

void clc_sap_setup_free(clc_sap_setup *S)
{
    clc_body_csr_free(&S->L);
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

clcone_status clc_sap_setup_build(const clcone_scene *s, const clcone_options *o, clc_sap_setup *S,
                                     clcone_error *err)
{
    int n = s->ncontacts, nb = s->nbodies;
    /* Drake's SAP contact (SapFrictionConeConstraint): the contact is a
     * spring k and a dissipation time scale tau_d, whose free velocity
     * v_hat = -gap / (dt + tau_d) pushes penetration out and whose
     * compliance Rn is at least 1 / (dt k (dt + tau_d)); without a
     * stiffness the near-rigid regime alone, a period of beta dt
     * critically damped: tau_d = beta dt / pi */
    double beta = o->sap_beta, dt = o->soft_dt,
           taud = o->sap_dissipation > 0 ? o->sap_dissipation : beta * dt / CONE_PI, relax = dt + taud,
           rn_floor = o->sap_stiffness > 0 ? 1.0 / (dt * o->sap_stiffness * relax) : 0.0;
    clcone_status st;
    memset(S, 0, sizeof *S);
    S->n = n;
    S->nb = nb;
    S->ca = clc_calloc((size_t)n, sizeof *S->ca, err, "sap contact bodies");
    S->cb = clc_calloc((size_t)n, sizeof *S->cb, err, "sap contact bodies");
    S->moving = clc_calloc((size_t)nb, sizeof *S->moving, err, "sap moving flags");
    S->frame = clc_calloc((size_t)n * 9, sizeof *S->frame, err, "sap frames");
    S->arm = clc_calloc((size_t)n * 6, sizeof *S->arm, err, "sap lever arms");
    S->u0 = clc_calloc((size_t)n * 3, sizeof *S->u0, err, "sap static velocities");
    S->mu = clc_calloc((size_t)n, sizeof *S->mu, err, "sap mu");
    S->R = clc_calloc((size_t)n * 2, sizeof *S->R, err, "sap regularisation");
    S->mass = clc_calloc((size_t)nb, sizeof *S->mass, err, "sap masses");
    S->inertia = clc_calloc((size_t)nb * 9, sizeof *S->inertia, err, "sap inertias");
    S->vstar = clc_calloc((size_t)nb * 6, sizeof *S->vstar, err, "sap free velocities");
    if (!S->ca || !S->cb || !S->moving || !S->frame || !S->arm || !S->u0 || !S->mu || !S->R || !S->mass
        || !S->inertia || !S->vstar) {
        clc_sap_setup_free(S);
        return CLCONE_ENOMEM;
    }
    for (int i = 0; i < nb; ++i) {
        const clcone_body *b = &s->bodies[i];
        memcpy(S->vstar + 6 * i, b->v, 6 * sizeof(double));
        if (clc_body_is_static(b)) continue;
        {
            int spd = invert_spd3(b->inv_inertia, S->inertia + 9 * i);
            if (!(b->inv_mass > 0) || !spd) {
                clc_sap_setup_free(S);
                return clc_fail(err, CLCONE_ENOTSUP,
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
        clc_contact_sides cs;
        S->mu[c] = s->contacts[c].mu;
        clc_contact_sides_of(s, c, &cs);
        memcpy(S->frame + 9 * c, cs.frame, sizeof cs.frame);
        memcpy(S->arm + 6 * c, cs.arm, sizeof cs.arm);
        for (int side = 0; side < 2; ++side) {
            int bi = cs.body[side];
            *(side == 0 ? &S->ca[c] : &S->cb[c]) = bi >= 0 && S->moving[bi] ? bi : -1;
            /* a static body keeps its v: a constant contact velocity */
            if (bi >= 0 && !S->moving[bi])
                cone_jac_apply_add(cs.J + 18 * side, side == 0 ? 1.0 : -1.0, s->bodies[bi].v, S->u0 + 3 * c);
        }
        /* u0 - v_hat for every contact, as Drake builds it from phi0: a
         * contact that is not touching yet lets the bodies close the gap
         * within the step before it pushes, which is what lets a sliding
         * contact (whose convex impulse lifts at mu |v_t|) settle at a
         * steady height instead of hopping */
        S->u0[3 * c] += s->contacts[c].gap / relax;
        sap_regularisation(beta, cs.Wcc, &S->R[2 * c], &S->R[2 * c + 1]);
        S->R[2 * c] = fmax(S->R[2 * c], rn_floor);
        if (!(S->R[2 * c] > 0) || !(S->R[2 * c + 1] > 0)) {
            clc_sap_setup_free(S);
            return clc_fail(err, CLCONE_EINVAL, "contact %d: no moving body, W_cc = 0", c);
        }
    }
    if ((st = clc_body_csr_build(s, &S->L, err))) {
        clc_sap_setup_free(S);
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
static clcone_status ls_point(const clc_sap_ops *ops, double a, double b, double alpha, double *dphi,
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
static clcone_status ls_exact(const clc_sap_ops *ops, double a, double b, double dphi0, double *alpha,
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
static clcone_status ls_backtrack(const clc_sap_ops *ops, double a, double b, double dphi0, double *alpha,
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

static double rel_error(const clc_sap_eval *e)
{
    if (e->g2 == 0) return 0;
    return e->scale2 > 0 ? sqrt(e->g2 / e->scale2) : sqrt(e->g2);
}

clcone_status clc_sap_newton(const clc_sap_ops *ops, const clcone_options *o, int nv,
                                clc_sap_params *prm, clcone_prob_result *out, clcone_error *err)
{
    double t0 = clc_now_ms();
    int inner = 0;
    /* CG converges in at most nv steps in exact arithmetic; the cap only
     * matters in float, where it may stagnate */
    int max_inner = nv < 5000 ? 2 * nv + 50 : 10000;
    clcone_status s;
    if (prm) prm->history_len = 0;
    for (int it = 0;; ++it) {
        clc_sap_eval ev;
        double e, a, b, dphi0, alpha = 1, tol_abs, eta;
        if ((s = ops->eval(ops->ctx, &ev, err))) return s;
        e = rel_error(&ev);
        if (prm && prm->cost_history && it < prm->history_cap) {
            prm->cost_history[it] = ev.cost;
            prm->history_len = it + 1;
        }
        out->inner_iters = inner;
        out->cost = ev.cost;
        if (o->progress) o->progress(o->progress_user, 0, it, e);
        /* a non-finite cost is a divergence too, whatever the gradient says */
        if (clc_stop_rule(o, it, isfinite(ev.cost) ? e : NAN, clc_now_ms() - t0, out)) return CLCONE_OK;
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
