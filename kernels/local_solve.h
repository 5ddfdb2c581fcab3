/* Per-contact updates shared by the host reference and the kernels: the
 * projected step of Jacobi/PGS and the exact one-contact Coulomb solve of
 * Gauss-Seidel. Requires cone.h first. Model numbers are clcone_model's
 * (host/core/options.c asserts it). */
#ifndef CLCONE_LOCAL_SOLVE_H
#define CLCONE_LOCAL_SOLVE_H

#define CONE_MODEL_COULOMB 0
#define CONE_MODEL_CCP 1
#define CONE_MODEL_PYRAMID 2

/* Gauss-Seidel's proximal weight in 1-based sweep `sweep`, times trace(W_cc)/3 (why: host/ref/nsgs.c). */
CONE_FN real_t cone_prox_sigma(int sweep)
{
    return sweep > 100 ? (real_t)0.01 : (real_t)0;
}

/* The pyramid of a contact when the model uses one (unused otherwise). */
CONE_FN cone_pyramid cone_model_pyramid(int model, int facets, int inner, real_t mu)
{
    cone_pyramid P = {0, 0, 0, 0};
    if (model == CONE_MODEL_PYRAMID) P = cone_pyramid_make(facets, inner, mu);
    return P;
}

/* Normal shift making the model's law a cone complementarity (coulomb: De Saxce's mu ||u_t||). */
CONE_FN real_t cone_model_shift(int model, cone_pyramid P, real_t mu,
                                CONE_PRIV const real_t *u)
{
    if (model == CONE_MODEL_COULOMB) return mu * cone_hypot2(u[1], u[2]);
    if (model == CONE_MODEL_PYRAMID) return cone_pyramid_support(P, u[1], u[2]);
    return 0;
}

/* Projects x onto the model's cone (the pyramid, else K_mu). */
CONE_FN void cone_model_project(int model, cone_pyramid P, real_t mu,
                                CONE_PRIV real_t *x)
{
    if (model == CONE_MODEL_PYRAMID) cone_pyramid_project(P, x);
    else cone_project(mu, x);
}

/* r <- P(r - omega (u + shift e_n)), whose fixed points are exactly the model's solutions. */
CONE_FN void cone_projected_step(int model, cone_pyramid P, real_t mu,
                                 real_t omega, CONE_PRIV real_t *r,
                                 CONE_PRIV const real_t *u)
{
    real_t s = cone_model_shift(model, P, mu, u);
    r[0] -= omega * (u[0] + s);
    r[1] -= omega * u[1];
    r[2] -= omega * u[2];
    cone_model_project(model, P, mu, r);
}

/* ||F||^2 of the model's natural map for one contact. */
CONE_FN real_t cone_model_residual(int model, cone_pyramid P, real_t mu,
                                   CONE_PRIV const real_t *r,
                                   CONE_PRIV const real_t *u)
{
    real_t w[3], p[3];
    w[0] = u[0] + cone_model_shift(model, P, mu, u);
    w[1] = u[1];
    w[2] = u[2];
    p[0] = r[0] - w[0]; p[1] = r[1] - w[1]; p[2] = r[2] - w[2];
    cone_model_project(model, P, mu, p);
    p[0] = r[0] - p[0]; p[1] = r[1] - p[1]; p[2] = r[2] - p[2];
    return p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
}

/* APGD's backtracking: candidates an iteration, and the decrease test d'Wd <= L |d|^2 (docs/solvers.md). */
#define CONE_APGD_TRIES 2
CONE_FN int cone_apgd_decrease_ok(real_t dWd, real_t d2, real_t L)
{
    return dWd <= L * d2;
}

/* Nesterov's next theta (in place) and beta; restarts (theta 1, beta 0) when gdx = g.(x_new - x) > 0. */
CONE_FN real_t cone_apgd_momentum(CONE_PRIV real_t *theta, real_t gdx)
{
    real_t th = *theta;
    real_t thn = (real_t)0.5 * (-th * th + th * CONE_SQRT(th * th + 4));
    real_t b = th * (1 - th) / (th * th + thn);
    if (gdx > 0) {
        b = 0;
        thn = 1;
    }
    *theta = thn;
    return b;
}

/* acgs (docs/solvers.md): contact's term of the restart test (y - x).(x - x_old). */
CONE_FN real_t cone_acgs_term(CONE_PRIV const real_t *y, CONE_PRIV const real_t *x,
                              CONE_PRIV const real_t *xo)
{
    return (y[0] - x[0]) * (x[0] - xo[0]) + (y[1] - x[1]) * (x[1] - xo[1]) + (y[2] - x[2]) * (x[2] - xo[2]);
}

/* acgs's function restart: contact c's share of the objective's change f(x) - f(xp), f = 1/2 x.Wx + q.x,
 * from u = (Wx + q)_c and up = (W xp + q)_c: (x - xp).(u + up) / 2, exact for the quadratic, so that a rise
 * shows down to its own rounding (f's values hide any rise below eps |f|: near the answer, all of them). *mag
 * gets that rounding's scale: the step times u's magnitudes and q's, twice (u = Wx + q, where Wx and q
 * nearly cancel, carries rounding of eps |q|, not eps |u|). */
CONE_FN real_t cone_acgs_rise_term(CONE_PRIV const real_t *x, CONE_PRIV const real_t *u,
                                   CONE_PRIV const real_t *xp, CONE_PRIV const real_t *up,
                                   CONE_PRIV const real_t *q, CONE_PRIV real_t *mag)
{
    real_t t = 0, a = 0;
    for (int k = 0; k < 3; ++k) {
        real_t d = x[k] - xp[k];
        t += d * (u[k] + up[k]);
        a += CONE_FABS(d) * (CONE_FABS(u[k]) + CONE_FABS(up[k]) + 2 * CONE_FABS(q[k]));
    }
    *mag = (real_t)0.5 * a;
    return (real_t)0.5 * t;
}

/* acgs's extrapolation y = P(x + beta (x - x_old)), so every sweep starts inside the cones. */
CONE_FN void cone_acgs_extrapolate(real_t mu, real_t beta, CONE_PRIV const real_t *x,
                                   CONE_PRIV const real_t *xo, CONE_PRIV real_t *y)
{
    y[0] = x[0] + beta * (x[0] - xo[0]);
    y[1] = x[1] + beta * (x[1] - xo[1]);
    y[2] = x[2] + beta * (x[2] - xo[2]);
    cone_project(mu, y);
}

/* ---------------- exact one-contact Coulomb solve ------------------ */
/* Finds r with u = A r + b obeying Coulomb's law (method: docs/solvers.md); cone_local_coulomb's parts. */
/* Slide candidate at angle th: writes r, returns g and the sign data. */
CONE_FN real_t cone_slide_eval(CONE_PRIV const real_t *A,
                               CONE_PRIV const real_t *b, real_t mu, real_t th,
                               CONE_PRIV real_t *r, CONE_PRIV real_t *dotv)
{
    real_t c = CONE_COS(th), s = CONE_SIN(th);
    real_t den = A[0] + mu * (A[1] * c + A[2] * s);
    real_t rn, ut1, ut2;
    if (!(den > 0)) {           /* no positive normal force along th */
        r[0] = 0; r[1] = 0; r[2] = 0;
        *dotv = 1;
        return 0;
    }
    rn = -b[0] / den;
    r[0] = rn; r[1] = rn * mu * c; r[2] = rn * mu * s;
    ut1 = b[1] + A[3] * r[0] + A[4] * r[1] + A[5] * r[2];
    ut2 = b[2] + A[6] * r[0] + A[7] * r[1] + A[8] * r[2];
    *dotv = ut1 * c + ut2 * s;
    return ut1 * s - ut2 * c;
}

/* Whether a slide candidate is valid: positive normal force, sliding against u_t. */
CONE_FN int cone_slide_ok(CONE_PRIV const real_t *r, real_t dotv)
{
    return r[0] > 0 && dotv <= 0;
}

/* x = A^-1 b for a 3x3 A; 0 when A is near singular. */
CONE_FN int cone_solve3(CONE_PRIV const real_t *A, CONE_PRIV const real_t *b,
                        CONE_PRIV real_t *x)
{
    real_t c0 = A[4] * A[8] - A[5] * A[7];
    real_t c1 = A[5] * A[6] - A[3] * A[8];
    real_t c2 = A[3] * A[7] - A[4] * A[6];
    real_t det = A[0] * c0 + A[1] * c1 + A[2] * c2;
    real_t scale = CONE_FABS(A[0]) + CONE_FABS(A[4]) + CONE_FABS(A[8]);
    if (!(CONE_FABS(det) > CONE_EPS * scale * scale * scale)) return 0;
    x[0] = (b[0] * c0 + b[1] * (A[2] * A[7] - A[1] * A[8]) + b[2] * (A[1] * A[5] - A[2] * A[4])) / det;
    x[1] = (b[0] * c1 + b[1] * (A[0] * A[8] - A[2] * A[6]) + b[2] * (A[2] * A[3] - A[0] * A[5])) / det;
    x[2] = (b[0] * c2 + b[1] * (A[1] * A[6] - A[0] * A[7]) + b[2] * (A[0] * A[4] - A[1] * A[3])) / det;
    return 1;
}

/* The exact solve from the hint (previous tangential r); 0, or 1 with r the projected best point. */
CONE_FN int cone_local_coulomb(CONE_PRIV const real_t *A,
                               CONE_PRIV const real_t *b, real_t mu,
                               real_t hint_t1, real_t hint_t2, CONE_PRIV real_t *r)
{
    real_t x[3], nb[3], th, theta0, g, dv, gs[3];
    real_t bscale = CONE_FABS(b[0]) + CONE_FABS(b[1]) + CONE_FABS(b[2]);
    real_t gtol;
    int it, k;
    const int NSCAN = 24;
    x[0] = 0; x[1] = 0; x[2] = 0;
    if (b[0] >= 0) {                                   /* take-off */
        r[0] = 0; r[1] = 0; r[2] = 0;
        return 0;
    }
    nb[0] = -b[0]; nb[1] = -b[1]; nb[2] = -b[2];
    if (cone_solve3(A, nb, x) && x[0] >= 0
        && cone_hypot2(x[1], x[2]) <= mu * x[0]) {     /* stick */
        r[0] = x[0]; r[1] = x[1]; r[2] = x[2];
        return 0;
    }
    if (mu == 0) {                                     /* frictionless */
        r[0] = -b[0] / A[0]; r[1] = 0; r[2] = 0;
        return 0;
    }
    gtol = 8 * CONE_EPS * bscale;
    /* Newton from the hint's direction (else against b_t) with a
     * finite-difference slope; the angle only here, since atan2 is dear
     * on some devices and the other cases need none. */
    theta0 = (hint_t1 != 0 || hint_t2 != 0) ? CONE_ATAN2(hint_t2, hint_t1) : CONE_ATAN2(-b[2], -b[1]);
    th = theta0;
    for (it = 0; it < 12; ++it) {
        real_t h = (real_t)1e-4, dg, gp, gm, rr[3], dd;
        g = cone_slide_eval(A, b, mu, th, r, &dv);
        if (CONE_FABS(g) <= gtol && cone_slide_ok(r, dv)) return 0;
        gp = cone_slide_eval(A, b, mu, th + h, rr, &dd);
        gm = cone_slide_eval(A, b, mu, th - h, rr, &dd);
        dg = (gp - gm) / (2 * h);
        if (!(dg != 0)) break;
        th -= g / dg;
    }
    /* Scan for sign changes of g and bisect the first valid bracket. */
    {
        real_t step = (real_t)(2 * CONE_PI) / (real_t)NSCAN;
        real_t a = theta0, ga = cone_slide_eval(A, b, mu, a, gs, &dv);
        for (k = 1; k <= NSCAN; ++k) {
            real_t c = theta0 + step * (real_t)k, gc, lo, hi, glo;
            real_t dvc;
            gc = cone_slide_eval(A, b, mu, c, gs, &dvc);
            if ((ga <= 0 && gc >= 0) || (ga >= 0 && gc <= 0)) {
                lo = a; hi = c; glo = ga;
                for (it = 0; it < 60; ++it) {
                    real_t mid = (real_t)0.5 * (lo + hi);
                    real_t gm = cone_slide_eval(A, b, mu, mid, r, &dv);
                    if ((gm <= 0) == (glo <= 0)) { lo = mid; glo = gm; }
                    else hi = mid;
                    if (hi - lo < 4 * CONE_EPS) break;
                }
                g = cone_slide_eval(A, b, mu, (real_t)0.5 * (lo + hi), r, &dv);
                if (cone_slide_ok(r, dv) && CONE_FABS(g) <= 1e3 * gtol + CONE_EPS) return 0;
            }
            a = c; ga = gc;
        }
    }
    /* No exact case fits (degenerate A): a projected fixed-point answer. */
    r[0] = x[0]; r[1] = x[1]; r[2] = x[2];
    cone_project(mu, r);
    return 1;
}

/* One Gauss-Seidel update of x = r_c from D = W_cc and b = q_c + sum_{d != c} W_cd r_d, per model. */
CONE_FN void cone_gs_update(int model, int facets, int inner, real_t mu, real_t omega, int sweep,
                            CONE_PRIV const real_t *D, CONE_PRIV const real_t *b, CONE_PRIV real_t *x)
{
    real_t A[9], bb[3], u[3], s;
    if (model != CONE_MODEL_COULOMB) {
        u[0] = b[0] + D[0] * x[0] + D[1] * x[1] + D[2] * x[2];
        u[1] = b[1] + D[3] * x[0] + D[4] * x[1] + D[5] * x[2];
        u[2] = b[2] + D[6] * x[0] + D[7] * x[1] + D[8] * x[2];
        cone_projected_step(model, cone_model_pyramid(model, facets, inner, mu), mu, omega, x, u);
        return;
    }
    s = cone_prox_sigma(sweep) * (D[0] + D[4] + D[8]) / 3;
    A[0] = D[0] + s; A[1] = D[1]; A[2] = D[2];
    A[3] = D[3]; A[4] = D[4] + s; A[5] = D[5];
    A[6] = D[6]; A[7] = D[7]; A[8] = D[8] + s;
    bb[0] = b[0] - s * x[0];
    bb[1] = b[1] - s * x[1];
    bb[2] = b[2] - s * x[2];
    cone_local_coulomb(A, bb, mu, x[1], x[2], x);
}

#endif
