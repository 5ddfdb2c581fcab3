/* Alart-Curnier's per-contact residual and generalised Jacobian, and the
 * constants of the semismooth Newton method, shared by the CPU reference
 * (host/ref/newton.c, double) and the device kernel (kernels/newton.cl,
 * float or double), so that both solve the same equations with the same
 * globalisation. Requires cone.h first. host/ref/newton.c says why this
 * formulation and these constants; ccp (and soft, a ccp on W + R) is
 * solved by the same method on its own residual. Requires local_solve.h
 * (the model numbers) too. */
#ifndef CLCONE_NEWTON_MATH_H
#define CLCONE_NEWTON_MATH_H

/* Armijo's sufficient decrease and the shortest step tried. */
#define NEWTON_ARMIJO 1e-4
#define NEWTON_MIN_STEP 1e-12
/* A pivot below this fraction of the Jacobian's largest entry counts as
 * singular and hands the step to Levenberg-Marquardt. */
#define NEWTON_PIVOT_TINY 1e-12
/* Levenberg-Marquardt attempts before giving up, lambda growing 100x each. */
#define NEWTON_LM_TRIES 6
/* Newton steps without halving the error before it counts as stalled, and
 * the Gauss-Seidel sweeps of a rescue, doubling up to the last. */
#define NEWTON_STALL_STEPS 5
#define NEWTON_GS_SWEEPS 50
#define NEWTON_GS_MAX_SWEEPS (1 << 20)

/* The sweeps of the first rescue and of the next after one of `burst`
 * (doubled): never past the iteration cap, which bounds every inner loop
 * of a solve. */
CONE_FN int newton_first_burst(int max_iter)
{
    return NEWTON_GS_SWEEPS < max_iter ? NEWTON_GS_SWEEPS : max_iter;
}

CONE_FN int newton_next_burst(int burst, int max_iter)
{
    int most = max_iter < NEWTON_GS_MAX_SWEEPS ? max_iter : NEWTON_GS_MAX_SWEEPS;
    return burst < most / 2 ? 2 * burst : most;
}

/* The hybrid (first-order sweeps, then Newton): the Newton steps it
 * expects to need (the shared problems took 1-51), to price Newton in
 * sweeps. */
#define NEWTON_EXPECTED_STEPS 30

/* The hybrid's price of Newton in Gauss-Seidel sweeps, for m unknowns and
 * `blocks` stored W blocks: NEWTON_EXPECTED_STEPS factorisations of m^3/3
 * multiply-adds against a sweep's 9 per stored W entry. On a device the
 * lanes share both alike (the rows below a pivot, the contacts of a
 * colour), and one lane (a CPU device) runs both as the reference does,
 * so the price is the reference's there too. */
CONE_FN real_t newton_hybrid_budget(int m, int blocks)
{
    real_t mr = (real_t)m;
    return (real_t)NEWTON_EXPECTED_STEPS * (mr * mr * mr / 3) / (81 * (real_t)blocks + 1);
}

/* The hybrid's early try: Newton steps that must reach tol within
 * NEWTON_TRIAL_STEPS, else it gives up (the steps spent, or Newton
 * stalled as a rescue would say) and the sweeps go on from the best
 * iterate. Newton converging from its start takes a few steps
 * (quadratic); a try kept on a gain instead (two decades in five steps)
 * kept a 20-box stack's (80 contacts) Newton in its slow global phase
 * after its first steps, and took 4x the time of its sweeps. Tries of 8
 * steps cost more than they saved on stacks of 16 and 20 boxes. */
#define NEWTON_TRIAL_STEPS 4

/* The hybrid's switch at a check of its sweeps (iteration it, error e),
 * marks at each doubling of the iterations (*mark_it, *mark_e; 0 and
 * anything at the start or after a failed try): 0 sweeps on, 1 an early
 * try of Newton, 2 the hand-over for good. Both come when, at the pace of
 * the last doubling, reaching tol would cost the sweeps more than
 * Newton's expected cost (budget), and only once the sweeps have spent
 * that cost themselves (as in ski rental: a plateau that ends by itself
 * keeps its sweeps; Capsules-i100-1090 sits at 1.1e-7 from sweep 400 to
 * 3,200 and converges at 4,730, and a hand-over there cost 10x): the
 * whole budget for the hand-over, a try's share of it
 * (NEWTON_TRIAL_STEPS of NEWTON_EXPECTED_STEPS) for a try, and one try a
 * solve (tried: it failed; then only the hand-over). A failed try costs
 * at most that share; without tries a problem Newton finishes in a few
 * steps swept until the whole budget was spent. Tried wherever the
 * sweeps' cost passed a try's (not the budget), the tries doubled the
 * time of piles and stacks the sweeps finish in 2,000 sweeps; a try at
 * every doubling made 256 tiny piles (9-36 contacts) 30% slower on the
 * reference, each failing again (docs/measured.md). */
CONE_FN int newton_hybrid_switch(int it, real_t e, real_t tol, real_t budget, int tried, CONE_PRIV int *mark_it,
                                 CONE_PRIV real_t *mark_e)
{
    int verdict = 0;
    if (it < 2 * *mark_it) return 0;
    if (*mark_it > 0) {
        real_t pace = log(*mark_e / e) / (it - *mark_it); /* decades (base e) a sweep */
        real_t need = pace > 0 ? log(e / tol) / pace : (real_t)INFINITY;
        real_t trial = budget * NEWTON_TRIAL_STEPS / NEWTON_EXPECTED_STEPS;
        if (need > budget) verdict = it >= budget ? 2 : !tried && it >= trial;
    }
    *mark_it = it;
    *mark_e = e;
    return verdict;
}

/* rho (normal, tangential) of a contact from its diagonal W entries:
 * 2 / W_nn and 2 / the mean tangential diagonal, 1 where that is not
 * positive (a contact W leaves unconstrained). */
CONE_FN real_t newton_rho(real_t diag)
{
    return diag > 0 && isfinite(diag) ? 2 / diag : (real_t)1;
}

/* One contact's Alart-Curnier residual phi and, when jac is set, the
 * blocks of its Jacobian row d phi = A dr_c + B du_c (row-major 3x3). */
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

/* ccp's residual and Jacobian row: Alart-Curnier's on the velocity
 * v = (u_N - mu |u_T|, u_T). ccp asks u in the dual cone, u_N >= mu
 * |u_T|, where Coulomb asks u_N >= 0 of the normal velocity and leaves
 * De Saxce's u_N + mu |u_T| in that cone: so ccp is the Coulomb law of
 * v (v + mu |v_T| e_N = u), and its solutions are the zeros of
 * Alart-Curnier's function at v. d v = D du with D = I - mu e_N (0, t')
 * (t = u_T / |u_T|, 0 at u_T = 0, an element of the norm's generalised
 * gradient), so B becomes B D. The cone's own natural map r - P_K(r -
 * rho u) was tried first: its pieces couple the normal and tangential
 * parts, and on a 33-contact pile (singular W) its Newton and
 * Levenberg-Marquardt steps crept at 6e-5 where this form converges. */
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

/* The substitutions of an LU solve F d = -rhs, F holding the unit lower
 * and the upper factors (row-major, m x m) and piv the row swaps in
 * order; 0 when d is not finite. */
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
