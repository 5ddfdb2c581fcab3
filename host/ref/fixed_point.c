/* Coulomb's law as a fixed point over ccp's interior point, on the
 * reference: De Saxce's shift s = mu ||u_T|| e_N frozen into q, each
 * round a ccp (a convex cone QP) on q + s solved by ipm (ref/ipm.c),
 * then s again from the new u (Acary, Cadoux, Lemarechal and Malick
 * 2011, Siconos's FC3D_ACLMFP). A solution of the shifted ccp whose
 * shift is its own mu ||u_T|| is exactly a Coulomb solution.
 *
 * Why: past the dense Newton's 512 contacts coulomb had only sweeps,
 * which crawl on stacks and walls (a 150-box stack, 600 contacts, at
 * 1.2e-7 after 20 s of NSGS; a 3,600-contact wall at 3.3e-5), and no
 * semismooth Newton beyond the dense one converged there
 * (docs/measured.md). Where contacts stick, u_T = 0 and one round is
 * the whole solve (ccp's answer is Coulomb's), which is why the first
 * round has no shift: one taken from a hybrid's unconverged sweeps
 * (u_T not yet 0 where contacts stick) took a 3,600-contact wall ten
 * rounds. Where contacts slide, the rounds converge when the shift
 * settles. They need not: on the close-packed piles of `clcone gen
 * pile` the error goes 7e-4, 1.1e-3, ..., so a round that does not
 * halve the method's best error ends it (CLCONE_FAILED with its best
 * iterate), and the hybrid goes back to its sweeps from there.
 *
 * Iterations are ipm's steps, summed over the rounds; the error checked
 * after each round is Coulomb's (the shifted problem's is ipm's own). */
#include "core/analysis.h"
#include "core/internal.h"
#include "ref/reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Rounds in a row that do not halve the best error end the method: one,
 * as every round is a whole ipm solve (2.5 s on a 3,000-contact pile,
 * where a second failing round left the sweeps too little of a 10 s
 * cap: 4.7e-4 to 6.1e-4 at its end, 2.3e-4 to 2.6e-4 with one). */
#define FP_STALL_ROUNDS 1
/* Each round's ipm stops this far below tol: a shifted solve that only
 * just meets tol leaves the next shift's change above it. */
#define FP_INNER_TOL 0.5
/* The hybrid's price of the method, in ipm solves: one where every
 * contact sticks, a few where the shift settles. */
#define FP_EXPECTED_ROUNDS 2

/* qs = q + mu ||u_T|| e_N over [c0, c1), u = W r + q (u: scratch of 3n). */
static void shift_q(const clcone_problem *p, int c0, int c1, const double *r, double *u, double *qs)
{
    clc_range_product(p, c0, c1, r + 3 * c0, u);
    for (int c = c0; c < c1; ++c) {
        const double *q = p->q + 3 * c, *uc = u + 3 * (c - c0);
        double ut = hypot(uc[1] + q[1], uc[2] + q[2]);
        qs[3 * c] = q[0] + p->mu[c] * ut;
        qs[3 * c + 1] = q[1];
        qs[3 * c + 2] = q[2];
    }
}

/* The rounds from iteration it0 of a solve whose clock started at t0, each
 * an ipm solve on S (set up for p's W: the shift changes q only). */
static clcone_status fixed_point_run(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                                     clc_ipm_setup *S, double *r, int it0, double t0, clcone_prob_result *out,
                                     clcone_error *err)
{
    size_t m = 3 * (size_t)(c1 - c0);
    clcone_problem shifted = *p;
    clcone_options inner = *o;
    double *qs = clc_calloc(3 * (size_t)p->n, sizeof *qs, err, "shifted q"),
           *u = clc_calloc(m, sizeof *u, err, "fixed point velocities"),
           *best = clc_calloc(m, sizeof *best, err, "fixed point best iterate");
    double best_e = INFINITY, mark_e = INFINITY;
    int prob = clc_ref_problem_of(p, c0), mark_round = 1;
    clcone_status s = CLCONE_OK;
    if (!qs || !u || !best) {
        s = CLCONE_ENOMEM;
        goto done;
    }
    memcpy(qs, p->q, 3 * (size_t)p->n * sizeof *qs);
    shifted.q = qs;
    inner.model = CLCONE_MODEL_CCP;
    inner.tol = FP_INNER_TOL * o->tol;
    inner.history = NULL;
    inner.progress = NULL;
    for (size_t k = 0; k < m; ++k)
        if (!isfinite(r[3 * c0 + k])) r[3 * c0 + k] = 0;
    out->iters = it0;
    for (int round = 0;; ++round) {
        double e = clcone_error_of(p, o, r, c0, c1), elapsed = clc_now_ms() - t0;
        int it = out->iters;
        if (e < best_e) {
            best_e = e;
            memcpy(best, r + 3 * c0, m * sizeof *best);
        }
        /* the given r is a candidate, not the method's progress */
        if (round > 0 && e <= 0.5 * mark_e) {
            mark_e = e;
            mark_round = round;
        }
        out->time_ms = elapsed;
        if (round > 0) clc_history_add(o->history, prob, it, elapsed, e);
        if (o->progress) o->progress(o->progress_user, prob, it, e);
        if (clc_stop_rule(o, it, e, elapsed, out)) break;
        if (round - mark_round >= FP_STALL_ROUNDS) {
            out->status = CLCONE_FAILED;
            snprintf(out->reason, sizeof out->reason,
                     "De Saxce's fixed point stops at error %.3g: its last round did not halve it", best_e);
            break;
        }
        if (round > 0) shift_q(p, c0, c1, r, u, qs);
        /* an ipm stalled at its rounding floor (CLCONE_FAILED) still
         * leaves its best iterate, which Coulomb's error judges next */
        if ((s = clc_ref_ipm_run(S, &shifted, &inner, r, it, t0, out, err))) break;
    }
    if (out->status != CLCONE_CONVERGED || s) {
        memcpy(r + 3 * c0, best, m * sizeof *best);
        out->error = best_e;
    }
done:
    free(qs);
    free(u);
    free(best);
    return s;
}

clcone_status clc_ref_fixed_point(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  clcone_prob_result *out, clcone_error *err)
{
    return clc_ref_past_dense_from(p, o, c0, c1, NULL, r, 0, clc_now_ms(), out, err);
}

double clc_ref_past_dense_price(const clc_ipm_setup *S, clcone_model model)
{
    return clc_ref_ipm_sweeps(S) * (model == CLCONE_MODEL_COULOMB ? FP_EXPECTED_ROUNDS : 1);
}

clcone_status clc_ref_past_dense_prepare(const clcone_problem *p, clcone_model model, int c0, int c1,
                                         clc_ipm_setup **S, double *sweeps, clcone_error *err)
{
    clcone_status s;
    *S = NULL;
    if (model == CLCONE_MODEL_PYRAMID) return CLCONE_ENOTSUP;
    if ((s = clc_ref_ipm_prepare(p, c0, c1, S, err))) return s;
    *sweeps = clc_ref_past_dense_price(*S, model);
    return CLCONE_OK;
}

clcone_status clc_ref_past_dense_from(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                                      clc_ipm_setup *S, double *r, int it0, double t0, clcone_prob_result *out,
                                      clcone_error *err)
{
    clc_ipm_setup *own = NULL;
    clcone_status s = S ? CLCONE_OK : clc_ref_ipm_prepare(p, c0, c1, &own, err);
    if (!s)
        s = o->model == CLCONE_MODEL_COULOMB ? fixed_point_run(p, o, c0, c1, S ? S : own, r, it0, t0, out, err)
                                             : clc_ref_ipm_run(S ? S : own, p, o, r, it0, t0, out, err);
    clc_ref_ipm_release(own);
    return s;
}
