/* Cone math shared by the host reference (C, double) and the OpenCL kernels
 * (float, or double with -DCLCONE_DOUBLE): the ONLY place projections, De
 * Saxce's velocity, the pyramid and the residuals are written, so the two
 * cannot drift apart. Vectors are (x_n, x_t1, x_t2); K_mu = {||x_t|| <= mu x_n}. */
#ifndef CLCONE_CONE_H
#define CLCONE_CONE_H

#ifdef CLCONE_OPENCL
/* No fused multiply-add, as on the host (-ffp-contract=off): device double follows the reference's rounding. */
#  pragma OPENCL FP_CONTRACT OFF
#  ifdef CLCONE_DOUBLE
#    pragma OPENCL EXTENSION cl_khr_fp64 : enable
     typedef double real_t;
#    define CONE_EPS 1e-12
#    define CONE_SCALE_EPS DBL_EPSILON
#  else
     typedef float real_t;
#    define CONE_EPS 1e-5f
#    define CONE_SCALE_EPS FLT_EPSILON
#  endif
#  define CONE_PRIV __private
#  define CONE_GLOBAL __global
#else
#  include <float.h>
#  include <math.h>
   typedef double real_t;
#  define CONE_EPS 1e-12
#  define CONE_SCALE_EPS DBL_EPSILON
#  define CONE_PRIV
#  define CONE_GLOBAL
#endif

/* Math functions, named alike in C and OpenCL C; the macros mark the shared code's uses. */
#define CONE_FN static inline
#define CONE_SQRT sqrt
#define CONE_FABS fabs
#define CONE_ATAN2 atan2
#define CONE_COS cos
#define CONE_SIN sin
#define CONE_FLOOR floor

#define CONE_PI 3.14159265358979323846

/* A contact's 3 values into private memory; index private arrays by constants only (docs/architecture.md). */
CONE_FN void cone_load3(CONE_GLOBAL const real_t *p, CONE_PRIV real_t *x)
{
    x[0] = p[0];
    x[1] = p[1];
    x[2] = p[2];
}

/* A contact's 3 values back to global memory. */
CONE_FN void cone_store3(CONE_GLOBAL real_t *p, CONE_PRIV const real_t *x)
{
    p[0] = x[0];
    p[1] = x[1];
    p[2] = x[2];
}

/* A 3x3 block (row-major) into private memory. */
CONE_FN void cone_load9(CONE_GLOBAL const real_t *p, CONE_PRIV real_t *B)
{
    cone_load3(p, B);
    cone_load3(p + 3, B + 3);
    cone_load3(p + 6, B + 6);
}

/* acc += B x for one 3x3 block of W: the one block product of every W product, host and kernels. */
CONE_FN void cone_block_add(CONE_GLOBAL const real_t *B, real_t x0, real_t x1, real_t x2, CONE_PRIV real_t *acc)
{
    acc[0] += B[0] * x0 + B[1] * x1 + B[2] * x2;
    acc[1] += B[3] * x0 + B[4] * x1 + B[5] * x2;
    acc[2] += B[6] * x0 + B[7] * x1 + B[8] * x2;
}

CONE_FN real_t cone_hypot2(real_t a, real_t b) { return CONE_SQRT(a * a + b * b); }

/* Euclidean projection onto K_mu, in place. */
CONE_FN void cone_project(real_t mu, CONE_PRIV real_t *x)
{
    real_t t = cone_hypot2(x[1], x[2]);
    if (mu * t <= -x[0]) {                   /* polar cone */
        x[0] = 0; x[1] = 0; x[2] = 0;
    } else if (t <= mu * x[0]) {             /* inside */
        return;
    } else {
        real_t pn = (mu * t + x[0]) / (1 + mu * mu);
        real_t s = mu * pn / t;              /* t > 0 here */
        x[0] = pn; x[1] *= s; x[2] *= s;
    }
}

/* Projection onto the dual cone K_mu* by Moreau's decomposition x = P_K*(x) - P_K(-x). */
CONE_FN void cone_project_dual(real_t mu, CONE_PRIV real_t *x)
{
    real_t m[3];
    m[0] = -x[0]; m[1] = -x[1]; m[2] = -x[2];
    cone_project(mu, m);
    x[0] += m[0]; x[1] += m[1]; x[2] += m[2];
}

/* De Saxce's shift mu ||u_t|| of the normal velocity. */
CONE_FN real_t cone_desaxce_shift(real_t mu, real_t ut1, real_t ut2)
{
    return mu * cone_hypot2(ut1, ut2);
}

/* De Saxce's modified normal velocity u_n + mu ||u_t||. */
CONE_FN real_t cone_desaxce_n(real_t mu, CONE_PRIV const real_t *u)
{
    return u[0] + cone_desaxce_shift(mu, u[1], u[2]);
}

/* F = r - P_K(r - w), w being u (ccp) or De Saxce's velocity (coulomb); writes F, returns ||F||^2. */
CONE_FN real_t cone_natural_map(real_t mu, CONE_PRIV const real_t *r,
                                CONE_PRIV const real_t *w,
                                CONE_PRIV real_t *F)
{
    real_t p[3];
    p[0] = r[0] - w[0]; p[1] = r[1] - w[1]; p[2] = r[2] - w[2];
    cone_project(mu, p);
    F[0] = r[0] - p[0]; F[1] = r[1] - p[1]; F[2] = r[2] - p[2];
    return F[0] * F[0] + F[1] * F[1] + F[2] * F[2];
}

/* ||F||^2 of the Coulomb natural map (with De Saxce) for one contact. */
CONE_FN real_t cone_residual_coulomb(real_t mu, CONE_PRIV const real_t *r,
                                     CONE_PRIV const real_t *u)
{
    real_t w[3], F[3];
    w[0] = cone_desaxce_n(mu, u); w[1] = u[1]; w[2] = u[2];
    return cone_natural_map(mu, r, w, F);
}

/* ||F||^2 of the cone-complementarity natural map (ccp) for one contact. */
CONE_FN real_t cone_residual_ccp(real_t mu, CONE_PRIV const real_t *r,
                                 CONE_PRIV const real_t *u)
{
    real_t F[3];
    return cone_natural_map(mu, r, u, F);
}

/* Cone violation of r: distance of r from K_mu. */
CONE_FN real_t cone_violation(real_t mu, CONE_PRIV const real_t *r)
{
    real_t p[3];
    p[0] = r[0]; p[1] = r[1]; p[2] = r[2];
    cone_project(mu, p);
    return CONE_SQRT((r[0] - p[0]) * (r[0] - p[0]) + (r[1] - p[1]) * (r[1] - p[1])
                     + (r[2] - p[2]) * (r[2] - p[2]));
}

/* Complementarity gap |r . u_hat| with u_hat De Saxce's velocity. */
CONE_FN real_t cone_complementarity(real_t mu, CONE_PRIV const real_t *r,
                                    CONE_PRIV const real_t *u)
{
    real_t d = r[0] * cone_desaxce_n(mu, u) + r[1] * u[1] + r[2] * u[2];
    return CONE_FABS(d);
}

/* Pyramidal cone with N facets: d_k . x_t <= m x_n, inner or outer fit (docs/formats.md). */
typedef struct cone_pyramid {
    int N;
    real_t phi0;   /* angle of facet normal 0 */
    real_t m;      /* facet bound factor: d_k . x_t <= m x_n */
    real_t rho;    /* vertex radius m / cos(pi/N) */
} cone_pyramid;

/* The pyramid of N facets fitted inside (inner) or around the circle of radius mu. */
CONE_FN cone_pyramid cone_pyramid_make(int N, int inner, real_t mu)
{
    cone_pyramid P;
    real_t c = (real_t)CONE_COS((real_t)CONE_PI / (real_t)N);
    P.N = N;
    P.phi0 = inner ? (real_t)CONE_PI / (real_t)N : (real_t)0;
    P.m = inner ? mu * c : mu;
    P.rho = P.m / c;
    return P;
}

/* Slack m f_n - d . f_t of the facet with unit normal (d1, d2): >= 0 inside, 0 on it. */
CONE_FN real_t cone_facet_slack(real_t d1, real_t d2, real_t m,
                                CONE_PRIV const real_t *f)
{
    return m * f[0] - (d1 * f[1] + d2 * f[2]);
}

/* The facet normal nearest to t (t nonzero): the angle from it to t, its own in *ang. */
CONE_FN real_t cone_pyramid_nearest(cone_pyramid P, real_t t1, real_t t2, CONE_PRIV real_t *ang)
{
    real_t step = (real_t)(2 * CONE_PI) / (real_t)P.N;
    real_t a = CONE_ATAN2(t2, t1) - P.phi0;
    real_t k = CONE_FLOOR(a / step + (real_t)0.5);
    *ang = P.phi0 + k * step;
    return a - k * step;
}

/* max_k d_k . t: |t| cos(angle to the nearest facet normal). */
CONE_FN real_t cone_pyramid_score(cone_pyramid P, real_t t1, real_t t2)
{
    real_t len = cone_hypot2(t1, t2), ang;
    if (len == 0) return 0;
    return len * CONE_COS(cone_pyramid_nearest(P, t1, t2, &ang));
}

/* max_j g_j . t over the edge-ray directions g_j, halfway between facet normals. */
CONE_FN real_t cone_pyramid_vertex_score(cone_pyramid P, real_t t1, real_t t2)
{
    cone_pyramid V = P;
    V.phi0 = P.phi0 + (real_t)CONE_PI / (real_t)P.N;
    return cone_pyramid_score(V, t1, t2);
}

/* The section's support function at -t: the pyramid's counterpart of mu ||u_t||. */
CONE_FN real_t cone_pyramid_support(cone_pyramid P, real_t t1, real_t t2)
{
    return P.rho * cone_pyramid_vertex_score(P, -t1, -t2);
}

/* Whether x lies in the pyramid, up to tol. */
CONE_FN int cone_pyramid_contains(cone_pyramid P, CONE_PRIV const real_t *x,
                                  real_t tol)
{
    return cone_pyramid_score(P, x[1], x[2]) <= P.m * x[0] + tol;
}

/* Euclidean projection onto the pyramid, in place: the closest feasible facet or edge-ray projection. */
CONE_FN void cone_pyramid_project(cone_pyramid P, CONE_PRIV real_t *x)
{
    real_t scale = CONE_FABS(x[0]) + cone_hypot2(x[1], x[2]);
    real_t tol = CONE_EPS * scale;
    real_t best[3], bestd, step = (real_t)(2 * CONE_PI) / (real_t)P.N;
    real_t en = 1 / (1 + P.rho * P.rho);
    int k;
    if (cone_pyramid_contains(P, x, tol)) return;
    /* polar cone: x . e <= 0 for every edge generator e = (1, rho g_j) */
    if (x[0] + P.rho * cone_pyramid_vertex_score(P, x[1], x[2]) <= 0) {
        x[0] = 0; x[1] = 0; x[2] = 0;
        return;
    }
    best[0] = 0; best[1] = 0; best[2] = 0;
    bestd = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
    for (k = 0; k < P.N; ++k) {
        real_t ang = P.phi0 + step * (real_t)k;
        real_t d1 = CONE_COS(ang), d2 = CONE_SIN(ang);
        /* facet plane a . y = 0 with a = (-m, d1, d2) */
        real_t ax = -P.m * x[0] + d1 * x[1] + d2 * x[2];
        real_t aa = P.m * P.m + 1;
        real_t y[3], dist;
        real_t ga = ang + step * (real_t)0.5;
        real_t g1 = CONE_COS(ga), g2 = CONE_SIN(ga);
        real_t ex = x[0] + P.rho * (g1 * x[1] + g2 * x[2]);
        if (ax > 0) {
            real_t s = ax / aa;
            y[0] = x[0] + s * P.m; y[1] = x[1] - s * d1; y[2] = x[2] - s * d2;
            if (y[0] >= 0 && cone_pyramid_contains(P, y, tol)) {
                dist = (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1])
                       + (x[2] - y[2]) * (x[2] - y[2]);
                if (dist < bestd) {
                    bestd = dist; best[0] = y[0]; best[1] = y[1]; best[2] = y[2];
                }
            }
        }
        /* edge ray between facets k and k+1: e = (1, rho g) */
        if (ex > 0) {
            real_t s = ex * en;
            y[0] = s; y[1] = s * P.rho * g1; y[2] = s * P.rho * g2;
            dist = (x[0] - y[0]) * (x[0] - y[0]) + (x[1] - y[1]) * (x[1] - y[1])
                   + (x[2] - y[2]) * (x[2] - y[2]);
            if (dist < bestd) {
                bestd = dist; best[0] = y[0]; best[1] = y[1]; best[2] = y[2];
            }
        }
    }
    x[0] = best[0]; x[1] = best[1]; x[2] = best[2];
}

/* ||F||^2 of the pyramid natural map: r - P(r - (u + h(u_t) e_n)). */
CONE_FN real_t cone_residual_pyramid(cone_pyramid P, CONE_PRIV const real_t *r,
                                     CONE_PRIV const real_t *u)
{
    real_t p[3];
    p[0] = r[0] - (u[0] + cone_pyramid_support(P, u[1], u[2]));
    p[1] = r[1] - u[1];
    p[2] = r[2] - u[2];
    cone_pyramid_project(P, p);
    p[0] = r[0] - p[0]; p[1] = r[1] - p[1]; p[2] = r[2] - p[2];
    return p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
}

#endif
