/* SAP model (Castro, Permenter & Han 2022): the set-up and the Newton loop
 * (core/sap.c) shared by the CPU reference (ref/sap_dense.c), the device driver
 * (opencl/sap.c), the entry (solve/sap_solve.c) and the tests. The model and its per-contact
 * math are described in kernels/sap_math.h.
 *
 * Both backends run the same Newton loop (clc_sap_newton) and differ
 * only in how they evaluate the cost and gradient and find the Newton
 * direction: the reference assembles H = M + J'GJ densely and factors it
 * (Cholesky), the device solves H dv = -g matrix-free by block-Jacobi
 * preconditioned CG.
 *
 * Convergence measure (res->items[0].error): the relative gradient
 *   ||D g|| / max(||D M v*||, ||D J' gamma||, ||D M v||),
 * g = M (v - v*) - J' gamma, D = diag(M)^-1/2: the gradient is a momentum,
 * D makes every component (linear and angular) an sqrt(energy), and the
 * scale is the larger of the free momentum, the contact impulses and the
 * current momentum, so that a pile brought to rest (M v ~ 0) and a scene
 * with no contact force (J'gamma = 0) are both measured relatively. It is 0
 * when the gradient is exactly 0. */
#ifndef CLCONE_SAP_H
#define CLCONE_SAP_H

#include "core/internal.h"
#include "core/body_form.h"

/* Largest number of velocity unknowns (6 per moving body) the dense
 * reference accepts: its Cholesky costs nv^3 / 3 per Newton iteration
 * (about 0.6 GFlop here, a fraction of a second) and nv^2 doubles (11.5 MB).
 * Larger scenes get CLCONE_ENOTSUP and should use a device. */
#define CLCONE_SAP_REF_MAX_DOF 1200

/* Longest step the line search may take, in units of the Newton step:
 * a little more than 1 lets it overshoot where the Hessian overestimates
 * the curvature (contacts that separate within the step). */
#define CLCONE_SAP_ALPHA_MAX 1.5

typedef enum clc_sap_line_search {
    CLCONE_SAP_LS_EXACT = 0,   /* safeguarded Newton on phi'(alpha) = 0 */
    CLCONE_SAP_LS_BACKTRACK    /* Armijo backtracking from alpha = 1 */
} clc_sap_line_search;

/* Extra inputs and outputs beyond clcone_options / clcone_result; all
 * optional (a zeroed struct is the default). */
typedef struct clc_sap_params {
    clc_sap_line_search line_search;
    double *cost_history;  /* cost at iterate k (k = 0: the start), for
                              k < history_cap */
    int history_cap;
    int history_len;       /* out: entries written (Newton iterations + 1,
                              at most history_cap) */
    double *v;             /* out when non-NULL: final velocities, 6 per
                              body (static bodies: their v) */
} clc_sap_params;

/* Host-side data both backends start from. Static bodies (and the world)
 * are not unknowns: their velocity is folded into u0. */
typedef struct clc_sap_setup {
    int n, nb, nmoving;
    clc_body_csr L;   /* per-body contact lists (static bodies empty) */
    int *ca, *cb;        /* n: the moving body of side a / b, else -1 */
    int *moving;         /* nb: 1 when the body's velocity is an unknown */
    double *frame;       /* 9n: rows normal, t1, t2 */
    double *arm;         /* 6n: contact point minus centre, side a then b */
    double *u0;          /* 3n: contact velocity from the static sides,
                            less the penetration's v_hat */
    double *mu;          /* n */
    double *R;           /* 2n: Rn, Rt */
    double *mass;        /* nb: 1 / inv_mass (0 for static bodies) */
    double *inertia;     /* 9nb: inverse of inv_inertia (0 for static) */
    double *vstar;       /* 6nb */
} clc_sap_setup;

/* Builds the set-up from o's sap_beta, sap_stiffness, sap_dissipation
 * and time step soft_dt (which turns a penetration into the contact's
 * free velocity); CLCONE_ENOTSUP names a moving body whose inverse mass
 * matrix is not positive definite (a pinned body: SAP's cost needs M
 * itself). The scene and options must be valid. */
clcone_status clc_sap_setup_build(const clcone_scene *s, const clcone_options *o, clc_sap_setup *S,
                                     clcone_error *err);
void clc_sap_setup_free(clc_sap_setup *S);

/* What a backend provides to the shared Newton loop. Every call works on
 * the backend's current iterate v. */
typedef struct clc_sap_eval {
    double g2;        /* ||D g||^2 */
    double scale2;    /* max(||D M v*||^2, ||D J'gamma||^2, ||D M v||^2) */
    double cost;      /* l(v) */
} clc_sap_eval;

typedef struct clc_sap_ops {
    void *ctx;
    /* gamma, G, g and the preconditioner at v */
    clcone_status (*eval)(void *ctx, clc_sap_eval *out, clcone_error *err);
    /* dv ~ -H^-1 g; an iterative backend may stop once ||D (H dv + g)|| <=
     * tol_abs or after max_inner iterations, and adds its count to *inner */
    clcone_status (*direction)(void *ctx, double tol_abs, int max_inner, int *inner,
                               clcone_error *err);
    /* a = dv' M (v - v*), b = dv' M dv, c = dv' g */
    clcone_status (*ls_setup)(void *ctx, double *a, double *b, double *c, clcone_error *err);
    /* at v + alpha dv: sum of contact cost changes, sum w'gamma, sum w'G w
     * with w = J dv */
    clcone_status (*ls_eval)(void *ctx, double alpha, double *dcost, double *d1, double *d2,
                             clcone_error *err);
    /* v += alpha dv */
    clcone_status (*step)(void *ctx, double alpha, clcone_error *err);
} clc_sap_ops;

/* Newton with line search until error <= o->tol, o->max_iter iterations
 * or o->max_seconds; fills out (status, iters, inner_iters, cost, error,
 * reason) and prm's history. nv (unknowns) sizes the CG cap. */
clcone_status clc_sap_newton(const clc_sap_ops *ops, const clcone_options *o, int nv,
                                clc_sap_params *prm, clcone_prob_result *out, clcone_error *err);

#endif
