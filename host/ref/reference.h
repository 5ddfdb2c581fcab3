/* CPU reference solvers (double, single thread, deterministic). Each one
 * solves ONE problem of a batch: contacts [c0, c1) of p, whose W blocks
 * never leave that range. r (3n, whole batch) holds the start on entry and
 * the reactions on exit; only entries of [c0, c1) are touched. They fill
 * out->status, out->iters, out->error (the model's error, see
 * clcone_error_of) and out->reason; the dispatcher (solve/solve.c) sets the time. */
#ifndef CLCONE_REFERENCE_H
#define CLCONE_REFERENCE_H

#include <clcone/clcone.h>
#include "core/newton_limits.h"
#include "core/sap.h"

/* A solver's reference entry, as the rows of solve/contract.c name it. A
 * new one is declared with this type beside its row and at the top of
 * its own file (`clc_ref_fn clc_ref_NAME;`), so that the compiler
 * checks the definition against it. */
typedef clcone_status clc_ref_fn(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                    clcone_prob_result *out, clcone_error *err);

/* NSGS for coulomb. */
clc_ref_fn clc_ref_nsgs_coulomb;
/* Projected Jacobi for coulomb, ccp and pyramid. */
clc_ref_fn clc_ref_jacobi;
/* Projected Gauss-Seidel for ccp and pyramid. */
clc_ref_fn clc_ref_pgs;
/* APGD on the cone QP (ccp); for coulomb the De Saxce fixed point: the
 * shift mu ||u_t|| is frozen into q for check_every iterations at a time. */
clc_ref_fn clc_ref_apgd;
/* Lemke's method on the N-facet pyramid LCP (Stewart-Trinkle form), dense;
 * o->max_iter caps the pivots. */
clc_ref_fn clc_ref_lemke_pyramid;

/* Semismooth Newton on Alart-Curnier's formulation of the exact Coulomb
 * law, or for ccp on the cone's natural map, with an Armijo line search
 * (ref/newton.c); the Newton systems are factored densely, so problems
 * have at most CLCONE_NEWTON_REF_MAX_CONTACTS contacts (else
 * CLCONE_ENOTSUP; core/newton_limits.h says why). */
clc_ref_fn clc_ref_newton;
/* The reference's default for coulomb: NSGS alone at tol >= CLCONE_HYBRID_BELOW
 * (or above the dense limit); below it NSGS until its pace prices
 * reaching tol above Newton's expected cost, then Newton from there.
 * iters counts the first phase's sweeps and the Newton steps, inner_iters
 * every sweep (the first phase's and the rescues'). For ccp the sweeps
 * are ACGS's, and where Newton has no part ccp's APGD runs alone. */
clc_ref_fn clc_ref_hybrid;

/* The reference solvers' iteration loop: clc_iterate (core/iterate.c)
 * over one problem, contacts [c0, c1) with reactions r, the model's error
 * measured at every check. step does iteration it (1-based) of the
 * solver's state; checked (NULL: none) runs after a check that did not
 * stop the solve, with the error it measured. */
typedef clcone_status (*ref_step_fn)(void *state, int it, clcone_error *err);
typedef clcone_status (*ref_checked_fn)(void *state, int it, double error, clcone_error *err);
clcone_status clc_ref_iterate(const clcone_problem *p, const clcone_options *o, int c0, int c1, const double *r,
                                 ref_step_fn step, ref_checked_fn checked, void *state, clcone_prob_result *out,
                                 clcone_error *err);

/* NSGS in natural order with watch run after every check that did not
 * stop it (the hybrid's stall test). */
clcone_status clc_ref_nsgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err);
/* Gauss-Seidel sweeps in a given contact order (NULL = natural order),
 * so that the coloured Gauss-Seidel of the device has a reference. */
clcone_status clc_ref_nsgs_ordered(const clcone_problem *p, const clcone_options *o,
                                      int c0, int c1, const int *order, double *r,
                                      clcone_prob_result *out, clcone_error *err);
clcone_status clc_ref_pgs_ordered(const clcone_problem *p, const clcone_options *o,
                                     int c0, int c1, const int *order, double *r,
                                     clcone_prob_result *out, clcone_error *err);
/* Gauss-Seidel steps of contacts [c0, c1): 1 / lambda_max(W_cc), malloc'ed
 * (NULL: out of memory, err set). */
double *clc_ref_gs_steps(const clcone_problem *p, int c0, int c1, clcone_error *err);
/* One projected Gauss-Seidel sweep (ccp, pyramid) in the given order
 * (NULL = natural), omega from clc_ref_gs_steps. */
void clc_ref_pgs_sweep(const clcone_problem *p, const clcone_options *o, int c0, int c1, const int *order,
                          const double *omega, double *r);
/* Coloured Gauss-Seidel on the CPU: NSGS (coulomb) or PGS (ccp, pyramid)
 * sweeping colour by colour in the device's order. */
clc_ref_fn clc_ref_cgs;

/* Accelerated coloured Gauss-Seidel (ccp): Nesterov's extrapolation over
 * the sweeps of clc_ref_cgs, with gradient restart (kernels/local_solve.h,
 * cone_acgs_*). */
clc_ref_fn clc_ref_acgs;
/* ACGS with watch run after every check that did not stop it (ccp's
 * hybrid's stall test). */
clcone_status clc_ref_acgs_watched(const clcone_problem *p, const clcone_options *o, int c0, int c1, double *r,
                                      ref_checked_fn watch, void *state, clcone_prob_result *out,
                                      clcone_error *err);

/* SAP's CPU backend: runs clc_sap_newton from v0 (6 per body) with a
 * dense Cholesky of H; returns gamma in r and, when vout is non-NULL, the
 * final velocities. */
clcone_status clc_sap_ref(const clc_sap_setup *S, const double *v0, const clcone_options *o,
                             clc_sap_params *prm, double *r, double *vout, clcone_prob_result *out,
                             clcone_error *err);

#endif
