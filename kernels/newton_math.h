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

/* One contact's Alart-Curnier residual phi and, if jac, its Jacobian row d phi = A dr + B du (3x3 each). */
CONE_FN void newton_ac_contact(real_t mu, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                               CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac,
                               CONE_PRIV real_t *A, CONE_PRIV real_t *B)
{
    real_t xn = r[0] - rn * u[0], x1 = r[1] - rt * u[1], x2 = r[2] - rt * u[2];
    real_t R = xn > 0 ? mu * xn : 0, nx = hypot(x1, x2);
    if (jac) {
        A[0] = A[1] = A[2] = A[3] = A[4] = A[5] = A[6] = A[7] = A[8] = 0;
        B[0] = B[1] = B[2] = B[3] = B[4] = B[5] = B[6] = B[7] = B[8] = 0;
    }
    if (xn > 0) {
        phi[0] = rn * u[0];
        if (jac) B[0] = rn;
    } else {
        phi[0] = r[0];
        if (jac) A[0] = 1;
    }
    if (xn <= 0) { /* take-off: the disc is a point */
        phi[1] = r[1];
        phi[2] = r[2];
        if (jac) A[4] = A[8] = 1;
    } else if (nx <= R) { /* stick */
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

/* The model's residual and Jacobian row for one contact (coulomb or ccp). */
CONE_FN void newton_contact(int model, real_t mu, real_t rn, real_t rt, CONE_PRIV const real_t *r,
                            CONE_PRIV const real_t *u, CONE_PRIV real_t *phi, int jac, CONE_PRIV real_t *A,
                            CONE_PRIV real_t *B)
{
    if (model == CONE_MODEL_COULOMB) newton_ac_contact(mu, rn, rt, r, u, phi, jac, A, B);
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
