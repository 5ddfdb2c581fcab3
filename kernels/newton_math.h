/* Alart-Curnier's per-contact residual and Jacobian and the semismooth Newton
 * constants, shared by host/ref/newton.c (double) and kernels/newton.cl so that
 * both solve the same equations alike (why: docs/solvers.md). Requires cone.h
 * and local_solve.h first. */
#ifndef CLCONE_NEWTON_MATH_H
#define CLCONE_NEWTON_MATH_H



/* Armijo's sufficient decrease and the shortest step tried. */
#define NEWTON_ARMIJO 1e-4
#define NEWTON_MIN_STEP 1e-12
/* A pivot below this fraction of the Jacobian's largest entry hands the step to Levenberg-Marquardt. */
#define NEWTON_PIVOT_TINY 1e-12
/* Levenberg-Marquardt attempts before giving up, lambda growing 100x each. */
#define NEWTON_LM_TRIES 6
/* Steps without halving the error that count as a stall; a rescue's sweeps, doubling up to the last. */
#define NEWTON_STALL_STEPS 5
#define NEWTON_GS_SWEEPS 50
#define NEWTON_GS_MAX_SWEEPS (1 << 20)

/* Past the dense limit a device's newton solves its Newton systems by restarted GMRES, matrix-free
 * (kernels/newton.cl): the Krylov space's dimension, the products with J a Newton step may spend, and the
 * largest relative residual it asks (Eisenstat and Walker's forcing term, sqrt ||phi|| below it). */
#define NEWTON_KRYLOV_DIM 30
#define NEWTON_KRYLOV_PRODUCTS 600
#define NEWTON_KRYLOV_ETA 0.1
/* GMRES's inexact steps cut the error by a fraction a step where the dense LU's halve it (a 3,600-contact
 * wall: about 10% a step for 30 steps, docs/measured.md), so the Krylov kernel waits longer for a halving
 * before its rescue's sweeps, which on such a problem undo more than they mend. */
#define NEWTON_KRYLOV_STALL_STEPS 15
/* A problem's GMRES scratch in reals for m unknowns: the basis (DIM + 1 vectors), A, B and the
 * preconditioner's blocks (27 a contact), the Hessenberg matrix, its rotations and right-hand side. */
#define NEWTON_KRYLOV_AB(m) ((NEWTON_KRYLOV_DIM + 1) * (m))
#define NEWTON_KRYLOV_REALS(m) \
    ((NEWTON_KRYLOV_DIM + 10) * (m) + NEWTON_KRYLOV_DIM * (NEWTON_KRYLOV_DIM + 4) + 1)

/* The first rescue's sweeps and the next after `burst` (doubled), never past the iteration cap. */
CONE_FN int newton_first_burst(int max_iter)
{
    return NEWTON_GS_SWEEPS < max_iter ? NEWTON_GS_SWEEPS : max_iter;
}

CONE_FN int newton_next_burst(int burst, int max_iter)
{
    int most = max_iter < NEWTON_GS_MAX_SWEEPS ? max_iter : NEWTON_GS_MAX_SWEEPS;
    return burst < most / 2 ? 2 * burst : most;
}

/* Levenberg-Marquardt's lead. Where W is singular (more contact rows than
 * body velocities) the solutions need not be isolated, and there plain
 * Newton steps can creep (1-2% a step) from stall to rescue while LM with
 * lambda = ||phi|| keeps fast local convergence (Yamashita and Fukushima):
 * the 18-contact pile `gen pile --n 6 --seed 13` took 230 steps and
 * 192,000 rescue sweeps. So a stall after a rescue gives LM the lead in
 * place of a second rescue, and LM keeps it only if, by its own first
 * stall, it has halved the error (BoxesStack1's Newton steps, which jump
 * 30x after its rescues, lose to LM's 2x). The stages, in order: */
#define NEWTON_LM_WAIT 0  /* no rescue yet */
#define NEWTON_LM_READY 1 /* a rescue ran: the next stall hands LM the lead */
#define NEWTON_LM_LEADS 2 /* LM with lambda = ||phi|| is each step's first direction */
#define NEWTON_LM_DONE 3  /* LM's lead did not halve the error: Newton's again, for good */

/* At a stall with best error best_e: the next stage, lm_e the best error
 * when LM took the lead. Returns whether a rescue runs (0: LM takes the
 * lead instead). */
CONE_FN int newton_stall_rescues(CONE_PRIV int *stage, real_t best_e, CONE_PRIV real_t *lm_e)
{
    if (*stage == NEWTON_LM_LEADS && !(best_e <= (real_t)0.5 * *lm_e)) *stage = NEWTON_LM_DONE;
    if (*stage == NEWTON_LM_READY) {
        *stage = NEWTON_LM_LEADS;
        *lm_e = best_e;
        return 0;
    }
    if (*stage == NEWTON_LM_WAIT) *stage = NEWTON_LM_READY;
    return 1;
}

/* The Newton steps the hybrid expects to need, to price Newton in sweeps. */
#define NEWTON_EXPECTED_STEPS 30

/* The hybrid's price of Newton in sweeps for m unknowns and `blocks` stored W blocks (docs/solvers.md). */
CONE_FN real_t newton_hybrid_budget(int m, int blocks)
{
    real_t mr = (real_t)m;
    return (real_t)NEWTON_EXPECTED_STEPS * (mr * mr * mr / 3) / (81 * (real_t)blocks + 1);
}

/* The Newton steps an early try gets to reach tol, else the sweeps go on from the best iterate. */
#define NEWTON_TRIAL_STEPS 4

/* Newton's price, in sweeps, that the hybrid still brings inside a tight iteration cap: at most this
 * many caps. The cap bounds a solve's work too, and a dense Newton priced far beyond it would turn a
 * capped step into a long one (a 450-contact pile capped at 300 prices it at 96,000 sweeps). */
#define NEWTON_CAP_OVERSHOOT 32

/* The hybrid's verdict at a check: 0 sweeps on, 1 an early try, 2 the hand-over (rule: docs/solvers.md).
 * It looks at each doubling of the iterations and, under a cap, halfway from its last look to the cap (a
 * 10-box stack capped at 500 at 1e-4 looked on pace at sweep 256 and had stalled by the cap). Where the
 * sweeps' pace would run into the cap before tol, Newton's price (within NEWTON_CAP_OVERSHOOT caps)
 * counts as at most half the cap, so that Newton gets the rest (a simulator's step of 1,000 iterations
 * priced Newton at 10,800 sweeps and never ran it), whatever the sweeps' own need: they stop short. */
CONE_FN int newton_hybrid_switch(int it, real_t e, real_t tol, real_t budget, int max_iter, int tried,
                                 CONE_PRIV int *mark_it, CONE_PRIV real_t *mark_e)
{
    int verdict = 0;
    if (it < 2 * *mark_it && 2 * (real_t)it < *mark_it + (real_t)max_iter) return 0;
    if (*mark_it > 0) {
        real_t pace = log(*mark_e / e) / (it - *mark_it); /* decades (base e) a sweep */
        real_t need = pace > 0 ? log(e / tol) / pace : (real_t)INFINITY;
        int capped = it + need > (real_t)max_iter && budget <= (real_t)NEWTON_CAP_OVERSHOOT * max_iter;
        real_t trial;
        if (capped && budget > (real_t)max_iter / 2) budget = (real_t)max_iter / 2;
        trial = budget * NEWTON_TRIAL_STEPS / NEWTON_EXPECTED_STEPS;
        if (capped || need > budget) verdict = it >= budget ? 2 : !tried && it >= trial;
    }
    *mark_it = it;
    *mark_e = e;
    return verdict;
}

/* rho from a diagonal W entry (W_nn, or the mean tangential): 2 / diag, 1 where that is not positive. */
CONE_FN real_t newton_rho(real_t diag)
{
    return diag > 0 && isfinite(diag) ? 2 / diag : (real_t)1;
}

/* Alart-Curnier's normal row at x_N = r_N - rn u_N into phi, A and B (zeroed first, if jac); at take-off
 * (x_N <= 0: returns 1) the tangential rows too, phi_T = r_T. */
CONE_FN int newton_ac_normal(real_t rn, real_t xn, CONE_PRIV const real_t *r, CONE_PRIV const real_t *u,
                             CONE_PRIV real_t *phi, int jac, CONE_PRIV real_t *A, CONE_PRIV real_t *B)
{
    if (jac)
        for (int a = 0; a < 9; ++a) A[a] = B[a] = 0;
    if (xn > 0) {
        phi[0] = rn * u[0];
        if (jac) B[0] = rn;
        return 0;
    }
    phi[0] = r[0];
    phi[1] = r[1];
    phi[2] = r[2];
    if (jac) A[0] = A[4] = A[8] = 1;
    return 1;
}

/* One contact's Alart-Curnier residual phi and, if jac, its Jacobian row d phi = A dr + B du (3x3 each). */
CONE_FN void newton_ac_contact(real_t mu, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                               CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac,
                               CONE_PRIV real_t *A, CONE_PRIV real_t *B)
{
    real_t xn = r[0] - rn * u[0], x1 = r[1] - rt * u[1], x2 = r[2] - rt * u[2];
    real_t R = xn > 0 ? mu * xn : 0, nx = hypot(x1, x2);
    if (newton_ac_normal(rn, xn, r, u, phi, jac, A, B)) return; /* take-off: the disc is a point */
    if (nx <= R) { /* stick */
        phi[1] = rt * u[1];
        phi[2] = rt * u[2];
        if (jac) B[4] = B[8] = rt;
    } else { /* slide: r_T - R n, n = x_T / |x_T| */
        real_t n1 = x1 / nx, n2 = x2 / nx, s = R / nx;
        real_t g11 = 1 - n1 * n1, g12 = -n1 * n2, g22 = 1 - n2 * n2;
        phi[1] = r[1] - R * n1;
        phi[2] = r[2] - R * n2;
        if (jac) {
            A[3] = -mu * n1, A[4] = 1 - s * g11, A[5] = -s * g12;
            A[6] = -mu * n2, A[7] = -s * g12, A[8] = 1 - s * g22;
            B[3] = mu * rn * n1, B[4] = s * rt * g11, B[5] = s * rt * g12;
            B[6] = mu * rn * n2, B[7] = s * rt * g12, B[8] = s * rt * g22;
        }
    }
}

/* ccp's residual and Jacobian row: Alart-Curnier's at v = (u_N - mu |u_T|, u_T) (docs/solvers.md). */
CONE_FN void newton_ccp_contact(real_t mu, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                                CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac, CONE_PRIV real_t *A,
                                CONE_PRIV real_t *B)
{
    real_t v[3], nt = cone_hypot2(u[1], u[2]);
    v[0] = u[0] - mu * nt;
    v[1] = u[1];
    v[2] = u[2];
    newton_ac_contact(mu, rn, rt, r, v, phi, jac, A, B);
    if (jac && nt > 0) {
        real_t t1 = -mu * u[1] / nt, t2 = -mu * u[2] / nt;
        B[1] += B[0] * t1, B[2] += B[0] * t2;
        B[4] += B[3] * t1, B[5] += B[3] * t2;
        B[7] += B[6] * t1, B[8] += B[6] * t2;
    }
}

/* The pyramid's residual and Jacobian row: Alart-Curnier's with the disc
 * replaced by the pyramid's section at x_N, the polygon d_k . t <= m x_N
 * (cone_pyramid): phi_T = r_T - P(x_T), P the projection onto it, which
 * lands inside (stick), on the edge of the facet whose normal is nearest
 * x_T's direction, or on one of that edge's ends (a vertex, radius
 * rho_P x_N). Its zeros are the pyramid model's solutions, as
 * Alart-Curnier's are the Coulomb law's; the natural map with the
 * section's support function as the normal shift (cone_model_residual)
 * has kinks in u_T as well as in r and was no faster (docs/measured.md). */
CONE_FN void newton_pyramid_contact(cone_pyramid P, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                                    CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac,
                                    CONE_PRIV real_t *A, CONE_PRIV real_t *B)
{
    real_t xn = r[0] - rn * u[0], x1 = r[1] - rt * u[1], x2 = r[2] - rt * u[2], ang = 0, d1, d2, s;
    real_t p1 = x1, p2 = x2, dR1 = 0, dR2 = 0, D11 = 1, D12 = 0, D22 = 1;
    if (newton_ac_normal(rn, xn, r, u, phi, jac, A, B)) return; /* take-off: the section is a point */
    if (x1 != 0 || x2 != 0) (void)cone_pyramid_nearest(P, x1, x2, &ang);
    d1 = CONE_COS(ang);
    d2 = CONE_SIN(ang);
    s = d1 * x1 + d2 * x2 - P.m * xn;
    if (s > 0) { /* outside: the nearest facet's edge, or an end of it */
        real_t t = d1 * x2 - d2 * x1, hw = P.rho * xn * CONE_SIN((real_t)CONE_PI / (real_t)P.N);
        if (CONE_FABS(t) <= hw) { /* within the half-width of the edge */
            p1 = x1 - s * d1;
            p2 = x2 - s * d2;
            D11 = 1 - d1 * d1, D12 = -d1 * d2, D22 = 1 - d2 * d2;
            dR1 = P.m * d1, dR2 = P.m * d2;
        } else {
            real_t ga = ang + (t > 0 ? (real_t)CONE_PI : -(real_t)CONE_PI) / (real_t)P.N;
            dR1 = P.rho * CONE_COS(ga), dR2 = P.rho * CONE_SIN(ga);
            p1 = dR1 * xn;
            p2 = dR2 * xn;
            D11 = D12 = D22 = 0;
        }
    }
    phi[1] = r[1] - p1;
    phi[2] = r[2] - p2;
    if (!jac) return;
    A[3] = -dR1, A[4] = 1 - D11, A[5] = -D12;
    A[6] = -dR2, A[7] = -D12, A[8] = 1 - D22;
    B[3] = rn * dR1, B[4] = rt * D11, B[5] = rt * D12;
    B[6] = rn * dR2, B[7] = rt * D12, B[8] = rt * D22;
}

/* The model's residual and Jacobian row for one contact (coulomb, ccp, or the pyramid P). */
CONE_FN void newton_contact(int model, cone_pyramid P, real_t mu, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                            CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac, CONE_PRIV real_t *A,
                            CONE_PRIV real_t *B)
{
    if (model == CONE_MODEL_COULOMB) newton_ac_contact(mu, rn, rt, r, u, phi, jac, A, B);
    else if (model == CONE_MODEL_PYRAMID) newton_pyramid_contact(P, rn, rt, r, u, phi, jac, A, B);
    else newton_ccp_contact(mu, rn, rt, r, u, phi, jac, A, B);
}

/* Solves F d = -rhs from packed LU factors F (m x m) and row swaps piv; 0 when d is not finite. */
CONE_FN int newton_lu_substitute(CONE_GLOBAL const real_t *F, int m, CONE_GLOBAL const int *piv,
                                 CONE_GLOBAL const real_t *rhs, CONE_GLOBAL real_t *d)
{
    int ok = 1;
    for (int i = 0; i < m; ++i) d[i] = -rhs[i];
    for (int k = 0; k < m; ++k) {
        real_t t = d[k];
        d[k] = d[piv[k]];
        d[piv[k]] = t;
    }
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < i; ++j) d[i] -= F[(long)i * m + j] * d[j];
    for (int i = m - 1; i >= 0; --i) {
        for (int j = i + 1; j < m; ++j) d[i] -= F[(long)i * m + j] * d[j];
        d[i] /= F[(long)i * m + i];
    }
    for (int i = 0; i < m; ++i) ok = ok && isfinite(d[i]);
    return ok;
}

#endif
