/* CPU reference solvers (double, one thread, deterministic). Each solves ONE
 * problem of a batch, contacts [c0, c1) of p: r (3n, whole batch) holds the
 * start, then the reactions, touched only in [c0, c1); they fill out's status,
 * iters, error and reason, the dispatcher (solve/solve.c) the time. */
#ifndef CLCONE_REFERENCE_H
#define CLCONE_REFERENCE_H

#include <clcone/clcone.h>
#include "core/newton_limits.h"
#include "core/sap.h"

/* A solver's reference entry, as solve/contract.c's rows name it; declare new ones with it (docs/architecture.md). */
typedef clcone_status clc_ref_fn(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                    clcone_prob_result *out, clcone_error *err);

/* NSGS for coulomb. */
clc_ref_fn clc_ref_nsgs_coulomb;
/* Projected Jacobi for coulomb, ccp and pyramid. */
clc_ref_fn clc_ref_jacobi;
/* Projected Gauss-Seidel for ccp and pyramid. */
clc_ref_fn clc_ref_pgs;
/* APGD on the cone QP (ccp); for coulomb De Saxce's shift frozen into q check_every iterations at a time. */
clc_ref_fn clc_ref_apgd;
/* Lemke's method on the pyramid LCP (Stewart-Trinkle form), dense; o->max_iter caps the pivots. */
clc_ref_fn clc_ref_lemke_pyramid;

/* Semismooth Newton (ref/newton.c), any size: its systems by a dense LU for small problems, else sparse
 * (ref/newton_sparse.c). */
clc_ref_fn clc_ref_newton;
/* The price in sweeps of Newton's NEWTON_EXPECTED_STEPS steps on [c0, c1), dense or sparse. */
double clc_ref_newton_price(const clcone_problem *p, int c0, int c1);
/* Newton from r at iteration it0 of a solve whose clock started at t0, as the hybrid's second phase within
 * the dense limit: trial set, an early try that converges or sets *gave_up, its best iterate in r. */
clcone_status clc_ref_newton_from(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  int it0, double t0, int trial, int *gave_up, clcone_prob_result *out,
                                  clcone_error *err);
/* A primal-dual interior point for ccp and soft (ref/ipm.c), sparse: CLCONE_ENOTSUP where a contact has mu 0. */
clc_ref_fn clc_ref_ipm;
/* ipm set up for [c0, c1) of p: its pattern and CHOLMOD's analysis, which price it and serve every solve on
 * p's W (De Saxce's rounds change q only); released by clc_ref_ipm_release (NULL: nothing). */
typedef struct ipm clc_ipm_setup;
clcone_status clc_ref_ipm_prepare(const clcone_problem *p, int c0, int c1, clc_ipm_setup **S, clcone_error *err);
void clc_ref_ipm_release(clc_ipm_setup *S);
/* Frees S's numeric factor, keeping the analysis: what a setup kept between solves holds (the next run
 * factors again). */
void clc_ref_ipm_trim(clc_ipm_setup *S);
/* ipm's price in sweeps from its factor's flops. */
double clc_ref_ipm_sweeps(const clc_ipm_setup *S);
/* ipm on S for p (S's W, p's q) from iteration it0 of a solve whose clock started at t0 (the hybrid's
 * hand-over); r is a candidate, not its start. */
clcone_status clc_ref_ipm_run(clc_ipm_setup *S, const clcone_problem *p, const clcone_options *o, double *r, int it0,
                              double t0, clcone_prob_result *out, clcone_error *err);
/* Coulomb as De Saxce's fixed point over ipm's ccp solves (ref/fixed_point.c): any size, mu > 0 as ipm. */
clc_ref_fn clc_ref_fixed_point;
/* The hybrid's second phase past the dense Newton's limit, the fixed point for coulomb and ipm for ccp and
 * soft (CLCONE_ENOTSUP as ipm's, and for the pyramid): its setup in *S (the caller's to release) and price
 * in sweeps, the price of a kept setup, and the method from iteration it0 at clock t0 as clc_ref_ipm_run, on
 * S as prepared here or, where S is NULL, on its own. */
clcone_status clc_ref_past_dense_prepare(const clcone_problem *p, clcone_model model, int c0, int c1,
                                         clc_ipm_setup **S, double *sweeps, clcone_error *err);
double clc_ref_past_dense_price(const clc_ipm_setup *S, clcone_model model);
clcone_status clc_ref_past_dense_from(const clcone_problem *p, const clcone_options *o, int c0, int c1,
                                      clc_ipm_setup *S, double *r, int it0, double t0, clcone_prob_result *out,
                                      clcone_error *err);
/* The default for coulomb: NSGS, then Newton once that pays (ccp: ACGS then Newton); docs/solvers.md. */
clc_ref_fn clc_ref_hybrid;

/* The batch's problem that starts at contact c0, for the history. */
int clc_ref_problem_of(const clcone_problem *p, int c0);

/* clc_iterate over one problem [c0, c1): step does iteration it, checked (may be NULL) after live checks. */
typedef clcone_status (*ref_step_fn)(void *state, int it, clcone_error *err);
typedef clcone_status (*ref_checked_fn)(void *state, int it, double error, clcone_error *err);
clcone_status clc_ref_iterate(const clcone_problem *p, const clcone_options *o, int c0, int c1, const double *r,
                                 ref_step_fn step, ref_checked_fn checked, void *state, clcone_prob_result *out,
                                 clcone_error *err);

/* NSGS with watch after every check that did not stop it (the hybrid's stall test). */
clcone_status clc_ref_nsgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err);
/* Gauss-Seidel in a given contact order (NULL: natural), the device's coloured sweeps' reference. */
clcone_status clc_ref_nsgs_ordered(const clcone_problem *p, const clcone_options *o,
                                      int c0, int c1, const int *order, double *r,
                                      clcone_prob_result *out, clcone_error *err);
clcone_status clc_ref_pgs_ordered(const clcone_problem *p, const clcone_options *o,
                                     int c0, int c1, const int *order, double *r,
                                     clcone_prob_result *out, clcone_error *err);
/* PGS with watch after every check that did not stop it (the pyramid's hybrid's stall test). */
clcone_status clc_ref_pgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                  ref_checked_fn watch, void *state, clcone_prob_result *out, clcone_error *err);
/* Gauss-Seidel steps 1 / lambda_max(W_cc) of [c0, c1), malloc'ed (NULL: err set). */
double *clc_ref_gs_steps(const clcone_problem *p, int c0, int c1, clcone_error *err);
/* One projected Gauss-Seidel sweep (ccp, pyramid) in order (NULL: natural), omega of clc_ref_gs_steps. */
void clc_ref_pgs_sweep(const clcone_problem *p, const clcone_options *o, int c0, int c1, const int *order,
                          const double *omega, double *r);
/* Coloured Gauss-Seidel: NSGS (coulomb) or PGS (ccp, pyramid) colour by colour in the device's order. */
clc_ref_fn clc_ref_cgs;

/* Accelerated coloured Gauss-Seidel (ccp) over clc_ref_cgs's sweeps (kernels/local_solve.h). */
clc_ref_fn clc_ref_acgs;
/* ACGS with watch after every check that did not stop it (ccp's hybrid's stall test). */
clcone_status clc_ref_acgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err);

/* SAP's CPU backend: clc_sap_newton from v0 with dense Cholesky; gamma in r, velocities in vout if set. */
clcone_status clc_sap_ref(const clc_sap_setup *S, const double *v0, const clcone_options *o,
                             clc_sap_params *prm, double *r, double *vout, clcone_prob_result *out,
                             clcone_error *err);

#endif
