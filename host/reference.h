/* CPU reference solvers (double, single thread, deterministic). Each one
 * solves ONE problem of a batch: contacts [c0, c1) of p, whose W blocks
 * never leave that range. r (3n, whole batch) holds the start on entry and
 * the reactions on exit; only entries of [c0, c1) are touched. They fill
 * out->status, out->iters, out->error (the model's error, see
 * clcone_error_of) and out->reason; the dispatcher (solve.c) sets the time. */
#ifndef CLCONE_REFERENCE_H
#define CLCONE_REFERENCE_H

#include "clcone.h"

clcone_status ref_nsgs_coulomb(const clcone_problem *p, const clcone_options *o,
                               int c0, int c1, double *r,
                               clcone_prob_result *out, clcone_error *err);
/* Projected Jacobi for coulomb, ccp and pyramid. */
clcone_status ref_jacobi(const clcone_problem *p, const clcone_options *o,
                         int c0, int c1, double *r, clcone_prob_result *out,
                         clcone_error *err);
/* Projected Gauss-Seidel for ccp and pyramid. */
clcone_status ref_pgs(const clcone_problem *p, const clcone_options *o,
                      int c0, int c1, double *r, clcone_prob_result *out,
                      clcone_error *err);
clcone_status ref_apgd_ccp(const clcone_problem *p, const clcone_options *o,
                           int c0, int c1, double *r, clcone_prob_result *out,
                           clcone_error *err);
/* Lemke's method on the N-facet pyramid LCP (Stewart-Trinkle form), dense;
 * o->max_iter caps the pivots. */
clcone_status ref_lemke_pyramid(const clcone_problem *p, const clcone_options *o,
                                int c0, int c1, double *r,
                                clcone_prob_result *out, clcone_error *err);

/* (W r)_c + q_c for contact c: the velocity of one contact. */
void ref_contact_velocity(const clcone_problem *p, const double *r, int c,
                          double u[3]);

#endif
