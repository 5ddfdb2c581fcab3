/* Semismooth Newton for the exact Coulomb law on the CPU reference.
 *
 * Formulation: Alart-Curnier's (as Siconos's NSN_AC), per contact with
 * u = W r + q, x_N = r_N - rho_N u_N, x_T = r_T - rho_T u_T:
 *
 *     Phi_N = r_N - max(0, x_N)
 *     Phi_T = r_T - P_{disc of radius mu max(0, x_N)}(x_T)
 *
 * whose zeros are exactly the solutions of the Coulomb law. It was chosen
 * over the natural map of the error measure (r - P_K(r - u - mu||u_T||e_N))
 * and Fischer-Burmeister because it is piecewise smooth with three pieces
 * per contact (take-off, stick, slide) whose generalised Jacobians have a
 * closed form of two 3x3 blocks, J = A + B W with A, B block-diagonal, and
 * because it carries no De Saxce term mu||u_T||, whose kink at u_T = 0 is
 * exactly where the sticking contacts of stacks sit; Siconos's NSN_AC is
 * also the solver the issue measured on these very files (BoxesStack1 in
 * 36 steps). rho_N, rho_T are 2 over the contact's diagonal of W (normal,
 * mean tangential), so that both terms of each piece have r's units; the
 * factor 2 was measured on the shared problems (1: OneObject-i100000-499
 * stalls at 2e-4; 4: Capsules-i101-404 stalls at 1e-5; 2: all 23 converge).
 *
 * Newton systems: a dense LU with partial pivoting of J below
 * NEWTON_SPARSE_FROM contacts, from there a sparse LU of J in W's block
 * pattern (KLU, ref/newton_sparse.c), any size: at the same steps the
 * sparse one took Capsules-i100-1090 (276 contacts) in 38 ms against the
 * dense one's 410, a 484-contact wall in 333 against 2,282, and it has
 * no limit (the dense one stopped at 512 contacts); below the cut its
 * set-up costs more than the dense factor (docs/measured.md). W is often
 * singular (half the rank on BoxesStack1), so J is too when every
 * contact sticks: a pivot below 1e-12 of J's largest entry (sparse: the
 * ratio of U's smallest to largest pivot), or a direction that does not
 * descend, falls back to Levenberg-Marquardt, (J'J + lambda I) d = -J'Phi,
 * with lambda from ||Phi|| up by factors of 100, which is always solvable
 * and tends to the gradient direction.
 *
 * Globalisation: Armijo backtracking (halving) on psi = 1/2 ||Phi||^2, so
 * psi never rises within Newton. The merit has kinks and stationary points
 * that are not solutions (Rover1040 stalls at error 0.16, Capsules-i125-1213
 * at 5e-7 with steps of 1e-5): when no direction decreases psi, or the error
 * has not halved in NEWTON_STALL_STEPS steps, a rescue of NSGS sweeps
 * (ref/nsgs.c, which always makes progress on these problems) moves r, 50
 * sweeps the first time and twice as many each time after, so that Newton
 * converges wherever NSGS would; the sweeps are counted in inner_iters.
 * When a rescue right after another finds no better error, the solve stops
 * with CLCONE_FAILED and says so. The iterate returned is always the best (by
 * the error measure) seen, and never non-finite: a non-finite start is
 * replaced by zero, and a non-finite error (NaN in W or q) stops the solve
 * by the common stopping rule (diverged) with the best iterate.
 *
 * Error and stopping: the model's error (clcone_error_of) after every
 * Newton step, iteration 0 being the start, through clc_stop_rule as
 * every solver; o->max_iter caps Newton steps.
 *
 * The hybrid (the reference's default for coulomb) runs NSGS first and
 * hands over to Newton when NSGS has spent Newton's expected cost and its
 * pace stalls (hybrid_checked): on the
 * reference a Newton step costs a dense factorisation, some 10^3 sweeps
 * on Capsules, so NSGS keeps the problems it finishes in a few thousand
 * sweeps and Newton takes those it would need 10^5 for (BoxesStack1).
 * Past the dense limit its second phase is sparse (hybrid_large).
 *
 * ccp (and soft, solved as a ccp on W + R) runs the same method on
 * Alart-Curnier's function at v = u - mu |u_T| e_N (newton_ccp_contact,
 * kernels/newton_math.h, says why); its rescues and its hybrid's first
 * phase are ACGS, not plain Gauss-Seidel, which creeps where ccp's
 * infimum lies far out (9 of 256 tiny piles), and where Newton has no
 * part its hybrid is APGD, ccp's default before. */
#include "core/analysis.h"
#include "core/internal.h"
#include "ref/newton_sparse.h"
#include "ref/reference.h"
#include "cone.h"
#include "local_solve.h"
#include "newton_math.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Contacts from which Newton's systems are sparse: the 256 tiny piles (9-36 contacts) took 484 ms dense and
 * 671 sparse, BoxesStack1 (52) 32 ms dense and 22 sparse. */
#define NEWTON_SPARSE_FROM 48
/* A sparse Newton step in sweeps: this many, and the factor's multiply-subtracts (AMD's count) at this many per
 * W block a sweep. Fitted to steps timed against sweeps on six problems of 40-484 contacts (65-543 sweeps a
 * step, within 2x of the fit; docs/measured.md); the dense price (newton_hybrid_budget) stays where it is
 * lower, as on BoxesStack1, whose hand-over it placed. */
#define NEWTON_SPARSE_STEP_SWEEPS 100
#define NEWTON_SPARSE_MULTSUBS_A_SWEEP 2

typedef struct newton {
    const clcone_problem *p;
    int model, c0, n, m; /* model: CONE_MODEL_COULOMB, CONE_MODEL_CCP or CONE_MODEL_PYRAMID */
    int facets, inner;   /* the pyramid's */
    double *rho;   /* 2 per contact: normal, tangential */
    clc_jac_sparse *S; /* from NEWTON_SPARSE_FROM contacts: J sparse, and none of J, F, JtJ, piv */
    double *J;     /* m x m, row-major */
    double *F;     /* m x m: factors of J or of J'J + lambda I */
    double *JtJ;   /* m x m, formed on the first Levenberg-Marquardt try of a step */
    double *u, *phi, *g, *d, *x, *best;
    int *piv;
    int lm_stage; /* NEWTON_LM_WAIT ... (kernels/newton_math.h) */
} newton;

/* u = W x + q and phi of x (m values from contact c0); returns 1/2 ||phi||^2. */
static double ac_eval(newton *N, const double *x)
{
    const clcone_problem *p = N->p;
    double psi = 0;
    clc_range_product(p, N->c0, N->c0 + N->n, x, N->u);
    for (int i = 0; i < N->n; ++i) {
        int c = N->c0 + i;
        for (int a = 0; a < 3; ++a) N->u[3 * i + a] += p->q[3 * c + a];
        newton_contact(N->model, cone_model_pyramid(N->model, N->facets, N->inner, p->mu[c]), p->mu[c],
                       N->rho[2 * i], N->rho[2 * i + 1], x + 3 * i, N->u + 3 * i, N->phi + 3 * i, 0, NULL, NULL);
        for (int a = 0; a < 3; ++a) psi += N->phi[3 * i + a] * N->phi[3 * i + a];
    }
    return 0.5 * psi;
}

/* Where J's block of contacts (i, j) starts and its row stride: dense, or sparse at slot k of contact i's
 * W blocks (-1: its diagonal). */
static double *jac_block(const newton *N, int i, int j, int k, int *stride)
{
    if (N->S) return clc_jac_sparse_block(N->S, i, k < 0 ? N->S->diag[i] : N->S->slot_start[i] + k, stride);
    *stride = N->m;
    return N->J + (size_t)3 * i * N->m + 3 * j;
}

/* J = A + B W at x (u as ac_eval left it), and g = J' phi. */
static void ac_jacobian(newton *N, const double *x)
{
    const clcone_problem *p = N->p;
    int m = N->m, ld;
    if (N->S)
        memset(N->S->Ax, 0, (size_t)N->S->Ap[m] * sizeof *N->S->Ax);
    else
        memset(N->J, 0, (size_t)m * (size_t)m * sizeof *N->J);
    for (int i = 0; i < N->n; ++i) {
        int c = N->c0 + i;
        double A[9], B[9], phi[3], *to = jac_block(N, i, i, -1, &ld);
        newton_contact(N->model, cone_model_pyramid(N->model, N->facets, N->inner, p->mu[c]), p->mu[c],
                       N->rho[2 * i], N->rho[2 * i + 1], x + 3 * i, N->u + 3 * i, phi, 1, A, B);
        for (int a = 0; a < 3; ++a)
            for (int b = 0; b < 3; ++b) to[a * ld + b] += A[3 * a + b];
        for (int k = p->row_ptr[c]; k < p->row_ptr[c + 1]; ++k) {
            const double *Wb = p->blocks + 9 * k;
            to = jac_block(N, i, p->col[k] - N->c0, k - p->row_ptr[c], &ld);
            for (int a = 0; a < 3; ++a)
                for (int b = 0; b < 3; ++b)
                    to[a * ld + b] += B[3 * a] * Wb[b] + B[3 * a + 1] * Wb[3 + b] + B[3 * a + 2] * Wb[6 + b];
        }
    }
    if (N->S) {
        clc_jac_sparse_tmul(N->S, N->phi, N->g);
        return;
    }
    for (int j = 0; j < m; ++j) N->g[j] = 0;
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) N->g[j] += N->J[(size_t)i * m + j] * N->phi[i];
}

static double max_abs(const double *a, size_t len)
{
    double v = 0;
    for (size_t i = 0; i < len; ++i) v = fmax(v, fabs(a[i]));
    return v;
}

/* Solves F d = -rhs in place by LU with partial pivoting; 0 when a pivot
 * is below tiny (singular to working precision) or not finite. */
static int lu_solve(double *F, int m, int *piv, const double *rhs, double *d, double tiny)
{
    for (int k = 0; k < m; ++k) {
        int pk = k;
        for (int i = k + 1; i < m; ++i)
            if (fabs(F[(size_t)i * m + k]) > fabs(F[(size_t)pk * m + k])) pk = i;
        if (!(fabs(F[(size_t)pk * m + k]) > tiny)) return 0;
        piv[k] = pk;
        if (pk != k)
            for (int j = 0; j < m; ++j) {
                double t = F[(size_t)k * m + j];
                F[(size_t)k * m + j] = F[(size_t)pk * m + j];
                F[(size_t)pk * m + j] = t;
            }
        for (int i = k + 1; i < m; ++i) {
            double l = F[(size_t)i * m + k] /= F[(size_t)k * m + k];
            if (l == 0) continue;
            for (int j = k + 1; j < m; ++j) F[(size_t)i * m + j] -= l * F[(size_t)k * m + j];
        }
    }
    return newton_lu_substitute(F, m, piv, rhs, d);
}

/* Armijo backtracking along d from r (merit psi, slope g.d < 0): on
 * success r moves to the accepted point and *psi is its merit. */
static int line_search(newton *N, double *r, double *psi)
{
    double slope = 0;
    for (int i = 0; i < N->m; ++i) slope += N->g[i] * N->d[i];
    if (!(slope < 0)) return 0;
    for (double t = 1; t >= NEWTON_MIN_STEP; t *= 0.5) {
        double trial;
        for (int i = 0; i < N->m; ++i) N->x[i] = r[i] + t * N->d[i];
        trial = ac_eval(N, N->x);
        if (trial <= *psi + NEWTON_ARMIJO * t * slope) {
            memcpy(r, N->x, (size_t)N->m * sizeof *r);
            *psi = trial;
            return 1;
        }
    }
    return 0;
}

/* Levenberg-Marquardt: (J'J + lambda I) d = -g by LU (J'J + lambda I is
 * SPD, so no pivot is tiny unless J is not finite); sparse, by CHOLMOD's
 * factor of it (ref/newton_sparse.c). Attempt -1 is LM's lead, lambda =
 * ||phi||; fresh: J'J is formed for this step. */
static int lm_direction(newton *N, int attempt, double psi, int fresh)
{
    int m = N->m;
    size_t mm = (size_t)m * (size_t)m;
    double lambda, scale = 0;
    if (N->S)
        scale = clc_jac_sparse_normal_scale(N->S);
    else {
        if (fresh) {
            memset(N->JtJ, 0, mm * sizeof *N->JtJ);
            for (int k = 0; k < m; ++k)
                for (int i = 0; i < m; ++i) {
                    double a = N->J[(size_t)k * m + i];
                    if (a == 0) continue;
                    for (int j = 0; j < m; ++j) N->JtJ[(size_t)i * m + j] += a * N->J[(size_t)k * m + j];
                }
        }
        for (int i = 0; i < m; ++i) scale = fmax(scale, N->JtJ[(size_t)i * m + i]);
    }
    lambda = attempt < 0 ? fmax(sqrt(2 * psi), 1e-12 * scale) : fmax(2 * psi, 1e-12 * scale) * pow(100, attempt);
    if (N->S) return clc_jac_sparse_lm(N->S, N->g, lambda, N->d);
    memcpy(N->F, N->JtJ, mm * sizeof *N->F);
    for (int i = 0; i < m; ++i) N->F[(size_t)i * m + i] += lambda;
    return lu_solve(N->F, m, N->piv, N->g, N->d, 0);
}

/* The Newton direction J d = -phi (lu_solve negates its right side); 0 where J is singular. */
static int newton_direction(newton *N)
{
    size_t mm = (size_t)N->m * (size_t)N->m;
    if (N->S) return clc_jac_sparse_solve(N->S, N->phi, N->d, NEWTON_PIVOT_TINY);
    memcpy(N->F, N->J, mm * sizeof *N->F);
    return lu_solve(N->F, N->m, N->piv, N->phi, N->d, NEWTON_PIVOT_TINY * max_abs(N->J, mm));
}

/* One globalised step from r; 0 when no direction decreases psi. */
static int newton_step(newton *N, double *r, double *psi)
{
    int leads = N->lm_stage == NEWTON_LM_LEADS;
    ac_jacobian(N, r);
    if (leads && lm_direction(N, -1, *psi, 1) && line_search(N, r, psi)) return 1;
    if (newton_direction(N) && line_search(N, r, psi)) return 1;
    for (int a = 0; a < NEWTON_LM_TRIES; ++a)
        if (lm_direction(N, a, *psi, a == 0 && !leads) && line_search(N, r, psi)) return 1;
    return 0;
}

/* 1 / the contact's diagonal of W, normal and mean tangential, or 1 where
 * that diagonal is not positive (a contact W leaves unconstrained). */
static void contact_rho(const clcone_problem *p, int c, double rho[2])
{
    int k = clc_diag_slot(p, c);
    const double *D = k >= 0 ? p->blocks + 9 * (size_t)k : NULL;
    rho[0] = newton_rho(D ? D[0] : 0);
    rho[1] = newton_rho(D ? 0.5 * (D[4] + D[8]) : 0);
}

/* A rescue: `len` sweeps of NSGS (ACGS for ccp, see newton_rescue in
 * kernels/newton.cl for why) from r, its sweeps added to *sweeps,
 * within the time the solve that started at t0 has left; the caller's
 * history and progress see Newton steps only. */
static clcone_status gs_rescue(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                               int len, double t0, int *sweeps, clcone_error *err)
{
    clcone_options b = *o;
    clcone_prob_result res;
    clcone_status s;
    memset(&res, 0, sizeof res);
    b.history = NULL;
    b.progress = NULL;
    b.max_iter = len;
    if (o->max_seconds > 0) {
        double left = o->max_seconds - 1e-3 * (clc_now_ms() - t0);
        if (!(left > 0)) return CLCONE_OK; /* the next check stops the solve */
        b.max_seconds = left;
    }
    s = o->model == CLCONE_MODEL_COULOMB   ? clc_ref_nsgs_coulomb(p, &b, c0, c1, r, &res, err)
        : o->model == CLCONE_MODEL_PYRAMID ? clc_ref_pgs(p, &b, c0, c1, r, &res, err)
                                           : clc_ref_acgs(p, &b, c0, c1, r, &res, err);
    *sweeps += res.iters;
    return s;
}

static void newton_free(newton *N)
{
    free(N->rho);
    free(N->J);
    free(N->F);
    free(N->JtJ);
    free(N->u);
    free(N->phi);
    free(N->g);
    free(N->d);
    free(N->x);
    free(N->best);
    free(N->piv);
    if (N->S) clc_jac_sparse_free(N->S);
    free(N->S);
}

/* Dense below NEWTON_SPARSE_FROM contacts, sparse from there. */
static clcone_status newton_alloc(newton *N, clcone_error *err)
{
    size_t m = (size_t)N->m, mm = m * m;
    clcone_status s;
    if (N->n >= NEWTON_SPARSE_FROM) {
        if (!(N->S = clc_calloc(1, sizeof *N->S, err, "sparse Jacobian"))) return CLCONE_ENOMEM;
        if ((s = clc_jac_sparse_make(N->S, N->p, N->c0, N->c0 + N->n, err))) return s;
    } else if (!(N->J = clc_calloc(mm, sizeof *N->J, err, "Newton Jacobian"))
               || !(N->F = clc_calloc(mm, sizeof *N->F, err, "Newton factors"))
               || !(N->JtJ = clc_calloc(mm, sizeof *N->JtJ, err, "Newton normal matrix"))
               || !(N->piv = clc_calloc(m, sizeof *N->piv, err, "Newton pivots")))
        return CLCONE_ENOMEM;
    if (!(N->rho = clc_calloc(2 * (size_t)N->n, sizeof *N->rho, err, "Newton rho"))
        || !(N->u = clc_calloc(m, sizeof *N->u, err, "Newton u"))
        || !(N->phi = clc_calloc(m, sizeof *N->phi, err, "Newton residual"))
        || !(N->g = clc_calloc(m, sizeof *N->g, err, "Newton gradient"))
        || !(N->d = clc_calloc(m, sizeof *N->d, err, "Newton direction"))
        || !(N->x = clc_calloc(m, sizeof *N->x, err, "Newton trial"))
        || !(N->best = clc_calloc(m, sizeof *N->best, err, "Newton best iterate")))
        return CLCONE_ENOMEM;
    return CLCONE_OK;
}

/* Newton from r, the solve's iteration it0 at clock t0 (a hybrid's sweeps
 * took the iterations before). trial set: the hybrid's early try
 * (NEWTON_TRIAL_STEPS, kernels/newton_math.h), which converges or gives
 * up, leaving the best iterate in r, out->iters at its last check and
 * *gave_up 1. */
static clcone_status newton_run(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                int it0, double t0, int trial, int *gave_up, clcone_prob_result *out,
                                clcone_error *err)
{
    newton N = {.p = p, .model = (int)o->model, .c0 = c0, .n = c1 - c0, .m = 3 * (c1 - c0), .facets = o->facets,
                .inner = o->fit == CLCONE_FIT_INNER};
    double *x = r + 3 * c0, best_e = INFINITY, mark_e = INFINITY, rescue_e = INFINITY, lm_e = INFINITY, psi;
    double step_ms = 0;
    int prob = clc_ref_problem_of(p, c0), mark_it = it0, rescued = 0, burst = newton_first_burst(o->max_iter), stepped;
    int trial_end = trial ? it0 + NEWTON_TRIAL_STEPS : 0;
    clcone_status s;
    if ((s = newton_alloc(&N, err))) goto done;
    for (int i = 0; i < N.m; ++i)
        if (!isfinite(x[i])) x[i] = 0;
    memcpy(N.best, x, (size_t)N.m * sizeof *x);
    for (int i = 0; i < N.n; ++i) contact_rho(p, c0 + i, N.rho + 2 * i);
    psi = ac_eval(&N, x);
    for (int it = it0;; ++it) {
        double e = clcone_error_of(p, o, r, c0, c1), elapsed = clc_now_ms() - t0;
        if (e < best_e) {
            best_e = e;
            memcpy(N.best, x, (size_t)N.m * sizeof *x);
        }
        out->time_ms = elapsed;
        /* iteration it0 is the start, which is no check of this solve's
         * (it0 = 0), or the first phase's last */
        if (it > it0) clc_history_add(o->history, prob, it, elapsed, e);
        if (o->progress) o->progress(o->progress_user, prob, it, e);
        if (clc_stop_rule(o, it, e, elapsed, out)) break;
        if (trial_end && it >= trial_end) {
            *gave_up = 1;
            out->iters = it;
            break;
        }
        if (e <= 0.5 * mark_e) {
            mark_e = e;
            mark_it = it;
        }
        /* a sparse LU cannot be cut short: 80 s a step on a 24,000-contact pile */
        if (clc_step_passes_cap(o, it, elapsed, step_ms, out)) break;
        step_ms = clc_now_ms();
        stepped = newton_step(&N, x, &psi);
        step_ms = clc_now_ms() - step_ms;
        if (stepped && it - mark_it < NEWTON_STALL_STEPS) {
            rescued = 0;
            continue;
        }
        if (trial_end) { /* a try that stalls gives up at the next check */
            trial_end = it + 1;
            continue;
        }
        /* stalled or no descent: Gauss-Seidel moves r off the kink or
         * stationary point of the merit; a rescue right after another
         * that found no better error than before it gives up */
        if (rescued && !(best_e < rescue_e)) {
            out->status = CLCONE_FAILED;
            snprintf(out->reason, sizeof out->reason,
                     "neither Newton nor Gauss-Seidel decreases the error after %d steps (error %.3g)", it,
                     best_e);
            break;
        }
        if (!newton_stall_rescues(&N.lm_stage, best_e, &lm_e)) {
            mark_e = INFINITY;
            continue;
        }
        rescue_e = best_e;
        if ((s = gs_rescue(p, o, c0, c1, r, burst, t0, &out->inner_iters, err))) goto done;
        burst = newton_next_burst(burst, o->max_iter);
        psi = ac_eval(&N, x);
        rescued = 1;
        mark_e = INFINITY;
    }
    if (out->status != CLCONE_CONVERGED || *gave_up) {
        memcpy(x, N.best, (size_t)N.m * sizeof *x);
        out->error = best_e;
    }
done:
    newton_free(&N);
    return s;
}

clcone_status clc_ref_newton(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                clcone_prob_result *out, clcone_error *err)
{
    int gave_up = 0;
    return newton_run(p, o, c0, c1, r, 0, clc_now_ms(), 0, &gave_up, out, err);
}

double clc_ref_newton_price(const clcone_problem *p, int c0, int c1)
{
    int n = c1 - c0, blocks = p->row_ptr[c1] - p->row_ptr[c0];
    double dense = newton_hybrid_budget(3 * n, blocks), multsubs = 0;
    clc_jac_sparse J;
    clcone_status s;
    if (n < NEWTON_SPARSE_FROM) return dense;
    s = clc_jac_sparse_make(&J, p, c0, c1, NULL);
    if (!s) s = clc_jac_sparse_flops(&J, &multsubs, NULL);
    clc_jac_sparse_free(&J);
    if (s) return dense; /* out of memory here: the solve itself will say so */
    return fmin(dense, NEWTON_EXPECTED_STEPS
                           * (NEWTON_SPARSE_STEP_SWEEPS + multsubs / (NEWTON_SPARSE_MULTSUBS_A_SWEEP * blocks)));
}

clcone_status clc_ref_newton_from(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  int it0, double t0, int trial, int *gave_up, clcone_prob_result *out,
                                  clcone_error *err)
{
    out->status = CLCONE_CONVERGED; /* newton_run sets it again */
    return newton_run(p, o, c0, c1, r, it0, t0, trial, gave_up, out, err);
}

/* The hybrid's sweeps: NSGS (ACGS for ccp) watched at their checks by
 * its switch (newton_hybrid_switch, kernels/newton_math.h); a try or the
 * hand-over raises stop, which the sweeps' loop reads as its cancel flag.
 * After a failed try (tried: there is no second) the sweeps start again
 * from iteration it0 of the solve, their own count from 0: the checks go
 * to the history and progress here, numbered as the solve's. */
typedef struct hybrid {
    const clcone_options *o;
    double budget, mark_e, t0;
    int mark_it, it0, prob, verdict, tried;
    volatile int stop;
} hybrid;

static clcone_status hybrid_checked(void *state, int it, double e, clcone_error *err)
{
    hybrid *H = state;
    (void)err;
    if (H->it0 > 0 && it > 0) {
        clc_history_add(H->o->history, H->prob, H->it0 + it, clc_now_ms() - H->t0, e);
        if (H->o->progress) H->o->progress(H->o->progress_user, H->prob, H->it0 + it, e);
    }
    H->verdict = newton_hybrid_switch(H->it0 + it, e, H->o->tol, H->budget, H->o->max_iter, H->tried, &H->mark_it,
                                      &H->mark_e);
    if (clc_cancelled(H->o) || H->verdict) H->stop = 1;
    return CLCONE_OK;
}

/* The hybrid's sweeps from iteration H->it0 of the solve to its end or
 * the switch's verdict, within the caps left; out counts the solve's
 * iterations. */
static clcone_status hybrid_sweeps(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                   hybrid *H, clcone_prob_result *out, clcone_error *err)
{
    clcone_options first = *o;
    clcone_status s;
    first.cancel = &H->stop;
    first.max_iter = o->max_iter - H->it0;
    if (H->it0 > 0) {
        first.history = NULL;
        first.progress = NULL;
        if (o->max_seconds > 0) first.max_seconds = fmax(o->max_seconds - 1e-3 * (clc_now_ms() - H->t0), 1e-9);
    }
    H->stop = 0;
    H->verdict = 0;
    s = o->model == CLCONE_MODEL_COULOMB   ? clc_ref_nsgs_watched(p, &first, c0, c1, r, hybrid_checked, H, out, err)
        : o->model == CLCONE_MODEL_PYRAMID ? clc_ref_pgs_watched(p, &first, c0, c1, r, hybrid_checked, H, out, err)
                                           : clc_ref_acgs_watched(p, &first, c0, c1, r, hybrid_checked, H, out, err);
    out->iters += H->it0;
    out->time_ms = clc_now_ms() - H->t0;
    /* sweeps resumed on what was left of the cap stop on the solve's cap:
     * the reason names it, not the remainder they were given */
    if (H->it0 > 0 && out->status == CLCONE_MAXITER && clc_time_is_up(o, out->time_ms))
        clc_stop(out, CLCONE_STOP_TIME, o, out->iters);
    if (H->it0 > 0 && !H->stop) clc_history_add(o->history, H->prob, out->iters, out->time_ms, out->error);
    return s;
}

/* The sweeps from H->it0 (sweeps of them counted so far) until the
 * switch's verdict, then Newton (newton_run): an early try that may give
 * up, then the sweeps again until the hand-over for good, no second try. */
static clcone_status hybrid_newton(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                   hybrid *H, int sweeps, clcone_prob_result *out, clcone_error *err)
{
    for (;;) {
        int gave_up = 0;
        clcone_status s = hybrid_sweeps(p, o, c0, c1, r, H, out, err);
        if (s) return s;
        out->inner_iters = sweeps += out->iters - H->it0;
        if (out->status == CLCONE_CONVERGED || out->status == CLCONE_DIVERGED || !H->stop || clc_cancelled(o))
            return CLCONE_OK;
        s = clc_ref_newton_from(p, o, c0, c1, r, out->iters, H->t0, H->verdict == 1, &gave_up, out, err);
        if (s || !gave_up) return s;
        /* the try gave up: sweeps again until the hand-over, no second try */
        H->tried = 1;
        sweeps = out->inner_iters;
        H->it0 = out->iters;
        H->mark_it = 0;
        H->mark_e = INFINITY;
    }
}

/* hybrid_large's sweeps and phases on H, its sparse phase on S as set up for its price. */
static clcone_status hybrid_large_phases(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                         hybrid *H, clc_ipm_setup *S, clcone_prob_result *out, clcone_error *err)
{
    int sweeps;
    clcone_status s = hybrid_sweeps(p, o, c0, c1, r, H, out, err);
    if (s) return s;
    out->inner_iters = sweeps = out->iters;
    if (out->status == CLCONE_CONVERGED || out->status == CLCONE_DIVERGED || !H->stop || clc_cancelled(o))
        return CLCONE_OK;
    if ((s = clc_ref_past_dense_from(p, o, c0, c1, S, r, out->iters, H->t0, out, err))
        || out->status != CLCONE_FAILED)
        return s;
    H->it0 = out->iters;
    H->mark_it = 0;
    H->mark_e = INFINITY;
    if (o->model == CLCONE_MODEL_COULOMB) {
        H->budget = clc_ref_newton_price(p, c0, c1);
        return hybrid_newton(p, o, c0, c1, r, H, sweeps, out, err);
    }
    H->budget = INFINITY;
    if ((s = hybrid_sweeps(p, o, c0, c1, r, H, out, err))) return s;
    out->inner_iters = sweeps + out->iters - H->it0;
    return CLCONE_OK;
}

/* Past the dense Newton's limit: the sweeps watched as below, the
 * sparse second phase at the switch's first verdict (ccp's interior
 * point, or coulomb's fixed point over it, ref/fixed_point.c; neither
 * can try a few steps: the interior point starts inside the cone, not
 * from r), and where that stalls above tol the sweeps again from the
 * best iterate: ccp's alone, coulomb's watched by the switch again with
 * the sparse Newton as the small problems have it (hybrid_newton), so
 * that sweeps that wander after the fixed point hand over once more (a
 * heap of mesh rocks: 4.4e-3 after 20 s before, 6e-5 with Newton) and
 * sweeps that finish keep the problem (a boxed 600-contact pile: 1.6 s;
 * Newton straight after the fixed point, 4.5 s). Where the interior
 * point cannot go (a contact without friction) coulomb keeps NSGS and
 * ccp APGD, as before it. */
static clcone_status hybrid_large(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  clcone_prob_result *out, clcone_error *err)
{
    hybrid H = {o, 0, INFINITY, clc_now_ms(), 0, 0, clc_ref_problem_of(p, c0), 0, 0, 0};
    clc_ipm_setup *S;
    clcone_status s = clc_ref_past_dense_prepare(p, o->model, c0, c1, &S, &H.budget, err);
    if (s == CLCONE_ENOTSUP)
        return o->model == CLCONE_MODEL_COULOMB ? clc_ref_nsgs_coulomb(p, o, c0, c1, r, out, err)
                                                : clc_ref_apgd(p, o, c0, c1, r, out, err);
    if (!s) s = hybrid_large_phases(p, o, c0, c1, r, &H, S, out, err);
    clc_ref_ipm_release(S);
    return s;
}

clcone_status clc_ref_hybrid(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                clcone_prob_result *out, clcone_error *err)
{
    hybrid H = {o, 0, INFINITY, clc_now_ms(), 0, 0, clc_ref_problem_of(p, c0), 0, 0, 0};
    /* the pyramid has no interior point: its Newton is the sparse one at any size */
    if (c1 - c0 > CLCONE_NEWTON_REF_MAX_CONTACTS && o->model != CLCONE_MODEL_PYRAMID)
        return hybrid_large(p, o, c0, c1, r, out, err);
    H.budget = clc_ref_newton_price(p, c0, c1);
    return hybrid_newton(p, o, c0, c1, r, &H, 0, out, err);
}
