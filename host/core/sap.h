/* SAP (Castro, Permenter & Han 2022): the set-up and the Newton loop (core/sap.c)
 * shared by ref/sap_dense.c, opencl/sap.c, solve/sap_solve.c and the tests; the
 * backends differ only in evaluating and finding the direction. The model and
 * its error measure: docs/solvers.md. */
#ifndef CLCONE_SAP_H
#define CLCONE_SAP_H

#include "core/internal.h"
#include "core/body_form.h"

/* Most velocity unknowns the dense reference takes (cost: docs/measured.md); more is CLCONE_ENOTSUP. */
#define CLCONE_SAP_REF_MAX_DOF 1200

/* Longest line-search step in Newton steps: over 1 where H overestimates curvature (contacts separating). */
#define CLCONE_SAP_ALPHA_MAX 1.5

typedef enum clc_sap_line_search {
    CLCONE_SAP_LS_EXACT = 0,   /* safeguarded Newton on phi'(alpha) = 0 */
    CLCONE_SAP_LS_BACKTRACK    /* Armijo backtracking from alpha = 1 */
} clc_sap_line_search;

/* Extra inputs and outputs beyond the options and result; a zeroed struct is the default. */
typedef struct clc_sap_params {
    clc_sap_line_search line_search;
    double *cost_history;  /* cost at iterate k < history_cap (0: the start) */
    int history_cap;
    int history_len;       /* out: entries written (iterations + 1, <= cap) */
    double *v;             /* out if non-NULL: final velocities, 6 a body */
} clc_sap_params;

/* Host-side data both backends start from; static bodies are folded into u0, not unknowns. */
typedef struct clc_sap_setup {
    int n, nb, nmoving;
    clc_body_csr L;   /* per-body contact lists (static bodies empty) */
    int *ca, *cb;        /* n: the moving body of side a / b, else -1 */
    int *moving;         /* nb: 1 when the body's velocity is an unknown */
    double *frame;       /* 9n: rows normal, t1, t2 */
    double *arm;         /* 6n: contact point minus centre, side a then b */
    double *u0;          /* 3n: static sides' contact velocity less v_hat */
    double *mu;          /* n */
    double *R;           /* 2n: Rn, Rt */
    double *mass;        /* nb: 1 / inv_mass (0 for static bodies) */
    double *inertia;     /* 9nb: inverse of inv_inertia (0 for static) */
    double *vstar;       /* 6nb */
} clc_sap_setup;

/* Builds the set-up from valid s and o; CLCONE_ENOTSUP names a pinned moving body (SAP needs M). */
clcone_status clc_sap_setup_build(const clcone_scene *s, const clcone_options *o, clc_sap_setup *S,
                                     clcone_error *err);
void clc_sap_setup_free(clc_sap_setup *S);

/* What a backend evaluates at its current iterate v for the shared Newton loop. */
typedef struct clc_sap_eval {
    double g2;        /* ||D g||^2 */
    double scale2;    /* max(||D M v*||^2, ||D J'gamma||^2, ||D M v||^2) */
    double cost;      /* l(v) */
} clc_sap_eval;

typedef struct clc_sap_ops {
    void *ctx;
    /* gamma, G, g and the preconditioner at v */
    clcone_status (*eval)(void *ctx, clc_sap_eval *out, clcone_error *err);
    /* dv ~ -H^-1 g, iterative to ||D (H dv + g)|| <= tol_abs or max_inner; adds to *inner */
    clcone_status (*direction)(void *ctx, double tol_abs, int max_inner, int *inner,
                               clcone_error *err);
    /* a = dv' M (v - v*), b = dv' M dv, c = dv' g */
    clcone_status (*ls_setup)(void *ctx, double *a, double *b, double *c, clcone_error *err);
    /* at v + alpha dv, w = J dv: sums of contact cost changes, w'gamma, w'G w */
    clcone_status (*ls_eval)(void *ctx, double alpha, double *dcost, double *d1, double *d2,
                             clcone_error *err);
    /* v += alpha dv */
    clcone_status (*step)(void *ctx, double alpha, clcone_error *err);
} clc_sap_ops;

/* Newton with line search to o's tol or caps; fills out and prm's history; nv sizes the CG cap. */
clcone_status clc_sap_newton(const clc_sap_ops *ops, const clcone_options *o, int nv,
                                clc_sap_params *prm, clcone_prob_result *out, clcone_error *err);

#endif
